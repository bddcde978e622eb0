"""Perspective-aware crops of the cells, one per cell, for the piece classifier.

A piece rises above its cell, so a flat crop of the cell's footprint cuts it off (worse for far
ranks). As in chesscog, the crop grows upward; here it is exact: each crop is a "billboard", a
rectangle standing on the cell's centre, facing the camera, whose up is the board's vertical as
the camera sees it. Warped to CROP_W x CROP_H, every piece then appears upright, at a fixed scale
in cm (CROP_PX_PER_CM) and with its base at a fixed height, whatever the camera's pose, distance
or roll. Only the piece's shape changes with the camera's elevation (foreshortening).

The camera comes from a calibration profile, the renderer's truth, or a bare board homography
(board-plane cm -> image pixels), from which the focal length and pose are recovered assuming
square pixels and a centred principal point (`camera_from_homography`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

# Board frame (the renderer's and the calibration's): x along files a -> g, y along ranks
# 1 -> 5, z up, origin at the centre of d3, cm. Cell pitch: portrait cards with air between.
PITCH_X, PITCH_Y = 7.5, 10.0
FILES = "abcdefg"
RANKS = "12345"
CELLS = [f + r for r in RANKS for f in FILES]

# The billboard in cm: BILL_W wide, from BILL_LO below the cell centre to BILL_HI above it. A
# king is 7.5 cm tall; 4 cm either side keeps a piece whole up to 1.2 cm off centre.
BILL_W, BILL_LO, BILL_HI = 8.0, 3.5, 8.5
CROP_W, CROP_H = 64, 96
CROP_PX_PER_CM = CROP_W / BILL_W
MID_HEIGHT_CM = 4.0  # the billboard faces the ray to this point above the cell


CARD_W_CM, CARD_H_CM = 6.3, 8.8  # a poker card: the calibration's scale in cm


def cell_centre(cell: str, pitch: tuple[float, float] = (PITCH_X, PITCH_Y)
                ) -> tuple[float, float]:
    """Board-plane centre (cm) of a cell like "c4", for a file and rank pitch in cm."""
    if len(cell) != 2 or cell[0] not in FILES or cell[1] not in RANKS:
        raise ValueError(f"not a cell: {cell!r} (a1 … g5)")
    return (FILES.index(cell[0]) - 3) * pitch[0], (RANKS.index(cell[1]) - 2) * pitch[1]


@dataclass
class BoardCamera:
    """A pinhole camera over the board: x_cam = R @ X + t, pixels = K @ x_cam (+ distortion)."""

    K: np.ndarray
    R: np.ndarray
    t: np.ndarray
    dist: np.ndarray | None = None
    pitch: tuple[float, float] = (PITCH_X, PITCH_Y)  # the players' cell spacing, cm

    def centre(self) -> np.ndarray:
        return -self.R.T @ self.t

    def project(self, pts: np.ndarray) -> np.ndarray:
        pts = np.asarray(pts, np.float64).reshape(-1, 3)
        if self.dist is not None and np.any(self.dist):
            uv, _ = cv2.projectPoints(pts, cv2.Rodrigues(self.R)[0], self.t, self.K, self.dist)
            return uv.reshape(-1, 2)
        pc = pts @ self.R.T + self.t
        uv = pc @ self.K.T
        return uv[:, :2] / uv[:, 2:3]

    def elevation_deg(self, x: float = 0.0, y: float = 0.0) -> float:
        """The camera's elevation above the table as seen from board point (x, y)."""
        c = self.centre()
        return math.degrees(math.atan2(c[2], math.hypot(c[0] - x, c[1] - y)))

    def homography(self) -> np.ndarray:
        """Board plane (x, y, 1) cm -> ideal image pixels."""
        return self.K @ np.column_stack([self.R[:, 0], self.R[:, 1], self.t])


def camera_from_homography(H: np.ndarray, width: int, height: int,
                           K: np.ndarray | None = None) -> BoardCamera:
    """Recover K, R, t from a board homography (board cm -> pixels), assuming square pixels and
    the principal point at the image centre (webcams are close enough; the crop only needs the
    camera's direction, not millimetre accuracy). A camera looking straight down leaves the focal
    length unobservable; a typical webcam's (60 degrees across) is used then. With `K` known
    (a calibration with intrinsics) only the pose is recovered."""
    H = np.asarray(H, np.float64).reshape(3, 3)
    if not np.all(np.isfinite(H)) or abs(np.linalg.det(H)) < 1e-12:
        raise ValueError("board homography is singular")
    if K is not None:
        return _pose_from_homography(H, np.asarray(K, np.float64))
    cx, cy = width / 2.0, height / 2.0
    Hc = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1.0]]) @ H
    Hc = Hc / np.linalg.norm(Hc[:, 0])
    (h11, h12, _), (h21, h22, _), (h31, h32, _) = Hc
    # orthogonal, equally long r1 and r2: two equations in 1/f^2 (least squares)
    a = np.array([h11 * h12 + h21 * h22, h11**2 + h21**2 - h12**2 - h22**2])
    b = np.array([h31 * h32, h31**2 - h32**2])
    f_default = (width / 2) / math.tan(math.radians(30))
    f = f_default
    bb = float(b @ b)
    if bb > 1e-18:
        f2 = -float(a @ b) / bb
        if f2 > 0:
            f_est = math.sqrt(f2)
            # weak perspective (b tiny) gives wild values: keep only plausible webcam focals
            if 0.3 * width < f_est < 5.0 * width:
                f = f_est
    return _pose_from_homography(H, np.array([[f, 0, cx], [0, f, cy], [0, 0, 1.0]]))


