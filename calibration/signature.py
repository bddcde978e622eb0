"""A board appearance signature: a coarse top-down picture of the table around the board.

Stored in the profile at calibration; a later frame whose signature no longer correlates (the
table's grain, edges and the cards all in other places) says the camera or board moved. Cards
come and go during play, so this is only a hint beside `register.check_registration`.
"""

from __future__ import annotations

import cv2
import numpy as np

AREA = (-1.5, -1.5, 8.5, 5.5)  # board-plane x0, y0, x1, y1 (cells): the board and its margin
GRID = (24, 16)


def signature(image: np.ndarray, profile) -> list[float]:
    x0, y0, x1, y1 = AREA
    gw, gh = GRID
    A = np.array([[(x1 - x0) / gw, 0, x0], [0, -(y1 - y0) / gh, y1], [0, 0, 1]])
    M = profile.H @ A
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    # average first so the coarse grid is not aliased by the table's texture
    blur = cv2.blur(gray, (9, 9))
    small = cv2.warpPerspective(blur, M, (gw, gh), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=0).astype(np.float32)
    v = small.ravel()
    v = (v - v.mean()) / (v.std() + 1e-6)
    return [float(x) for x in v]


def similarity(a: list[float], b: list[float]) -> float:
    """Correlation of two signatures (1 = same view); 0 when either is missing."""
    if not a or not b or len(a) != len(b):
        return 0.0
    return float(np.dot(a, b) / len(a))
