"""Battle Cards web page (/bc): every route, and bad input -> 400 with a message."""

from __future__ import annotations

import json

import pytest

from engines.battle_cards import load_sample_set
from webui.app import create_app

CODES = load_sample_set().codes


@pytest.fixture
def client():
    return create_app({"TESTING": True}).test_client()


def post(client, path, body):
    return client.post("/bc/api/" + path, json=body)


def test_page_is_served(client):
    r = client.get("/bc/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert "Battle Cards" in html and "/api/" in html and "http" not in html.split("<script>")[1]


def test_get_routes(client):
    r = client.get("/bc/api/sample-set")
    assert r.status_code == 200 and r.get_json()["sample"] is True
    r = client.get("/bc/api/schema")
    assert r.get_json()["$id"] == "royal-table/battle-cards/card-set/v1"
    r = client.get("/bc/api/options")
    assert r.get_json()["squad_value_limit"] == 30


@pytest.mark.parametrize("path", ["validate", "matchup", "round", "trumps", "game/new",
                                  "game/apply", "game/undo", "game/load"])
def test_malformed_json_is_a_400_with_a_message(client, path):
    r = client.post("/bc/api/" + path, data="{not json", content_type="application/json")
    assert r.status_code == 400 and "JSON object" in r.get_json()["error"]
    r = client.post("/bc/api/" + path, json=[1, 2])
    assert r.status_code == 400 and r.get_json()["error"]


def test_validate(client):
    r = post(client, "validate", {"card_set": load_sample_set().to_dict()})
    assert r.status_code == 200 and r.get_json()["cards"] == 40
    bad = load_sample_set().to_dict()
    bad["cards"][2]["size"] = "XL"
    r = post(client, "validate", {"card_set": bad})
    assert r.status_code == 400 and "cards[2].size" in r.get_json()["error"]
    assert post(client, "validate", {}).status_code == 400


def test_matchup(client):
    r = post(client, "matchup", {"category": "strength", "cards": [CODES[0], CODES[1]]})
    data = r.get_json()
    assert r.status_code == 200 and data["winner"] == 0 and "wins by score" in data["text"]
    assert len(data["details"]) == 2
    r = post(client, "matchup", {"category": "str", "cards": f"{CODES[0]}, {CODES[1]}"})
    assert r.status_code == 200
    custom = {"name": "t", "cards": [
        {"code": "X", "name": "X", "strength": 1, "skill": 1, "magic": 1, "terror": 1,
         "value": 1, "size": "B"},
        {"code": "Y", "name": "Y", "strength": 1, "skill": 1, "magic": 1, "terror": 1,
         "value": 1, "size": "S"}]}
    r = post(client, "matchup", {"card_set": custom, "category": "magic", "cards": ["X", "Y"]})
    assert r.get_json()["winner"] == 1 and r.get_json()["by"] == "size"


@pytest.mark.parametrize("body, message", [
    ({"category": "strength", "cards": ["NOPE", "GOBSCO"]}, "unknown card"),
    ({"category": "speed", "cards": ["GOBSCO", "FORSPR"]}, "unknown category"),
    ({"cards": ["GOBSCO", "FORSPR"]}, "category"),
    ({"category": "skill", "cards": 5}, "cards"),
    ({"category": "skill", "cards": ["GOBSCO"]}, "at least 2"),
    ({"category": "skill", "cards": ["A", "B"], "card_set": {"name": "x"}}, "card_set"),
])
def test_matchup_errors(client, body, message):
    r = post(client, "matchup", body)
    assert r.status_code == 400 and message in r.get_json()["error"]


def test_round(client):
    body = {"category": "magic", "placements": [list(CODES[:5]), list(CODES[5:10]),
                                                list(CODES[10:15])]}
    r = post(client, "round", body)
    data = r.get_json()
    assert r.status_code == 200 and len(data["wins"]) == 3 and len(data["text"]) == data["turned"]
    assert data["winner"] is not None or len(data["decider"]) >= 2
    for bad in ({"category": "magic", "placements": "x"},
                {"category": "magic", "placements": [list(CODES[:5]), list(CODES[5:9])]},
                {**body, "to_win": 0}):
        r = post(client, "round", bad)
        assert r.status_code == 400 and r.get_json()["error"]


def test_trumps(client):
    r = post(client, "trumps", {"category": "value", "cards": [CODES[0], CODES[1], CODES[2]]})
    assert r.status_code == 200 and "text" in r.get_json()


def test_track_a_whole_battle_game(client):
    r = post(client, "game/new", {"players": 3, "first_player": 1})
    assert r.status_code == 200
    reply = r.get_json()
    assert reply["info"]["phase"] == "draft" and reply["info"]["to_act"] == 1
    state = reply["state"]
    steps = 0
    while reply["info"]["outcome"] is None:
        info = reply["info"]
        action = "random" if info["chance"] else info["legal"][0]
        reply = post(client, "game/apply", {"state": state, "action": action, "seed": steps})
        assert reply.status_code == 200, reply.get_json()
        reply = reply.get_json()
        state = reply["state"]
        steps += 1
        assert steps < 2000
    assert reply["info"]["outcome_text"].startswith("winner: P")
    r = post(client, "game/undo", {"state": state})
    assert r.status_code == 200 and r.get_json()["info"]["outcome"] is None
    r = post(client, "game/load", {"state": state})
    assert r.status_code == 200 and r.get_json()["state"] == state
    r = post(client, "game/apply", {"state": state, "action": "random"})
    assert r.status_code == 400 and "over" in r.get_json()["error"]


def test_game_errors(client):
    new = post(client, "game/new", {"players": 2}).get_json()
    state = new["state"]
    cases = [
        ("game/new", {"players": 7}, "players"),
        ("game/new", {"players": 2, "options": {"draft_order": "x"}}, "options.draft_order"),
        ("game/new", {"players": 2, "options": {"nope": 1}}, "unknown option"),
        ("game/new", {"players": 2, "options": 3}, "options"),
        ("game/new", {"players": 2, "mode": "war"}, "mode"),
        ("game/apply", {"state": state}, "action"),
        ("game/apply", {"state": state, "action": "fly:away"}, "unknown action"),
        ("game/apply", {"state": state, "action": "place:GOBSCO"}, "not legal"),
        ("game/apply", {"action": "pick:GOBSCO"}, "state"),
        ("game/undo", {"state": state}, "nothing to undo"),
    ]
    for path, body, message in cases:
        r = post(client, path, body)
        assert r.status_code == 400, (path, body)
        assert message in r.get_json()["error"], (message, r.get_json())
    tampered = json.loads(json.dumps(state))
    tampered["state"]["pool"] = tampered["state"]["pool"][1:]
    r = post(client, "game/load", {"state": tampered})
    assert r.status_code == 400 and r.get_json()["field"] == "state.pool"


def test_trumps_game_over_the_api(client):
    r = post(client, "game/new", {"players": 2, "mode": "trumps",
                                  "options": {"trumps_round_limit": 3}})
    reply = r.get_json()
    assert reply["info"]["chance"] is True
    for k in range(60):
        if reply["info"]["outcome"]:
            break
        info = reply["info"]
        action = "random" if info["chance"] else info["legal"][0]
        reply = post(client, "game/apply", {"state": reply["state"], "action": action,
                                            "seed": k}).get_json()
    assert reply["info"]["outcome"] and "round limit" in reply["info"]["outcome"]["reason"]