def _pose_from_homography(H: np.ndarray, K: np.ndarray) -> BoardCamera:
    A = np.linalg.inv(K) @ H
    lam = 2.0 / (np.linalg.norm(A[:, 0]) + np.linalg.norm(A[:, 1]))
    if A[2, 2] * lam < 0:  # the board must lie in front of the camera
        lam = -lam
    r1, r2, t = A[:, 0] * lam, A[:, 1] * lam, A[:, 2] * lam
    R = np.column_stack([r1, r2, np.cross(r1, r2)])
    U, _, Vt = np.linalg.svd(R)
    R = U @ Vt
    if np.linalg.det(R) < 0:
        R = U @ np.diag([1, 1, -1]) @ Vt
    return BoardCamera(K, R, t)


def as_board_camera(source, image_shape: tuple[int, ...]) -> BoardCamera:
    """Accept what callers have: a BoardCamera; a camera object or dict with K, R, t (and dist),
    e.g. the renderer's Camera or its truth["camera"]; a profile with `.camera` or
    `.homography`; the calibration's `Profile` (H in cell units, a1 = (0, 0), with the card
    size giving the scale); or a bare 3x3 homography (board cm -> pixels)."""
    h, w = image_shape[:2]
    if isinstance(source, BoardCamera):
        return source
    if hasattr(source, "H") and hasattr(source, "card_size"):
        return _from_profile(source, w, h)
    if isinstance(source, dict):
        if all(k in source for k in ("K", "R", "t")):
            d = source.get("dist")
            return BoardCamera(np.asarray(source["K"], np.float64),
                               np.asarray(source["R"], np.float64),
                               np.asarray(source["t"], np.float64).reshape(3),
                               None if d is None else np.asarray(d, np.float64))
        for key in ("camera", "homography"):
            if key in source:
                return as_board_camera(source[key], image_shape)
        raise ValueError("camera dict needs K, R, t or a homography")
    if all(hasattr(source, k) for k in ("K", "R", "t")):
        d = getattr(source, "dist", None)
        return BoardCamera(np.asarray(source.K, np.float64), np.asarray(source.R, np.float64),
                           np.asarray(source.t, np.float64).reshape(3),
                           None if d is None else np.asarray(d, np.float64))
    for attr in ("camera", "homography"):
        inner = getattr(source, attr, None)
        if inner is not None:
            return as_board_camera(inner, image_shape)
    arr = np.asarray(source, np.float64)
    if arr.shape == (3, 3):
        return camera_from_homography(arr, w, h)
    raise ValueError(f"cannot take a board camera from {type(source).__name__}")


def _from_profile(profile, width: int, height: int) -> BoardCamera:
    """The calibration profile maps cell units (a1 at (0, 0), one cell = 1) to undistorted
    pixels. Its measured card size in cell units gives the players' pitch in cm (cards are
    6.3 x 8.8 cm), hence a metric board frame centred on d3 like ours."""
    cw, ch = (float(v) for v in profile.card_size)
    if not (cw > 0 and ch > 0):
        raise ValueError("profile has no card size")
    pitch = (CARD_W_CM / cw, CARD_H_CM / ch)
    to_cells = np.array([[1 / pitch[0], 0, 3.0], [0, 1 / pitch[1], 2.0], [0, 0, 1.0]])
    H = np.asarray(profile.H, np.float64) @ to_cells
    K = getattr(profile, "K", None)
    cam = camera_from_homography(H, width, height, K)
    d = getattr(profile, "dist", None)
    cam.dist = None if d is None or K is None else np.asarray(d, np.float64)
    cam.pitch = pitch
    return cam


def billboard(cam: BoardCamera, x: float, y: float) -> np.ndarray:
    """The 3D corners (4x3: top-left, top-right, bottom-right, bottom-left as seen) of the
    billboard standing on board point (x, y)."""
    c = cam.centre()
    mid = np.array([x, y, MID_HEIGHT_CM])
    v = mid - c
    v /= np.linalg.norm(v)
    z = np.array([0.0, 0.0, 1.0])
    up = z - (z @ v) * v
    n = float(np.linalg.norm(up))
    if n < 0.1:
        # near top-down the vertical degenerates: lean on the image's up so the crop turns
        # smoothly instead of spinning with a tiny tilt
        img_up = -cam.R[1]
        img_up = img_up - (img_up @ v) * v
        up = up + (0.1 - n) / 0.1 * img_up / max(np.linalg.norm(img_up), 1e-9)
        n = float(np.linalg.norm(up))
    up /= n
    right = np.cross(v, up)
    base = np.array([x, y, 0.0])
    hw = BILL_W / 2
    return np.array([base - hw * right + BILL_HI * up, base + hw * right + BILL_HI * up,
                     base + hw * right - BILL_LO * up, base - hw * right - BILL_LO * up])


