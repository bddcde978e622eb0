"""Synthetic camera readings of a recorded engine game, for testing the tracker without vision."""

from __future__ import annotations

import random

from engines.royal_battles import CELL_NAMES
from scanner.detections import CardReading, CellReading, PieceReading, TableReading


def reading_of(position: dict, frame: int, occluded: bool = False,
               rng: random.Random | None = None, unsure_rate: float = 0.0) -> TableReading:
    """What a perfect scanner would report for a position (with some cells left unsure)."""
    reading = TableReading(frame_index=frame, board_found=True, occluded=occluded)
    for name in CELL_NAMES:
        entry = position["board"].get(name)
        if rng is not None and rng.random() < unsure_rate:
            reading.cells[name] = CellReading(name, empty=False, card=CardReading(card=None),
                                              piece=PieceReading(None))
            continue
        if not entry or not entry["cards"]:
            reading.cells[name] = CellReading(name, empty=True)
            continue
        unit = entry.get("unit")
        piece = f"{unit['side']}-{unit['kind']}" if unit else "empty"
        reading.cells[name] = CellReading(
            name, empty=False, card=CardReading(card=entry["cards"][-1], confidence=0.99),
            piece=PieceReading(piece, 0.99))
    for side, code in position["initiative"].items():
        reading.initiative[side] = CardReading(card=code, confidence=0.99 if code else 0.0)
    return reading


VISIBLE = ("setup", "place", "initiative", "move")


def truth_events(steps: list[tuple[str, dict]]) -> list[str]:
    """The visible events of a recorded game: cards laid, units placed and moved, removals."""
    events = []
    prev_units: dict[str, str] = {}
    for action, pos in steps:
        verb = action.split()[1]
        units = {c: f"{e['unit']['side']} {e['unit']['kind']}" for c, e in pos["board"].items()
                 if e.get("unit")}
        if verb in VISIBLE:
            events.append(action)
        elif verb == "attack":
            for cell, unit in sorted(prev_units.items()):
                if cell not in units:
                    events.append(f"{unit} removed {cell}")
        prev_units = units
    return events


def frames_of(steps: list[tuple[str, dict]], empty: dict, seed: int = 0, settle: int = 4,
              hands: int = 2, unsure_rate: float = 0.0) -> list[TableReading]:
    """Frames for a game: each visible step is hands over the board, then a settled table."""
    rng = random.Random(seed)
    frames: list[TableReading] = []
    last = empty
    for _ in range(settle):
        frames.append(reading_of(last, len(frames)))
    for action, pos in steps:
        verb = action.split()[1]
        if verb not in VISIBLE and verb != "attack":
            last = pos
            continue
        for _ in range(hands):
            frames.append(reading_of(last, len(frames), occluded=True))
        for _ in range(settle):
            frames.append(reading_of(pos, len(frames), rng=rng, unsure_rate=unsure_rate))
        last = pos
    return frames
