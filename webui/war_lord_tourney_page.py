"""The War Lord Tourney table page (mounted at /wlt).

Stateless: the page keeps the whole game (with its undo history) as JSON and POSTs it with each
request; the server validates it, acts, and answers with the new state and what to draw.

    GET  /wlt/            the page
    POST /wlt/api/new     {"options": {...}?, "board": {...}?}         -> view
    POST /wlt/api/view    {"state": {...}}                             -> view
    POST /wlt/api/moves   {"state": {...}, "unit": "wK"}               -> {"unit", "moves": [...]}
    POST /wlt/api/apply   {"state": {...}, "action": "wK c5"}          -> view
    POST /wlt/api/undo    {"state": {...}}                             -> view

Bad input answers 400 with {"error": "..."}.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, render_template, request

from engines.errors import RulesError
from engines.war_lord_tourney import CHESS_PIECE, KINDS, Board, GameState, Options

from .war_lord_tourney_cli import render

blueprint = Blueprint("war_lord_tourney", __name__, template_folder="templates")


class BadRequest(Exception):
    pass


def _body() -> dict[str, Any]:
    data = request.get_json(silent=True)
    if data is None:
        raise BadRequest("the request body must be JSON (Content-Type: application/json)")
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    return data


def _state(body: dict[str, Any]) -> GameState:
    if "state" not in body:
        raise BadRequest("missing 'state'")
    return GameState.from_json(body["state"])


def view(state: GameState) -> dict[str, Any]:
    board = state.board
    outcome = state.outcome()
    return {
        "state": state.to_json(include_history=True),
        "phase": state.phase,
        "turn": state.turn,
        "current_player": state.current_player(),
        "is_chance": state.is_chance_node(),
        "legal": [str(a) for a in state.legal_actions()],
        "outcome": outcome.to_json() if outcome else None,
        "board": {"files": board.files, "ranks": board.ranks,
                  "terrain": {c: board.terrain(c) for c in board.cells()}},
        "units": [{"id": u.id, "side": u.side, "kind": u.kind, "name": KINDS[u.kind],
                   "piece": CHESS_PIECE[u.kind], "status": u.status, "cell": u.cell,
                   "wounds": u.wounds, "downed": u.downed} for u in state.units.values()],
        "dungeons": state.dungeons,
        "keep": state.keep,
        "combat_cell": state.combat_cell,
        "can_undo": state.history_length > 0,
        "text": render(state),
    }


@blueprint.errorhandler(BadRequest)
@blueprint.errorhandler(RulesError)
def _bad(exc: Exception):
    return jsonify({"error": str(exc)}), 400


@blueprint.get("/")
def page():
    return render_template("war_lord_tourney/index.html")


@blueprint.post("/api/new")
def api_new():
    body = _body()
    options = Options.from_json(body.get("options"))
    board = Board.from_json(body["board"]) if body.get("board") is not None else None
    return jsonify(view(GameState.new(board, options)))


@blueprint.post("/api/view")
def api_view():
    return jsonify(view(_state(_body())))


@blueprint.post("/api/moves")
def api_moves():
    body = _body()
    state = _state(body)
    unit = body.get("unit")
    if not isinstance(unit, str) or unit not in state.units:
        raise BadRequest(f"unknown unit {unit!r}")
    return jsonify({"unit": unit, "moves": [str(m) for m in state.unit_moves(unit)]})


@blueprint.post("/api/apply")
def api_apply():
    body = _body()
    state = _state(body)
    action = body.get("action")
    if not isinstance(action, str):
        raise BadRequest("'action' must be a string like 'wK c5' or 'white wins'")
    state.apply(action)
    return jsonify(view(state))


@blueprint.post("/api/undo")
def api_undo():
    state = _state(_body())
    state.undo()
    return jsonify(view(state))