def crop_quad(cam: BoardCamera, x: float, y: float) -> np.ndarray:
    """The billboard's corners in the image (4x2, TL TR BR BL)."""
    return cam.project(billboard(cam, x, y))


_DST = np.array([[0, 0], [CROP_W, 0], [CROP_W, CROP_H], [0, CROP_H]], np.float32)


def warp_quad(image: np.ndarray, quad: np.ndarray, dst: np.ndarray = _DST) -> np.ndarray:
    """Warp an image quad (TL TR BR BL) to a crop whose corners are `dst` (TL TR BR BL from
    (0, 0); the classifier's CROP_W x CROP_H by default). Where the crop is much smaller than
    the quad, average first (a 3x-downsampled crop would otherwise alias)."""
    quad = np.asarray(quad, np.float32)
    w, h = int(dst[2, 0]), int(dst[2, 1])
    span = max(np.linalg.norm(quad[1] - quad[0]) / w, np.linalg.norm(quad[3] - quad[0]) / h)
    if span > 1.8:
        # crop the region first, then shrink it: cheaper than blurring the whole frame
        ih, iw = image.shape[:2]
        x0, y0 = np.maximum(np.floor(quad.min(0)).astype(int) - 2, 0)
        x1, y1 = np.minimum(np.ceil(quad.max(0)).astype(int) + 2, [iw, ih])
        if x1 > x0 and y1 > y0:
            k = int(span)
            sub = image[y0:y1, x0:x1]
            sub = cv2.resize(sub, (max(1, (x1 - x0) // k), max(1, (y1 - y0) // k)),
                             interpolation=cv2.INTER_AREA)
            sx, sy = sub.shape[1] / (x1 - x0), sub.shape[0] / (y1 - y0)
            q = (quad - [x0, y0]) * [sx, sy]
            M = cv2.getPerspectiveTransform(q.astype(np.float32), dst)
            return cv2.warpPerspective(sub, M, (w, h), flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_REPLICATE)
    M = cv2.getPerspectiveTransform(quad, dst)
    return cv2.warpPerspective(image, M, (w, h), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def cell_crop(image: np.ndarray, cam: BoardCamera, cell: str,
              offset: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
    """One cell's crop (CROP_H x CROP_W x 3, BGR). `offset` (cm) shifts the billboard, which
    training uses to teach pieces standing off centre."""
    x, y = cell_centre(cell, cam.pitch)
    return warp_quad(image, crop_quad(cam, x + offset[0], y + offset[1]))


def off_frame(cam: BoardCamera, image_shape: tuple[int, ...], cells: list[str]) -> list[str]:
    """The cells whose centre on the table lies outside the frame: a unit there is cut off."""
    if not cells:
        return []
    h, w = image_shape[:2]
    uv = cam.project(np.array([[*cell_centre(c, cam.pitch), 0.0] for c in cells]))
    inside = (uv[:, 0] >= 0) & (uv[:, 0] < w) & (uv[:, 1] >= 0) & (uv[:, 1] < h)
    return [c for c, ok in zip(cells, inside, strict=True) if not ok]


def cell_crops(image: np.ndarray, cam: BoardCamera, cells: list[str]) -> np.ndarray:
    """Crops of the given cells, stacked (N x CROP_H x CROP_W x 3)."""
    out = np.empty((len(cells), CROP_H, CROP_W, 3), np.uint8)
    for i, cell in enumerate(cells):
        out[i] = cell_crop(image, cam, cell)
    return out


def frame_single(image: np.ndarray, box: tuple[float, float, float, float] | None = None
                 ) -> np.ndarray:
    """A crop in the billboard's framing from a photo of one piece: `box` (x0, y0, x1, y1 in
    pixels) bounds the piece, or, without one, the whole image is taken as the piece's box.
    The box's bottom goes where the front of a piece's base shows in a cell crop (1 cm below
    the cell centre) and its height to a tall piece's (about 7 cm, so scale is only a weak cue
    here); the sides get the billboard's margin."""
    h, w = image.shape[:2]
    x0, y0, x1, y1 = (0.0, 0.0, float(w), float(h)) if box is None else box
    bh = max(y1 - y0, 1.0)
    scale = 7.0 / bh  # cm per pixel, if the piece were a tall one
    cxm = (x0 + x1) / 2
    top = y1 - (BILL_HI + 1.0) / scale
    bottom = y1 + (BILL_LO - 1.0) / scale
    half = (bottom - top) * CROP_W / CROP_H / 2
    quad = np.array([[cxm - half, top], [cxm + half, top], [cxm + half, bottom],
                     [cxm - half, bottom]], np.float32)
    if box is None:
        # nothing outside the image to show: pad with its border instead of stretching
        image = cv2.copyMakeBorder(image, h, h, w, w, cv2.BORDER_REPLICATE)
        quad = quad + [w, h]
    return warp_quad(image, quad)
