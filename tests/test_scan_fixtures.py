"""The tracker and occlusion detector over the committed fixture videos.

Readings come from each frame's truth (a perfect scanner), the occlusion verdict from the real
pixels: this measures tracking alone. `royal-table scan --truth` measures the whole chain.
"""

from pathlib import Path

import cv2
import pytest

from scanner.evaluate import matched_in_order, read_truth, reading_from_truth, truth_events
from scanner.occlusion import OcclusionDetector
from scanner.tracker import GameTracker

VIDEOS = sorted((Path(__file__).parent / "fixtures" / "render" / "videos").glob("*/game.mp4"))


@pytest.mark.parametrize("video", VIDEOS, ids=[v.parent.name for v in VIDEOS])
def test_every_move_recovered_in_order_without_spurious_events(video):
    rows = list(read_truth(video.parent / "truth.jsonl.gz"))
    capture = cv2.VideoCapture(str(video))
    occlusion, tracker = OcclusionDetector(), GameTracker()
    hands_frames_believed = 0
    for i, row in enumerate(rows):
        ok, image = capture.read()
        assert ok, f"frame {i} of {video} did not decode"
        reading = reading_from_truth(row, i)
        reading.occluded = occlusion.update(image)
        hands_frames_believed += bool(row["hands"]) and not reading.occluded
        tracker.update(reading)
    want = truth_events(rows)
    got = [e.text for e in tracker.events]
    assert matched_in_order(got, want) == len(want) == len(got), tracker.holding
    assert tracker.state.is_terminal() or tracker.holding is None
    assert hands_frames_believed <= 0.05 * len(rows)


def test_fixtures_cover_held_out_assets_and_tokens():
    names = [v.parent.name for v in VIDEOS]
    assert len(names) >= 3 and any("heldout" in n for n in names)
    assert any("tokens" in n for n in names)


def test_whole_chain_reads_the_held_out_set_up_and_invents_nothing():
    """The real scanner (card models, piece model, incremental loop) on the held-out video's
    first 200 frames: its 8 set-up cards (tango deck, never trained on), in order, nothing
    else. Measured in full by `royal-table scan ... --truth` (README)."""
    from calibration.profile import Profile
    from engines.royal_battles import Side
    from scanner.incremental import IncrementalScanner
    from scanner.piece_classifier import PieceClassifier

    video = next(v for v in VIDEOS if "heldout" in v.parent.name)
    rows = list(read_truth(video.parent / "truth.jsonl.gz"))
    profile = Profile.load(video.parent / "profile.json")
    scanner = IncrementalScanner.for_profile(profile, pieces=PieceClassifier())
    armies = {Side(k): v for k, v in rows[0]["position"]["armies"].items()}
    tracker = GameTracker(armies)
    capture = cv2.VideoCapture(str(video))
    for i in range(200):
        ok, image = capture.read()
        assert ok
        reading = scanner.scan(image)
        reading.frame_index = i
        tracker.update(reading)
    want = truth_events(rows)
    got = [e.text for e in tracker.events if e.question is None]  # open questions aren't claims
    assert matched_in_order(got, want) == len(got)  # in order, nothing invented
    assert sum(e.kind == "setup" for e in tracker.events) == 8
