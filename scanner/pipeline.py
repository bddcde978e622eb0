"""`TableScanner`: one frame -> `TableReading`, with the board profile, per-stage timing.

Stages: (1) board check — every cell's neighbourhood is warped to a small top-down patch where the
card (if any) is found as a bright quadrilateral, so no full-frame search runs per frame; cards
that sit off the lattice mean the camera or board moved; (2) cards — every found card (35 cells
and the two initiative zones) is rectified and read in one ONNX batch; (3) pieces — an optional
stage object with `read(image, profile, cells) -> dict[cell, PieceReading]`.
"""

from __future__ import annotations

import time
from typing import Protocol

import cv2
import numpy as np

from calibration.geometry import CELLS, apply_h, cell_xy, order_quad, quad_area
from calibration.profile import Profile

from .card_finder import card_contrast, whiteness
from .card_reader import CardReader
from .detections import CardReading, CellReading, PieceReading, TableReading

PATCH_PX = 40  # pixels per cell in the top-down search patch
PATCH_SPAN = (1.4, 1.25)  # patch size in cells (x, y): a landscape card overhangs its cell
MIN_STEP = 10.0  # a card's rim must be this much whiter than the table around it


class PieceStage(Protocol):
    def read(self, image: np.ndarray, profile: Profile,
             cells: dict[str, CellReading]) -> dict[str, PieceReading]: ...


def _patch_h(profile: Profile, centre: tuple[float, float]) -> np.ndarray:
    """Homography patch pixels -> undistorted image pixels for a patch around `centre`."""
    sx, sy = PATCH_SPAN
    w, h = int(sx * PATCH_PX), int(sy * PATCH_PX)
    # patch (u, v): u right along files, v down = toward white (so the patch looks as white sees)
    A = np.array([[1.0 / PATCH_PX, 0, centre[0] - sx / 2],
                  [0, -1.0 / PATCH_PX, centre[1] + sy / 2], [0, 0, 1]])
    del w, h
    return profile.H @ A


class TableScanner:
    def __init__(self, profile: Profile, reader: CardReader | None = None,
                 pieces: PieceStage | None = None):
        self.profile = profile
        self.reader = reader or CardReader()
        self.pieces = pieces
        self.frame_index = 0
        self._patches = {}
        for key, centre in self._zones():
            self._patches[key] = _patch_h(profile, centre)

    def _zones(self) -> list[tuple[str, tuple[float, float]]]:
        z = [(c, cell_xy(c)) for c in CELLS]
        z += [("init/" + s, xy) for s, xy in self.profile.initiative.items()]
        return z

    def _find_in_patch(self, image: np.ndarray, key: str) -> tuple[np.ndarray | None, float]:
        """The card quad (image pixels) in this zone's patch, and its edge contrast."""
        Hp = self._patches[key]
        sx, sy = PATCH_SPAN
        pw, ph = int(sx * PATCH_PX), int(sy * PATCH_PX)
        if self.profile.K is not None:
            # distorted image: map through the exact corners, a local homography is enough
            corners = np.array([[0, 0], [pw, 0], [pw, ph], [0, ph]], np.float64)
            img_c = self.profile._distort(apply_h(Hp, corners))
            Hp = cv2.getPerspectiveTransform(corners.astype(np.float32),
                                             img_c.astype(np.float32))
        patch = cv2.warpPerspective(image, Hp, (pw, ph),
                                    flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        g = whiteness(patch)
        g = cv2.GaussianBlur(g, (3, 3), 0)
        _, m = cv2.threshold(g, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            return None, 0.0
        cw, ch = self.profile.card_size
        card_area = cw * ch * PATCH_PX * PATCH_PX
        centre = np.array([pw / 2, ph / 2])
        best, best_score = None, 0.0
        for c in contours:
            area = cv2.contourArea(c)
            if area < 0.45 * card_area or area > 1.6 * card_area:
                continue
            rect = cv2.minAreaRect(c)
            if np.hypot(*(np.array(rect[0]) - centre)) > 0.3 * PATCH_PX:
                continue
            quad = order_quad(cv2.boxPoints(rect))
            if quad_area(quad) > 1.5 * card_area:
                continue
            step = card_contrast(g, quad)
            if step > best_score:
                best, best_score = quad, step
        if best is None or best_score < MIN_STEP:
            return None, best_score
        img_q = self.profile._distort(apply_h(self._patches[key], best))
        return img_q.astype(np.float32), best_score

    def scan(self, image: np.ndarray) -> TableReading:
        t0 = time.perf_counter()
        reading = TableReading(frame_index=self.frame_index)
        self.frame_index += 1
        if image is None or image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
            reading.message = "no image (unreadable or empty frame)"
            return reading
        h, w = image.shape[:2]
        if (w, h) != tuple(self.profile.image_size):
            reading.message = (f"frame is {w}x{h} but the profile was made at "
                               f"{self.profile.image_size[0]}x{self.profile.image_size[1]}")
            return reading
        if int(image.max()) - int(image.min()) < 20:
            reading.message = "featureless frame (black, blank or blown out)"
            return reading
        found: dict[str, np.ndarray] = {}
        for key, _ in self._zones():
            q, _ = self._find_in_patch(image, key)
            if q is not None:
                found[key] = q
        t1 = time.perf_counter()
        reading.timings_ms["board"] = (t1 - t0) * 1000
        # a card seen on most of the expected places, or any cards at all: the board is there
        reading.board_found = len(found) > 0
        if not found:
            reading.message = "no card found on the calibrated board: camera or board moved?"
        keys = list(found)
        readings = self.reader.read_quads(image, [found[k] for k in keys])
        by_key = dict(zip(keys, readings, strict=True))
        Hi = np.linalg.inv(self.profile.H)
        for cell in CELLS:
            r = by_key.get(cell)
            if r is None:
                reading.cells[cell] = CellReading(cell=cell, empty=True)
                continue
            self._board_frame(r, Hi)
            reading.cells[cell] = CellReading(cell=cell, empty=False, card=r)
        for side in self.profile.initiative:
            r = by_key.get("init/" + side)
            if r is not None:
                self._board_frame(r, Hi)
                reading.initiative[side] = r
        t2 = time.perf_counter()
        reading.timings_ms["cards"] = (t2 - t1) * 1000
        if self.pieces is not None:
            try:
                for cell, pr in self.pieces.read(image, self.profile, reading.cells).items():
                    if cell in reading.cells:
                        reading.cells[cell].piece = pr
            except Exception as exc:  # a failing piece stage must not lose the card reading
                reading.message = f"piece stage failed: {exc}"
            reading.timings_ms["pieces"] = (time.perf_counter() - t2) * 1000
        reading.timings_ms["total"] = (time.perf_counter() - t0) * 1000
        return reading

    def _board_frame(self, r: CardReading, Hi: np.ndarray) -> None:
        """Orientation and index diagonal relative to the board, not the image."""
        if r.corners is None:
            return
        b = apply_h(Hi, self.profile.undistort(r.corners))
        long_axis = (b[3] - b[0]) + (b[2] - b[1])  # corners are in portrait order
        img_axis = (r.corners[3] - r.corners[0]) + (r.corners[2] - r.corners[1])
        img_portrait = abs(img_axis[1]) >= abs(img_axis[0])
        board_portrait = abs(long_axis[1]) >= abs(long_axis[0])
        if r.digit_corners is not None and img_portrait != board_portrait:
            r.digit_corners = "nw-se" if r.digit_corners == "ne-sw" else "ne-sw"
        r.orientation = "portrait" if board_portrait else "landscape"
