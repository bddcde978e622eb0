"""The game journal: every event of every game in one SQLite file, committed before it is shown.

A game is its set-up (armies, names, options) plus an ordered list of events in text notation;
the state is always a replay of the journal, so a killed server loses nothing. Undo marks events
`undone` rather than deleting them, so the journal stays an honest record of what happened.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created REAL NOT NULL,
    setup TEXT NOT NULL            -- JSON: game, armies, names, options
);
CREATE TABLE IF NOT EXISTS events (
    game_id INTEGER NOT NULL REFERENCES games(id),
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,            -- action | auto | correction
    text TEXT NOT NULL,
    created REAL NOT NULL,
    undone INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, seq)
);
"""


@dataclass(frozen=True)
class Event:
    seq: int
    kind: str  # "action" (a player's or the table's), "auto" (a hidden draw), "correction"
    text: str

    def to_json(self) -> dict:
        return {"seq": self.seq, "kind": self.kind, "text": self.text}


class Journal:
    """One SQLite file; safe to share between the request threads (one lock, short writes)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None)
        # WAL + synchronous=FULL: a commit is on disk before the response is sent.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def new_game(self, setup: dict) -> int:
        with self._lock:
            cur = self._db.execute("INSERT INTO games (created, setup) VALUES (?, ?)",
                                   (time.time(), json.dumps(setup, sort_keys=True)))
            return int(cur.lastrowid)

    def last_game(self) -> int | None:
        with self._lock:
            row = self._db.execute("SELECT MAX(id) FROM games").fetchone()
        return row[0] if row and row[0] is not None else None

    def setup(self, game_id: int) -> dict:
        with self._lock:
            row = self._db.execute("SELECT setup FROM games WHERE id = ?", (game_id,)).fetchone()
        if row is None:
            raise KeyError(f"no game {game_id} in the journal")
        return json.loads(row[0])

    def events(self, game_id: int) -> list[Event]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, kind, text FROM events WHERE game_id = ? AND undone = 0 "
                "ORDER BY seq", (game_id,)).fetchall()
        return [Event(seq, kind, text) for seq, kind, text in rows]

    def append(self, game_id: int, events: list[tuple[str, str]]) -> list[Event]:
        """Append (kind, text) events in one transaction; returns them with their numbers."""
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                row = db.execute("SELECT COALESCE(MAX(seq), 0) FROM events WHERE game_id = ?",
                                 (game_id,)).fetchone()
                seq = row[0]
                out = []
                for kind, text in events:
                    seq += 1
                    db.execute("INSERT INTO events (game_id, seq, kind, text, created) "
                               "VALUES (?, ?, ?, ?, ?)", (game_id, seq, kind, text, time.time()))
                    out.append(Event(seq, kind, text))
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        return out

    def mark_undone(self, game_id: int, seqs: list[int]) -> None:
        with self._lock:
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany("UPDATE events SET undone = 1 WHERE game_id = ? AND seq = ?",
                               [(game_id, s) for s in seqs])
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
