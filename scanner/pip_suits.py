"""A third witness for a card's suit: the pips in its middle, read one by one by their shape.

Where the index and whole-card readers leave a card of a held-out deck unsure, it is mostly
unsure between the two suits of one colour with the rank right (clubs or spades, diamonds or
hearts; models/cards/MODEL_CARD.md, sessions 10, 24 and 43): the index's suit mark is a few
pixels and the whole-card thumbnail is 30 x 42. The pips of a number card are the same four
shapes in almost every deck and several times the size of the index's mark, so each pip is
cut out of the rectified card (dark or red ink on the card's paper, away from the index
corners) and a tiny CNN (`models/cards/card_pips.onnx`, recipe `models/cards/pips.py`) names
its suit from its shape alone, in grey, told how many pixels of the frame it spans. A pip
narrower than MIN_PX frame pixels shows no shape and says nothing.

The reader (`scanner.card_reader`) asks this witness only about number cards it left unsure
and multiplies its evidence in as one more independent look: the mean of the pips'
log-probabilities of the two suits of each colour, normalised within the colour, added to the
number cards of those suits (one look's worth: one deck's small pips, or one blurred frame,
fool them all alike). A suit's colour is the other readers' to tell (the pips are read in grey).

A court card has no pips (its picture is no suit shape), but the suit mark printed under the
rank in each index corner is one, if smaller (`index_marks`, on the index diagonal the reader
found). The same model names it; a court left unsure gets that evidence on its twin suit's
courts only (`court_evidence`), marks narrower than MARK_MIN_PX frame pixels saying nothing.
Jokers get none: their index has no suit. Many jokers spell their name down the index instead
(`spelled_index`), which no court's rank and mark do: the reader then knows the joker.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np

from .onnx_session import one_core_session

MODEL_DIR = Path(__file__).resolve().parent.parent / "models" / "cards"
MODEL_FILE = MODEL_DIR / "card_pips.onnx"
META_FILE = MODEL_DIR / "card_pips.json"
SUITS = "CDHS"
TWIN = (3, 2, 1, 0)  # the other suit of each suit's colour: clubs and spades, diamonds and hearts
PIP_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10")
COURT_RANKS = ("J", "Q", "K")
PATCH = 24  # px: each pip's square crop as the model sees it
INDEX_W, INDEX_H = 0.2, 0.3  # share of the card each index corner takes (left out)
MIN_AREA = 18  # px of the 100 x 140 rectified card: smaller ink is a speck or a stroke
MAX_AREA = 0.2  # share of the card: bigger ink is a picture or a piece
MIN_CONTRAST = 40  # grey levels between the card's paper and its darkest ink
# Under this a pip shows no shape: on the validation decks (blurred as the recipe blurs them)
# 4-6 px pips were named 59 % right (of four suits), 6-9 px 81 %, 9-14 px 94 %.
MIN_PX = 7.0
# An index's suit mark is smaller than a pip; on the validation decks' court cards (80 stills)
# the marks of at least 5 px named the suit of their colour right on 272 cards and wrong on
# none (at any size: 340 right, 10 wrong).
MARK_MIN_PX = 5.0
MARK_W, MARK_H = 0.32, 0.45  # share of the card searched for an index's rank and suit mark
MARK_MIN_AREA = 8  # px of the rectified card
# A word down an index corner (`spelled_index`): searched over this share of the card's height
# (tango's "Joker" ends at 0.6), of at least WORD_LETTERS glyphs of LETTER_MIN or more of the
# rank's height, with at most WORD_BESIDE_INK of the strip to their right inked. Checked on the
# stills of the training, validation and spare decks (60 + 60 + 45, 4,516 cards): one corner
# alone spelled on 4 courts (an ornamental QC's scrolls, an anglo JH's dashed frame blurred, a
# berlin KD's and a penguins KC's pictures); both corners of a diagonal on no court or number
# card, and on 19 of the 85 jokers (18 of the 31 nicu jokers, which print "Joker" down the
# index; one orell).
WORD_H = 0.65
WORD_LETTERS = 3
LETTER_MIN = 0.25
WORD_BESIDE_INK = 0.1


def ink(card: np.ndarray) -> np.ndarray:
    """Grey where ink is dark: the least of the channels, so red ink is as dark as black."""
    if card.ndim == 2:
        return card
    # (a pairwise minimum: numpy's reduction over an axis of 3 takes 25 times as long)
    return np.minimum(np.minimum(card[..., 0], card[..., 1]), card[..., 2])


def paper_and_ink(g: np.ndarray, step: int = 1) -> tuple[float, float]:
    """The grey of a card's paper and of its darkest ink, from its inner part (every `step`th
    pixel of it each way)."""
    h, w = g.shape
    inner = g[int(h * 0.08):int(h * 0.92):step, int(w * 0.08):int(w * 0.92):step]
    if inner.dtype != np.uint8 or inner.size == 0:
        paper, dark = np.percentile(inner, [90, 2])
    else:
        paper, dark = uint8_percentiles(inner, (90, 2))
    return paper, dark


def uint8_percentiles(g: np.ndarray, percents: tuple[float, ...]) -> list[np.float64]:
    """`np.percentile(g, percents)` of a non-empty uint8 array, the same figures from its
    histogram: a card's 12,000 pixels need no sort (a frame's unsure cards ask 20 times)."""
    counts = np.bincount(g.ravel(), minlength=256).cumsum()
    n = int(counts[-1])
    out = []
    for q in percents:
        at = q / 100 * (n - 1)  # numpy's linear method: between the order statistics
        lo = int(np.floor(at))
        t = at - lo
        a = float(np.searchsorted(counts, lo, side="right"))  # the lo-th smallest value
        b = float(np.searchsorted(counts, min(lo + 1, n - 1), side="right"))
        # numpy's own interpolation, from whichever end is nearer
        out.append(np.float64(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t))
    return out


def pip_blobs(card: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """The pip-like ink blobs of a rectified card (CANON 100 x 140, any channels): each as a
    PATCH x PATCH crop (ink 1, paper 0) and its size as a share of the card's width."""
    g = ink(card)
    h, w = g.shape
    paper, dark = paper_and_ink(g)
    if paper - dark < MIN_CONTRAST:
        return []
    mask = (g < (paper + dark) / 2).astype(np.uint8)
    cw, ch = int(w * INDEX_W), int(h * INDEX_H)
    for x0, y0 in ((0, 0), (w - cw, 0), (0, h - ch), (w - cw, h - ch)):
        mask[y0:y0 + ch, x0:x0 + cw] = 0  # the index corners (either diagonal)
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    gf = g.astype(np.float32)
    out = []
    for x, y, bw, bh, area in stats[1:n]:
        if area < MIN_AREA or area > MAX_AREA * w * h:
            continue
        if x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1:
            continue  # cut by the card's edge: a border or a neighbour
        if not _pip_shaped(bw, bh, area):
            continue  # a stroke or a frame, not a pip
        out.append((_mark_crop(gf, (x, y, bw, bh), paper, dark), max(bw, bh) / w))
    return out


