"""Procedural card faces: every index style a deck might print, drawn from system fonts.

Nineteen training decks teach the classifier the index styles of nineteen decks; a deck it has
never seen (big bold indices, thin sans ones) then reads poorly. As synthetic text does for OCR,
these faces vary what a real deck varies and nothing else: the rank's font, weight, size and
placement, the suit symbol's shape and size, ink colours, paper colour, borders and the picture
in the middle. The faces are drawn from `rng`, so a seed gives the same faces.

Fonts come from Debian packages (see FONT_PACKAGES); training needs Pillow for TrueType text.
Runtime never imports this module.
"""

from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from models.renderer.assets import CARD_H, CARD_W

VERSION = 3  # bump when the faces drawn change: training caches of procedural data key on it
FONT_PACKAGES = ["fonts-dejavu-core", "fonts-dejavu-extra", "fonts-liberation2",
                 "fonts-freefont-ttf", "fonts-urw-base35"]
FONT_DIR = Path("/usr/share/fonts")
# fonts whose suit glyphs (U+2660..2667) exist; symbol shapes vary between them
SUIT_FONTS = ["DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "FreeSerif.ttf",
              "FreeSans.ttf", "FreeSansBold.ttf", "FreeSerifBold.ttf"]
SUIT_CHAR = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
SUIT_OUTLINE = {"S": "\u2664", "H": "\u2661", "D": "\u2662", "C": "\u2667"}
# decorative and symbol fonts draw no Latin letters worth learning
_SKIP = ("Symbol", "Math", "D050000L", "Z003")


@lru_cache(maxsize=1)
def text_fonts() -> tuple[str, ...]:
    fonts = sorted(str(p) for p in FONT_DIR.rglob("*") if p.suffix in (".ttf", ".otf")
                   and not any(s in p.name for s in _SKIP))
    if not fonts:
        raise RuntimeError(f"no fonts under {FONT_DIR}: apt-get install "
                           + " ".join(FONT_PACKAGES))
    return tuple(fonts)


@lru_cache(maxsize=1)
def suit_fonts() -> tuple[str, ...]:
    found = {p.name: str(p) for p in FONT_DIR.rglob("*") if p.name in SUIT_FONTS}
    if not found:
        raise RuntimeError("no suit-symbol fonts: apt-get install " + " ".join(FONT_PACKAGES))
    return tuple(found[n] for n in SUIT_FONTS if n in found)


@lru_cache(maxsize=512)
def _font(path: str, size: int):
    from PIL import ImageFont

    return ImageFont.truetype(path, size)


