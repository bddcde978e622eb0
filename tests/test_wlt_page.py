"""War Lord Tourney: the /wlt web page and its JSON endpoints."""

from __future__ import annotations

import pytest

from webui.app import create_app


@pytest.fixture
def client():
    return create_app({"TESTING": True}).test_client()


def new(client, **options):
    resp = client.post("/wlt/api/new", json={"options": options})
    assert resp.status_code == 200
    return resp.get_json()


def test_page_is_served(client):
    resp = client.get("/wlt/")
    assert resp.status_code == 200
    assert b"War Lord Tourney" in resp.data and b"api/apply" in resp.data


def test_new_game_view(client):
    view = new(client)
    assert view["phase"] == "move" and view["current_player"] == "white"
    assert view["board"]["terrain"]["e1"] == "castle"
    assert view["board"]["terrain"]["c4"] == "forest"
    assert {u["id"]: u["piece"] for u in view["units"]}["wL"] == "queen"
    assert "wF e5" in view["legal"] and view["can_undo"] is False
    assert view["dungeons"] == {"white": [], "black": []}


def test_moves_apply_undo_view(client):
    view = new(client)
    moves = client.post("/wlt/api/moves", json={"state": view["state"], "unit": "wK"})
    assert moves.status_code == 200 and "wK c3" in moves.get_json()["moves"]
    after = client.post("/wlt/api/apply", json={"state": view["state"], "action": "wK c3"})
    assert after.status_code == 200
    after = after.get_json()
    assert after["current_player"] == "black" and after["can_undo"]
    again = client.post("/wlt/api/view", json={"state": after["state"]}).get_json()
    assert again["state"] == after["state"]
    undone = client.post("/wlt/api/undo", json={"state": after["state"]}).get_json()
    assert undone["state"] == view["state"]


def test_prisoners_shown_after_a_capture(client):
    from engines.war_lord_tourney import GameState

    state = GameState.position({"wW": "a1", "wL": "i1", "bW": "a9", "bL": "d5", "wF": "d3"})
    view = client.post("/wlt/api/apply", json={"state": state.to_json(),
                                              "action": "wF d5"}).get_json()
    assert view["dungeons"]["white"] == ["bL"]


@pytest.mark.parametrize("path, body, words", [
    ("/wlt/api/new", {"options": {"combat": "coin"}}, "options.combat"),
    ("/wlt/api/new", {"board": {"files": 2}}, "board"),
    ("/wlt/api/view", {}, "missing 'state'"),
    ("/wlt/api/view", {"state": {"units": 1}}, "units"),
    ("/wlt/api/moves", {"state": "NEW", "unit": "wZ"}, "unknown unit"),
    ("/wlt/api/apply", {"state": "NEW", "action": 5}, "'action' must be"),
    ("/wlt/api/apply", {"state": "NEW", "action": "wF e8"}, "not legal"),
    ("/wlt/api/undo", {"state": "NEW"}, "nothing to undo"),
    ("/wlt/api/view", [1, 2], "JSON object"),
])
def test_bad_requests_are_400_with_a_message(client, path, body, words):
    fresh = new(client)["state"]
    if isinstance(body, dict):
        body = {k: fresh if v == "NEW" else v for k, v in body.items()}
    resp = client.post(path, json=body)
    assert resp.status_code == 400
    assert words in resp.get_json()["error"]


@pytest.mark.parametrize("path", ["/wlt/api/new", "/wlt/api/view", "/wlt/api/moves",
                                  "/wlt/api/apply", "/wlt/api/undo"])
def test_malformed_json_is_400(client, path):
    resp = client.post(path, data="{not json", content_type="application/json")
    assert resp.status_code == 400
    assert "JSON" in resp.get_json()["error"]
