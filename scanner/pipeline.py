"""`TableScanner`: one frame -> `TableReading`, with the board profile, per-stage timing.

Stages: (1) board check — every cell's neighbourhood is warped to a small top-down patch where the
card (if any) is found as a bright quadrilateral, so no full-frame search runs per frame; cards
that sit off the lattice mean the camera or board moved; (2) cards — every found card (35 cells
and the two initiative zones) is rectified and read in one ONNX batch; (3) pieces — an optional
stage object with `read(image, profile, cells) -> dict[cell, PieceReading]`.
"""

from __future__ import annotations

import math
import time
from typing import Protocol

import cv2
import numpy as np

from calibration.geometry import CELLS, apply_h, cell_xy
from calibration.profile import Profile

from .card_finder import whiteness
from .card_presence import CardPresence
from .card_reader import CardReader
from .detections import CardReading, CellReading, PieceReading, TableReading

PATCH_PX = 40  # top-down search patch: pixels per file pitch (ranks scaled to stay metric)
PATCH_SPAN = (1.5, 1.2)  # patch size in cells (x, y): a landscape card overhangs its cell
MIN_STEP = 10.0  # a card's rim must be this much whiter than the table just outside it
# small misplacements a player makes: offsets (patch px) and turns (degrees) tried per card
OFFSETS = (-3.0, 0.0, 3.0)
TURNS = (-3.5, 0.0, 3.5)
SIDE_SAMPLES = 16


def _hypotheses(card_px: tuple[float, float], params: list[tuple[bool, float, float, float]]
                ) -> tuple[np.ndarray, list[tuple[tuple[bool, float, float, float], np.ndarray]]]:
    """Sample points just inside and just outside each side of candidate card rectangles
    (landscape?, turn in degrees, dx, dy in patch px), relative to the patch centre.
    Returns (samples: H x 4 sides x S x 2 (inside, outside) x 2 coords, [(params, corners)])."""
    samples, hyps = [], []
    t = (np.arange(SIDE_SAMPLES) + 0.5) / SIDE_SAMPLES * 0.8 + 0.1  # skip rounded corners
    for landscape, turn, dx, dy in params:
        w, h = card_px if not landscape else (card_px[1], card_px[0])
        base = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
        a = np.radians(turn)
        R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        c = base @ R.T + [dx, dy]
        sides = []
        for k in range(4):
            p0, p1 = c[k], c[(k + 1) % 4]
            d = p1 - p0
            n = np.array([d[1], -d[0]]) / (np.linalg.norm(d) + 1e-9)  # outward
            pts = p0 + t[:, None] * d
            sides.append(np.stack([pts - 2.0 * n, pts + 2.0 * n], axis=1))
        samples.append(np.stack(sides))
        hyps.append(((landscape, turn, dx, dy), c))
    return np.array(samples), hyps


def _coarse_params() -> list[tuple[bool, float, float, float]]:
    return [(land, turn, dx, dy) for land in (False, True) for turn in TURNS
            for dx in OFFSETS for dy in OFFSETS]


class PieceStage(Protocol):
    def read(self, image: np.ndarray, profile: Profile,
             cells: dict[str, CellReading]) -> dict[str, PieceReading]: ...


def _patch_geometry(profile: Profile) -> tuple[int, int, float]:
    """Patch width, height (px) and pixels per rank pitch."""
    py = PATCH_PX * max(profile.pitch_ratio, 0.5)
    return int(PATCH_SPAN[0] * PATCH_PX), int(PATCH_SPAN[1] * py), py


def _patch_h(profile: Profile, centre: tuple[float, float]) -> np.ndarray:
    """Homography patch pixels -> undistorted image pixels for a patch around `centre`
    (u right along the files, v down toward white: the board as white sees it)."""
    pw, ph, py = _patch_geometry(profile)
    A = np.array([[1.0 / PATCH_PX, 0, centre[0] - pw / 2 / PATCH_PX],
                  [0, -1.0 / py, centre[1] + ph / 2 / py], [0, 0, 1]])
    return profile.H @ A


