"""War Lord Tourney: the `royal-table wlt` commands."""

from __future__ import annotations

import io
import json

import pytest

from webui.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["wlt", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def new_state(tmp_path, capsys):
    code, out, _ = run(capsys, "new")
    assert code == 0
    path = tmp_path / "state.json"
    path.write_text(out)
    return path


def test_help_everywhere(capsys):
    for argv in ([], ["new"], ["show"], ["moves"], ["apply"], ["play"], ["pieces"]):
        with pytest.raises(SystemExit) as info:
            main(["wlt", *argv, "--help"])
        assert info.value.code == 0
        assert "usage" in capsys.readouterr().out
    assert main(["wlt"]) == 0


def test_new_show_moves_apply(new_state, capsys, tmp_path):
    code, out, _ = run(capsys, "show", str(new_state))
    assert code == 0 and "turn 1, phase move, to act: white" in out and "wK" in out
    code, out, _ = run(capsys, "moves", str(new_state), "--unit", "wK")
    assert code == 0 and "wK c3" in out.split("\n")
    code, out, _ = run(capsys, "moves", str(new_state))
    assert "wF e5" in out.split("\n")
    code, out, _ = run(capsys, "apply", str(new_state), "wF e5", "bF e6")
    assert code == 0
    state = json.loads(out)
    assert state["units"]["wF"]["cell"] == "e5" and state["turn"] == 3
    assert len(state["history"]) == 2


def test_state_from_standard_input(new_state, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(new_state.read_text()))
    code, out, _ = run(capsys, "show", "-")
    assert code == 0 and "white dungeon" in out


def test_new_with_options(capsys):
    code, out, _ = run(capsys, "new", "--options", '{"combat": "dice", "sergeants": true}')
    assert code == 0
    assert json.loads(out)["units"]["wS"]["cell"] == "g1"


@pytest.mark.parametrize("argv, words", [
    (["apply", "STATE", "wF e7"], "not legal"),
    (["apply", "STATE", "gibberish"], "unknown action"),
    (["moves", "STATE", "--unit", "wZ"], "unknown unit"),
    (["new", "--options", "{bad"], "not valid JSON"),
    (["new", "--options", '{"combat": "coin"}'], "options.combat"),
    (["show", "/no/such/file.json"], "cannot read"),
    (["play", "--games", "0"], "--games"),
])
def test_bad_input_is_one_line_and_exit_2(new_state, capsys, argv, words):
    argv = [str(new_state) if a == "STATE" else a for a in argv]
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert words in err and err.count("\n") == 1 and "Traceback" not in err


def test_malformed_state_json(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = run(capsys, "show", str(bad))
    assert code == 2 and "not valid JSON" in err
    bad.write_text('{"units": 3}')
    code, _, err = run(capsys, "show", str(bad))
    assert code == 2 and "units" in err


def test_play_and_pieces(capsys):
    code, out, _ = run(capsys, "play", "--seed", "3", "--games", "3")
    assert code == 0 and "3 game(s)" in out and "games/s" in out
    code, out, _ = run(capsys, "play", "--seed", "3")
    assert "game over" in out
    code, out, _ = run(capsys, "pieces")
    assert "Footman   pawn" in out and "Warlord   king" in out
