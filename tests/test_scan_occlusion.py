"""Occlusion: hands over the board are caught; a card laid and left is not."""

import cv2
import numpy as np

from scanner.occlusion import OcclusionDetector

SKIN_BGR = (120, 150, 215)  # a light skin tone


def table() -> np.ndarray:
    img = np.full((360, 640, 3), (40, 90, 40), np.uint8)  # green felt
    for x in range(100, 540, 90):
        cv2.rectangle(img, (x, 120), (x + 60, 200), (235, 235, 235), -1)
    return img


def with_hand(img: np.ndarray, x: int) -> np.ndarray:
    out = img.copy()
    cv2.ellipse(out, (x, 250), (60, 35), 20, 0, 360, SKIN_BGR, -1)
    cv2.rectangle(out, (x - 20, 250), (x + 20, 360), SKIN_BGR, -1)  # the arm
    return out


def test_static_table_is_not_occluded():
    det = OcclusionDetector()
    assert not any(det.update(table()) for _ in range(10))


def test_moving_hand_then_still_hand_then_gone():
    det = OcclusionDetector()
    for _ in range(5):
        det.update(table())
    assert all(det.update(with_hand(table(), 150 + 20 * i)) for i in range(6))
    # held still over the board: no motion, but skin where the table was (the first of these
    # frames moved, from where the hand was)
    assert all(det.update(with_hand(table(), 270)) for _ in range(det.still_limit))
    results = [det.update(table()) for _ in range(5)]
    assert not results[-1]


def test_a_skin_toned_change_held_perfectly_still_is_the_table():
    """Hands tremble: a skin-toned change that stays perfectly still for `still_limit` quiet
    frames is taken as the table (a red card, a wooden token), not held occluded for ever; and
    no sooner."""
    det = OcclusionDetector()
    for _ in range(5):
        det.update(table())
    toned = table()
    cv2.rectangle(toned, (300, 230), (360, 310), SKIN_BGR, -1)
    seen = [det.update(toned) for _ in range(det.still_limit + 3)]
    # the frame it appeared in moved; then covered until still_limit quiet frames
    assert seen[:det.still_limit] == [True] * det.still_limit
    assert not any(seen[det.still_limit:])


def test_a_new_card_is_not_a_hand():
    det = OcclusionDetector()
    for _ in range(5):
        det.update(table())
    laid = table()
    cv2.rectangle(laid, (300, 230), (360, 310), (240, 240, 240), -1)
    seen = [det.update(laid) for _ in range(6)]
    assert seen[0] and not any(seen[1:])  # the one frame it appeared in moved, then quiet


def test_region_limits_where_hands_count():
    det = OcclusionDetector(region=np.array([[90, 110], [550, 110], [550, 210], [90, 210]]))
    for _ in range(5):
        det.update(table())
    far_hand = table()
    cv2.circle(far_hand, (320, 330), 25, SKIN_BGR, -1)  # below the board area
    assert not det.update(far_hand)


def test_bad_frames_count_as_occluded():
    det = OcclusionDetector()
    assert det.update(None) and det.last["reason"] == "no picture"
    assert det.update(np.zeros((0, 0, 3), np.uint8))


def test_the_work_frame_is_the_frame_shrunk_whatever_its_size():
    """A 1280x720 frame is halved before it is shrunk to the work width (INTER_AREA is slow at
    ratios that are not whole numbers); the work frame must stay the frame's area mean within
    a grey level or so, and a 960x540 frame (a whole ratio) is shrunk exactly as before."""
    from scanner.occlusion import WORK_WIDTH

    rng = np.random.default_rng(0)
    for w, h, exact in ((1280, 720, False), (960, 540, True), (1920, 1080, True)):
        img = cv2.resize(table(), (w, h), interpolation=cv2.INTER_LINEAR)
        img = cv2.add(img, rng.integers(0, 40, img.shape, dtype=np.uint8))
        small, _ = OcclusionDetector()._prepare(img)
        want = cv2.resize(img, (WORK_WIDTH, round(h * WORK_WIDTH / w)),
                          interpolation=cv2.INTER_AREA)
        diff = np.abs(small.astype(int) - want.astype(int))
        assert small.shape == want.shape
        assert (diff.max() == 0) if exact else (diff.mean() < 1.0 and diff.max() <= 8), (w, diff)
