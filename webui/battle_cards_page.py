"""Battle Cards web page, mounted at /bc: a stateless table helper.

The page keeps the card set and the game state client-side and POSTs them with each request;
every endpoint validates its input and answers JSON (400 with a one-line `error` on bad input).

    GET  /                 the page
    GET  /api/sample-set   the shipped SAMPLE card set
    GET  /api/schema       the card-set JSON schema
    GET  /api/options      the default rule options
    POST /api/validate     {card_set}                               -> summary
    POST /api/matchup      {card_set?, category, cards}             -> match-up result
    POST /api/round        {card_set?, category, placements, to_win?} -> round result
    POST /api/trumps       {card_set?, category, cards}             -> basic-game round result
    POST /api/game/new     {players, mode?, options?, first_player?, card_set?} -> {state, info}
    POST /api/game/apply   {state, action}   action: "draw:CODE", "pick:CODE", ... or "random"
    POST /api/game/load    {state}           -> validated {state, info}
    POST /api/game/undo    {state}
"""

from __future__ import annotations

import json
import random
from typing import Any

from flask import Blueprint, jsonify, render_template, request

from engines.battle_cards import (
    CardSet,
    GameState,
    Options,
    load_sample_set,
    new_game,
    parse_action,
    parse_category,
    resolve_matchup,
    resolve_round,
    resolve_trumps,
    schema_text,
)
from engines.errors import InvalidPositionError, RulesError

blueprint = Blueprint("battle_cards", __name__, template_folder="templates")


class BadRequest(Exception):
    pass


@blueprint.errorhandler(BadRequest)
def _bad_request(exc: BadRequest):
    return jsonify({"error": str(exc)}), 400


@blueprint.errorhandler(RulesError)
def _rules_error(exc: RulesError):
    return jsonify({"error": str(exc), "field": getattr(exc, "field", None)}), 400


def _body() -> dict[str, Any]:
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    return data


def _card_set(data: dict[str, Any]) -> CardSet:
    raw = data.get("card_set")
    if raw is None:
        return load_sample_set()
    try:
        return CardSet.from_dict(raw)
    except InvalidPositionError as exc:
        raise InvalidPositionError(str(exc), "card_set") from exc


def _cards(cs: CardSet, raw: Any, field: str) -> list:
    if isinstance(raw, str):
        raw = [x for x in raw.replace(",", " ").split() if x]
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise BadRequest(f"{field}: must be a list of card codes")
    return [cs.card(x) for x in raw]


def _category(data: dict[str, Any]):
    raw = data.get("category")
    if not isinstance(raw, str):
        raise BadRequest("category: required (strength, skill, magic, terror or value)")
    return parse_category(raw)


def info(g: GameState) -> dict[str, Any]:
    """Everything the page shows about a state (the whole table: it is the table's helper)."""
    out = g.outcome()
    return {
        "mode": g.mode,
        "players": g.players,
        "phase": g.phase,
        "round": g.round_no,
        "to_act": g.current_player(),
        "chance": g.is_chance_node(),
        "whose_draw": g.whose_draw(),
        "legal": [str(a) for a in g.legal_actions()],
        "hands": g.hands,
        "public": g.public,
        "placed": g.placed,
        "pool": g.pool,
        "centre": g.centre,
        "category": g.category,
        "round_wins": g.round_wins,
        "draw_deck": {"shuffled": len(g.deck_shuffled), "known": list(g.deck_known)},
        "current_round": g.round,
        "log": g.log,
        "outcome": out.to_dict() if out else None,
        "outcome_text": str(out) if out else None,
        "history": g.history,
    }


def _state(data: dict[str, Any]) -> GameState:
    if "state" not in data:
        raise BadRequest("state: required (the JSON state returned by /api/game/new)")
    return GameState.from_json(data["state"])


def _reply(g: GameState):
    return jsonify({"state": g.to_json(), "info": info(g)})


@blueprint.get("/")
def index():
    return render_template("battle_cards/index.html")


@blueprint.get("/api/sample-set")
def sample_set():
    return jsonify(load_sample_set().to_dict())


@blueprint.get("/api/schema")
def schema():
    return jsonify(json.loads(schema_text()))


@blueprint.get("/api/options")
def options():
    return jsonify(Options().to_dict())


@blueprint.post("/api/validate")
def validate():
    data = _body()
    if "card_set" not in data:
        raise BadRequest("card_set: required")
    cs = _card_set(data)
    return jsonify({"ok": True, "name": cs.name, "cards": len(cs), "sample": cs.sample})


@blueprint.post("/api/matchup")
def matchup():
    data = _body()
    cs = _card_set(data)
    cards = _cards(cs, data.get("cards"), "cards")
    res = resolve_matchup(cards, _category(data))
    return jsonify({**res.to_dict(), "text": str(res),
                    "details": [c.to_dict() for c in cards]})


@blueprint.post("/api/round")
def round_():
    data = _body()
    cs = _card_set(data)
    raw = data.get("placements")
    if not isinstance(raw, list):
        raise BadRequest("placements: must be a list with one list of cards per player")
    placements = [_cards(cs, p, f"placements[{i}]") for i, p in enumerate(raw)]
    to_win = data.get("to_win", 3)
    if isinstance(to_win, bool) or not isinstance(to_win, int) or to_win < 1:
        raise BadRequest("to_win: must be a positive integer")
    res = resolve_round(placements, _category(data), to_win)
    return jsonify({**res.to_dict(), "text": [str(m) for m in res.matchups]})


@blueprint.post("/api/trumps")
def trumps():
    data = _body()
    cs = _card_set(data)
    res = resolve_trumps(_cards(cs, data.get("cards"), "cards"), _category(data))
    return jsonify({**res.to_dict(), "text": str(res)})


@blueprint.post("/api/game/new")
def game_new():
    data = _body()
    cs = _card_set(data)
    opts_raw = data.get("options")
    try:
        opts = Options.from_dict(opts_raw)
    except TypeError as exc:
        raise BadRequest(f"options: {exc}") from exc
    g = new_game(cs, data.get("players", 2), data.get("mode", "battle"), opts,
                 data.get("first_player", 0))
    return _reply(g)


@blueprint.post("/api/game/apply")
def game_apply():
    data = _body()
    g = _state(data)
    text = data.get("action")
    if not isinstance(text, str) or not text.strip():
        raise BadRequest("action: required, e.g. 'pick:CODE' or 'random'")
    if text.strip().lower() == "random":
        legal = g.legal_actions()
        if not legal:
            raise BadRequest("action: the game is over")
        seed = data.get("seed")
        action = random.Random(seed).choice(legal)
    else:
        action = parse_action(text)
    g.apply(action)
    return _reply(g)


@blueprint.post("/api/game/load")
def game_load():
    return _reply(_state(_body()))


@blueprint.post("/api/game/undo")
def game_undo():
    g = _state(_body())
    g.undo()
    return _reply(g)
