"""`royal-table rbs ...` command-line helper."""

from __future__ import annotations

import json

import pytest

from tests.test_rbs_table import rulebook_example
from webui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["rbs", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("sub", ["", "cards", "map", "contest", "score", "new", "legal", "apply",
                                 "selfplay"])
def test_help_everywhere(capsys, sub):
    with pytest.raises(SystemExit) as exit_:
        main(["rbs", *([sub] if sub else []), "--help"])
    assert exit_.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_no_action_prints_usage(capsys):
    code, _, err = run(capsys)
    assert code == 2 and "ACTION" in err


def test_cards_lists_the_sample(capsys):
    code, out, _ = run(capsys, "cards")
    assert code == 0 and "card set 'sample'" in out and "poisonous-gas" in out
    code, out, _ = run(capsys, "cards", "--json")
    assert json.loads(out)["label"] == "sample"


def test_cards_from_a_file_and_bad_files(capsys, tmp_path):
    path = tmp_path / "cards.json"
    code, out, _ = run(capsys, "cards", "--json")
    data = json.loads(out)
    data["bastards"][0]["hometown"] = "atlantis"
    path.write_text(json.dumps(data))
    code, _, err = run(capsys, "cards", "--cards", str(path))
    assert code == 2 and "bastards[0].hometown" in err and "Traceback" not in err
    code, _, err = run(capsys, "cards", "--cards", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err


def test_map_random_and_loaded(capsys, tmp_path):
    code, out, _ = run(capsys, "map", "--seed", "2", "--json")
    assert code == 0
    path = tmp_path / "map.json"
    path.write_text(out)
    code, out, _ = run(capsys, "map", "--map", str(path))
    assert code == 0 and "joda-city:" in out
    code, _, err = run(capsys, "map", "--map", '{"adjacent": [["joda-city", "orkland"]]}')
    assert code == 2 and "missing" in err


def test_contest_text_and_json(capsys):
    spec = json.dumps(rulebook_example())
    code, out, _ = run(capsys, "contest", spec)
    assert code == 0 and "winner: blue" in out and "tie broken by base attribute" in out
    code, out, _ = run(capsys, "contest", spec, "--json")
    assert json.loads(out)["participants"][0]["total"] == 19


def test_contest_rolls_with_a_seed(capsys):
    spec = rulebook_example()
    for p in spec["participants"]:
        del p["dice"]
    code, out, _ = run(capsys, "contest", json.dumps(spec), "--seed", "3", "--json")
    assert code == 0 and json.loads(out)["winner"] in ("blue", "red")
    code, _, err = run(capsys, "contest", json.dumps(spec))
    assert code == 2 and "seeded roll" in err


@pytest.mark.parametrize("text, message", [("{bad", "not valid JSON"),
                                           ('{"contest": "nope"}', "unknown contest card")])
def test_contest_bad_input(capsys, text, message):
    code, out, err = run(capsys, "contest", text)
    assert code == 2 and message in err and out == "" and len(err.strip().splitlines()) == 1


def test_score(capsys):
    spec = {"players": ["red", "blue"], "support": {"joda-city": [3, 3], "orkland": [2, 0]}}
    code, out, _ = run(capsys, "score", json.dumps(spec))
    assert code == 0 and "needs a contest for the territory joda-city" in out
    spec["tie_winners"] = {"joda-city": "red"}
    code, out, _ = run(capsys, "score", json.dumps(spec))
    assert "crowned: red" in out and "red: 15 Royal Approval Points" in out


def test_new_legal_apply_round_trip(capsys, tmp_path):
    state = tmp_path / "s.json"
    code, _, _ = run(capsys, "new", "--players", "2", "--seed", "4", "--out", str(state))
    assert code == 0
    code, out, _ = run(capsys, "legal", str(state))
    assert "chance: draw a bastard card for p0" in out
    code, _, _ = run(capsys, "apply", str(state), "--roll", "1", "--out", str(state))
    code, out, _ = run(capsys, "legal", str(state))
    assert "p0 to act" in out
    choice = out.split("\n")[1].strip()
    code, _, _ = run(capsys, "apply", str(state), choice, "--roll", "1", "--out", str(state))
    assert code == 0
    data = json.loads(state.read_text())
    assert data["players"][0]["bastards"][0]["card"] == choice.split()[-1]
    code, _, err = run(capsys, "apply", str(state), "p0 fly away")
    assert code == 2 and "cannot read action" in err


def test_apply_rejects_a_broken_state(capsys, tmp_path):
    path = tmp_path / "s.json"
    run(capsys, "new", "--players", "2", "--out", str(path))
    data = json.loads(path.read_text())
    data["players"][0]["supply"] = 3
    path.write_text(json.dumps(data))
    code, _, err = run(capsys, "legal", str(path))
    assert code == 2 and "players[0].supply" in err


def test_new_with_options_and_bad_options(capsys):
    code, out, _ = run(capsys, "new", "--players", "3", "--options",
                       '{"firstborn_reroll": "once"}')
    assert code == 0 and json.loads(out)["options"]["firstborn_reroll"] == "once"
    code, _, err = run(capsys, "new", "--options", '{"firstborn_reroll": "always"}')
    assert code == 2 and "options.firstborn_reroll" in err


def test_selfplay_reports_games_per_second(capsys):
    code, out, _ = run(capsys, "selfplay", "--players", "3", "--games", "2", "--verbose")
    assert code == 0 and "games/s" in out and out.count("game ") >= 2