def _mark_crop(gf: np.ndarray, box: tuple[int, int, int, int], paper: float, dark: float
               ) -> np.ndarray:
    """The PATCH x PATCH crop (ink 1, paper 0) of the ink blob in `box` (x, y, w, h) of the
    grey float32 card `gf`."""
    x, y, bw, bh = box
    side = max(bw, bh) + 4
    s = PATCH / side
    x0, y0 = x + bw / 2 - side / 2, y + bh / 2 - side / 2
    M = np.float32([[s, 0, -x0 * s], [0, s, -y0 * s]])
    crop = cv2.warpAffine(gf, M, (PATCH, PATCH), flags=cv2.INTER_AREA,
                          borderValue=float(paper))
    return np.clip((paper - crop) / (paper - dark), -0.2, 1.2).astype(np.float32)


def _pip_shaped(bw: int, bh: int, area: int) -> bool:
    """A blob as square and as full as a suit's shape: not a stroke, a frame or a letter's arc."""
    return 0.55 < bw / bh < 1.6 and area >= 0.35 * bw * bh


def _index_levels(card: np.ndarray, diagonal: str, step: int = 1
                  ) -> tuple[np.ndarray, float, float] | None:
    """A rectified card's grey ink, turned so that `diagonal`'s corners are the nw and se
    ones, with its paper's and ink's greys (`paper_and_ink`, every `step`th pixel); None
    where there is too little contrast to tell ink from paper."""
    g = ink(card)
    if diagonal == "ne-sw":
        g = g[:, ::-1]  # suit shapes and index letters read the same mirrored
    paper, dark = paper_and_ink(g, step)
    return None if paper - dark < MIN_CONTRAST else (g, paper, dark)


