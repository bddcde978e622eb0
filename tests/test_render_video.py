"""Recorded-game fixtures: legal engine games, a truth line per frame, within the size budget."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from engines.royal_battles import GameState, Side, parse_action
from engines.royal_battles.position import from_json, to_json
from models.renderer import Scene, assets
from models.renderer.video import game_frames, read_truth

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "render"
VIDEOS = sorted(p for p in (FIXTURES / "videos").glob("*") if (p / "truth.jsonl.gz").exists())


def _replay(lines: list[dict]) -> GameState:
    """Apply every recorded action through the engine (raises on an illegal one) and check
    each line's position is the engine's position after the actions so far."""
    armies = lines[0]["position"]["armies"]
    state = GameState.new({Side.WHITE: armies["white"], Side.BLACK: armies["black"]})
    for line in lines:
        for action in line["actions"]:
            state.apply(parse_action(action))
        if line["actions"]:
            _assert_recorded(line["position"], to_json(state), f"frame {line['frame']}")
    return state


def _assert_recorded(recorded, engine, where: str) -> None:
    """Everything the fixture recorded equals the engine's replay (fields the engine added to
    its JSON since the fixture was filmed are not required)."""
    if isinstance(recorded, dict):
        assert isinstance(engine, dict), where
        if where.endswith(".board"):  # the same occupied cells, none missing, none extra
            assert set(recorded) == set(engine), where
        for key, value in recorded.items():
            assert key in engine, f"{where}: {key} no longer in the engine's position"
            _assert_recorded(value, engine[key], f"{where}.{key}")
    else:
        assert recorded == engine, f"{where}: recorded {recorded!r}, engine {engine!r}"


def test_fixture_budget_and_coverage():
    files = [p for p in FIXTURES.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    assert total < 25 * 1024 * 1024, f"fixtures are {total / 1e6:.1f} MB"
    assert len(VIDEOS) >= 3
    stills = sorted((FIXTURES / "stills-heldout").glob("*.jpg"))
    assert len(stills) >= 60
    held = set(assets.split()["cards"]["heldout"])
    held_pieces = set(assets.split()["pieces"]["heldout"]) | {"paper-token"}
    for p in stills:
        truth = json.loads(p.with_suffix(".json").read_text())
        sc = truth["scene"]
        assert {sc["design_white"], sc["design_black"]} <= held
        assert sc["piece_set"] in held_pieces
        occ = cv2.imread(str(p.with_name(p.stem + "_occluders.png")), cv2.IMREAD_GRAYSCALE)
        assert occ is not None and occ.shape == (truth["height"], truth["width"])
    scenes = [Scene.from_dict(json.loads((v / "scene.json").read_text())["scene"])
              for v in VIDEOS]
    assert len({s.piece_set for s in scenes}) >= 2 and "paper-token" in {s.piece_set
                                                                         for s in scenes}
    assert len({s.design_white for s in scenes}) >= 2
    assert any(s.design_white in held and s.design_black in held and s.piece_set == "lathe"
               for s in scenes)


@pytest.mark.parametrize("video", VIDEOS, ids=[v.name for v in VIDEOS])
def test_video_truth_replays_as_a_legal_game(video):
    lines = read_truth(video / "truth.jsonl.gz")
    meta = json.loads((video / "scene.json").read_text())
    assert [ln["frame"] for ln in lines] == list(range(len(lines))) == list(range(meta["frames"]))
    cap = cv2.VideoCapture(str(video / "game.mp4"))
    n = 0
    while True:
        ok, img = cap.read()
        if not ok:
            break
        assert img.shape[:2] == (meta["scene"]["height"], meta["scene"]["width"])
        n += 1
    assert n == len(lines)
    state = _replay(lines)
    assert to_json(state)["phase"] == "over"  # whole games, filmed to the end
    assert any(not ln["settled"] for ln in lines) and any(ln["settled"] for ln in lines)
    assert sum(len(ln["actions"]) for ln in lines) > 30
    for ln in lines:  # what is drawn agrees with the position whenever the table is settled
        if ln["settled"] and ln["actions"]:
            board = ln["position"]["board"]
            for cell, st in board.items():
                assert ln["cells"][cell]["card"] == st["cards"][-1]
                assert (ln["cells"][cell]["unit"] or {}).get("kind") == \
                    (st.get("unit") or {}).get("kind")


@pytest.mark.parametrize("video", VIDEOS, ids=[v.name for v in VIDEOS])
def test_video_positions_load_in_the_engine(video):
    """Every recorded position is valid for the engine's loader (it raises on invalid)."""
    for ln in read_truth(video / "truth.jsonl.gz"):
        if ln["actions"] or ln["frame"] == 0:
            from_json(ln["position"])


def test_game_frames_pipeline_from_scratch():
    """A few set-up actions filmed now: hands appear, then the table settles."""
    from engines.royal_battles.selfplay import record_game

    record = record_game(3)[:3]
    scene = Scene.random(9, width=480, height=270, whole_board=True)
    lines = [ln for _, ln in game_frames(record, scene)]
    assert lines[0]["settled"] and lines[-1]["settled"]
    assert any(ln["hands"] for ln in lines)
    assert [a for ln in lines for a in ln["actions"]] == [a for a, _ in record]
    _replay(lines)
    last = lines[-1]
    assert set(last["cells"]) == set(record[-1][1]["board"])
