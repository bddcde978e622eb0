"""Synthetic index crops for the card classifier, drawn from the renderer's card designs.

A full table render costs seconds, so training samples are made the cheap way with the same
ingredients: one card face from `models.renderer.assets`, warped under a random perspective onto a
random table texture, lit, blurred, noised and JPEG-compressed, then rectified through a
*jittered* quadrilateral (the finder's corners are never exact) and cut into the four corner
crops by `scanner.rectify`, exactly as the reader does. Seeded: the same seed gives the same data.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from models.cards import procedural
from models.renderer.assets import ALL_CODES, card_image
from scanner.rectify import corner_crops, rectify

CLASSES = ALL_CODES + ["back", "none"]  # 52 cards + JK, a card back, no index
BACK, NONE = CLASSES.index("back"), CLASSES.index("none")
# bump when what sample() draws changes: training caches are keyed by it
DATA_VERSION = "2026-11-21"
PROCEDURAL = "procedural"  # a design name: faces from models.cards.procedural, new every time


def data_version(designs: list[str]) -> object:
    """What a cache of samples of `designs` is keyed by: what sample() draws, and what the
    procedural faces look like where they are among the designs."""
    return (DATA_VERSION, procedural.VERSION) if PROCEDURAL in designs else DATA_VERSION


def _background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    base = rng.integers(0, 256, 3).astype(np.float32)
    if rng.random() < 0.3:
        base = np.full(3, rng.uniform(150, 250), np.float32)  # pale tables are the hard ones
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    kind = rng.integers(3)
    if kind == 0:  # grain
        n = cv2.resize(rng.normal(0, 1, (h // 8 + 1, w // 8 + 1)).astype(np.float32), (w, h))
        img += n[..., None] * rng.uniform(5, 30)
    elif kind == 1:  # stripes / checks
        period = rng.uniform(6, 30)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        a = rng.uniform(0, math.pi)
        s = np.sin((xx * math.cos(a) + yy * math.sin(a)) * 2 * math.pi / period)
        img += (s[..., None] * rng.uniform(10, 50)).astype(np.float32)
    img += rng.normal(0, rng.uniform(1, 6), img.shape).astype(np.float32)
    return img


def _light(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = img.shape[:2]
    gain = rng.uniform(0.55, 1.25) * np.array([rng.uniform(0.8, 1.0), rng.uniform(0.85, 1.0),
                                               rng.uniform(0.85, 1.15)], np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, 2 * math.pi)
    grad = 1 + rng.uniform(0, 0.4) * ((xx / w - 0.5) * math.cos(a) + (yy / h - 0.5) * math.sin(a))
    img = img * gain * grad[..., None]
    if rng.random() < 0.2:  # glare spot
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.1, 0.5) * w
        g = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
        img += g[..., None] * rng.uniform(40, 160)
    if rng.random() < 0.25:  # a straight shadow edge
        a = rng.uniform(0, 2 * math.pi)
        side = (xx - rng.uniform(0, w)) * math.cos(a) + (yy - rng.uniform(0, h)) * math.sin(a)
        img *= np.where(side > 0, rng.uniform(0.5, 0.85), 1.0)[..., None]
    return img


def _camera(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if rng.random() < 0.5:
        s = rng.uniform(0.3, 1.2)
        img = cv2.GaussianBlur(img, (0, 0), s)
    if rng.random() < 0.15:
        k = int(rng.integers(3, 8))
        ker = np.zeros((k, k), np.float32)
        ker[k // 2] = 1.0 / k
        M = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1.0)
        ker = cv2.warpAffine(ker, M, (k, k))
        img = cv2.filter2D(img, -1, ker / max(ker.sum(), 1e-6))
    img = img + rng.normal(0, rng.uniform(0, 7), img.shape)
    img = np.clip(img, 0, 255).astype(np.uint8)
    q = int(rng.integers(50, 96))
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else img


def sample(rng: np.random.Generator, designs: list[str], p_none: float = 0.06,
           p_back: float = 0.06, width: tuple[float, float] = (44, 130), p_piece: float = 0.3,
           face_size: tuple[int, int] | None = None, seen: dict | None = None) -> tuple:
    """One card (or an empty patch of table) as 4 corner crops (4 x H x W x 3 uint8) and their
    4 class labels; with `face_size` (w, h) also the whole rectified card at that size and its
    class (the card, "back" or "none"). `seen`, where given, is told how the card was seen:
    its width in pixels ("width") and whether its face lies mirrored, the indices on the
    ne-sw diagonal ("mirrored"). It draws nothing, so samples stay as they were."""
    u = rng.random()
    design = designs[int(rng.integers(len(designs)))]
    code = "none" if u < p_none else "back" if u < p_none + p_back else \
        ALL_CODES[int(rng.integers(len(ALL_CODES)))]
    # the card as seen: width in pixels, in-plane turn, perspective squash
    cw = rng.uniform(*width)
    if seen is not None:
        seen["width"] = cw
    chh = cw * 88 / 63
    margin = int(cw * 0.2) + 6
    W = H = int(max(cw, chh) + 2 * margin)
    ang = rng.uniform(0, 2 * math.pi)
    rect = np.array([[-cw / 2, -chh / 2], [cw / 2, -chh / 2], [cw / 2, chh / 2],
                     [-cw / 2, chh / 2]])
    rect[:, 1] *= rng.uniform(0.55, 1.0)  # seen at a slant: foreshortened along one axis
    R = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
    quad = rect @ R.T + [W / 2, H / 2]
    quad += rng.normal(0, cw * 0.06, quad.shape)  # perspective: corners move independently
    quad = quad.astype(np.float32)
    canvas = _background(rng, H, W)
    if code != "none":
        joker = "red" if rng.random() < 0.5 else "black"
        if design == PROCEDURAL:
            face = procedural.card_face(rng, code, joker)
        else:
            face = card_image(design, code if code != "back" else "back", joker)
        mirrored = rng.random() < 0.5  # a mirrored photo: indices on the ne-sw diagonal
        if mirrored:
            face = face[:, ::-1]
        fh, fw = face.shape[:2]
        src = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
        M = cv2.getPerspectiveTransform(src, quad)
        warped = cv2.warpPerspective(np.ascontiguousarray(face), M, (W, H),
                                     flags=cv2.INTER_AREA, borderValue=(0, 0, 0, 0))
        a = warped[:, :, 3:4].astype(np.float32) / 255
        canvas = warped[:, :, :3].astype(np.float32) * a + canvas * (1 - a)
        if rng.random() < p_piece:  # a piece's base over the card's middle
            c = quad.mean(0) + rng.normal(0, cw * 0.12, 2)
            col = rng.integers(0, 256, 3).tolist()
            cv2.ellipse(canvas, (int(c[0]), int(c[1])), (int(cw * rng.uniform(0.2, 0.4)),
                        int(cw * rng.uniform(0.15, 0.35))), 0, 0, 360, col, -1)
    else:
        mirrored = False
    if seen is not None:
        seen["mirrored"] = mirrored
    canvas = _camera(_light(canvas, rng), rng)
    # the finder's corners: a little off, from either end of the card
    det = quad + rng.normal(0, cw * rng.choice([0.01, 0.02, 0.035]), quad.shape).astype(
        np.float32)
    if rng.random() < 0.5:
        det = np.roll(det, 2, axis=0)
    card = rectify(canvas, det)
    crops = corner_crops(card)
    if code == "none":
        labels = [NONE] * 4
    elif code == "back":
        labels = [BACK] * 4
    else:
        k = CLASSES.index(code)
        labels = [NONE, k, NONE, k] if mirrored else [k, NONE, k, NONE]
    labels = np.array(labels, np.int64)
    # an index may carry the same mark mirrored (ne-sw decks): flip crops, keep labels
    flip = rng.random(4) < 0.5
    crops = np.stack([c[:, ::-1] if f else c for c, f in zip(crops, flip, strict=True)])
    # a piece hiding one index corner completely: that crop shows no index
    if code not in ("none",) and rng.random() < 0.1:
        i = int(rng.integers(4))
        col = rng.integers(0, 256, 3).astype(np.uint8)
        crops[i] = np.clip(crops[i].astype(np.int16) * 0 + col + rng.normal(
            0, 8, crops[i].shape), 0, 255).astype(np.uint8)
        labels[i] = NONE
    if face_size is not None:
        face = cv2.resize(card, face_size, interpolation=cv2.INTER_AREA)
        return crops, labels, face, CLASSES.index(code)
    return crops, labels


def make_face_set(seed: int, n_cards: int, designs: list[str],
                  width: tuple[float, float] = (22, 130),
                  size: tuple[int, int] = (30, 42)) -> tuple[np.ndarray, np.ndarray]:
    """n_cards whole-card thumbnails (n x h x w x 3 uint8, either end up) and their classes.
    Half of the cards carry a piece-like blob: on the board, units stand on cards."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for _ in range(n_cards):
        _, _, face, label = sample(rng, designs, width=width, p_piece=0.5, face_size=size)
        xs.append(face)
        ys.append(label)
    return np.stack(xs), np.array(ys, np.int64)


def make_set(seed: int, n_cards: int, designs: list[str],
             width: tuple[float, float] = (44, 130)) -> tuple[np.ndarray, np.ndarray]:
    """n_cards samples -> crops (4n x H x W x 3 uint8) and labels (4n)."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for _ in range(n_cards):
        c, lab = sample(rng, designs, width=width)
        xs.append(c)
        ys.append(lab)
    return np.concatenate(xs), np.concatenate(ys)