class TableScanner:
    def __init__(self, profile: Profile, reader: CardReader | None = None,
                 pieces: PieceStage | None = None, presence: CardPresence | None | str = "default"):
        self.profile = profile
        self.reader = reader or CardReader()
        self.pieces = pieces
        # "default": the committed presence check; None: the finder's rim test alone decides
        self.presence = CardPresence.default() if presence == "default" else presence
        self.frame_index = 0
        self._geom = _patch_geometry(profile)
        cw, ch = profile.card_size
        self._card_px = (cw * PATCH_PX, ch * self._geom[2])
        self._samples, self._hyps = _hypotheses(self._card_px, _coarse_params())
        # the finer look around each coarse rectangle, prepared once per profile
        self._idx = self._index(self._samples)
        self._fine = []
        for (land, turn, dx, dy), _ in self._hyps:
            smp, hyps = _hypotheses(self._card_px, [
                (land, turn + dt, dx + ex, dy + ey) for dt in (-1.75, 0.0, 1.75)
                for ex in (-1.5, 0.0, 1.5) for ey in (-1.5, 0.0, 1.5)])
            self._fine.append((self._index(smp), hyps))
        self._patches = {key: _patch_h(profile, centre) for key, centre in self._zones()}
        self._warps = {key: self._warp_h(key) for key in self._patches}

    def _zones(self) -> list[tuple[str, tuple[float, float]]]:
        z = [(c, cell_xy(c)) for c in CELLS]
        z += [("init/" + s, xy) for s, xy in self.profile.initiative.items()]
        return z

    def _warp_patch(self, image: np.ndarray, key: str) -> np.ndarray:
        pw, ph, _ = self._geom
        return cv2.warpPerspective(image, self._warps[key], (pw, ph),
                                   flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                   borderMode=cv2.BORDER_REPLICATE)

    def _warp_h(self, key: str) -> np.ndarray:
        """Patch -> frame homography; with lens distortion, the one through the patch's exact
        corners (close enough over one cell)."""
        Hp = self._patches[key]
        if self.profile.K is None:
            return Hp
        pw, ph, _ = self._geom
        corners = np.array([[0, 0], [pw, 0], [pw, ph], [0, ph]], np.float64)
        img_c = self.profile._distort(apply_h(Hp, corners))
        return cv2.getPerspectiveTransform(corners.astype(np.float32), img_c.astype(np.float32))

    def _find_in_patch(self, image: np.ndarray, key: str) -> tuple[np.ndarray | None, float]:
        """The card quad (image pixels) in this zone, and its rim step (whiteness inside minus
        outside, the best 3 sides: a piece or a touching neighbour may spoil one)."""
        pw, ph, _ = self._geom
        g = whiteness(self._warp_patch(image, key)).astype(np.float32)
        score, best = self._score(g, self._idx)
        if score[best] < MIN_STEP:
            return None, float(score[best])
        # a finer look around the best rectangle: the index crops need the corners close
        idx, hyps = self._fine[best]
        _, fbest = self._score(g, idx)
        _, corners = hyps[fbest]
        quad = corners + [pw / 2, ph / 2]
        img_q = self.profile._distort(apply_h(self._patches[key], quad))
        return img_q.astype(np.float32), float(score[best])

    def _index(self, samples: np.ndarray) -> np.ndarray:
        """Flat patch-pixel indices of hypothesis samples (prepared once, used every frame)."""
        pw, ph, _ = self._geom
        pts = samples + [pw / 2, ph / 2]
        xi = np.clip(np.rint(pts[..., 0]).astype(np.int32), 0, pw - 1)
        yi = np.clip(np.rint(pts[..., 1]).astype(np.int32), 0, ph - 1)
        return yi * pw + xi

    @staticmethod
    def _score(g: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, int]:
        v = g.ravel()[idx]  # hyps x 4 x S x 2
        step = (v[..., 0] - v[..., 1]).mean(axis=2)  # hyps x 4
        score = np.sort(step, axis=1)[:, 1:].mean(1)
        return score, int(score.argmax())

    def zone_names(self) -> list[str]:
        """The places read: the 35 cells, then "init/white" and "init/black"."""
        return [key for key, _ in self._zones()]

    def scan(self, image: np.ndarray, zones: set[str] | None = None,
             count: bool = True) -> TableReading:
        """Read a frame: every zone, or only `zones` (see `zone_names`; the others are then
        left out of the reading, for `scanner.incremental` to fill from earlier frames).
        `count=False` reads without counting a frame (a second look at the current one)."""
        t0 = time.perf_counter()
        reading = TableReading(frame_index=self.frame_index)
        self.frame_index += count
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
            if zones is not None and key not in zones:
                continue
            q, _ = self._find_in_patch(image, key)
            if q is not None:
                found[key] = q
        t1 = time.perf_counter()
        reading.timings_ms["board"] = (t1 - t0) * 1000
        if self.presence is not None and found:
            # a white square of a checked cloth, or a neighbour's card edge, has a card's rim
            keys = list(found)
            real = self.presence.is_card(image, [found[k] for k in keys])
            found = {k: found[k] for k, ok in zip(keys, real, strict=True) if ok}
            t1b = time.perf_counter()
            reading.timings_ms["presence"] = (t1b - t1) * 1000
            t1 = t1b
        # a card seen on most of the expected places, or any cards at all: the board is there
        reading.board_found = len(found) > 0 or zones is not None
        if not found and zones is None:
            reading.message = "no card found on the calibrated board: camera or board moved?"
        keys = list(found)
        # a card on the grid lies whole and apart: the whole-card model reads every one (on
        # 1920x1080 held-out stills, 73 % read right instead of 63 %, answers as precise)
        readings = self.reader.read_quads(image, [found[k] for k in keys],
                                          face_below_px=math.inf)
        by_key = dict(zip(keys, readings, strict=True))
        Hi = np.linalg.inv(self.profile.H)
        for cell in CELLS:
            if zones is not None and cell not in zones:
                continue
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

    def recheck(self, image: np.ndarray) -> str:
        """The slower whole-frame check, for every few seconds rather than every frame: find
        every card, say whether they still sit on the lattice ('ok', 'moved', 'unknown'), and
        refine the homography with them when they do (more cards, better fit)."""
        from calibration.register import check_registration, refine

        from .card_finder import find_cards

        quads = find_cards(image)
        if self.profile.K is not None:
            quads = [self.profile.undistort(q).astype(np.float32) for q in quads]
        status = check_registration(self.profile, quads)
        if status == "ok":
            better = refine(self.profile, quads)
            if better is not self.profile:
                frame = self.frame_index
                self.__init__(better, self.reader, self.pieces, self.presence)
                self.frame_index = frame
        return status

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
