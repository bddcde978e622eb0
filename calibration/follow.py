"""Follow the board when the camera or the board is bumped during a game.

Mid-game the set-up cards lie under units and new cards, so registering again from them is
unreliable; but most of what the camera sees (the table's grain, the cards, their pips) is the
same picture, moved. So the last frame the board was known on is kept as a reference, and a
later frame is matched to it: ORB features on and around the board, matched, a homography
between the two frames by RANSAC. Where it moves the board's corners by more than MOVED_PX, the
profile's homography is carried over (`H_new = H_frame @ H`) and the scan goes on with it; the
game's state is untouched. Lens distortion, where the profile has it, is undone on the features
first (the profile's homography maps the board to undistorted pixels).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from .geometry import apply_h
from .profile import Profile

FEATURES = 500  # features a frame: matching costs their square
MIN_INLIERS = 25  # fewer than this agreeing matches: no verdict (a hand, a blank frame)
# the board's corners moved more than this, by at least MOVED_INLIERS agreeing matches (half
# of the matches or more): re-register. On a fixture's static camera over a checked cloth,
# 25-61 matches agreed on moves of 2.5-17 px that never happened, and the features' own noise
# reached 2.6 px; a bump of 3-40 px in a rendered frame gave 98-274
MOVED_PX = 3.0
MOVED_INLIERS = 80
RATIO = 0.75  # Lowe's ratio test for a match
REFRESH_BELOW, REFRESH_PX = 80, 1.0  # when a frame that matches becomes the reference
RICH = 200  # features a frame needs to become the first reference
# the board and a margin around it (cell units): the table near the board moves with it, the
# players and the room beyond do not always
AREA = np.array([[-1.5, -1.5], [7.5, -1.5], [7.5, 5.5], [-1.5, 5.5]])
CORNERS = np.array([[-0.5, -0.5], [6.5, -0.5], [6.5, 4.5], [-0.5, 4.5]])


@dataclass
class FollowResult:
    """'ok' (the board is where the profile says), 'moved' (`profile` is the board's new
    registration) or 'unknown' (too little to tell); how far the board's corners moved (px) and
    how many feature matches agreed."""

    status: str
    shift_px: float = 0.0
    inliers: int = 0
    profile: Profile | None = None


class BoardFollower:
    """`check(frame) -> FollowResult` against the last frame the board was known on."""

    def __init__(self, profile: Profile, reference: np.ndarray) -> None:
        self._orb = cv2.ORB_create(FEATURES)
        self._matcher = cv2.BFMatcher(cv2.NORM_HAMMING)
        self._last: tuple | None = None  # the frame last checked and its features
        self.accept(profile, reference)

    def accept(self, profile: Profile, reference: np.ndarray) -> None:
        """Take `profile` as right for the frame `reference` (the frame just checked keeps its
        features; they were found where the board lay a moment ago, close enough)."""
        self.profile = profile
        if self._last is not None and self._last[0] is reference:
            _, self._ref_pts, self._ref_des, self._ref_small, self._ref_mask = self._last
        else:
            self._ref_pts, self._ref_des, self._ref_small, self._ref_mask = \
                self._features(reference)
        self._last = None

    def _features(self, image: np.ndarray) -> tuple[np.ndarray, np.ndarray | None,
                                                     np.ndarray, np.ndarray]:
        """ORB features on and around the board, found at half size (four times cheaper), in
        full-frame pixels; and the half-size grey frame and board mask they were found in."""
        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        small = cv2.resize(grey, (grey.shape[1] // 2, grey.shape[0] // 2),
                           interpolation=cv2.INTER_AREA)
        mask = np.zeros(small.shape, np.uint8)
        area = self.profile.board_to_image(AREA) / 2
        if np.all(np.isfinite(area)):
            cv2.fillConvexPoly(mask, np.round(area).astype(np.int32), 255)
        kp, des = self._orb.detectAndCompute(small, mask)
        pts = np.array([k.pt for k in kp], np.float32).reshape(-1, 2) * 2 + 0.5
        return pts, des, small, mask

    def _aligned(self, H: np.ndarray, small: np.ndarray) -> np.ndarray:
        """The features' homography (full-frame pixels) refined by aligning the reference's
        board area onto the frame's, pixel by pixel (ECC; ORB's half-size keypoints leave a
        pixel or three of error, which a card 50 px wide feels). Kept as it was where the
        alignment fails, or where the profile undoes lens distortion (the pixels are
        distorted, the homography not)."""
        if self.profile.K is not None and self.profile.dist is not None:
            return H
        S = np.array([[0.5, 0, -0.25], [0, 0.5, -0.25], [0, 0, 1.0]])  # full -> half pixels
        warp = (S @ H @ np.linalg.inv(S)).astype(np.float32)
        try:
            _, warp = cv2.findTransformECC(
                self._ref_small.astype(np.float32), small.astype(np.float32), warp,
                cv2.MOTION_HOMOGRAPHY,
                (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 30, 1e-4),
                self._ref_mask, 3)
        except cv2.error:
            return H
        refined = np.linalg.inv(S) @ warp.astype(np.float64) @ S
        return refined / refined[2, 2]

    def check(self, image: np.ndarray) -> FollowResult:
        """Where is the board in `image`, compared with the reference frame?"""
        pts, des, small, mask = self._features(image)
        self._last = (image, pts, des, small, mask)
        if self._ref_des is None or len(self._ref_pts) < RICH:
            # a reference with too little on it (a dark first frame, a bare table): the
            # board is taken as registered on the first frame with plenty to match
            if len(pts) >= RICH:
                self.accept(self.profile, image)
            return FollowResult("unknown")
        if des is None or len(pts) < MIN_INLIERS:
            return FollowResult("unknown")
        pairs = self._matcher.knnMatch(self._ref_des, des, k=2)
        good = [p[0] for p in pairs if len(p) == 2 and p[0].distance < RATIO * p[1].distance]
        if len(good) < MIN_INLIERS:
            return FollowResult("unknown", inliers=len(good))
        src = self.profile.undistort(self._ref_pts[[m.queryIdx for m in good]])
        dst = self.profile.undistort(pts[[m.trainIdx for m in good]])
        H, inl = cv2.findHomography(src.astype(np.float32), dst.astype(np.float32),
                                    cv2.RANSAC, 3.0)
        n = int(inl.sum()) if inl is not None else 0
        if H is None or n < MIN_INLIERS:
            return FollowResult("unknown", inliers=n)
        before = apply_h(self.profile.H, CORNERS)
        after = apply_h(H, before)
        shift = float(np.linalg.norm(after - before, axis=1).max())
        if shift >= MOVED_PX and (n < MOVED_INLIERS or n < 0.5 * len(good)):
            return FollowResult("unknown", shift, n)  # a move too few matches agree on
        if shift >= MOVED_PX:
            # the features say the board moved: measured again, pixel by pixel
            H = self._aligned(H, small)
            after = apply_h(H, before)
            shift = float(np.linalg.norm(after - before, axis=1).max())
        if shift < MOVED_PX:
            # the table changes as cards are laid: where few features still match, this frame
            # (the board within REFRESH_PX of the reference) becomes the reference; only then,
            # so that shifts under MOVED_PX cannot add up unseen
            if n < REFRESH_BELOW and shift < REFRESH_PX:
                self.accept(self.profile, image)
            return FollowResult("ok", shift, n)
        moved = replace(self.profile, H=H @ self.profile.H,
                        method=self.profile.method.split("+")[0] + "+followed",
                        signature=[])
        return FollowResult("moved", shift, n, moved)
