"""The 3D table model: board plane z = 0, units in cm, and a pinhole camera with distortion.

Board frame: x runs along the files (a -> g, white's left to right), y along the ranks (1 -> 5,
white's edge to black's), z up. The board centre (cell d3) is the origin. A portrait card's long
edges run along y.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

CARD_W_CM, CARD_H_CM = 6.3, 8.8
PITCH_X, PITCH_Y = 7.5, 10.0  # cell pitch (portrait cards, a little air between them)
FILES = "abcdefg"
RANKS = "12345"
BOARD_W, BOARD_H = PITCH_X * 7, PITCH_Y * 5  # 52.5 x 50 cm
# Initiative cards: face up, to the right of file g as white sees it, beside each home rank.
INITIATIVE_POS = {"white": (BOARD_W / 2 + 6.0, -2 * PITCH_Y), "black": (BOARD_W / 2 + 6.0,
                                                                        2 * PITCH_Y)}
# Deck piles (face down) beside the initiative cards, a little further out.
DECK_POS = {"white": (BOARD_W / 2 + 14.0, -2 * PITCH_Y), "black": (BOARD_W / 2 + 14.0,
                                                                  2 * PITCH_Y)}
CELLS = [f + r for r in RANKS for f in FILES]


def cell_centre(cell: str) -> tuple[float, float]:
    f, r = FILES.index(cell[0]), RANKS.index(cell[1:])
    return (f - 3) * PITCH_X, (r - 2) * PITCH_Y


def card_corners(cx: float, cy: float, angle_deg: float, z: float = 0.0) -> np.ndarray:
    """3D corners (4x3) of a card centred at (cx, cy), in card-face order: the face's top-left,
    top-right, bottom-right, bottom-left. angle 0 = portrait, upright for white (face top
    toward black); 180 = upright for black; 90 = landscape."""
    a = math.radians(angle_deg)
    ux = np.array([math.cos(a), math.sin(a)])  # face's +x (left -> right) on the table
    uy = np.array([math.sin(a), -math.cos(a)])  # face's +y (top -> bottom) on the table
    hw, hh = CARD_W_CM / 2, CARD_H_CM / 2
    pts = []
    for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
        p = np.array([cx, cy]) + sx * hw * ux + sy * hh * uy
        pts.append((p[0], p[1], z))
    return np.array(pts, dtype=np.float64)


@dataclass
class Camera:
    K: np.ndarray  # 3x3
    R: np.ndarray  # 3x3 world -> camera
    t: np.ndarray  # 3, world -> camera
    dist: np.ndarray  # k1 k2 p1 p2 k3
    width: int
    height: int
    _maps: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def rvec(self) -> np.ndarray:
        return cv2.Rodrigues(self.R)[0]

    def to_cam(self, pts: np.ndarray) -> np.ndarray:
        return np.asarray(pts, np.float64).reshape(-1, 3) @ self.R.T + self.t

    def project_ideal(self, pts: np.ndarray) -> np.ndarray:
        """Pinhole projection without distortion (the canvas we composite on)."""
        pc = self.to_cam(pts)
        uv = pc @ self.K.T
        return uv[:, :2] / uv[:, 2:3]

    def project(self, pts: np.ndarray) -> np.ndarray:
        """Projection into the final (distorted) image."""
        pts = np.asarray(pts, np.float64).reshape(-1, 3)
        uv, _ = cv2.projectPoints(pts, self.rvec, self.t, self.K, self.dist)
        return uv.reshape(-1, 2)

    def distort_ideal(self, uv: np.ndarray) -> np.ndarray:
        """Map ideal (undistorted) pixel positions to the distorted image."""
        uv = np.asarray(uv, np.float64).reshape(-1, 2)
        ones = np.ones((len(uv), 1))
        rays = np.hstack([uv, ones]) @ np.linalg.inv(self.K).T
        out, _ = cv2.projectPoints(rays, np.zeros(3), np.zeros(3), self.K, self.dist)
        return out.reshape(-1, 2)

    def distortion_maps(self) -> tuple[np.ndarray, np.ndarray]:
        """remap() maps: for each distorted-image pixel, where it is in the ideal canvas."""
        if self._maps is None:
            xx, yy = np.meshgrid(np.arange(self.width, dtype=np.float32),
                                 np.arange(self.height, dtype=np.float32))
            pts = np.stack([xx.ravel(), yy.ravel()], 1).reshape(-1, 1, 2)
            full = cv2.undistortPoints(pts, self.K, self.dist, P=self.K).reshape(
                self.height, self.width, 2)
            self._maps = (np.ascontiguousarray(full[..., 0]), np.ascontiguousarray(full[..., 1]))
        return self._maps

    def pixel_per_cm(self, p: np.ndarray) -> float:
        depth = float(self.to_cam(p)[0, 2])
        return float(self.K[0, 0]) / max(depth, 1e-6)

    def centre(self) -> np.ndarray:
        return -self.R.T @ self.t

    def as_dict(self) -> dict:
        return {"K": self.K.round(4).tolist(), "R": self.R.round(6).tolist(),
                "t": self.t.round(4).tolist(), "dist": self.dist.round(6).tolist(),
                "width": self.width, "height": self.height,
                "centre_cm": self.centre().round(3).tolist()}


def look_at(eye: np.ndarray, target: np.ndarray, roll_deg: float = 0.0,
            up_hint: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """R, t for a camera at `eye` looking at `target` (OpenCV axes: x right, y down, z ahead)."""
    fwd = target - eye
    fwd = fwd / np.linalg.norm(fwd)
    up = np.array([0.0, 0.0, 1.0]) if up_hint is None else up_hint
    if abs(float(np.dot(fwd, up))) > 0.999:
        up = np.array([0.0, 1.0, 0.0])
    right = np.cross(fwd, up)
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    R = np.stack([right, down, fwd])
    if roll_deg:
        a = math.radians(roll_deg)
        Rz = np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]])
        R = Rz @ R
    t = -R @ eye
    return R, t


def make_camera(elevation_deg: float, azimuth_deg: float, roll_deg: float, hfov_deg: float,
                board_fraction: float, width: int, height: int, dist: np.ndarray,
                target: tuple[float, float] = (0.0, 0.0)) -> Camera:
    """A camera at the given elevation above the table plane and azimuth around the board
    (0 = behind white's edge, 180 = behind black's), placed so the board spans `board_fraction`
    of the frame width."""
    f = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
    K = np.array([[f, 0, width / 2], [0, f, height / 2], [0, 0, 1.0]])
    el, az = math.radians(elevation_deg), math.radians(azimuth_deg)
    tgt = np.array([target[0], target[1], 0.0])
    direction = np.array([-math.sin(az) * math.cos(el), -math.cos(az) * math.cos(el),
                          math.sin(el)])
    # up hint: away from the camera's side, so that "up" in the image points across the board
    up_hint = np.array([math.sin(az), math.cos(az), 0.0]) if elevation_deg > 89.0 else None
    corners = np.array([[x, y, 0.0] for x in (-BOARD_W / 2, BOARD_W / 2)
                        for y in (-BOARD_H / 2, BOARD_H / 2)])

    def width_at(d: float) -> float:
        R, t = look_at(tgt + d * direction, tgt, roll_deg, up_hint)
        cam = Camera(K, R, t, np.zeros(5), width, height)
        uv = cam.project_ideal(corners)
        return (uv[:, 0].max() - uv[:, 0].min()) / width

    lo, hi = 20.0, 2000.0
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        if width_at(mid) > board_fraction:
            lo = mid
        else:
            hi = mid
    R, t = look_at(tgt + hi * direction, tgt, roll_deg, up_hint)
    return Camera(K, R, t, np.asarray(dist, np.float64), width, height)
