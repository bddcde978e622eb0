"""Royal Conquest web page (mounted at /rc): tap the cards in your Stacks, see your points.

Stateless: every endpoint takes everything it needs in the POSTed JSON. Besides the scoring
page, /api/new, /api/legal and /api/apply drive a whole match whose state JSON the client keeps.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, render_template, request
from werkzeug.exceptions import BadRequest

from engines.errors import RulesError
from engines.royal_conquest import DEFAULT_DECK, GameState, Options, Token, parse_action
from engines.royal_conquest.helper import parse_tokens, stack_report

blueprint = Blueprint("royal_conquest", __name__, template_folder="templates", static_folder=None)


class _BadInput(Exception):
    pass


def _body() -> dict[str, Any]:
    try:
        data = request.get_json(force=True, silent=False)
    except BadRequest:
        raise _BadInput("request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise _BadInput("request body must be a JSON object")
    return data


def _error(message: str, status: int = 400):  # type: ignore[no-untyped-def]
    return jsonify({"error": message}), status


@blueprint.errorhandler(_BadInput)
def _bad_input(exc: _BadInput):  # type: ignore[no-untyped-def]
    return _error(str(exc))


@blueprint.errorhandler(RulesError)
def _rules_error(exc: RulesError):  # type: ignore[no-untyped-def]
    return _error(str(exc))


def _int_or_none(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _BadInput(f"{key} must be an integer or null")
    return value


def _state_payload(state: GameState) -> dict[str, Any]:
    return {
        "state": state.to_json(),
        "phase": state.phase,
        "player": state.current_player(),
        "chance": state.is_chance_node(),
        "terminal": state.is_terminal(),
        "legal": [str(a) for a in state.legal_actions()],
        "scores": [state.score(p).points for p in range(state.players)],
        "outcome": None if state.outcome() is None else state.outcome().to_json(),
    }


def _load_state(data: dict[str, Any]) -> GameState:
    if "state" not in data:
        raise _BadInput("missing 'state'")
    return GameState.from_json(data["state"])


@blueprint.get("/")
def index():  # type: ignore[no-untyped-def]
    return render_template("royal_conquest/index.html", tokens=[str(t) for t in Token])


@blueprint.get("/api/deck")
def deck():  # type: ignore[no-untyped-def]
    return jsonify(DEFAULT_DECK.to_json())


@blueprint.post("/api/score")
def score():  # type: ignore[no-untyped-def]
    data = _body()
    tokens = data.get("tokens", [])
    if not isinstance(tokens, list):
        raise _BadInput("tokens must be a list of token words")
    grouping = data.get("grouping", "always")
    if not isinstance(grouping, str):
        raise _BadInput("grouping must be 'always' or 'best'")
    report = stack_report(
        parse_tokens(tokens), _int_or_none(data, "players"), _int_or_none(data, "go_score"),
        grouping,
    )  # fmt: skip
    return jsonify(report)


@blueprint.post("/api/new")
def new():  # type: ignore[no-untyped-def]
    data = _body()
    players = data.get("players", 2)
    if players not in (2, 3, 4) or isinstance(players, bool):
        raise _BadInput("players must be 2, 3 or 4")
    options = Options.from_json(data.get("options", {}))
    return jsonify(_state_payload(GameState(players, options)))


@blueprint.post("/api/legal")
def legal():  # type: ignore[no-untyped-def]
    return jsonify(_state_payload(_load_state(_body())))


@blueprint.post("/api/apply")
def apply():  # type: ignore[no-untyped-def]
    data = _body()
    state = _load_state(data)
    action = data.get("action")
    if not isinstance(action, str):
        raise _BadInput("action must be a string such as 'play A1 on A2'")
    state.apply(parse_action(action))
    return jsonify(_state_payload(state))
