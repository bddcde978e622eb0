"""The camera's view of the game for the table page: the tracker `royal-table scan` runs.

`scanner.tracker.GameTracker` believes a change only once the table has been settled for
several readings, and lets the rules choose among what the readers found likely (units told
apart by side once placed, a card the reader left unsure taken where the rules leave one
answer, the same card misread under its unit). The page's one-reading proposals
(`proposals.propose`) need a card read sure and the moving unit's kind read right, which the
camera rarely gives on a set it was not trained on. `royal-table scan validation --page`: on
the six validation games one reading offered 336 of 504 visible events, a tracker restarted
from the players' game at each of their entries 449 reading every frame (10 first offers
wrong, open questions mostly, shown as such); the fixtures (report only): 265 and 384 of 443.
The page reads those recordings at their own 10 frames a second (`camera.SCAN_INTERVAL_S`):
read one frame in two, the scanner's hand check, which compares a reading with the one
before, took nearly every settled frame for hands on these brisk games.

The players' game stays the record: the tracker restarts from it whenever they enter or take
back anything (`follow`), and replays the last few readings so that what the table already
shows is proposed at once. Its events since then are proposed in order, as far as the
players' game takes them (a removal is not proposed: the players enter the attack that
caused it).
"""

from __future__ import annotations

import math
import threading
from collections import deque

from engines.errors import RulesError
from engines.royal_battles import GameState, parse_action
from scanner.detections import TableReading
from scanner.tracker import SETTLE_FRAMES, GameTracker

from .game import auto_draws

RECORDED_FPS = 10.0  # `models.renderer.video.FPS`: the recorded games `scan` is tuned on
RECENT = 15  # readings replayed into a restarted tracker (1.5 s at the page's 10 a second)
PROPOSED = ("setup", "place", "initiative", "move")  # what the players accept with one click
# `royal-table scan` believes a change seen on SETTLE_FRAMES settled frames in a row, chosen on
# the recorded games' 10 frames a second: 0.3 s. A scanner reading at another rate (the page's
# `camera.SCAN_INTERVAL_S`, a webcam's) asks for as many readings as span that time
SETTLE_S = SETTLE_FRAMES / RECORDED_FPS


def settle_readings(interval_s: float) -> int:
    """Readings in a row that make a change believed, for a scanner reading every `interval_s`."""
    return max(1, math.ceil(SETTLE_S / interval_s - 1e-9))


class CameraGame:
    """A `GameTracker` kept in step with the players' game (thread-safe: the camera's scanner
    thread feeds it, the page's requests restart it and ask for its proposals)."""

    def __init__(self, recent: int = RECENT, settle_frames: int = SETTLE_FRAMES) -> None:
        self._lock = threading.Lock()
        self.settle_frames = settle_frames
        self._recent: deque[TableReading] = deque(maxlen=recent)
        self._tracker: GameTracker | None = None
        self._state: GameState | None = None
        self.version: int | None = None
        self.note = ""  # why the tracker is not running

    def follow(self, version: int, state: GameState | None) -> None:
        """The players' game at `version` (None: no game): restart the tracker from it where it
        changed, replaying the recent readings."""
        with self._lock:
            if version == self.version:
                return
            self.version = version
            self._tracker = None
            self._state = state.copy() if state is not None else None
            if state is None or state.is_terminal():
                self.note = "no game" if state is None else "the game is over"
                return
            try:
                self._tracker = GameTracker(state=state.copy(), settle_frames=self.settle_frames)
                for reading in self._recent:
                    self._tracker.update(reading)
                self.note = ""
            except (RulesError, ValueError, KeyError) as exc:  # a state it cannot follow
                self._tracker, self.note = None, f"the camera cannot follow this game: {exc}"

    def update(self, reading: TableReading) -> None:
        """One reading of the table (in the scanner's thread)."""
        with self._lock:
            self._recent.append(reading)
            if self._tracker is None:
                return
            try:
                self._tracker.update(reading)
            except Exception as exc:  # noqa: BLE001 - a tracker bug must not stop the scanner
                self._tracker, self.note = None, f"the camera stopped following: {exc}"

    def proposals(self, version: int) -> list[dict]:
        """What the tracker saw happen since the players' game at `version`, as one-click
        events the players' game takes in this order: [{"kind", "text", "why"}]. Nothing where
        the tracker follows another version (the players entered something since)."""
        with self._lock:
            if self._tracker is None or version != self.version or self._state is None:
                return []
            events = list(self._tracker.events)
            trial = self._state.copy()
        out = []
        for e in events:
            if e.kind not in PROPOSED:
                continue
            try:
                trial.apply(parse_action(e.text))
                list(auto_draws(trial))  # the hidden draws, as the players' game records them
            except RulesError:
                break  # (an attack to enter first, say): the players' game goes no further
            why = ("unsure: " + e.question) if e.question else \
                "; ".join(e.flags) if e.flags else "seen on the table"
            out.append({"kind": "action", "text": e.text, "why": f"the camera's game: {why}"})
        return out

    def waiting(self, version: int) -> str:
        """What the camera's game waits for, in the players' words ("" when nothing, or when
        it follows another version): the tracker's hold, or why it is not running."""
        with self._lock:
            if version != self.version:
                return ""
            if self._tracker is None:
                return self.note
            return self._tracker.holding or ""


def offered_events(readings: list[TableReading], rows: list[dict],
                   settle_frames: int = SETTLE_FRAMES) -> dict:
    """How the page would offer a recorded game's visible events (`royal-table scan VIDEO
    --truth T --page`), where the players enter each event as it happens: before each event
    their game is the truth's, and the page sees the readings from the previous event's
    frame until the next event's. `one_reading`: some reading's proposals (`propose`) offered
    the event; `camera_game`: a `CameraGame` restarted from their game proposed it first;
    `camera_game_wrong`: it proposed another event first (an open question, mostly)."""
    from engines.royal_battles.position import from_json
    from scanner.evaluate import VISIBLE_VERBS

    from .proposals import propose

    due = [(i, a) for i, row in enumerate(rows) for a in row.get("actions", [])
           if a.split()[1] in VISIBLE_VERBS]
    by_frame: dict[int, TableReading] = {r.frame_index: r for r in readings}
    out = {"events": 0, "one_reading": 0, "camera_game": 0, "camera_game_wrong": 0}
    for k, (i, text) in enumerate(due):
        if i == 0:
            continue  # (no position before the first frame)
        state = from_json(rows[i - 1]["position"])
        for earlier in rows[i]["actions"]:  # the same frame's actions before this one
            if earlier == text:
                break
            state.apply(parse_action(earlier))
        frames = range(due[k - 1][0] if k else 0,
                       due[k + 1][0] if k + 1 < len(due) else len(rows))
        out["events"] += 1
        out["one_reading"] += any(
            any(p["text"] == text for p in propose(state, by_frame[f]))
            for f in frames if f in by_frame)
        game = CameraGame(settle_frames=settle_frames)
        game.follow(0, state)
        first = None
        for f in frames:
            if f in by_frame:
                game.update(by_frame[f])
                offered = game.proposals(0)
                if offered:
                    first = offered[0]["text"]
                    break
        out["camera_game"] += first == text
        out["camera_game_wrong"] += first is not None and first != text
    return out
