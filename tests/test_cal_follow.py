"""Following the board when the camera or the board is bumped mid-game (`calibration.follow`),
and `scan` going on with the game across such a bump."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.follow import MOVED_PX, BoardFollower
from calibration.geometry import cell_xy
from calibration.profile import Profile

VIDEO = Path(__file__).parent / "fixtures" / "render" / "videos" / "game-s16-paris-tokens"
CELLS = ("a1", "g1", "d3", "a5", "g5")


@pytest.fixture(scope="module")
def frames() -> tuple[Profile, np.ndarray, np.ndarray]:
    cap = cv2.VideoCapture(str(VIDEO / "game.mp4"))
    cap.set(cv2.CAP_PROP_POS_FRAMES, 400)
    ok, a = cap.read()
    cap.set(cv2.CAP_PROP_POS_FRAMES, 420)
    ok2, b = cap.read()
    assert ok and ok2
    return Profile.load(VIDEO / "profile.json"), a, b


def bump(image: np.ndarray, turn: float, scale: float, dx: float, dy: float):
    h, w = image.shape[:2]
    A = cv2.getRotationMatrix2D((w / 2, h / 2), turn, scale)
    A[:, 2] += (dx, dy)
    return cv2.warpAffine(image, A, (w, h), borderMode=cv2.BORDER_REPLICATE), \
        np.vstack([A, [0, 0, 1]])


def test_the_same_view_is_ok(frames):
    profile, a, b = frames
    seen = BoardFollower(profile, a).check(b)
    assert seen.status == "ok" and seen.shift_px < MOVED_PX and seen.profile is None


@pytest.mark.parametrize("turn,scale,dx,dy", [(2.0, 1.03, 12, -7), (0.5, 1.0, 4, 2),
                                              (-4.0, 0.97, -20, 15), (5.0, 1.05, 25, 20),
                                              (12.0, 1.0, 0, 0), (0.0, 1.0, 60, 0),
                                              (8.0, 1.1, 40, 30)])
def test_a_bumped_camera_is_followed_to_a_fraction_of_a_pixel(frames, turn, scale, dx, dy):
    """Bumps of a few to 60 px are followed; the largest here (turned 8°, 10 % nearer, moved
    50 px) keeps too few agreeing features (71 of the 80 asked) and gets no verdict, which is
    safe (`scan` then goes on as before), never a wrong board."""
    profile, a, b = frames
    moved, A = bump(b, turn, scale, dx, dy)
    seen = BoardFollower(profile, a).check(moved)
    if (turn, scale) == (8.0, 1.1):
        assert seen.status in ("moved", "unknown")
        if seen.status == "unknown":
            return
    assert seen.status == "moved" and seen.shift_px >= MOVED_PX
    pts = np.array([cell_xy(c) for c in CELLS])
    want = (np.hstack([profile.board_to_image(pts), np.ones((len(pts), 1))]) @ A.T)[:, :2]
    assert np.linalg.norm(seen.profile.board_to_image(pts) - want, axis=1).max() < 0.5
    assert seen.profile.method.endswith("+followed") and seen.profile.card_size == \
        profile.card_size


def test_blank_frames_give_no_verdict_and_a_bare_reference_is_replaced(frames):
    profile, a, b = frames
    black = np.zeros_like(a)
    follower = BoardFollower(profile, a)
    assert follower.check(black).status == "unknown"
    assert follower.check(np.full_like(a, 200)).status == "unknown"
    # a dark first frame: the first frame with plenty to match becomes the reference
    follower = BoardFollower(profile, black)
    assert follower.check(a).status == "unknown"
    assert follower.check(b).status == "ok"


def test_scan_goes_on_across_a_bumped_camera(tmp_path):
    """The fixture's set-up and first moves as image folders, once as filmed and once with the
    camera bumped (turned 1.5°, moved 14 px) from frame 400: the bumped run says where it
    followed the board, and recovers the moves the plain one does, with no spurious event."""
    from scanner.evaluate import read_truth
    from scanner.scan_cli import _truth_armies
    from webui.cli import main

    n, at = 560, 400
    cap = cv2.VideoCapture(str(VIDEO / "game.mp4"))
    for name in ("plain", "bumped"):
        (tmp_path / name).mkdir()
    for i in range(n):
        ok, frame = cap.read()
        assert ok
        cv2.imwrite(str(tmp_path / "plain" / f"{i:05d}.png"), frame)
        if i >= at:
            frame = bump(frame, 1.5, 1.0, 14, -9)[0]
        cv2.imwrite(str(tmp_path / "bumped" / f"{i:05d}.png"), frame)
    assert len(list(read_truth(VIDEO / "truth.jsonl.gz"))) > n
    out = {}
    for name in ("plain", "bumped"):
        import io
        from contextlib import redirect_stdout

        buf = io.StringIO()
        with redirect_stdout(buf):
            assert main(["scan", str(tmp_path / name), "--profile", str(VIDEO / "profile.json"),
                         "--truth", str(VIDEO / "truth.jsonl.gz"), "--armies",
                         *_truth_armies(VIDEO / "truth.jsonl.gz"), "--json"]) == 0
        out[name] = json.loads(buf.getvalue())
    assert "followed" not in out["plain"]["registration"]
    assert "the board moved" in out["bumped"]["registration"]
    frame = int(out["bumped"]["registration"].split("; frame ")[1].split(":")[0])
    assert at <= frame < at + 60
    assert out["plain"]["moves_recovered"] >= 20
    assert out["bumped"]["moves_recovered"] >= out["plain"]["moves_recovered"] - 1
    assert out["bumped"]["spurious_events"] <= out["plain"]["spurious_events"]


def test_the_following_scanner_rebuilds_only_on_a_move_the_cards_confirm(frames, monkeypatch):
    """`scanner.following.FollowingScanner` with a stand-in scanner: a move the features see
    but the cards do not confirm changes nothing; a confirmed one rebuilds the scanner on the
    moved profile and reads the frame again; checks run after hands and every `every` frames."""
    import scanner.following as following
    from calibration.follow import FollowResult
    from scanner.detections import TableReading

    profile, a, b = frames
    built, checks = [], []

    class Inner:
        def __init__(self, p):
            self.p, self.occluded = p, False

        def scan(self, image):
            return TableReading(occluded=self.occluded, message=f"read with {id(self.p)}")

    def make(p):
        built.append(p)
        return Inner(p), None

    moved_to = Profile(H=profile.H @ np.array([[1.0, 0, 0.2], [0, 1, 0], [0, 0, 1]]),
                       image_size=profile.image_size)
    verdicts = iter([FollowResult("moved", 9.0, 120, moved_to),
                     FollowResult("moved", 9.0, 120, moved_to)])

    class Follower:
        def __init__(self, p, image):
            pass

        def check(self, image):
            checks.append(image)
            return next(verdicts)

        def accept(self, p, image):
            pass

    agree = iter([False, True])
    monkeypatch.setattr(following, "cards_agree", lambda new, old, quads: next(agree))
    monkeypatch.setattr("calibration.register.refine", lambda p, quads: p)
    monkeypatch.setattr(following, "card_quads", lambda p, image: [])
    fs = following.FollowingScanner(profile, make, every=3, follower=Follower)
    fs.scan(a, 0)  # the first frame: the follower's reference
    fs.scan(a, 1)
    fs.scan(a, 2)
    assert checks == []  # nothing due yet
    fs.scan(b, 3)  # every 3rd frame: the features say moved, the cards do not
    assert len(checks) == 1 and fs.profile is profile and len(built) == 1
    fs.inner.occluded = True
    fs.scan(b, 4)  # hands: no check
    fs.inner.occluded = False
    reading = fs.scan(b, 5)  # the first clear frame after hands: checked, and confirmed
    assert len(checks) == 2 and fs.profile is moved_to and built[-1] is moved_to
    assert reading.message == f"read with {id(moved_to)}"
    assert fs.followed == ["frame 5: the board moved 9 px; followed"]


def _cards_at(profile: Profile, centres: list[tuple[float, float]]) -> list[np.ndarray]:
    """Image quads of cards (0.6 x 0.8 cells) centred on board-plane points."""
    from calibration.geometry import apply_h

    half = np.array([[-0.3, -0.4], [0.3, -0.4], [0.3, 0.4], [-0.3, 0.4]])
    return [apply_h(profile.H, half + c).astype(np.float32) for c in centres]


@pytest.mark.parametrize("shift,both,new_only,followed", [
    # the lattice a fifth of a cell off, holding one card more than the old (v6-s257): no move
    (0.2, ("a1", "c1", "e1", "b2", "d2", "f2"), ("d3",), False),
    # a bumped board: the old lattice holds none of the cards any more
    (1.5, (), ("a1", "c1", "e1", "b2", "d2", "f2", "d3"), True),
])
def test_a_move_is_followed_only_where_the_new_lattice_holds_clearly_more_cards(
        shift, both, new_only, followed):
    """v6-s257, a static camera over a wood-grain table: the features put the board's far side
    8 px off, and with 13 cards in view (piles and decks among them) the old lattice held 6 and
    the new one 7; the board was followed 9 px astray and black's initiative pile went unread.
    A move is believed where the new lattice holds clearly more of the cards than the old."""
    from dataclasses import replace

    from scanner.following import cards_agree

    old = Profile.load(VIDEO / "profile.json")
    # the new lattice's cell (x, y) lies where the old one's (x + shift, y) did
    new = replace(old, H=old.H @ np.array([[1.0, 0.0, shift], [0, 1, 0], [0, 0, 1]]))
    # a card on the new lattice only: `shift` from the new centre's old place, within 0.25 cell
    # of the new centre and not of the old one
    beyond = 2 * shift if shift < 0.25 else shift
    centres = [cell_xy(c) for c in both] + [(x + beyond, y) for x, y in map(cell_xy, new_only)]
    off_board = [(-2.0, float(y)) for y in range(3)] + [(9.0, float(y)) for y in range(3)]
    quads = _cards_at(old, centres + off_board)  # (piles and decks: on neither lattice)
    assert cards_agree(new, old, quads) is followed
