"""The one detection type every scanner stage reads and writes (as in supervision/norfair).

A frame becomes a `TableReading`: per cell a `CellReading` (top card and piece), plus the two
initiative cards. Every field that a stage could not decide stays None and is counted as unsure,
so later stages (the tracker, the rules) never mistake a guess for a reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

UNSURE = None  # a field the scanner could not read with confidence


@dataclass
class CardReading:
    """One card as seen: where its four corners are and what it is, if readable."""

    corners: np.ndarray | None = None  # 4x2 float32 image pixels, clockwise from top-left
    card: str | None = UNSURE  # engine code ("10H", "JK"); None = not readable
    face_down: bool = False
    orientation: str | None = None  # "portrait" | "landscape" (relative to the board)
    digit_corners: str | None = None  # "nw-se" | "ne-sw": the diagonal carrying the index
    confidence: float = 0.0
    # the classifier's best readings with probabilities, best first, so the rules can pick the
    # most likely legal one when the top reading is illegal
    candidates: list[tuple[str, float]] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "card": self.card,
            "face_down": self.face_down,
            "orientation": self.orientation,
            "digit_corners": self.digit_corners,
            "confidence": round(float(self.confidence), 4),
            "corners": None if self.corners is None else np.round(self.corners, 1).tolist(),
        }


@dataclass
class PieceReading:
    """What stands on a cell. `piece` is the whole answer ("white-knight", "empty") or None
    when any part of it is unsure. The parts can be surer than the whole: `occupied` (True,
    False, None = unsure) and, for an occupied cell, `seen_side` ("white"/"black", None =
    unsure) may be known while the kind is not — the tracker knows the kinds from the set-up
    and can follow them by continuity. Given a `piece`, both are filled in from it."""

    piece: str | None = UNSURE  # "white-knight", …, or "empty"; None = unsure
    confidence: float = 0.0  # probability of `piece` (or of the surest part when piece is None)
    occupied: bool | None = None
    seen_side: str | None = None
    # for an occupied cell: each kind's probability (kind, p), best first, so the rules (the
    # army still to place) can pick among them as they do for an unsure card
    kinds: list[tuple[str, float]] = field(default_factory=list)
    # for an occupied cell: the unit's height (cm) from the change since the cell was seen
    # bare (`scanner.piece_height`); None where it could not be measured. Not part of what
    # the cell shows: a reading measured again is the same reading (the tracker's hysteresis)
    height_cm: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.piece is not None:
            self.occupied = self.piece != "empty"
            self.seen_side = self.piece.split("-")[0] if self.occupied else None

    @property
    def side(self) -> str | None:
        return self.seen_side if self.occupied else None

    @property
    def kind(self) -> str | None:
        return None if self.piece in (None, "empty") else self.piece.split("-")[1]

    def to_json(self) -> dict:
        return {"piece": self.piece, "confidence": round(float(self.confidence), 4),
                "occupied": self.occupied, "side": self.side}


@dataclass
class CellReading:
    cell: str  # "a1" … "g5"
    empty: bool | None = None  # no card at all; None = unsure
    card: CardReading | None = None
    piece: PieceReading | None = None

    @property
    def unsure(self) -> bool:
        if self.empty is None:
            return True
        if self.empty:
            return False
        card_unsure = self.card is None or (self.card.card is None and not self.card.face_down)
        piece_unsure = self.piece is not None and self.piece.piece is None
        return card_unsure or piece_unsure

    def to_json(self) -> dict:
        return {
            "cell": self.cell,
            "empty": self.empty,
            "card": self.card.to_json() if self.card else None,
            "piece": self.piece.to_json() if self.piece else None,
            "unsure": self.unsure,
        }


@dataclass
class TableReading:
    """Everything one frame showed of the table."""

    frame_index: int = 0
    board_found: bool = False
    occluded: bool = False  # hands or arms over the board: never turned into game state
    cells: dict[str, CellReading] = field(default_factory=dict)
    initiative: dict[str, CardReading] = field(default_factory=dict)  # "white"/"black"
    timings_ms: dict[str, float] = field(default_factory=dict)  # per stage
    message: str = ""  # why the board was not found, etc.
    # the zones ("d1", "init/white") whose pixels changed since they were last read; None when
    # the scanner does not know (a full scan of every frame)
    changed: set[str] | None = None
    # while the frame is occluded: cards read at places no hand was near (zone -> reading);
    # not the table's state, but a look at a card that a piece may cover before the table
    # settles (a movement card is laid, then its unit is set on it)
    glimpses: dict[str, CardReading] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "frame_index": self.frame_index,
            "board_found": self.board_found,
            "occluded": self.occluded,
            "cells": {k: v.to_json() for k, v in sorted(self.cells.items())},
            "initiative": {k: v.to_json() for k, v in self.initiative.items()},
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
            "message": self.message,
        }


def units_in_view(reading: TableReading, units: dict[str, str]) -> bool:
    """Whether a clear reading shows a unit standing on each of `units`' cells (cell ->
    "white-knight", or only "white"), of its side where the side was seen: the view the piece
    classifier learns the players' set from must show the units it is told stand there (not a
    unit entered before it was put down, or moved before it was entered; not one lifted)."""
    if reading.occluded:
        return False
    for cell, label in units.items():
        cr = reading.cells.get(cell)
        piece = cr.piece if cr is not None else None
        if piece is None or piece.occupied is not True:
            return False
        if piece.seen_side is not None and piece.seen_side != label.split("-")[0]:
            return False
    return True
