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

from calibration.geometry import CELLS, apply_h, card_board_corners
from calibration.profile import Profile

from .card_finder import whiteness
from .card_presence import CardPresence
from .card_reader import CardReader
from .detections import CardReading, CellReading, PieceReading, TableReading
from .rectify import KeptMaps, homography_map, portrait_order, rectify_maps

PATCH_PX = 40  # top-down search patch: pixels per file pitch (ranks scaled to stay metric)
PATCH_SPAN = (1.5, 1.2)  # patch size in cells (x, y): a landscape card overhangs its cell
MIN_STEP = 10.0  # a card's rim must be this much whiter than the table just outside it
# small misplacements a player makes: offsets (patch px) and turns (degrees) tried per card
OFFSETS = (-3.0, 0.0, 3.0)
TURNS = (-3.5, 0.0, 3.5)
SIDE_SAMPLES = 16
# an unsure initiative card read again through its zone's outline answers only this sure
PILE_SECOND_LOOK_SURE = 0.999
# a landscape rectangle found is read against the best portrait one where it leads by less
# than this (rim steps): on training-design stills true landscape cards led by 43.6 (median),
# 93 % of them by more than 4; portrait ones taken landscape (48 of 942) by at most 16
PORTRAIT_TOO_WITHIN = 30.0
# a zone with no card found where this share of its patch is glare-white (whiteness >= GLARE)
# is read unsure, not empty: a white card in a glare spot has no rim to find (v7-s281: a lamp's
# spot over c3-d4 read 4 laid cards empty for 235 settled frames each; in cardless zones
# elsewhere, 80 frames of the validation games, the share is at most 0.37)
GLARE, BLOWN_OUT = 240, 0.5
# a card left unsure is read again through this unsharp mask (amount, sigma px), and that
# look answers only this sure (`TableScanner._sharper_look`)
SHARPER_LOOK: tuple[float, float] | None = (1.5, 1.5)
SHARPER_LOOK_SURE = 0.999
# then through its outline grown and shrunk by 5 % about its centre, each look answering only
# this sure (`TableScanner._scaled_look`). Validation decks' stills (60, seed 31) 91.70 ->
# 93.00 % read right, 2 -> 3 wrong of 1,483 -> 1,505 answers; spare decks (30) 88.63 ->
# 89.93 %, none wrong; validation games 487 -> 490 (set 1) and 506 -> 509 moves (set 2),
# spurious unchanged. Grown and shrunk 10 %: 93.00 % with the pips; four looks (3 and 6 %):
# 93.68 %, more wrong on held-out stills; both looks to agree: 92.57 %, the same wrong
# answers; shrunk only: 92.45 %, none more wrong, but the games 489 and 507
SCALED_LOOKS = (1.05, 0.95)
SCALED_LOOK_SURE = 0.999
RECTIFY_MAPS = 256  # cached card rectifications (84 kB each): a static board uses ~40


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
        # Royal Battles lays every card face up, on the board and on the initiative piles: a
        # read of a card's back there is a face misread (val-s47: an orell joker laid on g2
        # read as a back at 48 % went unseen, and its unit's move was taken for a removal)
        self.faces_up = True
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
        # every coarse rectangle's finer look, stacked: all found zones are refined at once
        self._fine_idx = np.stack([idx for idx, _ in self._fine])
        self._patches = {key: _patch_h(profile, centre) for key, centre in self._zones()}
        self._warps = {key: self._warp_h(key) for key in self._patches}
        # each zone's patch as a pixel map, so one remap fetches every patch of a frame (37
        # warpPerspective calls cost more in overhead than in pixels)
        self._maps = {key: self._patch_map(key) for key in self._patches}
        self._quads: dict[tuple[str, int, int], np.ndarray] = {}  # (zone, coarse, fine) -> quad
        # zones a card would not lie wholly in the frame on: one the finder misses there may
        # still lie there, cut off (a card half out of view read "empty" 18 times in 71, 40
        # held-out stills), so they read unsure when no card is found
        self.out_of_view: set[str] = set(profile.out_of_view())
        cut = sorted(c for c in self.out_of_view if c in CELLS)
        self._cut_message = (
            f"{', '.join(cut)} {'lies' if len(cut) == 1 else 'lie'} partly out of the frame: "
            "read as unsure (turn or raise the camera until the whole board is in view)"
            if cut else "")
        # initiative zones where a card was read sure: a pile is never taken away (drawn
        # again, the old cards stay under the new), so a rectangle found there later is a
        # card even where the presence check doubts it (v7-s307: black's orell 2C beside its
        # deck passed it at 0.73 against 0.77 and went unread for 60 frames, its round lost)
        self.piles_laid: set[str] = set()
        self.blown_out: set[str] = set()  # zones, as last looked at, too glare-white to read
        self.glared: set[str] = set()  # cells, as last read, left unsure for that
        # those quads' rectification maps for the reader, kept for the most recent ones
        self._rect_maps = KeptMaps(rectify_maps, RECTIFY_MAPS)  # quads come in portrait order
        # each initiative zone's own card outline, portrait by its true sides on the table
        self._pile_quads = {}
        for side, centre in profile.initiative.items():
            plane = card_board_corners(centre, profile.card_size)
            self._pile_quads[side] = portrait_order(
                profile.board_to_image(plane).astype(np.float32), plane=plane)

    def _zones(self) -> list[tuple[str, tuple[float, float]]]:
        return self.profile.zones()

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

    def _patch_map(self, key: str) -> np.ndarray:
        """Where each patch pixel samples the frame (what warpPerspective with this zone's
        homography computes per call), as a float map (remap then samples as that does)."""
        pw, ph, _ = self._geom
        return homography_map(self._warps[key], (pw, ph))

    def _find_in_patch(self, image: np.ndarray, key: str) -> tuple[np.ndarray | None, float]:
        """The card quad (image pixels) in this zone, and its rim step (whiteness inside minus
        outside, the best 3 sides: a piece or a touching neighbour may spoil one)."""
        return self._find_in_patches(image, [key])[key]

    def _find_in_patches(self, image: np.ndarray, keys: list[str],
                         portrait_too: dict[str, np.ndarray] | None = None
                         ) -> dict[str, tuple[np.ndarray | None, float]]:
        """`_find_in_patch` for many zones, in one remap and one set of array operations.
        `portrait_too`: where given, filled with the best portrait rectangle of each zone
        whose found card is a landscape one by less than PORTRAIT_TOO_WITHIN (see `scan`)."""
        if not keys:
            return {}
        pw, ph, _ = self._geom
        maps = np.concatenate([self._maps[k] for k in keys])
        patches = cv2.remap(image, maps, None, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        g = whiteness(patches).astype(np.float32).reshape(len(keys), ph * pw)
        score, best = self._scores(g, self._idx.reshape(-1), self._idx.shape[0])
        top = score[np.arange(len(keys)), best]
        out: dict[str, tuple[np.ndarray | None, float]] = {}
        found = np.flatnonzero(top >= MIN_STEP)
        blown = (g >= GLARE).mean(axis=1) >= BLOWN_OUT
        for i, key in enumerate(keys):
            out[key] = (None, float(top[i]))
            if blown[i]:
                self.blown_out.add(key)
            else:
                self.blown_out.discard(key)
        if not len(found):
            return out
        # a finer look around each best rectangle: the index crops need the corners close
        for i, b, f in self._refine(g, found, best[found]):
            out[keys[i]] = (self._quad(keys[i], b, f), float(top[i]))
        if portrait_too is not None:
            n_portrait = len(self._hyps) // 2  # `_coarse_params`: portrait ones first
            near = found[(best[found] >= n_portrait) & (
                top[found] - score[found, :n_portrait].max(1) < PORTRAIT_TOO_WITHIN)]
            if len(near):
                upright = score[near, :n_portrait].argmax(1)
                for i, b, f in self._refine(g, near, upright):
                    portrait_too[keys[i]] = self._quad(keys[i], b, f)
        return out

    def _refine(self, g: np.ndarray, zones: np.ndarray, coarse: np.ndarray
                ) -> list[tuple[int, int, int]]:
        """The finer look around coarse rectangle `coarse[j]` of zone `zones[j]` (rows of the
        whiteness patches `g`): (zone, coarse, fine) each."""
        fine = self._fine_idx[coarse].reshape(len(zones), -1)
        _, fbest = self._scores(g[zones], fine, self._fine_idx.shape[1])
        return [(int(i), int(b), int(f)) for i, b, f in zip(zones, coarse, fbest, strict=True)]

    def _quad(self, key: str, coarse: int, fine: int) -> np.ndarray:
        """Image corners of a zone's rectangle, in portrait order (kept: a still board finds
        the same rectangles frame after frame)."""
        quad = self._quads.get((key, coarse, fine))
        if quad is None:
            pw, ph, _ = self._geom
            corners = self._fine[coarse][1][fine][1] + [pw / 2, ph / 2]
            quad = self.profile._distort(apply_h(self._patches[key], corners)) \
                .astype(np.float32)
            # portrait order by the card's true sides (the patch is metric), not by how
            # the camera foreshortens them
            quad = portrait_order(quad, plane=corners)
            self._quads[(key, coarse, fine)] = quad
        return quad.copy()

    @staticmethod
    def _scores(g: np.ndarray, idx: np.ndarray, n_hyps: int) -> tuple[np.ndarray, np.ndarray]:
        """Rim steps of each zone's hypotheses: g is zones x patch pixels, idx the flat sample
        indices (one set for all zones, or one row per zone). Returns (zones x hyps, best)."""
        v = np.take_along_axis(g, idx, axis=1) if idx.ndim == 2 else g[:, idx]
        v = v.reshape(len(g), n_hyps, 4, SIDE_SAMPLES, 2)
        step = (v[..., 0] - v[..., 1]).mean(axis=3)  # zones x hyps x 4 sides
        score = np.sort(step, axis=2)[:, :, 1:].mean(2)
        return score, score.argmax(1)

    def _index(self, samples: np.ndarray) -> np.ndarray:
        """Flat patch-pixel indices of hypothesis samples (prepared once, used every frame)."""
        pw, ph, _ = self._geom
        pts = samples + [pw / 2, ph / 2]
        xi = np.clip(np.rint(pts[..., 0]).astype(np.int32), 0, pw - 1)
        yi = np.clip(np.rint(pts[..., 1]).astype(np.int32), 0, ph - 1)
        return yi * pw + xi

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
        coarse = image[::4, ::4]  # every 16th pixel tells a featureless frame as well
        if int(coarse.max()) - int(coarse.min()) < 20:
            reading.message = "featureless frame (black, blank or blown out)"
            return reading
        keys = [key for key, _ in self._zones() if zones is None or key in zones]
        upright: dict[str, np.ndarray] = {}
        found = {key: q for key, (q, _) in self._find_in_patches(image, keys, upright).items()
                 if q is not None}
        t1 = time.perf_counter()
        reading.timings_ms["board"] = (t1 - t0) * 1000
        if self.presence is not None and found:
            # a white square of a checked cloth, or a neighbour's card edge, has a card's rim
            # (asking only the quads the reader could not read costs more: the reader then
            # reads those 3-4 non-cards a frame, twice over, session 14)
            # (a pile read before holds a card whatever the check says: not asked)
            keys = [k for k in found if k not in self.piles_laid]
            real = self.presence.is_card(image, [found[k] for k in keys], keep_maps=True)
            doubted = {k for k, ok in zip(keys, real, strict=True) if not ok}
            found = {k: q for k, q in found.items() if k not in doubted}
            t1b = time.perf_counter()
            reading.timings_ms["presence"] = (t1b - t1) * 1000
            t1 = t1b
        # a card seen on most of the expected places, or any cards at all: the board is there
        reading.board_found = len(found) > 0 or zones is not None
        if not found and zones is None:
            reading.message = "no card found on the calibrated board: camera or board moved?"
        keys = list(found)
        # a landscape rectangle found where the best portrait one is nearly as good is read
        # both ways, in the same batch (see `_surer_upright`)
        upright = {k: q for k, q in upright.items() if k in found}
        quads = [found[k] for k in keys] + list(upright.values())
        readings = self._read(image, quads, maps=[self._rect_maps(q) for q in quads])
        by_key = dict(zip(keys, readings[:len(keys)], strict=True))
        self._surer_upright(by_key, dict(zip(upright, readings[len(keys):], strict=True)))
        self._pile_second_look(image, by_key)
        self._sharper_look(image, by_key)
        self._scaled_look(image, by_key)
        readings = list(by_key.values())
        self._board_frame(readings)
        for cell in CELLS:
            if zones is not None and cell not in zones:
                continue
            r = by_key.get(cell)
            glared = r is None and cell in self.blown_out
            (self.glared.add if glared else self.glared.discard)(cell)
            if r is None:  # empty, unless glare or the frame's edge hides what lies there
                hidden = glared or cell in self.out_of_view
                reading.cells[cell] = CellReading(cell=cell, empty=None if hidden else True)
                continue
            reading.cells[cell] = CellReading(cell=cell, empty=False, card=r)
        if self.glared and not reading.message:  # what the players can do about it
            reading.message = f"glare over {', '.join(sorted(self.glared))}: the camera can't " \
                "tell whether cards lie there (move the light or the camera)"
        if not reading.message:
            reading.message = self._cut_message
        for side in self.profile.initiative:
            r = by_key.get("init/" + side)
            if r is not None:
                reading.initiative[side] = r
                if r.card is not None:
                    self.piles_laid.add("init/" + side)
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

    def _read(self, image: np.ndarray, quads: list[np.ndarray], maps: list | None = None,
              sharpen: tuple[float, float] | None = None, pips: bool = True
              ) -> list[CardReading]:
        """Read board cards (quads in the board's portrait order). A card on the grid lies
        whole and apart: the whole-card model reads every one (on 1920x1080 held-out stills,
        73 % read right instead of 63 %, answers as precise), and a card it leaves unsure has
        its suit shapes read too, a number card's pips or a court's index marks
        (`scanner.pip_suits`; `pips` false where an earlier look asked them); every card lies
        face up."""
        return self.reader.read_quads(image, quads, face_below_px=math.inf, maps=maps,
                                      faces_up=self.faces_up, in_portrait_order=True,
                                      sharpen=sharpen, pips=pips)

    @staticmethod
    def _surer_upright(by_key: dict[str, CardReading], upright: dict[str, CardReading]) -> None:
        """Royal Battles lays its cards portrait, and a court card's picture frame can outshine
        its thin white margin sideways: on the validation games (every 10th settled frame)
        all 99 landscape rectangles found were portrait cards, berlin courts of val-s7, none
        of them read right.
        Where the landscape rectangle won narrowly the portrait one was read too, and the
        reading stands that is at least as sure: a true landscape card read through a portrait
        rectangle comes out sideways and squashed, and unsure. val-s7 (every 10th settled
        frame): right 624 -> 674 of 1,015, but wrong 6 -> 26, all one KD read JD at 0.999
        through its right outline (the readers' berlin courts); the game 74 -> 78 moves."""
        for key, read in upright.items():
            if read.confidence >= by_key[key].confidence:
                by_key[key] = read

    def _sharper_look(self, image: np.ndarray, by_key: dict[str, CardReading]) -> None:
        """Every card left unsure is read once more through an unsharp mask (SHARPER_LOOK),
        its index blurred by a defocused camera, and that look answers only at
        SHARPER_LOOK_SURE. On the validation games' settled frames (every 10th, 5,672 cards)
        it named 125 of the 1,261 left unsure right and 1 wrong at the readers' own
        thresholds (an orell 5S as 4S at 0.9987; on a frame between those, a 2C under a pawn
        as 3C at 0.997 lost val-s7 two moves); at 0.999, 18 right and none wrong. Validation
        games 478 -> 479 of 534 moves (5 spurious), held-out stills 78.79 -> 80.12 % read
        right at the same precision (99.09 %), training-design stills +14 of 1,661."""
        unsure = [k for k, r in by_key.items() if r.card is None and not r.face_down]
        if not unsure or SHARPER_LOOK is None:
            return
        quads = [by_key[k].corners for k in unsure]
        again = self._read(image, quads, maps=[self._rect_maps(q) for q in quads],
                           sharpen=SHARPER_LOOK)
        for key, read in zip(unsure, again, strict=True):
            if read.card is not None and read.confidence >= SHARPER_LOOK_SURE:
                by_key[key] = read

    def _scaled_look(self, image: np.ndarray, by_key: dict[str, CardReading]) -> None:
        """Every card still unsure is read through its outline grown, then shrunk, about its
        centre (SCALED_LOOKS): the index crop cut a little wider or closer than the finder's
        rim put it. Each such look answers only at SCALED_LOOK_SURE, the first that does
        standing (the looks are read in one batch: a reader call costs more than its cards)."""
        unsure = [k for k, r in by_key.items() if r.card is None and not r.face_down]
        if not unsure or not SCALED_LOOKS:
            return
        quads = [by_key[k].corners.mean(0) + (by_key[k].corners - by_key[k].corners.mean(0)) * f
                 for f in SCALED_LOOKS for k in unsure]
        # (without the pips' look: the first looks asked them already, and at 5 ms a frame
        # more they named 6 of the held-out stills' cards more, the games none)
        for j, read in enumerate(self._read(image, quads, pips=False)):
            key = unsure[j % len(unsure)]
            if by_key[key].card is None and read.card is not None \
                    and read.confidence >= SCALED_LOOK_SURE:
                by_key[key] = read

    def _pile_second_look(self, image: np.ndarray, by_key: dict[str, CardReading]) -> None:
        """An initiative card left unsure is read again through its zone's own outline, where
        a player lays it: beside the board the rim search can settle on a rectangle half off
        the card (the deck lies next to it), and the pile's card decides the round's order.
        The second look answers only at PILE_SECOND_LOOK_SURE. On the validation games' settled
        frames (every 5th) piles read right 771 -> 827 of 1,040, none wrong either way."""
        unsure = [side for side in self.profile.initiative
                  if (first := by_key.get("init/" + side)) is not None and first.card is None]
        if not unsure:
            return
        again = self._read(image, [self._pile_quads[s] for s in unsure])
        for side, read in zip(unsure, again, strict=True):
            if read.card is not None and read.confidence >= PILE_SECOND_LOOK_SURE:
                by_key["init/" + side] = read

    def recheck(self, image: np.ndarray) -> str:
        """The slower whole-frame check, for every few seconds rather than every frame: find
        every card, say whether they still sit on the lattice ('ok', 'moved', 'unknown'), and
        refine the homography with them when they do (more cards, better fit)."""
        from calibration.register import check_registration, refine

        from .following import card_quads

        quads = card_quads(self.profile, image)
        status = check_registration(self.profile, quads)
        if status == "ok":
            better = refine(self.profile, quads)
            if better is not self.profile:
                frame = self.frame_index
                self.__init__(better, self.reader, self.pieces, self.presence)
                self.frame_index = frame
        return status

    def _board_frame(self, readings: list[CardReading]) -> None:
        """Orientation and index diagonal relative to the board, not the image (all of a
        frame's cards through the homography at once)."""
        readings = [r for r in readings if r.corners is not None]
        if not readings:
            return
        img = np.concatenate([r.corners for r in readings])
        board = apply_h(np.linalg.inv(self.profile.H), self.profile.undistort(img))
        for k, r in enumerate(readings):
            b, c = board[4 * k:4 * k + 4], r.corners
            long_axis = (b[3] - b[0]) + (b[2] - b[1])  # corners are in portrait order
            img_axis = (c[3] - c[0]) + (c[2] - c[1])
            img_portrait = abs(img_axis[1]) >= abs(img_axis[0])
            board_portrait = abs(long_axis[1]) >= abs(long_axis[0])
            if r.digit_corners is not None and img_portrait != board_portrait:
                r.digit_corners = "nw-se" if r.digit_corners == "ne-sw" else "ne-sw"
            r.orientation = "portrait" if board_portrait else "landscape"
