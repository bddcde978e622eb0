"""How tall a unit stands, read from its cell seen bare before it stood there.

The piece classifier reads a side's king and queen as each other more than any other pair
(the held-out `lathe` set; brutalchess from above), and on held-out sets a queen as a bishop.
Height tells them apart where the look does not: in every Staunton set, the Debian and turned
sets here and all 200 procedural sets checked, the king and queen are the two tallest kinds
and the king the taller of them (3 to 18 %, 10 % on average). The pawn is the lowest in
Staunton sets and the Debian and turned sets (the procedural sets, drawn to vary, may stand a
pawn of 0.62 king heights above a rook of 0.55); rook, knight and bishop stand in no order
common to all sets. At set-up every unit stands on its set-up card, which the camera
saw bare a moment before. The picture's change from that bare view to now is the unit; the
top of the change up the billboard crop (`scanner.piece_crops`: fixed cm per pixel, the cell's
centre at a fixed row) is the unit's top, its height times cos(elevation) plus its crown's
reach toward the back. The tracker weighs the heights when it assigns a side's kinds to its
units (`tracker_placement`, `stature_log_odds`).

Seen from high above, a unit's top is more its crown's width than its height, so above
MAX_ELEVATION_DEG no height is given; nor where the billboard's sides changed too since the
bare view (the light, the table). `royal-table pieces heights` films 90 set-ups (the
constants were chosen on them): king above queen 29 pairs right, 2 wrong (brutalchess, whose
king's thin cross the change misses and whose queen's crown is wide), 74 unordered; king or
queen above the others 134 right, 0 wrong, 275 unordered; a pawn below rooks, knights and
bishops 37 right, 0 wrong, 54 unordered. In the filmed games' own scans (sets 1-9 and the
fixtures, the 20 games of 3D pieces with cameras at 55 degrees or lower) 133 of 160 units
got a height at set-up, and every pair they order is ordered right: king above queen 8,
the others 76, pawns 28 (before the side check and the first height standing, both made
from these games: 6 right and 3 wrong, 76 and 7, 28 and 0).
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from calibration.geometry import SETUP_CELLS

from .detections import PieceReading
from .piece_crops import (
    BILL_HI,
    CROP_H,
    CROP_PX_PER_CM,
    CROP_W,
    MID_HEIGHT_CM,
    BoardCamera,
    cell_centre,
    crop_quad,
    warp_quad,
)

SCALE = 2  # gauge crop pixels per billboard crop pixel: 16 px/cm
PX_PER_CM = CROP_PX_PER_CM * SCALE
GAUGE_W, GAUGE_H = CROP_W * SCALE, CROP_H * SCALE
BASE_ROW = BILL_HI * PX_PER_CM  # the cell centre's row in the gauge crop
CHANGE_LEVEL = 20  # grey levels (any channel) that count as the unit, not the light
MAX_ELEVATION_DEG = 55.0  # above it the silhouette's top is more the crown's width than the height
WIDE_SHARE = 0.9  # a change across this share of the billboard at the base: a card laid
SIDE_CM = 1.5  # the billboard's side strips, beside any unit on the cell ...
SIDE_SHARE = 0.15  # ... changed more than this since the bare view: no height
AXIS_CM = 1.5  # the unit's axis within this of the cell's centre (units stand off centre)
GAP_CM = 2.0  # a gap in the change up the axis no longer than this is still the unit
BARE_SURE = 0.9  # a bare read this sure is kept as the cell's bare view
TOP_REACH_CM = 0.4  # how far behind its axis a unit's top reaches (a crown, a ball)
MIN_HEIGHT_CM = 3.0  # lower than any chess piece: a paper token, or nothing measured
# how much the orders of height weigh (chosen on the filmed set-ups: the module's figures)
STATURE_GAP = 0.03
KING_QUEEN_SLOPE = 20.0  # king above queen: 29 of 31 pairs right (brutalchess 9 of 11)
TALL_SLOPE = 40.0  # the other orders: 171 of 171 pairs right
# the kinds' order of height common to every set measured: pawn lowest, then rook, knight
# and bishop in no common order, then queen, then king
STATURE_RANK = {"pawn": 0, "rook": 1, "knight": 1, "bishop": 1, "queen": 2, "king": 3}
STATURE_CAP = 0.1

_DST = np.array([[0, 0], [GAUGE_W, 0], [GAUGE_W, GAUGE_H], [0, GAUGE_H]], np.float32)
_OPEN = np.ones((5, 5), np.uint8)


def gauge_crop(image: np.ndarray, cam: BoardCamera, cell: str) -> np.ndarray:
    """The cell's billboard at SCALE times the classifier's resolution (BGR)."""
    x, y = cell_centre(cell, cam.pitch)
    return warp_quad(image, crop_quad(cam, x, y), _DST)


def unit_top_cm(bare: np.ndarray, now: np.ndarray) -> float | None:
    """How far above the cell's centre (billboard cm) the change from `bare` to `now` reaches
    along the billboard's middle: from the change at the unit's base upward, across gaps of
    at most GAP_CM (a collar or a crown's slit that matches the card behind it), no further
    (a change beyond is something else: a unit behind). None where nothing stands there or
    the change fills the billboard's width (a card laid, a hand)."""
    b, g, r = cv2.split(cv2.GaussianBlur(cv2.absdiff(now, bare), (5, 5), 0))
    diff = cv2.max(cv2.max(b, g), r)  # (numpy's max over the channel axis is 20x slower)
    mask = cv2.morphologyEx((diff > CHANGE_LEVEL).astype(np.uint8), cv2.MORPH_OPEN, _OPEN)
    base = int(BASE_ROW)
    lo = max(0, base - int(2 * PX_PER_CM))
    if mask[lo:base + int(PX_PER_CM)].any(axis=0).mean() > WIDE_SHARE:
        return None
    side = int(SIDE_CM * PX_PER_CM)
    if np.concatenate([mask[:lo, :side], mask[:lo, -side:]]).mean() > SIDE_SHARE:
        return None  # the light or the table changed since the bare view, not only the unit
    half = int(AXIS_CM * PX_PER_CM)
    band = mask[:, GAUGE_W // 2 - half:GAUGE_W // 2 + half]
    rows = np.flatnonzero(band.sum(axis=1) >= 2)
    if not len(rows):
        return None
    at_base = rows[(rows >= lo) & (rows <= base + int(PX_PER_CM))]
    if not len(at_base):
        return None
    top = int(at_base.min())
    gap = int(GAP_CM * PX_PER_CM)
    for r in rows[rows < top][::-1]:
        if top - r > gap:
            break
        top = int(r)
    return (base - top) / PX_PER_CM


def foreshortening(cam: BoardCamera, cell: str) -> float:
    """cos of the camera's elevation over the cell's billboard: a height h shows as about
    h times this in the billboard."""
    x, y = cell_centre(cell, cam.pitch)
    c = cam.centre()
    return math.cos(math.atan2(c[2] - MID_HEIGHT_CM, math.hypot(c[0] - x, c[1] - y)))


class HeightGauge:
    """Keeps each set-up cell's last bare view; gives a unit read on it its `height_cm` (the
    height estimated from the change since that view). The first height measured after the
    bare view stands while the unit does: later looks come after more of the table has changed
    (initiative cards laid beside the home ranks, the light), which the change would take for
    the unit. Only the set-up cards are gauged: the tracker weighs heights when it decides
    the placement, and a bare view per cell costs a warp whenever the cell is read."""

    def __init__(self, cells: tuple[str, ...] = tuple(SETUP_CELLS)) -> None:
        self.cells = cells
        self._bare: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # cell -> (view, camera H)
        self._height: dict[str, float] = {}  # cell -> the unit's height since its bare view

    def reset(self) -> None:
        self._bare.clear()
        self._height.clear()

    def look(self, image: np.ndarray, cam: BoardCamera,
             readings: dict[str, PieceReading]) -> None:
        h = cam.homography()
        for cell in self.cells:
            r = readings.get(cell)
            if r is None:
                continue
            bare = r.piece == "empty" and r.confidence >= BARE_SURE
            kept = self._bare.get(cell)
            if kept is not None and not np.allclose(kept[1], h, rtol=1e-6, atol=1e-9):
                del self._bare[cell]  # the camera or board moved: that view is gone
                self._height.pop(cell, None)
                kept = None
            if bare:
                self._bare[cell] = (gauge_crop(image, cam, cell), h)
                self._height.pop(cell, None)
            elif r.occupied and cell in self._height:
                r.height_cm = self._height[cell]
            elif r.occupied and kept is not None:
                r.height_cm = height_cm(kept[0], gauge_crop(image, cam, cell),
                                        foreshortening(cam, cell))
                if r.height_cm is not None:
                    self._height[cell] = r.height_cm


def height_cm(bare: np.ndarray, now: np.ndarray, elevation_cos: float) -> float | None:
    """A unit's height from its bare cell and now, where the camera sees it from low enough.
    The top of the change is the unit's top, h cos(e) up the billboard, plus its crown's
    reach toward the back, TOP_REACH_CM sin(e); flat units (paper tokens) give none."""
    if elevation_cos < math.cos(math.radians(MAX_ELEVATION_DEG)):
        return None
    top = unit_top_cm(bare, now)
    if top is None:
        return None
    sin_e = math.sqrt(max(0.0, 1.0 - elevation_cos ** 2))
    h = (top - TOP_REACH_CM * sin_e) / elevation_cos
    return round(h, 2) if h >= MIN_HEIGHT_CM else None


def stature_log_odds(kind_at: dict[str, str], heights: dict[str, float | None]) -> float:
    """How well an assignment of kinds to a side's cells fits the units' heights: for each
    two units both measured where the kinds give an order (STATURE_RANK: a king stands above
    a queen, both above rooks, knights and bishops, and those above pawns), log P(the one
    seen taller is the taller kind), a logistic in the height gap's share. Heights within
    STATURE_GAP of each other say nothing, and a gap counts at most STATURE_CAP: a wrong
    measure must not outweigh every look."""
    total = 0.0
    cells = [c for c in kind_at if heights.get(c)]
    for i, a in enumerate(cells):
        for b in cells[i + 1:]:
            order = stature_order(kind_at[a], kind_at[b])
            if order is None:
                continue
            slope, taller = order
            ha, hb = (float(heights[a]), float(heights[b]))
            share = (ha - hb) / ((ha + hb) / 2) * (1 if taller == 0 else -1)
            if abs(share) < STATURE_GAP:
                continue
            total -= math.log1p(math.exp(-slope * max(-STATURE_CAP, min(STATURE_CAP, share))))
    return total


def stature_order(kind_a: str, kind_b: str) -> tuple[float, int] | None:
    """(weight, 0 if kind_a is the taller kind else 1), or None where the kinds give no order
    (rook, knight and bishop stand in no order common to all sets)."""
    ra, rb = STATURE_RANK.get(kind_a, 1), STATURE_RANK.get(kind_b, 1)
    if ra == rb:
        return None
    slope = KING_QUEEN_SLOPE if {ra, rb} == {2, 3} else TALL_SLOPE
    return slope, 0 if ra > rb else 1
