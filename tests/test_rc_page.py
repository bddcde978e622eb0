"""Royal Conquest web page (/rc): every route, good and bad input."""

from __future__ import annotations

import pytest

from engines.royal_conquest import DEFAULT_DECK, GameState
from webui.app import create_app


@pytest.fixture()
def client():
    return create_app({"TESTING": True}).test_client()


def test_page(client):
    resp = client.get("/rc/")
    assert resp.status_code == 200
    html = resp.get_data(as_text=True)
    assert "Royal Conquest" in html and "/rc/api/score" in html
    for token in ("wand", "bow", "sword", "axe", "helmet", "body", "shield", "crown", "castle"):
        assert f'data-token="{token}"' in html
    assert "http://" not in html and "https://" not in html  # no CDN


def test_deck_route(client):
    assert client.get("/rc/api/deck").get_json() == DEFAULT_DECK.to_json()


def test_score(client):
    resp = client.post("/rc/api/score", json={"tokens": ["wand"] * 3 + ["crown"] * 2,
                                              "players": 2})  # fmt: skip
    data = resp.get_json()
    assert resp.status_code == 200
    assert data["points"] == 5 and data["must_call"] and not data["must_stop"]
    assert data["threshold"] == 5
    assert any(n["token"] == "crown" and n["more"] == 1 for n in data["near"])


def test_score_after_go(client):
    body = {"tokens": ["wand"] * 3, "players": 2, "go_score": 5}
    assert client.post("/rc/api/score", json=body).get_json()["must_call"] is False


def test_score_five_crowns(client):
    data = client.post("/rc/api/score", json={"tokens": ["crown"] * 5, "players": 2}).get_json()
    assert data["must_stop"] and data["must_call"]


@pytest.mark.parametrize(
    "body,msg",
    [
        ({"tokens": "wand"}, "tokens must be a list"),
        ({"tokens": ["spear"]}, "unknown token"),
        ({"tokens": [3]}, "expected a token word"),
        ({"tokens": ["wand"] * 4}, "only 3 wand"),
        ({"tokens": [], "players": 5}, "players"),
        ({"tokens": [], "players": "two"}, "players must be an integer"),
        ({"tokens": [], "go_score": -1}, "go_score"),
        ({"tokens": [], "grouping": "sometimes"}, "grouping"),
        ([1, 2], "JSON object"),
    ],
)
def test_score_bad_input(client, body, msg):
    resp = client.post("/rc/api/score", json=body)
    assert resp.status_code == 400 and msg in resp.get_json()["error"]


@pytest.mark.parametrize("route", ["/rc/api/score", "/rc/api/new", "/rc/api/legal",
                                   "/rc/api/apply"])  # fmt: skip
def test_malformed_json_is_400(client, route):
    resp = client.post(route, data="{nope", content_type="application/json")
    assert resp.status_code == 400
    assert resp.get_json()["error"] == "request body is not valid JSON"


def test_new_legal_apply_round_trip(client):
    resp = client.post("/rc/api/new", json={"players": 3})
    data = resp.get_json()
    assert resp.status_code == 200 and data["chance"] and data["legal"][0] == "first p0"
    resp = client.post("/rc/api/apply", json={"state": data["state"], "action": "first p1"})
    data = resp.get_json()
    assert data["phase"] == "deal" and data["state"]["first_player"] == 1
    resp = client.post("/rc/api/legal", json={"state": data["state"]})
    assert resp.get_json()["legal"][0] == "war A1"
    GameState.from_json(data["state"])


@pytest.mark.parametrize(
    "route,body,msg",
    [
        ("/rc/api/new", {"players": 9}, "players"),
        ("/rc/api/new", {"players": 2, "options": {"go_bonus": "x"}}, "options.go_bonus"),
        ("/rc/api/legal", {}, "missing 'state'"),
        ("/rc/api/legal", {"state": {"game": "chess"}}, "game"),
        ("/rc/api/apply", {"state": "STATE"}, "action must be a string"),
        ("/rc/api/apply", {"state": "STATE", "action": "stop"}, "not legal"),
        ("/rc/api/apply", {"state": "STATE", "action": "xyzzy"}, "cannot read"),
    ],
)
def test_game_routes_bad_input(client, route, body, msg):
    if body.get("state") == "STATE":
        body = dict(body, state=GameState(2).to_json())
    resp = client.post(route, json=body)
    assert resp.status_code == 400 and msg in resp.get_json()["error"]