def _index_corners(g: np.ndarray, paper: float, dark: float, height: float):
    """The two index corners (nw, then se turned half round to read as the nw one) of the grey
    ink `g` of a rectified card (CANON 100 x 140), each cut to MARK_W of the card's width and
    `height` of its height: per corner (its grey, its ink mask, its ink blobs as
    connectedComponentsWithStats rows (x, y, w, h, area) top to bottom, the rank's blob), the
    rank being the topmost ink; or None for a corner with no rank at its top or nothing under
    it. Blobs touching the corner's bounds are left out (a picture's frame, a neighbour, the
    table at a rounded corner). A generator: a caller may stop after the first corner."""
    h, w = g.shape
    cw, ch = int(w * MARK_W), int(h * height)
    for corner in (g, g[::-1, ::-1]):
        corner = np.ascontiguousarray(corner)
        mask = (corner[:ch, :cw] < (paper + dark) / 2).astype(np.uint8)
        n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
        blobs = sorted((s for s in stats[1:n] if s[4] >= MARK_MIN_AREA and s[0] > 0
                        and s[1] > 0 and s[0] + s[2] < cw and s[1] + s[3] < ch),
                       key=lambda s: s[1])
        if len(blobs) < 2 or blobs[0][3] < 0.05 * h or blobs[0][1] > 0.2 * h:
            yield None  # no rank letter at the top of this corner, or nothing under it
            continue
        yield corner, mask, blobs, blobs[0]


def index_marks(card: np.ndarray, diagonal: str = "nw-se") -> list[tuple[np.ndarray, float]]:
    """The suit marks printed under the rank in the two index corners of `diagonal` of a
    rectified card (CANON 100 x 140), as `pip_blobs` gives pips: on a court card the only
    suit shapes there are. In each corner, turned so that it reads as the nw one, the
    topmost ink is the rank; the mark is the biggest suit-shaped blob that starts within
    0.8 of the rank's height under it, centred under it. Marks touching the corner's
    bounds are left out (a picture's frame, a neighbour, the table at a rounded corner)."""
    levels = _index_levels(card, diagonal)
    if levels is None:
        return []
    g, paper, dark = levels
    out = []
    for seen in _index_corners(g, paper, dark, MARK_H):
        if seen is None:
            continue
        corner, _mask, blobs, (rx, ry, rw, rh, _) = seen
        below = [s for s in blobs[1:] if ry + rh - 1 <= s[1] <= ry + 1.8 * rh
                 and abs(s[0] + s[2] / 2 - (rx + rw / 2)) < 0.5 * max(rw, s[2])
                 and _pip_shaped(s[2], s[3], s[4])]
        if below:
            x, y, bw, bh, _ = max(below, key=lambda s: s[4])
            crop = _mark_crop(corner.astype(np.float32), (x, y, bw, bh), paper, dark)
            out.append((crop, max(bw, bh) / g.shape[1]))
    return out


