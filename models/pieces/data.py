"""Training and held-out crops from the renderer: random Royal Battles tables, cropped per cell
exactly as the scanner crops them, with labels from the render's truth.

Labels: "empty", the 12 pieces, and "unsure" for what the scanner must never guess: a cell
mostly under a hand, or a piece knocked over (lying on its side, pasted in from the set's own
sprites since the renderer stands every piece upright).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import cv2
import numpy as np

from scanner.piece_classifier import CLASSES
from scanner.piece_crops import (
    BILL_HI,
    CELLS,
    CROP_H,
    CROP_PX_PER_CM,
    CROP_W,
    as_board_camera,
    cell_centre,
    crop_quad,
    warp_quad,
)

KINDS = ["pawn", "rook", "knight", "bishop", "queen", "king"]
SIDES = ["white", "black"]
CODES = [r + s for s in "CDHS" for r in
         ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]] + ["JK"]
# the central part of a crop (rows, cols) where a standing piece shows; a hand over most of it
# hides the piece
_ROW0, _ROW1 = int((BILL_HI - 6.0) * CROP_PX_PER_CM), int((BILL_HI + 1.5) * CROP_PX_PER_CM)
_COL0, _COL1 = int(1.5 * CROP_PX_PER_CM), int(6.5 * CROP_PX_PER_CM)
HAND_UNSURE, HAND_CLEAR = 0.35, 0.08  # covered fraction: above -> unsure, between -> not used


@dataclass
class CropSet:
    X: np.ndarray  # N x CROP_H x CROP_W x 3 uint8 (BGR)
    y: np.ndarray  # N class indices into CLASSES
    piece_set: np.ndarray  # N str: the scene's piece set
    frame: np.ndarray  # N: the scene seed (for grouping)
    elevation: np.ndarray  # N float, degrees

    def save(self, path) -> None:
        np.savez_compressed(path, X=self.X, y=self.y, piece_set=self.piece_set,
                            frame=self.frame, elevation=self.elevation)

    @classmethod
    def load(cls, path) -> CropSet:
        d = np.load(path)
        return cls(d["X"], d["y"], d["piece_set"], d["frame"], d["elevation"])

    @classmethod
    def concat(cls, parts: list[CropSet]) -> CropSet:
        return cls(*(np.concatenate([getattr(p, f) for p in parts]) for f in
                     ("X", "y", "piece_set", "frame", "elevation")))


def random_position(rng: np.random.Generator, max_units: int = 14) -> dict:
    """A random table: cards on 10-35 cells, 4..max_units pieces on card cells (denser than a
    real game, so that neighbours in front of and behind a cell are common)."""
    n_cards = int(rng.integers(10, 36))
    cells = list(rng.choice(CELLS, n_cards, replace=False))
    board: dict[str, dict] = {}
    for cell in cells:
        n = 2 if rng.random() < 0.15 else 1
        board[cell] = {"cards": [str(c) for c in rng.choice(CODES, n)],
                       "orientation": "landscape" if rng.random() < 0.1 else "portrait"}
    n_units = int(rng.integers(4, max_units + 1))
    for cell in rng.choice(cells, min(n_units, len(cells)), replace=False):
        board[str(cell)]["unit"] = {"kind": str(rng.choice(KINDS)),
                                    "side": str(rng.choice(SIDES))}
    return {"board": board}


def random_hands(rng: np.random.Generator):
    from models.renderer import Hand

    hands = []
    for _ in range(int(rng.integers(1, 3))):
        x, y = cell_centre(str(rng.choice(CELLS)))
        hands.append(Hand(side=str(rng.choice(SIDES)), target=(x + rng.uniform(-3, 3),
                                                                y + rng.uniform(-4, 4)),
                          reach=float(rng.uniform(0.7, 1.0)), height=float(rng.uniform(2, 12))))
    return hands


def paste_fallen(image: np.ndarray, cam, set_name: str, kind: str, side: str, x: float, y: float,
                 rng: np.random.Generator) -> None:
    """Paste a piece lying on its side at board point (x, y): the set's low-elevation sprite,
    turned 60-120 degrees in the image, at the scene's scale."""
    from models.renderer import pieces

    azim = int(rng.choice(pieces.AZIMUTHS))
    img, (ax, ay) = pieces.sprite(set_name, kind, side, 30, azim)
    hgt = pieces.height(set_name, kind)
    base = np.array([[x, y, 0.0]])
    ppc = cam.pixel_per_cm(base)
    s = ppc / pieces.SPRITE_PX_PER_CM
    mid = (ax, ay - hgt * 0.5 * pieces.SPRITE_PX_PER_CM * math.cos(math.radians(30)))
    ang = float(rng.uniform(60, 120)) * (1 if rng.random() < 0.5 else -1)
    centre = cam.project(base + [[0, 0, 1.2]])[0]
    A = cv2.getRotationMatrix2D(mid, ang, s)
    A[:, 2] += centre - mid
    H_, W_ = image.shape[:2]
    warped = cv2.warpAffine(img, A, (W_, H_), flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    warped = cv2.GaussianBlur(warped, (0, 0), 0.7)
    a = warped[:, :, 3:4].astype(np.float32) / 255
    image[:] = (warped[:, :, :3] * a + image * (1 - a)).astype(np.uint8)


def _hand_mask(truth: dict, shape) -> np.ndarray | None:
    hulls = [h["hull"] for h in truth.get("hands", []) if h.get("hull")]
    if not hulls:
        return None
    m = np.zeros(shape[:2], np.uint8)
    for hull in hulls:
        cv2.fillConvexPoly(m, np.round(np.array(hull)).astype(np.int32), 255)
    return m


def label_of(unit: dict | None) -> int:
    return CLASSES.index("empty" if not unit else f"{unit['side']}-{unit['kind']}")


def frame_crops(seed: int, split: str, jitter: float = 1.8, piece_sets: list[str] | None = None,
                hands_p: float = 0.25, fallen_p: float = 0.5, keep_bare: float = 0.3,
                keep_empty: float = 0.6, positions: int = 3,
                procedural: bool = False,
                elevation: tuple[float, float] = (30.0, 90.0)) -> tuple[list, list, float, str]:
    """Render one random scene with `positions` random tables (the scene's camera, table and
    light are cached by the renderer, so extra tables are cheap) and return (crops, labels,
    elevation, piece set). `procedural`: the scene's pieces are the procedurally varied set
    "proc-<seed>" (models/renderer/procedural_pieces.py), a new set for every scene."""
    from models.renderer import Scene, render_scene
    from models.renderer.render import scene_camera
    from models.renderer.scene import sub_seed

    if procedural:
        piece_sets = [f"proc-{seed}"]
    scene = Scene.random(seed, split=split, piece_sets=piece_sets, elevation=elevation)
    rcam = scene_camera(scene)
    crops, labels = [], []
    for k in range(positions):
        rng = np.random.default_rng(sub_seed("pieces-data", split, seed, k))
        pos = random_position(rng)
        hands = random_hands(rng) if rng.random() < hands_p else None
        res = render_scene(pos, scene, hands=hands, frame=k)
        c, lab = _table_crops(res.image, res.truth, pos, scene, rcam, rng, jitter, fallen_p,
                              keep_bare, keep_empty)
        crops += c
        labels += lab
    return crops, labels, float(scene.elevation), scene.piece_set


def under_hand(hmask: np.ndarray | None, quad: np.ndarray, label: int) -> int | None:
    """A cell crop's label with the arms over the table (`hmask`): `unsure` where they cover
    more than HAND_UNSURE of the piece's part of the crop, None (leave the crop out) where they
    cover more than HAND_CLEAR, `label` otherwise."""
    if hmask is None:
        return label
    frac = float((warp_quad(hmask, quad)[_ROW0:_ROW1, _COL0:_COL1] > 127).mean())
    if frac > HAND_UNSURE:
        return CLASSES.index("unsure")
    return None if frac > HAND_CLEAR else label


def _table_crops(image, truth, pos, scene, rcam, rng, jitter, fallen_p, keep_bare, keep_empty):
    cam = as_board_camera(truth["camera"], image.shape)
    board = pos["board"]
    fallen: dict[str, int] = {}
    if scene.piece_set != "paper-token" and rng.random() < fallen_p:
        free = [c for c in board if "unit" not in board[c]]
        for cell in rng.choice(free, min(len(free), int(rng.integers(1, 3))), replace=False):
            x, y = cell_centre(str(cell))
            paste_fallen(image, rcam, scene.piece_set, str(rng.choice(KINDS)),
                         str(rng.choice(SIDES)), x + rng.uniform(-1, 1), y + rng.uniform(-1, 1),
                         rng)
            fallen[str(cell)] = 1
    hmask = _hand_mask(truth, image.shape)
    H_, W_ = image.shape[:2]
    crops, labels = [], []
    for cell in CELLS:
        st = board.get(cell)
        unit = (st or {}).get("unit")
        if cell not in fallen and not unit:
            if st is None and rng.random() > keep_bare:
                continue
            if st is not None and rng.random() > keep_empty:
                continue
        x, y = cell_centre(cell)
        dx, dy = rng.uniform(-jitter, jitter, 2)
        quad = crop_quad(cam, x + dx, y + dy)
        c = quad.mean(0)
        if not (0 <= c[0] < W_ and 0 <= c[1] < H_):
            continue
        inside = ((quad[:, 0] >= -5) & (quad[:, 0] < W_ + 5) & (quad[:, 1] >= -5)
                  & (quad[:, 1] < H_ + 5)).mean()
        if inside < 0.75:
            continue
        label = under_hand(hmask, quad,
                           CLASSES.index("unsure") if cell in fallen else label_of(unit))
        if label is None:
            continue
        crops.append(warp_quad(image, quad))
        labels.append(label)
    return crops, labels


def _worker(args) -> CropSet:
    seeds, split, kw = args
    log_every = kw.pop("log_every", 0)
    X, y, ps, fr, el = [], [], [], [], []
    for i, seed in enumerate(seeds):
        crops, labels, elev, pset = frame_crops(seed, split, **kw)
        if log_every and (i + 1) % log_every == 0:
            # progress on stderr: `pieces bench` prints its JSON on stdout
            print(f"  {split}: {i + 1}/{len(seeds)} scenes", file=sys.stderr, flush=True)
        X += crops
        y += labels
        ps += [pset] * len(labels)
        fr += [seed] * len(labels)
        el += [elev] * len(labels)
    X_ = np.array(X, np.uint8).reshape(-1, CROP_H, CROP_W, 3)
    return CropSet(X_, np.array(y, np.int64), np.array(ps), np.array(fr, np.int64),
                   np.array(el, np.float32))


def generate(seeds: list[int], split: str, workers: int = 1, **kw) -> CropSet:
    """Crops of many random tables (seeds), optionally over a few processes."""
    chunks = [seeds[i::workers] for i in range(workers)]
    if workers == 1:
        return _worker((seeds, split, kw))
    import multiprocessing as mp

    with mp.get_context("fork").Pool(workers) as pool:
        parts = pool.map(_worker, [(c, split, kw) for c in chunks])
    return CropSet.concat(parts)


def _pip(img: np.ndarray, rng: np.random.Generator, cx: float, cy: float, size: float,
         squash: float, colour: tuple) -> None:
    """Draw one card-like mark (a pip, an index letter, a patch of a court figure) flat on the
    table plane, foreshortened by `squash`, into a crop."""
    k = int(rng.integers(6))
    S = 1 << 4

    def P(pts):  # unit-box points -> image, squashed vertically
        p = np.array([[cx + (x - 0.5) * size, cy + (y - 0.5) * size * squash] for x, y in pts])
        return np.round(p * S).astype(np.int32)

    def circ(x, y, r):
        cv2.ellipse(img, (int((cx + (x - 0.5) * size) * S), int((cy + (y - 0.5) * size * squash)
                                                                   * S)),
                    (max(1, int(r * size * S)), max(1, int(r * size * squash * S))), 0, 0, 360,
                    colour, -1, cv2.LINE_AA, 4)

    if k == 0:  # diamond
        cv2.fillPoly(img, [P([(0.5, 0), (0.85, 0.5), (0.5, 1), (0.15, 0.5)])], colour,
                     cv2.LINE_AA, 4)
    elif k == 1:  # heart / spade: two lobes and a point
        circ(0.32, 0.38, 0.22)
        circ(0.68, 0.38, 0.22)
        cv2.fillPoly(img, [P([(0.1, 0.45), (0.9, 0.45), (0.5, 0.95)])], colour, cv2.LINE_AA, 4)
        if rng.random() < 0.5:
            cv2.fillPoly(img, [P([(0.45, 0.6), (0.55, 0.6), (0.65, 1.05), (0.35, 1.05)])],
                         colour, cv2.LINE_AA, 4)
    elif k == 2:  # club: three lobes and a stem
        circ(0.5, 0.25, 0.2)
        circ(0.28, 0.58, 0.2)
        circ(0.72, 0.58, 0.2)
        cv2.fillPoly(img, [P([(0.45, 0.5), (0.55, 0.5), (0.65, 1.0), (0.35, 1.0)])], colour,
                     cv2.LINE_AA, 4)
    elif k == 3:  # an index letter or digit
        txt = str(rng.choice(["A", "K", "Q", "J", "10", "2", "3", "4", "5", "6", "7", "8", "9"]))
        canvas = np.zeros((40, 40 * len(txt)), np.uint8)
        cv2.putText(canvas, txt, (2, 34), int(rng.choice([0, 2, 3, 4])), 1.3, 255,
                    int(rng.integers(2, 5)), cv2.LINE_AA)
        w = max(2, int(size * len(txt) * 0.8))
        h = max(2, int(size * squash))
        m = cv2.resize(canvas, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255
        x0, y0 = int(cx - w / 2), int(cy - h / 2)
        H_, W_ = img.shape[:2]
        xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + w, W_), min(y0 + h, H_)
        if xb > xa and yb > ya:
            a = m[ya - y0:yb - y0, xa - x0:xb - x0, None]
            img[ya:yb, xa:xb] = (img[ya:yb, xa:xb] * (1 - a) + np.array(colour) * a).astype(
                np.uint8)
    elif k == 4:  # a patch of a court figure: a few coloured polygons
        for _ in range(int(rng.integers(2, 5))):
            pts = rng.uniform(0, 1, (int(rng.integers(3, 6)), 2))
            col = tuple(int(c) for c in rng.integers(0, 256, 3))
            hull = cv2.convexHull(P(pts))
            cv2.fillConvexPoly(img, hull, col, cv2.LINE_AA, 4)
    else:  # a plain dot or bar
        if rng.random() < 0.5:  # at most 2.1 cm across, well under a token's 3.6 cm
            circ(0.5, 0.5, min(float(rng.uniform(0.15, 0.35)), 1.05 * CROP_PX_PER_CM / size))
        else:
            cv2.fillPoly(img, [P([(0.1, 0.4), (0.9, 0.4), (0.9, 0.6), (0.1, 0.6)])], colour,
                         cv2.LINE_AA, 4)


def flat_distractors(X: np.ndarray, n: int, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    """`n` copies of empty crops (from X) with card-like marks drawn flat on the table plane:
    pips, index letters, patches of court figures, of unseen card designs. They stay "empty":
    the held-out card designs (big plain pips, other faces) were read as pieces or tokens.
    Marks are 1-3 cm across times `scale` (court figures of some designs are 4-6 cm), dots at
    most 2.1 cm (a paper token is a 3.6 cm disc with a rim and a glyph)."""
    rng = np.random.default_rng(seed)
    out = X[rng.integers(len(X), size=n)].copy()
    for img in out:
        squash = float(rng.uniform(0.35, 1.0))
        dark = [(20, 20, 20), (30, 30, 200), (40, 40, 160), (120, 40, 30), (30, 110, 40),
                (10, 10, 10)]
        for _ in range(int(rng.integers(1, 4))):
            size = float(rng.uniform(1.0, 3.0)) * CROP_PX_PER_CM * scale
            cx = float(rng.uniform(4, CROP_W - 4))
            cy = float(rng.uniform(0.3, 1.0) * CROP_H)
            colour = dark[int(rng.integers(len(dark)))]
            colour = tuple(int(np.clip(c + rng.integers(-20, 21), 0, 255)) for c in colour)
            _pip(img, rng, cx, cy, size, squash, colour)
    return out
