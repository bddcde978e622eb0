"""`royal-table calibrate` and `royal-table cards`: help, profiles, clear errors, JSON output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.profile import Profile
from webui.cli import main

FIX = Path(__file__).parent / "fixtures" / "cards"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "webui.cli", *args], capture_output=True,
                          text=True, cwd=Path(__file__).parents[1], timeout=120)


@pytest.mark.parametrize("argv", [["calibrate", "--help"], ["calibrate", "board", "--help"],
                                  ["calibrate", "corners", "--help"], ["cards", "--help"],
                                  ["train", "--help"], ["train", "cards", "--help"]])
def test_help(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 0
    assert "usage" in capsys.readouterr().out


def test_calibrate_board_from_setup_still(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["calibrate", "board", str(FIX / "setup-0.jpg"), "--out", str(out)]) == 0
    prof = Profile.load(out)
    truth = json.loads((FIX / "setup-0.json").read_text())
    from scanner.cards_bench import truth_profile

    t = truth_profile(truth)
    pts = np.array([[x, y] for y in range(5) for x in range(7)], np.float64)
    err = np.linalg.norm(prof.board_to_image(pts) - t.board_to_image(pts), axis=1)
    pitch = np.linalg.norm(np.diff(t.board_to_image(np.array([[3, 2], [4, 2]])), axis=0))
    assert err.max() < 0.2 * pitch
    assert len(prof.signature) > 0
    assert "wrote" in capsys.readouterr().out
    assert main(["calibrate", "check", str(out), str(FIX / "setup-0.jpg")]) == 0


def test_calibrate_errors_are_one_line(tmp_path):
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), np.full((720, 1280, 3), 90, np.uint8))
    r = run("calibrate", "board", str(blank), "--out", str(tmp_path / "p.json"))
    assert r.returncode == 2 and "saw 0 card(s)" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    r = run("calibrate", "board", str(tmp_path / "missing.png"))
    assert r.returncode == 2 and "no such image" in r.stderr
    trunc = tmp_path / "trunc.jpg"
    trunc.write_bytes((FIX / "setup-0.jpg").read_bytes()[:300])
    r = run("calibrate", "board", str(trunc))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    r = run("calibrate", "check", str(bad), str(FIX / "setup-0.jpg"))
    assert r.returncode == 2 and "not JSON" in r.stderr
    r = run("calibrate", "corners", str(FIX / "setup-0.jpg"), "--corners", "1,2", "3,4")
    assert r.returncode == 2 and "4 points" in r.stderr


def test_calibrate_corners_and_printables(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["calibrate", "corners", str(FIX / "setup-0.jpg"), "--corners", "300,600",
                 "1000,600", "900,150", "400,150", "--out", str(out)]) == 0
    assert Profile.load(out).method == "corners"
    assert "partly out of the frame" not in capsys.readouterr().err
    # corners clicked at the frame's edge: the cells and pile beyond it are named
    assert main(["calibrate", "corners", str(FIX / "setup-0.jpg"), "--corners", "700,600",
                 "1330,600", "1230,150", "600,150", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: g1, g2, g3, white's initiative pile, black's ")
    assert "partly out of the frame" in err and "a1" not in err
    assert main(["calibrate", "target", "--out", str(tmp_path / "t.png"), "--dpi", "50"]) == 0
    from calibration.intrinsics import detect_target

    target = cv2.imread(str(tmp_path / "t.png"))
    assert detect_target(target) is not None
    assert main(["calibrate", "marker-sheet", "--out", str(tmp_path / "m.png")]) == 0
    from calibration.register import detect_markers

    assert sorted(detect_markers(cv2.imread(str(tmp_path / "m.png")))) == [0, 1, 2, 3]


def test_cards_json(tmp_path):
    r = run("cards", str(FIX / "still-0.jpg"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["image"].endswith("still-0.jpg")
    assert len(out["cards"]) >= 10
    for c in out["cards"]:
        assert set(c) >= {"card", "corners", "confidence"}
        assert len(c["corners"]) == 4
        assert c["card"] is None or isinstance(c["card"], str)


def test_cards_bad_inputs(tmp_path):
    trunc = tmp_path / "trunc.jpg"
    trunc.write_bytes((FIX / "still-0.jpg").read_bytes()[:500])
    black = tmp_path / "black.png"
    cv2.imwrite(str(black), np.zeros((640, 640, 3), np.uint8))
    r = run("cards", str(black), str(trunc), str(tmp_path / "none.jpg"), "--json")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    out = json.loads(r.stdout)
    assert out[0]["cards"] == []
    assert "error" in out[1] and "error" in out[2]
