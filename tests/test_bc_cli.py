"""Battle Cards command line: `royal-table bc ...`."""

from __future__ import annotations

import json

import pytest

from engines.battle_cards import load_sample_set
from webui.cli import main


def run(capsys, *argv):
    code = main(["bc", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def set_file(tmp_path):
    doc = {"name": "tiny", "cards": [
        {"code": "ORC", "name": "Orc", "strength": 5, "skill": 2, "magic": 1, "terror": 4,
         "value": 2, "size": "B"},
        {"code": "ELF", "name": "Elf", "strength": 5, "skill": 7, "magic": 6, "terror": 1,
         "value": 3, "size": "S"},
        {"code": "IMP", "name": "Imp", "strength": 5, "skill": 1, "magic": 6, "terror": 2,
         "value": 3, "size": "M"},
    ]}
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps(doc))
    return str(p)


@pytest.mark.parametrize("sub", ["", "validate", "schema", "cards", "matchup", "round", "trumps",
                                 "selfplay", "new", "apply", "show"])
def test_help_everywhere(capsys, sub):
    argv = ["bc", sub, "--help"] if sub else ["bc", "--help"]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_validate_sample_and_file(capsys, set_file):
    code, out, _ = run(capsys, "validate")
    assert code == 0 and "SAMPLE" in out and "40 cards" in out
    code, out, _ = run(capsys, "validate", set_file)
    assert code == 0 and "'tiny', 3 cards" in out


@pytest.mark.parametrize("content, message", [
    ("{oops", "malformed JSON"),
    ('{"name": "x", "cards": [1, 2]}', "cards[0]"),
    ('{"name": "x", "cards": []}', "at least 2"),
])
def test_validate_bad_files(capsys, tmp_path, content, message):
    p = tmp_path / "bad.json"
    p.write_text(content)
    code, out, err = run(capsys, "validate", str(p))
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_validate_missing_file(capsys):
    code, _, err = run(capsys, "validate", "/no/such/file.json")
    assert code == 2 and "cannot read" in err


def test_schema_prints_json(capsys):
    code, out, _ = run(capsys, "schema")
    assert code == 0 and json.loads(out)["title"] == "Battle Cards card set"


def test_cards_listing(capsys, set_file):
    code, out, _ = run(capsys, "cards", "--set", set_file)
    assert code == 0 and "ORC" in out and "Elf" in out
    code, out, _ = run(capsys, "cards", "--json")
    assert code == 0 and json.loads(out)["sample"] is True


def test_matchup_size_tie_break(capsys, set_file):
    # all strength 5: B (ORC) v S (ELF): S beats B
    code, out, _ = run(capsys, "matchup", "ORC", "ELF", "--category", "strength",
                       "--set", set_file)
    assert code == 0 and "ELF wins by size" in out
    code, out, _ = run(capsys, "matchup", "orc", "Imp", "-c", "str", "--set", set_file, "--json")
    assert code == 0 and json.loads(out) == {"category": "strength", "cards": ["ORC", "IMP"],
                                             "winner": 0, "by": "size", "contenders": [0]}
    code, out, _ = run(capsys, "matchup", "ELF", "IMP", "-c", "magic", "--set", set_file)
    assert "IMP wins by size" in out  # M beats S


def test_matchup_errors(capsys, set_file):
    code, _, err = run(capsys, "matchup", "ORC", "DRAGON", "-c", "strength", "--set", set_file)
    assert code == 2 and "unknown card 'DRAGON'" in err
    code, _, err = run(capsys, "matchup", "ORC", "ELF", "-c", "speed", "--set", set_file)
    assert code == 2 and "unknown category" in err
    code, _, err = run(capsys, "matchup", "ORC", "-c", "skill", "--set", set_file)
    assert code == 2 and "at least 2" in err


def test_round(capsys):
    codes = load_sample_set().codes
    a, b = ",".join(codes[:5]), ",".join(codes[5:10])
    code, out, _ = run(capsys, "round", "-c", "magic", a, b)
    assert code == 0 and "match-up 1:" in out and "round won by" in out
    code, out, _ = run(capsys, "round", "-c", "magic", a, b, "--json")
    data = json.loads(out)
    assert data["winner"] in (0, 1) and data["turned"] >= 3
    code, _, err = run(capsys, "round", "-c", "magic", a, ",".join(codes[5:9]))
    assert code == 2 and "same number" in err


def test_trumps_round(capsys, set_file):
    code, out, _ = run(capsys, "trumps", "ORC", "ELF", "IMP", "-c", "strength", "--set", set_file)
    assert code == 0 and "tie between" in out and "centre" in out
    code, out, _ = run(capsys, "trumps", "ORC", "ELF", "-c", "skill", "--set", set_file)
    assert "ELF wins" in out


@pytest.mark.parametrize("players", [2, 3, 4])
def test_selfplay_battle(capsys, players):
    code, out, _ = run(capsys, "selfplay", "--players", str(players), "--seed", "3")
    assert code == 0 and "winner: P" in out and "won 3 rounds" in out and "round 1 on" in out
    code2, out2, _ = run(capsys, "selfplay", "--players", str(players), "--seed", "3")
    assert out2 == out  # seeded: reproducible


def test_selfplay_trumps_json_and_many_games(capsys):
    code, out, _ = run(capsys, "selfplay", "--mode", "trumps", "-n", "3", "-s", "2", "--json")
    data = json.loads(out)
    assert code == 0 and data["outcome"]["winners"] and data["actions"] == len(data["history"])
    code, out, _ = run(capsys, "selfplay", "--games", "5", "-o", "draft_order=snake",
                       "-o", "battle_round_limit=4")
    assert code == 0 and "5 games" in out and "games/s" in out


def test_selfplay_bad_options(capsys):
    code, _, err = run(capsys, "selfplay", "-o", "draft_order=zigzag")
    assert code == 2 and "options.draft_order" in err
    code, _, err = run(capsys, "selfplay", "-o", "nonsense")
    assert code == 2 and "KEY=VALUE" in err
    code, _, err = run(capsys, "selfplay", "-o", "colour=1")
    assert code == 2 and "unknown option" in err
    code, _, err = run(capsys, "selfplay", "--players", "5")
    assert code == 2 and "2-4 players" in err


def test_new_apply_show_track_a_game(capsys, tmp_path):
    state = tmp_path / "game.json"
    code, out, _ = run(capsys, "new", "--players", "2", "--out", str(state))
    assert code == 0 and "phase draft" in out
    codes = load_sample_set().codes
    code, out, _ = run(capsys, "apply", str(state), f"pick:{codes[0]}", f"pick {codes[1]}")
    assert code == 0 and f"P1 hand: {codes[0]}" in out
    assert json.loads(state.read_text())["history"] == [f"pick:{codes[0]}", f"pick:{codes[1]}"]
    code, out, err = run(capsys, "apply", str(state), f"pick:{codes[0]}")
    assert code == 2 and "no longer on the table" in err
    code, out, _ = run(capsys, "show", str(state), "--player", "2")
    assert code == 0 and json.loads(out)["hand"] == [codes[1]]
    code, out, _ = run(capsys, "show", str(state))
    assert "P1 to act" in out
    code, _, err = run(capsys, "show", str(state), "--player", "7")
    assert code == 2


def test_apply_rejects_tampered_state(capsys, tmp_path):
    state = tmp_path / "game.json"
    run(capsys, "new", "--out", str(state))
    data = json.loads(state.read_text())
    data["state"]["pool"] = []
    state.write_text(json.dumps(data))
    code, _, err = run(capsys, "show", str(state))
    assert code == 2 and "state.pool" in err
