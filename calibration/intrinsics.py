"""Camera intrinsics from photos of the printed ChArUco target (optional: the board fit works
without them, they only undo lens distortion).

The target is generated, not stored: `royal-table calibrate target --out target.png` draws it at
print resolution. Print it flat (A4, no scaling) and photograph it at 10-20 angles.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

SQUARES = (7, 5)  # squares across, down
SQUARE_MM, MARKER_MM = 36.0, 27.0  # fits A4 landscape with margins
DICT = cv2.aruco.DICT_5X5_100


def charuco_board() -> cv2.aruco.CharucoBoard:
    return cv2.aruco.CharucoBoard(SQUARES, SQUARE_MM, MARKER_MM,
                                  cv2.aruco.getPredefinedDictionary(DICT))


def target_image(dpi: int = 200) -> np.ndarray:
    """The printable target (grayscale), with a white margin."""
    px_per_mm = dpi / 25.4
    w = int(SQUARES[0] * SQUARE_MM * px_per_mm)
    h = int(SQUARES[1] * SQUARE_MM * px_per_mm)
    margin = int(10 * px_per_mm)
    img = charuco_board().generateImage((w, h), marginSize=0)
    return cv2.copyMakeBorder(img, margin, margin, margin, margin, cv2.BORDER_CONSTANT,
                              value=255)


def detect_target(image: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """ChArUco corners and ids in one photo, or None when fewer than 6 are seen."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    det = cv2.aruco.CharucoDetector(charuco_board())
    corners, ids, _, _ = det.detectBoard(gray)
    if ids is None or len(ids) < 6:
        return None
    return corners.reshape(-1, 2), ids.ravel()


def calibrate(images: list[np.ndarray]) -> dict:
    """Fit K and distortion from several target photos. Raises ValueError with what was seen."""
    board = charuco_board()
    obj_all, img_all, size, used = [], [], None, 0
    for im in images:
        if im is None:
            continue
        size = (im.shape[1], im.shape[0])
        got = detect_target(im)
        if got is None:
            continue
        corners, ids = got
        obj = board.getChessboardCorners()[ids]
        obj_all.append(obj.astype(np.float32))
        img_all.append(corners.astype(np.float32))
        used += 1
    if used < 3:
        raise ValueError(f"the ChArUco target was found in {used} of {len(images)} photo(s); "
                         "need at least 3 (better 10+) views")
    rms, K, dist, _, _ = cv2.calibrateCamera(obj_all, img_all, size, None, None)
    return {"camera_matrix": K.tolist(), "distortion": dist.ravel().tolist(),
            "image_size": list(size), "rms_px": float(rms), "views": used}


def load_intrinsics(path: str | Path) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    d = json.loads(Path(path).read_text())
    return (np.array(d["camera_matrix"], np.float64).reshape(3, 3),
            np.array(d["distortion"], np.float64).ravel(), tuple(d["image_size"]))