def spelled_index(card: np.ndarray, diagonal: str = "nw-se") -> bool:
    """Whether both index corners of `diagonal` of a rectified card (CANON 100 x 140) spell a
    word down from the rank, as many decks print JOKER on their jokers (tango's "Joker", the
    common "JOKER" of poker decks). A court's index holds its rank and one suit mark, so a
    card read as a court whose index spells a word is no court (held-out stills: three
    tango jokers, whose J is the font's court J, read as JD at 0.999). Both corners: a
    court's picture or frame can stack like letters beside one of them (`_spells`)."""
    # (every other pixel for the paper's and ink's greys: asked of every court a frame reads)
    levels = _index_levels(card, diagonal, step=2)
    if levels is None:
        return False
    # all() stops at the first corner that does not spell: most courts cost one corner
    return all(seen is not None and _spells(*seen[1:])
               for seen in _index_corners(*levels, WORD_H))


def _spells(mask: np.ndarray, blobs: list, rank) -> bool:
    """Whether one index corner (its ink `mask`, the ink's `blobs` top to bottom) spells a
    word down from its `rank` blob: WORD_LETTERS or more glyphs stacked in the rank's
    column, each a letter's size beside the rank (LETTER_MIN to 1.1 of its height, at most
    1.5 times its box), each starting within the rank's height of the last one's foot, with
    paper to their right."""
    rx, ry, rw, rh, _ = rank
    centre = rx + rw / 2
    column = [s for s in blobs[1:] if abs(s[0] + s[2] / 2 - centre) < 0.6 * max(rw, s[2])]
    foot, letters = ry + rh, []
    for s in column:
        if s[1] < foot - 1:
            continue  # beside a glyph already taken, not under it
        if s[1] > foot + rh or not (LETTER_MIN * rh <= s[3] <= 1.1 * rh
                                    and s[2] * s[3] <= 1.5 * rw * rh):
            break  # a gap, or no letter: a picture's part, a frame's line
        letters.append(s)
        foot = s[1] + s[3]
    if len(letters) < WORD_LETTERS:
        return False
    # a word stands in the index's white margin; a picture's parts fill the space beside it
    x0 = int(max(rx + rw, *(s[0] + s[2] for s in letters))) + 1
    beside = mask[ry:foot, x0:x0 + max(3, int(0.5 * rw))]
    return bool(beside.size) and float(beside.mean()) <= WORD_BESIDE_INK


def size_feature(px: np.ndarray) -> np.ndarray:
    """A pip's size in frame pixels as the model takes it (log, about 0 at 8 px)."""
    return np.log(np.clip(np.asarray(px, np.float32), 2.0, 40.0) / 8.0).astype(np.float32)