def _glyph(text: str, font_path: str, height: int, stroke: int = 0) -> np.ndarray:
    """`text` drawn in white on black, tightened to its ink and scaled to `height` px tall
    (float mask 0..1)."""
    from PIL import Image, ImageDraw

    size = max(8, int(height * 1.4))
    font = _font(font_path, size)
    img = Image.new("L", (size * (len(text) + 1), size * 2), 0)
    ImageDraw.Draw(img).text((size // 4, size // 4), text, fill=255, font=font,
                             stroke_width=stroke, stroke_fill=255)
    a = np.asarray(img, np.float32) / 255
    if not (a > 0.3).any():
        return np.zeros((max(height, 1), max(height // 2, 1)), np.float32)
    return _scaled(_tight(a), height)


def _tight(a: np.ndarray) -> np.ndarray:
    """A mask cut down to its ink."""
    ys, xs = np.nonzero(a > 0.3)
    return a[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]


def _scaled(mask: np.ndarray, height: int) -> np.ndarray:
    """A mask scaled to `height` px tall, keeping its proportions."""
    w = max(1, int(round(mask.shape[1] * height / mask.shape[0])))
    return cv2.resize(mask, (w, max(height, 1)), interpolation=cv2.INTER_AREA)


def _circle(img: np.ndarray, c: tuple[float, float], r: float) -> None:
    cv2.circle(img, (int(round(c[0] * 16)), int(round(c[1] * 16))), int(round(r * 16)), 255, -1,
               cv2.LINE_AA, shift=4)


def _poly(img: np.ndarray, pts: list[tuple[float, float]]) -> None:
    cv2.fillPoly(img, [np.round(np.array(pts) * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)


def _stem(img: np.ndarray, rng: np.random.Generator, cx: float, top: float, S: float) -> float:
    """A club's or spade's foot: a flared trapezoid, narrow at the body; returns its bottom."""
    length = S * rng.uniform(0.16, 0.32)
    w0, w1 = S * rng.uniform(0.03, 0.1), S * rng.uniform(0.12, 0.42)
    bottom = top + length
    if rng.random() < 0.5:  # concave flare: the sides bow inwards
        ts = np.linspace(0, 1, 8)
        half = w0 / 2 + (w1 - w0) / 2 * ts ** rng.uniform(1.5, 3.0)
        ys = top + length * ts
        _poly(img, [(cx - h, y) for h, y in zip(half, ys, strict=True)]
              + [(cx + h, y) for h, y in zip(half[::-1], ys[::-1], strict=True)])
    else:
        _poly(img, [(cx - w0 / 2, top), (cx + w0 / 2, top), (cx + w1 / 2, bottom),
                    (cx - w1 / 2, bottom)])
    return bottom


def drawn_suit(suit: str, rng: np.random.Generator, size: int = 160) -> np.ndarray:
    """A suit symbol drawn from random proportions (float mask 0..1, tight to its ink): clubs
    from three separate lobes to one plump blob, spades from a slim leaf to a round one with a
    short point, hearts and diamonds wide or narrow. Fonts give seven shapes per suit; real
    decks draw many more, and a small club is told from a small spade only by its outline."""
    S = float(size)
    img = np.zeros((int(S * 1.6), int(S * 1.6)), np.uint8)
    cx, cy = S * 0.8, S * 0.6
    if suit == "C":
        r = S * rng.uniform(0.17, 0.27)
        spread = r * rng.uniform(0.75, 1.35)  # small: the lobes merge into one blob
        drop = r * rng.uniform(0.55, 1.0)
        lobes = [(cx, cy - spread), (cx - spread * rng.uniform(0.85, 1.1), cy + drop * 0.4),
                 (cx + spread * rng.uniform(0.85, 1.1), cy + drop * 0.4)]
        for c in lobes:
            _circle(img, c, r * rng.uniform(0.92, 1.08))
        _circle(img, (cx, cy), r * rng.uniform(0.45, 0.9))  # the lobes' join
        _stem(img, rng, cx, cy + drop * 0.2, S)
    elif suit in "SH":
        r = S * rng.uniform(0.17, 0.25)
        spread = r * rng.uniform(0.7, 1.0)
        point = S * rng.uniform(0.45, 0.75)  # from the lobes' centres to the tip
        sgn = -1.0 if suit == "S" else 1.0  # a spade is a heart upside down, on a foot
        lobe_y = cy + (0.25 * S if suit == "S" else -0.1 * S)
        for dx in (-spread, spread):
            _circle(img, (cx + dx, lobe_y), r)
        # the sides run from the lobes' outer tangents to the tip; bowed a little or straight
        bow = rng.uniform(-0.08, 0.12) * S
        side = []
        for t in np.linspace(0, 1, 9):
            x = cx - (spread + r * 0.97) * (1 - t)
            y = lobe_y + sgn * point * t - sgn * bow * math.sin(math.pi * t)
            side.append((x, y))
        _poly(img, side + [(2 * cx - x, y) for x, y in side[::-1]]
              + [(cx + spread, lobe_y), (cx - spread, lobe_y)])
        if suit == "S":
            _stem(img, rng, cx, lobe_y, S)
    else:  # diamond: straight or bowed sides, narrow to wide
        hw, hh = S * rng.uniform(0.26, 0.42), S * rng.uniform(0.45, 0.6)
        bow = rng.uniform(-0.05, 0.05) * S
        pts = []
        for (x0, y0), (x1, y1) in [((0, -hh), (hw, 0)), ((hw, 0), (0, hh)), ((0, hh), (-hw, 0)),
                                   ((-hw, 0), (0, -hh))]:
            n = np.array([y1 - y0, x0 - x1]) / math.hypot(x1 - x0, y1 - y0)
            for t in np.linspace(0, 1, 8, endpoint=False):
                b = bow * math.sin(math.pi * t)
                pts.append((cx + x0 + (x1 - x0) * t + n[0] * b, cy + y0 + (y1 - y0) * t + n[1] * b))
        _poly(img, pts)
    return _tight(img.astype(np.float32) / 255)


def _stamp(face: np.ndarray, mask: np.ndarray, x: int, y: int, colour: np.ndarray) -> None:
    """Ink `mask` onto face (BGR float) with its top-left at (x, y), clipped to the face."""
    h, w = mask.shape
    H, W = face.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x1 <= x0 or y1 <= y0:
        return
    m = mask[y0 - y: y1 - y, x0 - x: x1 - x, None]
    face[y0:y1, x0:x1] = face[y0:y1, x0:x1] * (1 - m) + colour * m


def _ink(rng: np.random.Generator, red: bool) -> np.ndarray:
    if red:
        return np.array([rng.uniform(0, 70), rng.uniform(0, 60), rng.uniform(150, 235)],
                        np.float32)
    if rng.random() < 0.15:  # navy or dark green "black"
        return np.array([rng.uniform(40, 110), rng.uniform(10, 60), rng.uniform(0, 40)],
                        np.float32)
    return np.full(3, rng.uniform(0, 55), np.float32)


def _paper(rng: np.random.Generator) -> np.ndarray:
    if rng.random() < 0.6:
        return np.full(3, rng.uniform(225, 255), np.float32)
    # cream, ivory, pale grey, pale blue: within a few tens of white
    return np.clip(rng.uniform(205, 255) - rng.uniform(0, 22, 3), 150, 255).astype(np.float32)


# pip positions (x, y in 0..1 of the pip area) for number cards, close to the usual layout
_PIPS = {
    1: [(0.5, 0.5)],
    2: [(0.5, 0.0), (0.5, 1.0)],
    3: [(0.5, 0.0), (0.5, 0.5), (0.5, 1.0)],
    4: [(0, 0), (1, 0), (0, 1), (1, 1)],
    5: [(0, 0), (1, 0), (0.5, 0.5), (0, 1), (1, 1)],
    6: [(0, 0), (1, 0), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    7: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    8: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0.5, 0.75), (0, 1), (1, 1)],
    9: [(0, 0), (1, 0), (0, 1 / 3), (1, 1 / 3), (0.5, 0.5), (0, 2 / 3), (1, 2 / 3), (0, 1),
        (1, 1)],
    10: [(0, 0), (1, 0), (0.5, 1 / 6), (0, 1 / 3), (1, 1 / 3), (0, 2 / 3), (1, 2 / 3),
         (0.5, 5 / 6), (0, 1), (1, 1)],
}


def _picture(face: np.ndarray, rng: np.random.Generator, box: tuple[int, int, int, int],
             colours: list[np.ndarray]) -> None:
    """A court card's or joker's picture: coloured shapes in a frame, nothing index-like."""
    x0, y0, x1, y1 = box
    if rng.random() < 0.5:
        cv2.rectangle(face, (x0, y0), (x1, y1), colours[0].tolist(), int(rng.integers(1, 4)))
    for _ in range(int(rng.integers(4, 14))):
        col = (colours[int(rng.integers(len(colours)))] if rng.random() < 0.5
               else rng.uniform(0, 255, 3)).tolist()
        cx, cy = int(rng.uniform(x0, x1)), int(rng.uniform(y0, y1))
        r = int(rng.uniform(6, (x1 - x0) / 3))
        if rng.random() < 0.5:
            cv2.ellipse(face, (cx, cy), (r, int(r * rng.uniform(0.4, 1.5))),
                        rng.uniform(0, 180), 0, 360, col, -1 if rng.random() < 0.7 else 2)
        else:
            pts = np.array([[cx + rng.uniform(-r, r), cy + rng.uniform(-r, r)]
                            for _ in range(int(rng.integers(3, 6)))], np.int32)
            cv2.fillPoly(face, [pts], col)


# Court letters other than J, Q, K that decks at real tables print: German (Bube, Dame, König),
# French (Valet, Dame, Roi), Scandinavian (Knekt, Dame, Konge). The validation deck
# gnome-berlin prints B, D, K, and its queens and jacks were read as J and K. Dutch decks'
# V for the queen (Vrouw) would clash with the French jack, so they are left out.
COURT_LETTERS = ({"J": "B", "Q": "D", "K": "K"}, {"J": "V", "Q": "D", "K": "R"},
                 {"J": "Kn", "Q": "D", "K": "K"})
FOREIGN_COURTS = 0.3  # share of procedural court cards printed with one of those sets


def court_letters(rank: str, rng: np.random.Generator) -> str:
    """The rank as a procedural deck prints it: a court card sometimes in another language."""
    if rank not in ("J", "Q", "K") or rng.random() >= FOREIGN_COURTS:
        return rank
    return COURT_LETTERS[int(rng.integers(len(COURT_LETTERS)))][rank]


def card_face(rng: np.random.Generator, code: str, joker_colour: str = "red") -> np.ndarray:
    """One procedural card face (or "back") as a CARD_H x CARD_W BGRA image, like
    `models.renderer.assets.card_image`: index at the top-left and (turned) bottom-right."""
    W, H = CARD_W, CARD_H
    face = np.empty((H, W, 3), np.float32)
    face[:] = _paper(rng)
    if code == "back":
        col = rng.uniform(0, 200, 3)
        m = int(rng.uniform(8, 25))
        period = rng.uniform(6, 24)
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        a = rng.uniform(0, math.pi)
        pat = (np.sin((xx * math.cos(a) + yy * math.sin(a)) * 2 * math.pi / period) > 0)
        if rng.random() < 0.5:
            pat ^= np.sin((xx * math.sin(a) - yy * math.cos(a)) * 2 * math.pi / period) > 0
        inner = face[m:H - m, m:W - m]
        inner[pat[m:H - m, m:W - m]] = col
        inner[~pat[m:H - m, m:W - m]] = col * rng.uniform(0.3, 0.8)
        return _with_alpha(face, rng)
    joker = code == "JK"
    rank, suit = ("JK", "") if joker else (code[:-1], code[-1])
    red = (joker_colour == "red") if joker else suit in "HD"
    ink = _ink(rng, red)
    font = text_fonts()[int(rng.integers(len(text_fonts())))]
    sfont = suit_fonts()[int(rng.integers(len(suit_fonts())))]
    outline = rng.random() < 0.05
    schar = (SUIT_OUTLINE if outline else SUIT_CHAR).get(suit, "")
    # half the decks draw their own suit shapes rather than a font's
    drawn = drawn_suit(suit, rng) if suit and not outline and rng.random() < 0.5 else None
    if rng.random() < 0.35:  # a printed frame line inside the edge
        m = int(rng.uniform(4, 16))
        cv2.rectangle(face, (m, m), (W - m, H - m), ink.tolist() if rng.random() < 0.5 else
                      rng.uniform(0, 200, 3).tolist(), int(rng.integers(1, 3)))
    # the index: rank above suit (sometimes beside it); small classic to big modern indices
    rank_h = int(H * rng.uniform(0.06, 0.16))
    stroke = int(rng.integers(0, 2)) if rank_h > 30 else 0
    if joker:
        style = rng.random()
        if style < 0.5:  # JOKER spelt downwards
            letters = [_glyph(ch, font, int(rank_h * 0.55)) for ch in "JOKER"]
        elif style < 0.75:
            letters = [_glyph("\u2605", sfont, rank_h)]  # a star
        else:
            letters = [_glyph("JOKER", font, int(rank_h * 0.45))]
        marks = letters
    else:
        txt = court_letters(rank, rng)
        marks = [_glyph(txt, font, rank_h, stroke)]
        if rank == "10" and rng.random() < 0.3:  # some decks squeeze the 10
            g = marks[0]
            marks[0] = cv2.resize(g, (max(1, int(g.shape[1] * rng.uniform(0.6, 0.85))),
                                      g.shape[0]), interpolation=cv2.INTER_AREA)
        suit_h = int(rank_h * rng.uniform(0.55, 1.05))
        marks.append(_scaled(drawn, suit_h) if drawn is not None else _glyph(schar, sfont, suit_h))
    x = int(W * rng.uniform(0.03, 0.09))
    y = int(H * rng.uniform(0.025, 0.07))
    beside = (not joker) and rng.random() < 0.12
    gap = int(rank_h * rng.uniform(0.05, 0.3))
    stamps = []
    cx = x + max(m.shape[1] for m in marks) / 2
    yy = y
    for i, m in enumerate(marks):
        if beside and i == 1:
            stamps.append((m, x + marks[0].shape[1] + gap, y + (rank_h - m.shape[0]) // 2))
        else:
            stamps.append((m, int(cx - m.shape[1] / 2), yy))
            yy += m.shape[0] + gap
    for m, sx, sy in stamps:
        _stamp(face, m, sx, sy, ink)
    face_r = face[::-1, ::-1].copy()  # the same index, turned, at the bottom-right
    for m, sx, sy in stamps:
        _stamp(face_r, m, sx, sy, ink)
    face = face_r[::-1, ::-1].copy()
    # the middle: pips, a big ace, or a picture, kept clear of the index columns
    mx0, mx1 = int(W * 0.27), int(W * 0.73)
    my0, my1 = int(H * 0.14), int(H * 0.86)
    if joker or rank in ("J", "Q", "K"):
        _picture(face, rng, (mx0, my0, mx1, my1), [ink, rng.uniform(0, 255, 3),
                                                    rng.uniform(0, 255, 3)])
        if rng.random() < 0.5 and not joker:  # a big letter in the picture, as some decks do
            g = _glyph(txt, font, int(H * rng.uniform(0.2, 0.35)))
            _stamp(face, g, (W - g.shape[1]) // 2, (H - g.shape[0]) // 2, ink)
    else:
        n = 1 if rank == "A" else int(rank)
        ph = int(H * (rng.uniform(0.25, 0.45) if n == 1 else rng.uniform(0.1, 0.15)))
        pip = _scaled(drawn, ph) if drawn is not None else _glyph(SUIT_CHAR[suit], sfont, ph)
        for px, py in _PIPS[n]:
            gx = int(mx0 + px * (mx1 - mx0 - pip.shape[1]))
            gy = int(my0 + py * (my1 - my0 - pip.shape[0]))
            m = pip if py <= 0.5 else pip[::-1]
            _stamp(face, m, gx, gy, ink)
    return _with_alpha(face, rng)


def _with_alpha(face: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """BGRA with rounded, anti-aliased corners and sometimes a thin dark edge."""
    H, W = face.shape[:2]
    r = int(W * rng.uniform(0.03, 0.09))
    alpha = np.zeros((H * 4, W * 4), np.uint8)
    R = r * 4
    cv2.rectangle(alpha, (R, 0), (W * 4 - R, H * 4), 255, -1)
    cv2.rectangle(alpha, (0, R), (W * 4, H * 4 - R), 255, -1)
    for cx, cy in ((R, R), (W * 4 - R, R), (R, H * 4 - R), (W * 4 - R, H * 4 - R)):
        cv2.circle(alpha, (cx, cy), R, 255, -1)
    alpha = cv2.resize(alpha, (W, H), interpolation=cv2.INTER_AREA)
    out = np.clip(face, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        edge = cv2.morphologyEx(alpha, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 60
        out[edge] = (out[edge] * 0.5).astype(np.uint8)
    return np.dstack([out, alpha])
