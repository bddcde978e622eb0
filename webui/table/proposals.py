"""What the camera saw, as events the players can accept with one click.

From the latest `TableReading` and the game state: the set-up or initiative card being named,
the movement that explains the board's change (the unit's new cell and the card now on top of
it), and, for cells that the reading confidently contradicts and no movement explains, a
correction. Unsure cells and occluded frames propose nothing: a guess is never an event.
"""

from __future__ import annotations

from engines.errors import RulesError
from engines.royal_battles import CELL_NAMES, GameState, Phase, Verb, parse_action
from scanner.detections import CellReading, TableReading

MIN_CONFIDENCE = 0.5


def _card_read(cr: CellReading | None) -> str | None:
    if cr is None or cr.empty or cr.card is None or cr.card.face_down:
        return None
    if cr.card.card is None or cr.card.confidence < MIN_CONFIDENCE:
        return None
    return cr.card.card


def _piece_read(cr: CellReading | None) -> str | None:
    """"white-knight", "empty", or None when not sure."""
    if cr is None:
        return None
    if cr.empty:
        return "empty"
    if cr.piece is None or cr.piece.piece is None or cr.piece.confidence < MIN_CONFIDENCE:
        return None
    return cr.piece.piece


def _legal(state: GameState, text: str) -> bool:
    try:
        action = parse_action(text)
    except RulesError:
        return False
    trial = state.copy()
    try:
        trial.apply(action)
    except RulesError:
        return False
    return True


def propose(state: GameState | None, reading: TableReading | None) -> list[dict]:
    """Events the reading suggests: [{"kind": "action"|"correction", "text", "why"}]."""
    if state is None or reading is None or not reading.board_found or reading.occluded:
        return []
    if state.outcome is not None:
        return []
    out: list[dict] = []
    if state.is_chance_node():
        ev = state.pending[0]
        if ev.verb is Verb.SETUP:
            cell = CELL_NAMES[ev.cell]
            code = _card_read(reading.cells.get(cell))
            text = f"{ev.side.value} setup {cell} {code}"
            if code and _legal(state, text):
                out.append({"kind": "action", "text": text, "why": f"{code} read on {cell}"})
        elif ev.verb is Verb.INITIATIVE:
            cr = reading.initiative.get(ev.side.value)
            code = cr.card if cr is not None and cr.confidence >= MIN_CONFIDENCE else None
            text = f"{ev.side.value} initiative {code}"
            if code and _legal(state, text):
                out.append({"kind": "action", "text": text,
                            "why": f"{code} read as {ev.side.value}'s initiative card"})
        return out
    if state.phase is Phase.PLACE:
        side = state.to_move
        for cell in (c for c in CELL_NAMES if c[1] == ("1" if side.value == "white" else "5")):
            piece = _piece_read(reading.cells.get(cell))
            if piece and piece.startswith(side.value + "-"):
                text = f"{side.value} place {piece.split('-')[1]} {cell}"
                if _legal(state, text):
                    out.append({"kind": "action", "text": text, "why": f"{piece} seen on {cell}"})
        return out
    if state.phase is Phase.MOVEMENT:
        out += _movement(state, reading)
    if not out:
        out += _corrections(state, reading)
    return out


def _movement(state: GameState, reading: TableReading) -> list[dict]:
    side = state.to_move
    out = []
    for frm, unit in sorted(state.units.items()):
        if unit.side is not side:
            continue
        name = f"{side.value}-{unit.kind}"
        from_cell = CELL_NAMES[frm]
        for to_cell, cr in reading.cells.items():
            code = _card_read(cr)
            if code is None or _piece_read(cr) != name:
                continue
            top = state.top(CELL_NAMES.index(to_cell))
            if top is not None and top.card.code == code:
                continue  # nothing new was laid here
            if to_cell != from_cell and _piece_read(reading.cells.get(from_cell)) == name:
                continue  # the unit is still seen where it stood
            text = f"{side.value} move {from_cell}-{to_cell} {code}"
            if cr.card.orientation == "landscape":
                text += " landscape"
            if _legal(state, text):
                out.append({"kind": "action", "text": text,
                            "why": f"{unit.kind} seen on {to_cell} on a new {code}"})
    return out


def _corrections(state: GameState, reading: TableReading) -> list[dict]:
    out = []
    for cell, cr in sorted(reading.cells.items()):
        index = CELL_NAMES.index(cell)
        top = state.top(index)
        code = _card_read(cr)
        if code is not None and (top is None or top.card.code != code):
            out.append({"kind": "correction", "text": f"set {cell} card {code}",
                        "why": f"{cell} reads {code}, the game has "
                               f"{top.card.code if top else 'no card'}"})
        piece = _piece_read(cr)
        unit = state.units.get(index)
        have = f"{unit.side.value}-{unit.kind}" if unit else "empty"
        if piece is not None and piece != have and (top is not None or code is not None):
            value = "none" if piece == "empty" else piece
            out.append({"kind": "correction", "text": f"set {cell} piece {value}",
                        "why": f"{cell} shows {piece.replace('-', ' ')}, the game has "
                               f"{have.replace('-', ' ')}"})
    return out
