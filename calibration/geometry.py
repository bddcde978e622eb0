"""Board-plane geometry in cell units, and the quadrilateral helpers every fit uses.

The board plane is measured in cells, not cm, because players space their cards as they like:
x runs along the files (a = 0 … g = 6, white's left to right), y along the ranks (1 = 0 … 5 = 4,
white's edge to black's). Cell (f, r) has its centre at (f, r).
"""

from __future__ import annotations

import cv2
import numpy as np

FILES = "abcdefg"
RANKS = "12345"
N_FILES, N_RANKS = 7, 5
CELLS = [f + r for r in RANKS for f in FILES]
# Set-up cards: files a, c, e, g on both home ranks (rules, "Set-up" 1).
SETUP_CELLS = [f + r for r in "15" for f in "aceg"]
# A card's size in cell units when the players use the renderer's spacing (6.3 x 8.8 cm cards on
# a 7.5 x 10 cm pitch); only a starting guess, the fit measures the real one.
DEFAULT_CARD_CELLS = (6.3 / 7.5, 8.8 / 10.0)
CARD_ASPECT = 88.0 / 63.0  # long / short side of a standard poker card


def cell_xy(cell: str) -> tuple[float, float]:
    """Board-plane centre of a cell ("a1" -> (0, 0))."""
    if len(cell) != 2 or cell[0] not in FILES or cell[1] not in RANKS:
        raise ValueError(f"not a cell: {cell!r}")
    return float(FILES.index(cell[0])), float(RANKS.index(cell[1]))


def cell_at(x: float, y: float) -> str | None:
    """The cell whose centre is nearest to (x, y), or None off the board."""
    f, r = int(round(x)), int(round(y))
    if 0 <= f < N_FILES and 0 <= r < N_RANKS:
        return FILES[f] + RANKS[r]
    return None


def quad_centre(quad: np.ndarray) -> np.ndarray:
    """Where the diagonals cross: the exact image of a rectangle's centre under any homography
    (the mean of the corners is not, under perspective)."""
    q = np.asarray(quad, np.float64).reshape(4, 2)
    p, r = q[0], q[2] - q[0]
    s, d = q[1], q[3] - q[1]
    den = r[0] * d[1] - r[1] * d[0]
    if abs(den) < 1e-9:
        return q.mean(0)
    t = ((s[0] - p[0]) * d[1] - (s[1] - p[1]) * d[0]) / den
    return p + t * r


_TURNS = [np.array([(i + k) % 4 for i in range(4)]) for k in range(4)]  # np.roll by -k, faster


def order_quad(quad: np.ndarray) -> np.ndarray:
    """Corners clockwise on screen (image y points down), starting from the top-left one."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    c = q.mean(0)
    ang = np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0])
    q = q[np.argsort(ang)]  # increasing angle = clockwise on screen
    return q[_TURNS[int(np.argmin(q[:, 0] + q[:, 1]))]]


def quad_area(quad: np.ndarray) -> float:
    # the shoelace sum of a quadrilateral is half the cross product of its diagonals (as
    # scalars: the card finder measures thousands of contours a photo)
    q = np.asarray(quad, np.float64).reshape(4, 2)
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = q.tolist()
    return 0.5 * abs((x2 - x0) * (y3 - y1) - (y2 - y0) * (x3 - x1))


def quad_sides(quad: np.ndarray) -> np.ndarray:
    q = np.asarray(quad, np.float64).reshape(4, 2)
    d = q - q[[1, 2, 3, 0]]
    return np.sqrt((d * d).sum(1))


def apply_h(H: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Map Nx2 points through a homography."""
    p = np.asarray(pts, np.float64).reshape(-1, 2)
    ph = np.hstack([p, np.ones((len(p), 1))]) @ np.asarray(H, np.float64).T
    w = ph[:, 2:3]
    w = np.where(np.abs(w) < 1e-12, 1e-12, w)
    return ph[:, :2] / w


def fit_homography(board_pts: np.ndarray, image_pts: np.ndarray) -> np.ndarray | None:
    """Least-squares homography board -> image from 4 or more correspondences (no outlier
    rejection here: the caller matched the points). None when the points are degenerate."""
    src = np.asarray(board_pts, np.float64).reshape(-1, 2)
    dst = np.asarray(image_pts, np.float64).reshape(-1, 2)
    if len(src) < 4:
        return None
    H, _ = cv2.findHomography(src, dst, 0)
    if H is None or not np.all(np.isfinite(H)) or abs(H[2, 2]) < 1e-12:
        return None
    return H / H[2, 2]


def card_board_corners(centre: tuple[float, float], size: tuple[float, float],
                       landscape: bool = False) -> np.ndarray:
    """Board-plane corners of an axis-aligned card (white's view: top-left, top-right,
    bottom-right, bottom-left, where top is toward black)."""
    w, h = size
    if landscape:
        w, h = h, w
    cx, cy = centre
    return np.array([[cx - w / 2, cy + h / 2], [cx + w / 2, cy + h / 2],
                     [cx + w / 2, cy - h / 2], [cx - w / 2, cy - h / 2]], np.float64)


def orientation_sign(H: np.ndarray) -> float:
    """Sign of the board's handedness in the image: negative for a camera looking down (the
    board's x-right, y-up frame lands in the y-down image mirrored), positive for a mirror view."""
    p = apply_h(H, np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 4.0]]))
    a, b = p[1] - p[0], p[2] - p[0]
    return float(np.sign(a[0] * b[1] - a[1] * b[0]))


def is_proper(H: np.ndarray, extent: tuple[float, float, float, float] = (-1.5, -1.5, 8.5, 5.5)
              ) -> bool:
    """A real camera view of the board: the horizon (where w = 0) lies outside the table area
    and the view is not mirrored. A 'bow-tie' fit (two rows matched in opposite directions)
    fits the points yet sends the horizon through the board; this rejects it."""
    x0, y0, x1, y1 = extent
    pts = np.array([[x0, y0, 1], [x1, y0, 1], [x1, y1, 1], [x0, y1, 1]], np.float64)
    w = pts @ np.asarray(H, np.float64)[2]
    return bool((np.all(w > 0) or np.all(w < 0)) and orientation_sign(H) < 0)
