"""Royal Conquest: `royal-table rc ...`."""

from __future__ import annotations

import io
import json

import pytest

from engines.royal_conquest import DEFAULT_DECK, GameState
from webui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["rc", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_score_text(capsys):
    code, out, _ = run(capsys, "score", "wand", "wand", "wand", "castle", "--players", "2")
    assert code == 0
    assert "4 cards: 5 points" in out and "3 Wands" in out
    assert "Must call (needs 5 points): yes" in out


def test_score_json_has_points_combinations_must_stop(capsys):
    argv = ["score", "--json", *(["crown"] * 5), "bow", "bow", "bow", "sword", "sword", "axe"]
    code, out, _ = run(capsys, *argv)
    data = json.loads(out)
    assert code == 0
    assert data["points"] == 4 + 3
    assert [c["name"] for c in data["combinations"]] == ["3 Crowns", "5 Crowns (must STOP)",
                                                         "3 Bows"]  # fmt: skip
    assert data["must_stop"] is True and data["must_call"] is True


def test_score_faq_and_close_combinations(capsys):
    code, out, _ = run(capsys, "score", "--json", "bow", "bow", "sword", "sword", "axe")
    data = json.loads(out)
    assert data["points"] == 2 and data["must_stop"] is False
    bow = next(n for n in data["near"] if n["token"] == "bow")
    assert bow == {"token": "bow", "more": 1, "gain": 1, "makes": ["3 Bows"], "must_stop": False}


def test_score_go_score_and_grouping(capsys):
    _, out, _ = run(capsys, "score", "--json", "--players", "2", "--go-score", "5",
                    "wand", "wand", "wand")  # fmt: skip
    assert json.loads(out)["must_call"] is False
    argv = ["score", "--json", "--grouping", "best", "bow", "bow", "bow", "sword", "sword",
            "axe", "axe"]  # fmt: skip
    assert json.loads(run(capsys, *argv)[1])["points"] == 4


def test_score_nothing(capsys):
    code, out, _ = run(capsys, "score")
    assert code == 0 and "0 points" in out


@pytest.mark.parametrize("argv,msg", [(["score", "spear"], "unknown token"),
                                      (["score", *["wand"] * 4], "only 3 wand")])  # fmt: skip
def test_score_bad_input(capsys, argv, msg):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and msg in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_help_everywhere(capsys):
    for argv in ([], ["score"], ["deck"], ["new"], ["legal"], ["apply"], ["selfplay"]):
        with pytest.raises(SystemExit) as exc:
            main(["rc", *argv, "--help"])
        assert exc.value.code == 0
        assert "usage" in capsys.readouterr().out
    assert main(["rc"]) == 0


def test_deck(capsys, tmp_path):
    code, out, _ = run(capsys, "deck")
    assert code == 0 and out.startswith("Lion") and "A1:wand" in out
    code, out, _ = run(capsys, "deck", "--json")
    assert json.loads(out) == DEFAULT_DECK.to_json()
    own = DEFAULT_DECK.to_json()
    own["cards"][0]["token"], own["cards"][47]["token"] = "castle", "wand"
    path = tmp_path / "deck.json"
    path.write_text(json.dumps(own))
    code, out, _ = run(capsys, "deck", "--deck", str(path))
    assert "A1:castle" in out and "L4:wand" in out
    own["cards"][0]["token"] = "wand"
    path.write_text(json.dumps(own))
    code, _, err = run(capsys, "deck", "--deck", str(path))
    assert code == 2 and "deck.cards" in err


def test_new_legal_apply(capsys, tmp_path, monkeypatch):
    code, out, _ = run(capsys, "new", "--players", "3", "--options", '{"go_bonus": "linear"}')
    state = json.loads(out)
    assert code == 0 and state["players"] == 3 and state["options"]["go_bonus"] == "linear"
    path = tmp_path / "s.json"
    path.write_text(out)
    code, out, _ = run(capsys, "legal", str(path))
    assert "first p2" in out
    code, out, _ = run(capsys, "legal", "--json", str(path))
    assert json.loads(out)["actions"] == ["first p0", "first p1", "first p2"]
    code, out, _ = run(capsys, "apply", str(path), "first p1", "war A1")
    after = GameState.from_json(json.loads(out))
    assert after.first_player == 1 and after.battlefield[0].arms == 0
    monkeypatch.setattr("sys.stdin", io.StringIO(out))
    code, out, _ = run(capsys, "legal", "-")
    assert code == 0 and "phase deal" in out


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["legal", "/nonexistent/s.json"], "cannot read"),
        (["apply", "BAD", "go"], "not valid JSON"),
        (["apply", "GOOD", "stop"], "not legal"),
        (["apply", "GOOD", "play Z9"], "unknown War card"),
        (["apply", "WRONG", "go"], "cards missing"),
        (["new", "--options", "{oops"], "not valid JSON"),
        (["new", "--options", '{"gem_pot": -1}'], "options.gem_pot"),
        (["selfplay", "--games", "0"], "at least 1"),
    ],
)
def test_state_commands_bad_input(capsys, tmp_path, argv, msg):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GameState(2).to_json()))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    wrong = GameState(2).to_json()
    wrong["war_deck"].pop()
    wrong_path = tmp_path / "wrong.json"
    wrong_path.write_text(json.dumps(wrong))
    paths = {"GOOD": str(good), "BAD": str(bad), "WRONG": str(wrong_path)}
    code, _, err = run(capsys, *[paths.get(a, a) for a in argv])
    assert code == 2 and msg in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_selfplay(capsys):
    code, out, _ = run(capsys, "selfplay", "--players", "4", "--seed", "3", "--games", "2")
    assert code == 0 and "seed 3:" in out and "games/s" in out
    code, out, _ = run(capsys, "selfplay", "--json", "--seed", "3")
    data = json.loads(out)
    assert data["games"][0]["reason"] == "pot_empty" and sum(data["games"][0]["gems"]) == 25