class PipReader:
    """Suit evidence from a card's pips (see the module doc)."""

    def __init__(self, model_path: str | Path = MODEL_FILE, meta_path: str | Path = META_FILE):
        self.session = one_core_session(model_path)
        meta = json.loads(Path(meta_path).read_text())
        self.min_px = float(meta.get("min_px", MIN_PX))
        self.weight = float(meta.get("weight", 1.0))
        self.pool = str(meta.get("pool", "mean"))
        # the index's suit mark, read for court cards (None: not asked)
        mark = meta.get("mark_min_px")
        self.mark_min_px = None if mark is None else float(mark)

    @classmethod
    def installed(cls, folder: Path | None = None) -> PipReader | None:
        """The reader of `folder` (default: the committed model), or None where it has none."""
        folder = MODEL_DIR if folder is None else Path(folder)
        model, meta = folder / MODEL_FILE.name, folder / META_FILE.name
        return cls(model, meta) if model.exists() and meta.exists() else None

    def suit_log_probs(self, cards: list[np.ndarray], widths_px: list[float]
                       ) -> list[np.ndarray | None]:
        """Per rectified card (and its width in frame pixels): log P of each suit (C, D, H, S)
        from its pips, each colour's two suits normalised between themselves, or None where
        no pip is big enough to show its shape."""
        return self._pooled([pip_blobs(card) for card in cards], widths_px,
                            [self.min_px] * len(cards))

    def mark_log_probs(self, cards: list[np.ndarray], widths_px: list[float],
                       diagonals: list[str | None]) -> list[np.ndarray | None]:
        """As `suit_log_probs`, from the suit marks under the rank of the index corners of
        each card's `diagonal` (`index_marks`); None where none is mark_min_px wide, or
        where the reader has no mark threshold."""
        if self.mark_min_px is None:
            return [None] * len(cards)
        blobs = [index_marks(card, diag or "nw-se") for card, diag in
                 zip(cards, diagonals, strict=True)]
        return self._pooled(blobs, widths_px, [self.mark_min_px] * len(cards))

    def evidence(self, cards: list[np.ndarray], widths_px: list[float],
                 diagonals: list[str | None], courts: list[bool], classes: list[str]
                 ) -> list[np.ndarray | None]:
        """Per card, log evidence over `classes` from its suit shapes, read in one go: a
        court's index marks (`court_evidence`; none where the reader has no mark threshold),
        another card's pips (`card_evidence`); None where no shape is big enough."""
        blobs, floors = [], []
        for card, diag, court in zip(cards, diagonals, courts, strict=True):
            if not court:
                blobs.append(pip_blobs(card))
                floors.append(self.min_px)
            elif self.mark_min_px is not None:
                blobs.append(index_marks(card, diag or "nw-se"))
                floors.append(self.mark_min_px)
            else:
                blobs.append([])
                floors.append(math.inf)
        suits = self._pooled(blobs, widths_px, floors)
        return [None if s is None else
                self.court_evidence(s, classes) if court else self.card_evidence(s, classes)
                for s, court in zip(suits, courts, strict=True)]

    def _pooled(self, blobs: list[list[tuple[np.ndarray, float]]], widths_px: list[float],
                floors_px: list[float]) -> list[np.ndarray | None]:
        """Per card, its blobs (crop, share of the card's width) at least as many frame pixels
        wide as its floor, read and pooled: log P of each suit, normalised within each
        colour."""
        crops, sizes, owner = [], [], []
        for i, (found, width, floor) in enumerate(zip(blobs, widths_px, floors_px,
                                                      strict=True)):
            for crop, share in found:
                if share * width >= floor:
                    crops.append(crop)
                    sizes.append(share * width)
                    owner.append(i)
        out: list[np.ndarray | None] = [None] * len(blobs)
        if not crops:
            return out
        name_x, name_s = (i.name for i in self.session.get_inputs())
        lp = self.session.run(None, {name_x: np.stack(crops)[:, None],
                                     name_s: size_feature(np.array(sizes))})[0]
        owner_a = np.array(owner)
        for i in set(owner):
            mine = lp[owner_a == i].astype(np.float64)
            total = mine.mean(0) if self.pool == "mean" else mine.sum(0)
            out[i] = total - np.logaddexp(total, total[list(TWIN)])
        return out

    def card_evidence(self, suit_lp: np.ndarray, classes: list[str]) -> np.ndarray:
        """Log evidence over the reader's card classes (`suit_lp`: 4 suits, or N x 4 for N
        cards): the weighted suit log-probability on the number cards (A-10), nothing on
        courts and jokers."""
        suit = np.array([SUITS.index(c[-1]) if c[:-1] in PIP_RANKS else 0 for c in classes])
        number = np.array([c[:-1] in PIP_RANKS for c in classes])  # "JK"[:-1] is no rank
        return np.where(number, self.weight * np.asarray(suit_lp)[..., suit], 0.0)

    def court_evidence(self, suit_lp: np.ndarray, classes: list[str]) -> np.ndarray:
        """Log evidence over the card classes from index marks (`suit_lp`: 4 suits, or N x 4):
        on the courts (J, Q, K) only, each colour's likelier suit 0 and its twin the log of
        their odds, so that a mark read half and half moves nothing, and the joker, whose
        index has no suit, is neither helped nor hindered."""
        lp = np.asarray(suit_lp)
        odds = lp - np.maximum(lp, lp[..., list(TWIN)])
        court = np.array([c[:-1] in COURT_RANKS and c[-1] in SUITS for c in classes])  # not JK
        suit = np.array([SUITS.index(c[-1]) if k else 0 for c, k in
                         zip(classes, court, strict=True)])
        return np.where(court, self.weight * odds[..., suit], 0.0)
