"""Scoring a scan against a recorded fixture's per-frame truth (`render game` output)."""

from __future__ import annotations

import gzip
import json
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from engines.royal_battles import CELL_NAMES

from .detections import TableReading

VISIBLE_VERBS = ("setup", "place", "initiative", "move")


def read_truth(path: str | Path) -> Iterator[dict]:
    """Truth lines of a recorded game (JSON lines, gzipped or not)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _units(position: dict) -> dict[str, str]:
    return {c: f"{e['unit']['side']} {e['unit']['kind']}"
            for c, e in position.get("board", {}).items() if e.get("unit")}


def truth_events(rows: list[dict]) -> list[str]:
    """The visible events of a recorded game, in order: what the tracker should report."""
    events: list[str] = []
    prev: dict[str, str] = {}
    for row in rows:
        units = _units(row.get("position", {}))
        for action in row.get("actions", []):
            words = action.split()
            if words[1] in VISIBLE_VERBS:
                events.append(action)
            elif words[1] == "attack":  # units of the other side gone from their cells
                events += [f"{u} removed {c}" for c, u in sorted(prev.items())
                           if not u.startswith(words[0]) and units.get(c) != u]
        prev = units
    return events


def truth_table(row: dict) -> dict[str, object]:
    """What the camera should read on a frame: top card and unit per cell, initiative cards."""
    out: dict[str, object] = {}
    cells = row.get("cells", {})
    for name in CELL_NAMES:
        cell = cells.get(name)
        out[f"{name}.card"] = cell["card"] if cell else None
        unit = cell.get("unit") if cell else None
        out[f"{name}.unit"] = f"{unit['side']}-{unit['kind']}" if unit else None
    for side in ("white", "black"):
        init = (row.get("initiative") or {}).get(side)
        out[f"init.{side}"] = init.get("card") if isinstance(init, dict) else init
    return out


def reading_table(reading: TableReading) -> dict[str, object]:
    """The same keys from a scan; an unsure field reads as '?', which never matches truth."""
    out: dict[str, object] = {}
    for name in CELL_NAMES:
        cell = reading.cells.get(name)
        if cell is None or cell.empty is None:
            out[f"{name}.card"] = out[f"{name}.unit"] = "?"
            continue
        if cell.empty:
            out[f"{name}.card"] = out[f"{name}.unit"] = None
            continue
        out[f"{name}.card"] = cell.card.card if cell.card and cell.card.card else "?"
        piece = cell.piece.piece if cell.piece else "?"
        out[f"{name}.unit"] = None if piece == "empty" else (piece or "?")
    for side in ("white", "black"):
        init = reading.initiative.get(side)
        out[f"init.{side}"] = init.card if init is not None and init.card else (
            None if init is None or init.corners is None else "?")
    return out


def matched_in_order(got: list[str], want: list[str]) -> int:
    """Length of the longest common subsequence: events recovered in the right order."""
    prev = [0] * (len(want) + 1)
    for g in got:
        cur = [0]
        for j, w in enumerate(want):
            cur.append(prev[j] + 1 if g == w else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


@dataclass
class SettledFrames:
    """Settled frames whose whole table was right, counted three ways:

    - `read_right`: the frame's own reading. A card under a unit cannot be read (its '?' is the
      right answer), so this stays low however good the readers are;
    - `tracked_right`: the tracked game as shown on that frame, live. A change is believed only
      after it was seen on several settled frames, so it lags the table by those frames;
    - `recorded_right`: the tracked game as shown at the end of the frame's settled stretch: the
      game's record of that moment, once the hysteresis had seen the table.
    """

    frames: int = 0
    read_right: int = 0
    tracked_right: int = 0
    recorded_right: int = 0
    _stretch: list[dict] = field(default_factory=list)
    _tracked: dict | None = None

    def settled(self, want: dict, read: dict, tracked: dict) -> None:
        """One settled frame: the truth, the frame's reading and the tracked game's table."""
        self.frames += 1
        self.read_right += read == want
        self.tracked_right += tracked == want
        self._stretch.append(want)
        self._tracked = tracked

    def unsettled(self) -> None:
        """A frame that is not settled (or the end of the video) closes the stretch."""
        self.recorded_right += sum(w == self._tracked for w in self._stretch)
        self._stretch.clear()


def summary(got: list[str], want: list[str], settled: int, settled_right: int,
            latencies_ms: list[float], tracked_right: int | None = None,
            cpu_ms: list[float] | None = None, recorded_right: int | None = None) -> dict:
    """The issue's comparison keys; `tracked_right` and `recorded_right` (see SettledFrames)
    and CPU-time percentiles are extras where given."""
    recovered = matched_in_order(got, want)
    lat = sorted(latencies_ms) or [0.0]
    extra: dict = {}
    if tracked_right is not None:
        extra["settled_frames_tracked_right"] = tracked_right
    if recorded_right is not None:
        extra["settled_frames_recorded_right"] = recorded_right
    if cpu_ms:
        cpu = sorted(cpu_ms)
        extra["cpu_ms_p50"] = round(statistics.median(cpu), 2)
        extra["cpu_ms_p95"] = round(cpu[min(len(cpu) - 1, int(0.95 * len(cpu)))], 2)
    return {
        "moves": len(want),
        "moves_recovered": recovered,
        "spurious_events": len(got) - recovered,
        "settled_frames": settled,
        "settled_frames_right": settled_right,
        "latency_ms_p50": round(statistics.median(lat), 2),
        "latency_ms_p95": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 2),
        **extra,
    }


def reading_from_truth(row: dict, frame: int = 0) -> TableReading:
    """A perfect scanner's reading of a truth line: isolates tracking from recognition."""
    from .detections import CardReading, CellReading, PieceReading

    reading = TableReading(frame_index=frame, board_found=True)
    for name in CELL_NAMES:
        cell = row.get("cells", {}).get(name)
        if not cell or not cell.get("card"):
            reading.cells[name] = CellReading(name, empty=True)
            continue
        unit = cell.get("unit")
        piece = f"{unit['side']}-{unit['kind']}" if unit else "empty"
        reading.cells[name] = CellReading(name, empty=False,
                                          card=CardReading(card=cell["card"], confidence=1.0),
                                          piece=PieceReading(piece, 1.0))
    for side in ("white", "black"):
        init = (row.get("initiative") or {}).get(side)
        code = init.get("card") if isinstance(init, dict) else init
        reading.initiative[side] = CardReading(card=code, confidence=1.0 if code else 0.0)
    return reading
