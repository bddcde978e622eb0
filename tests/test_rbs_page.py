"""The /rbs page and its JSON endpoints."""

from __future__ import annotations

import pytest

from tests.test_rbs_table import rulebook_example
from webui.app import create_app


@pytest.fixture()
def client():
    return create_app({"TESTING": True}).test_client()


def test_page_renders(client):
    r = client.get("/rbs/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert "Royal Bastards" in html and "api/contest" in html and "api/score" in html
    assert "api/new" in html and "api/apply" in html  # the whole-game panel
    assert "http://" not in html and "https://" not in html  # no CDN


def test_cards_endpoint(client):
    r = client.get("/rbs/api/cards")
    assert r.status_code == 200 and r.json["label"] == "sample"


@pytest.mark.parametrize("url", ["/rbs/api/contest", "/rbs/api/score", "/rbs/api/new",
                                 "/rbs/api/legal", "/rbs/api/apply"])
def test_malformed_json_is_a_400_with_a_message(client, url):
    r = client.post(url, data="{not json", content_type="application/json")
    assert r.status_code == 400 and "malformed JSON" in r.json["error"]
    r = client.post(url, data="[1, 2]", content_type="application/json")
    assert r.status_code == 400 and "JSON object" in r.json["error"]


def test_contest_endpoint(client):
    r = client.post("/rbs/api/contest", json={"spec": rulebook_example()})
    assert r.status_code == 200 and r.json["winner"] == "blue"
    spec = rulebook_example()
    for p in spec["participants"]:
        del p["dice"]
    r = client.post("/rbs/api/contest", json={"spec": spec, "seed": 5})
    assert r.status_code == 200 and r.json["winner"] in ("blue", "red")
    r = client.post("/rbs/api/contest", json={"spec": spec})
    assert r.status_code == 400 and "dice" in r.json["error"]
    r = client.post("/rbs/api/contest", json={"spec": spec, "seed": "x"})
    assert r.status_code == 400 and "seed" in r.json["error"]
    r = client.post("/rbs/api/contest", json={})
    assert r.status_code == 400 and "spec" in r.json["error"]


def test_score_endpoint(client):
    spec = {"players": ["a", "b"], "support": {"orkland": [2, 1]}}
    r = client.post("/rbs/api/score", json={"spec": spec})
    assert r.status_code == 200 and r.json["winner"] == "a"
    r = client.post("/rbs/api/score", json={"spec": {"players": ["a"]}})
    assert r.status_code == 400 and "players" in r.json["error"]


def test_game_endpoints_are_stateless(client):
    r = client.post("/rbs/api/new", json={"players": 2, "seed": 3})
    assert r.status_code == 200 and r.json["current"] == "chance"
    r = client.post("/rbs/api/apply", json={"state": r.json["state"], "roll": 1})
    assert r.status_code == 200 and r.json["current"] == 0
    action = r.json["legal"][0]
    r2 = client.post("/rbs/api/apply", json={"state": r.json["state"], "action": action})
    assert r2.status_code == 200 and r2.json["current"] in (1, "chance")
    r3 = client.post("/rbs/api/legal", json={"state": r2.json["state"]})
    assert r3.status_code == 200 and r3.json["legal"] == r2.json["legal"]
    bad = client.post("/rbs/api/apply", json={"state": r.json["state"], "action": "p1 done"})
    assert bad.status_code == 400 and "p0's turn" in bad.json["error"]
    bad = client.post("/rbs/api/apply", json={"state": r.json["state"]})
    assert bad.status_code == 400 and "action" in bad.json["error"]
    broken = dict(r.json["state"], phase="lunch")
    bad = client.post("/rbs/api/legal", json={"state": broken})
    assert bad.status_code == 400 and "phase" in bad.json["error"]
    bad = client.post("/rbs/api/new", json={"players": 7})
    assert bad.status_code == 400 and "players" in bad.json["error"]
    bad = client.post("/rbs/api/legal", json={})
    assert bad.status_code == 400 and "state" in bad.json["error"]
