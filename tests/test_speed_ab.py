"""`cards bench --against`: two checkouts' readers timed on the same frames, in turn."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2

from scanner.cards_bench import truth_profile
from scanner.speed_ab import compare

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).parent / "fixtures" / "cards"


def test_a_checkout_against_itself_reads_every_frame_in_turn():
    """Both workers load their own readers and read each photo and frame `rounds` times; the
    medians are of real reads (a held-out still takes milliseconds), the difference paired."""
    image = cv2.imread(str(FIX / "still-0.jpg"))
    profile = truth_profile(json.loads((FIX / "still-0.json").read_text()))
    photo = cv2.resize(image, (640, 640))
    out = compare(ROOT, [photo], [(image, profile)], rounds=2, this=ROOT)
    assert set(out) == {"photo", "frame"}
    for r in out.values():
        assert r["reads"] == 2
        assert r["this_ms_median"] > 0.5 and r["other_ms_median"] > 0.5
        assert abs(r["paired_difference_ms_median"]) < max(r["this_ms_median"],
                                                           r["other_ms_median"])


def test_against_a_folder_that_is_no_checkout_is_a_clear_error(tmp_path):
    done = subprocess.run([sys.executable, "-c", "import sys; from webui.cli import main; "
                           "sys.exit(main())", "cards", "bench", "--against", str(tmp_path),
                           "--stills", "1", "--no-real"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "no Royal Table checkout" in done.stderr
    done = subprocess.run([sys.executable, "-c", "import sys; from webui.cli import main; "
                           "sys.exit(main())", "cards", "bench", "--against", str(ROOT),
                           "--rounds", "0", "--no-real"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--rounds must be 1 or more" in done.stderr


def test_a_checkout_whose_readers_do_not_load_is_a_clear_error(tmp_path):
    """The other checkout's import error is shown and raised as one message; this checkout's
    worker, started first, is closed with it."""
    import pytest

    (tmp_path / "scanner").mkdir()
    (tmp_path / "scanner" / "__init__.py").write_text("")
    (tmp_path / "scanner" / "card_reader.py").write_text("raise ImportError('broken')\n")
    image = cv2.imread(str(FIX / "still-0.jpg"))
    with pytest.raises(RuntimeError, match="did not load"):
        compare(tmp_path, [cv2.resize(image, (640, 640))], [], rounds=1, this=ROOT)
