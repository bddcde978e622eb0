"""Royal Bastards table page (mounted at /rbs): a contest calculator and End Game scoring,
plus a stateless game API. The browser holds every state; each POST carries it and gets the
new one back, so no server state can be lost.

    GET  /rbs/                 the page
    GET  /rbs/api/cards        the bundled SAMPLE card set
    POST /rbs/api/contest      {"spec": {...}, "seed": n?, "cards": {...}?} -> contest result
    POST /rbs/api/score        {"spec": {...}, "cards": {...}?}             -> scoring result
    POST /rbs/api/new          {"players": n, "seed": n?, "first": n?, "map": {...}?,
                                "options": {...}?, "cards": {...}?}       -> state + legal
    POST /rbs/api/legal        {"state": {...}}                            -> who acts + legal
    POST /rbs/api/apply        {"state": {...}, "action": "p0 done", "roll": n?} -> new state
"""

from __future__ import annotations

import json
import random
from typing import Any

from flask import Blueprint, jsonify, render_template, request

from engines.errors import RulesError
from engines.royal_bastards import (
    CHANCE,
    GameState,
    Options,
    board_from_dict,
    load_card_set,
    new_game,
    random_action,
    sample_card_set,
)
from engines.royal_bastards.cards import CardSet
from engines.royal_bastards.table import resolve_contest, score_end_game

blueprint = Blueprint("royal_bastards", __name__, template_folder="templates")


class BadRequest(Exception):
    pass


def _body() -> dict[str, Any]:
    raw = request.get_data(cache=False, as_text=True)
    try:
        data = json.loads(raw) if raw.strip() else None
    except json.JSONDecodeError as exc:
        raise BadRequest(
            f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    return data


def _cards(body: dict[str, Any]) -> CardSet:
    return load_card_set(body["cards"]) if body.get("cards") is not None else sample_card_set()


def _seed(body: dict[str, Any], key: str = "seed") -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"{key}: must be an integer")
    return value


def _summary(state: GameState) -> dict[str, Any]:
    out: dict[str, Any] = {"state": state.to_json(), "turn": state.turn, "phase": state.phase,
                           "terminal": state.is_terminal()}
    if state.is_terminal():
        outcome = state.outcome()
        out["outcome"] = outcome.to_dict() if outcome else None
        out["legal"] = []
    else:
        who = state.current_player()
        out["current"] = "chance" if who == CHANCE else who
        out["chance"] = state.describe_chance() if who == CHANCE else None
        out["legal"] = [str(a) for a in state.legal_actions()]
    out["scores"] = state.scores()
    out["log"] = state.log[-30:]
    return out


def _route(func):  # noqa: ANN001, ANN202 - wraps an endpoint with uniform error handling
    def endpoint():  # noqa: ANN202
        try:
            return jsonify(func(_body()))
        except BadRequest as exc:
            return jsonify({"error": str(exc)}), 400
        except RulesError as exc:
            return jsonify({"error": str(exc)}), 400

    endpoint.__name__ = func.__name__
    return endpoint


@blueprint.get("/")
def index():  # noqa: ANN201
    return render_template("royal_bastards/index.html")


@blueprint.get("/api/cards")
def cards():  # noqa: ANN201
    return jsonify(sample_card_set().to_dict())


@blueprint.post("/api/contest")
@_route
def contest(body: dict[str, Any]) -> dict[str, Any]:
    if "spec" not in body:
        raise BadRequest("spec: missing (the contest description)")
    seed = _seed(body)
    return resolve_contest(_cards(body), body["spec"],
                           random.Random(seed) if seed is not None else None)


@blueprint.post("/api/score")
@_route
def score(body: dict[str, Any]) -> dict[str, Any]:
    if "spec" not in body:
        raise BadRequest("spec: missing (the score sheet)")
    return score_end_game(_cards(body), body["spec"])


@blueprint.post("/api/new")
@_route
def new(body: dict[str, Any]) -> dict[str, Any]:
    cards = _cards(body)
    players = body.get("players", 4)
    if players not in (2, 3, 4) or isinstance(players, bool):
        raise BadRequest("players: must be 2, 3 or 4")
    first = body.get("first", 0)
    if isinstance(first, bool) or not isinstance(first, int):
        raise BadRequest("first: must be a player index")
    board = board_from_dict(body["map"], cards) if body.get("map") is not None else None
    state = new_game(players, cards, board, Options.from_dict(body.get("options")), first,
                     seed=_seed(body) or 0)
    return _summary(state)


def _state(body: dict[str, Any]) -> GameState:
    if "state" not in body:
        raise BadRequest("state: missing")
    return GameState.from_json(body["state"])


@blueprint.post("/api/legal")
@_route
def legal(body: dict[str, Any]) -> dict[str, Any]:
    return _summary(_state(body))


@blueprint.post("/api/apply")
@_route
def apply(body: dict[str, Any]) -> dict[str, Any]:
    state = _state(body)
    action = body.get("action")
    roll = _seed(body, "roll")
    rng = random.Random(roll) if roll is not None else None
    if action is not None:
        if not isinstance(action, str):
            raise BadRequest("action: must be a string in the action notation")
        state.apply(action)
    elif rng is None:
        raise BadRequest("action: missing (or give 'roll' to resolve chance nodes)")
    if rng is not None:
        while state.is_chance_node():
            state.apply(random_action(state, rng))
    return _summary(state)
