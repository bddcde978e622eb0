"""Helpers for the Royal Battles tests: compact positions in the engine's own JSON."""

from __future__ import annotations

import json

from engines.royal_battles.position import from_json


def position(board: dict, *, to_move: str = "white", initiative=("4C", "9S"), hands=None,
             options=None, phase: str = "movement", decks=None, **extra):
    """Build a GameState. `board` maps cell -> "CARD" or ("CARD", "side kind"[, injury])."""
    cells = {}
    for cell, spec in board.items():
        if isinstance(spec, str):
            spec = (spec,)
        cards = spec[0].split()
        entry: dict = {"cards": cards}
        if len(spec) > 1 and spec[1]:
            side, kind = spec[1].split()
            entry["unit"] = {"side": side, "kind": kind, "injury": spec[2] if len(spec) > 2 else 0}
        if len(spec) > 3:
            entry.update(spec[3])
        cells[cell] = entry
    data = {
        "game": "royal-battles",
        "options": options or {},
        "round": 3,
        "phase": phase,
        "to_move": to_move,
        "initiative": {"white": initiative[0], "black": initiative[1]},
        "board": cells,
        "hands": hands if hands is not None else {"white": [], "black": []},
        "decks": decks if decks is not None else {"white": 30, "black": 30},
    }
    data.update(extra)
    return from_json(json.loads(json.dumps(data)))
