"""`royal-table rb …` end to end through the command dispatcher."""

import json

import pytest

from tests.test_rb_position import ISSUE_EXAMPLE
from webui.cli import main


@pytest.fixture
def example(tmp_path):
    data = json.loads(ISSUE_EXAMPLE)  # plus a black king on d4, so black has a unit to move
    data["board"]["d4"] = {"cards": ["JS"], "unit": {"side": "black", "kind": "king"}}
    path = tmp_path / "position.json"
    path.write_text(json.dumps(data))
    return path


def test_help_everywhere(capsys):
    for argv in (["--help"], ["rb", "--help"], ["rb", "plan", "--help"], ["rb", "bench", "--help"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 0
    assert "selfplay" in capsys.readouterr().out


def test_plan_json_keys(example, capsys):
    assert main(["rb", "plan", str(example), "--json"]) == 0
    options = json.loads(capsys.readouterr().out)
    assert options, "black holds 8D and can move"
    for o in options:
        assert {"unit", "card", "to", "target", "style", "trumps", "needed", "hit", "critical",
                "effects", "key", "draws"} <= set(o)
    assert any(o["target"] == "c3" for o in options)


def test_plan_text_and_legal(example, capsys):
    assert main(["rb", "plan", str(example)]) == 0
    out = capsys.readouterr().out
    assert "black to move" in out and "trumps" in out
    assert main(["rb", "legal", str(example)]) == 0
    legal = capsys.readouterr().out.splitlines()
    assert legal and all(line.startswith("black move") for line in legal)


@pytest.mark.parametrize("content,message", [
    ("{not json", "not valid JSON"),
    ('{"board": {"z9": {"cards": ["2C"]}}}', "board.z9"),
])
def test_bad_input_is_a_clear_error(tmp_path, capsys, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["rb", "plan", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert main(["rb", "legal", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_selfplay_prints_results(capsys):
    assert main(["rb", "selfplay", "--games", "3", "--seed", "4", "--json"]) == 0
    games = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [g["seed"] for g in games] == [4, 5, 6]
    assert all(g["reason"] in ("annihilation", "more-units", "playable-cards", "tie")
               for g in games)


def test_bench_prints_figures(capsys):
    assert main(["rb", "bench", "--seconds", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "complete games/s" in out and "plan calls/s" in out
