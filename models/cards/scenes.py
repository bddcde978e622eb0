"""Card crops as the board scanner really cuts them: rendered table stills, the finder's quads.

`dataset.py` warps one card at a time onto a random patch: cheap, but not what the scanner
sees. On rendered stills of the *training* designs the committed readers got only 86.9 % of
visible cards right (top candidate, 1280x720, 16 stills): the finder's quads are a little off
in their own way, pieces rise over the far index, the renderer's light, shadows and lens differ.
This module renders whole tables (`models.renderer`) of the training decks (the validation decks
apart), runs the board finder on every zone with the still's exact profile, and keeps what the
reader would be shown: the four corner crops of each found card and its whole-card
thumbnail, labelled from the still's truth.

Corner labels come from geometry: a crop shows the index where its quad corner is the card
face's top-left or bottom-right corner (the truth gives the corners in face order). A crop whose
index region the renderer's occluder mask (a piece, a hand) covers by more than half shows no
index; one covered between 15 and 50 % is left out, being neither.

    royal-table train cards --scenes N   (used by the index and whole-card recipes)

Needs the 'train' extra's renderer assets; runtime never imports this module.
"""

from __future__ import annotations

import time

import cv2
import numpy as np

from models.cards.dataset import CLASSES, NONE
from models.cards.face import FACE_SIZE  # the whole-card model's input (w, h)
from scanner.rectify import corner_crops, rectify

DATA_VERSION = 2  # 2: quads in the board's portrait order
FRAME_SIZES = [(1280, 720), (960, 540), (1920, 1080), (1280, 720)]
HIDDEN, PARTLY = 0.5, 0.15  # occluded share of a crop's index region: no index / left out
DROP = -1


def _index_region(mask_crop: np.ndarray) -> np.ndarray:
    """The part of a corner crop an index occupies in most decks (top 60 %, left 70 %)."""
    h, w = mask_crop.shape[:2]
    return mask_crop[:int(h * 0.6), :int(w * 0.7)]


def still_crops(seed: int, designs: list[str]) -> dict[str, np.ndarray]:
    """Every card the finder outlines in one rendered still of `designs`: corner crops (4 per
    card, label DROP where left out), whole-card thumbnails with their class, and card widths."""
    from models.cards.presence import cut_by_frame, finder_missed, finder_still

    res, scanner = finder_still(seed, FRAME_SIZES, designs=designs)
    h, w = res.image.shape[:2]
    occ = res.masks.get("occluder")
    occ = np.zeros((h, w), np.uint8) if occ is None else (occ > 0).astype(np.uint8) * 255
    crops, labels, faces, face_labels, widths = [], [], [], [], []
    for key in scanner.zone_names():
        if key.startswith("init/"):
            tr = res.truth["initiative"].get(key[5:])
        else:
            tr = res.truth["cells"].get(key) or {}
            if tr.get("card") is None or tr.get("visible_fraction", 0) < 0.4:
                continue
        if not tr or tr.get("card") is None:
            continue
        truth_q = np.asarray(tr["corners"], np.float32)
        if cut_by_frame(truth_q, w, h):
            continue
        q, _step = scanner._find_in_patch(res.image, key)
        if q is None or finder_missed(q, truth_q):
            continue
        width = float(np.linalg.norm(truth_q[1] - truth_q[0]))
        ordered = q  # the board finder gives its quads in portrait order
        # which face corner each quad corner sits on: face top-left (0) and bottom-right (2)
        # carry the index
        d = np.linalg.norm(ordered[:, None] - truth_q[None], axis=2)
        face_corner = d.argmin(1)
        if len(set(face_corner.tolist())) < 4:
            continue  # a quad too far off to tell its corners apart
        card = rectify(res.image, ordered)
        mask = rectify(occ, ordered)
        k = CLASSES.index(tr["card"])
        lab = []
        for c, m in zip(face_corner, corner_crops(mask), strict=True):
            hidden = float((_index_region(m) > 0).mean())
            if hidden > HIDDEN:
                lab.append(NONE)
            elif hidden > PARTLY:
                lab.append(DROP)
            else:
                lab.append(k if c in (0, 2) else NONE)
        crops.append(corner_crops(card))
        labels.append(lab)
        faces.append(cv2.resize(card, FACE_SIZE, interpolation=cv2.INTER_AREA))
        face_labels.append(k)
        widths.append(width)
    if not crops:
        return {"crops": np.zeros((0, 4, 52, 32, 3), np.uint8), "labels": np.zeros((0, 4),
                np.int64), "faces": np.zeros((0, FACE_SIZE[1], FACE_SIZE[0], 3), np.uint8),
                "face_labels": np.zeros(0, np.int64), "widths": np.zeros(0, np.float32)}
    return {"crops": np.stack(crops), "labels": np.array(labels, np.int64),
            "faces": np.stack(faces), "face_labels": np.array(face_labels, np.int64),
            "widths": np.array(widths, np.float32)}


def _chunk(args: tuple[int, int, tuple[str, ...]]) -> dict[str, np.ndarray]:
    first, n, designs = args
    parts = [still_crops(s, list(designs)) for s in range(first, first + n)]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def build(first_seed: int, stills: int, designs: list[str], workers: int = 2,
          log=print) -> dict[str, np.ndarray]:
    """Crops of `stills` stills in chunks of 20 (the result does not depend on workers), cached
    on disk keyed by DATA_VERSION and the arguments."""
    import hashlib

    from models.cards.train import map_chunks
    from models.renderer.assets import cache_dir

    key = hashlib.sha1(repr((DATA_VERSION, first_seed, stills, sorted(designs), FACE_SIZE))
                       .encode()).hexdigest()[:16]
    path = cache_dir().parent / "card-scenes" / f"{key}.npz"
    if path.exists():
        log(f"  {stills} scene stills: cached {path}")
        return dict(np.load(path))
    t = time.time()
    chunks = [(first_seed + i, min(20, stills - i), tuple(designs)) for i in range(0, stills, 20)]
    parts = map_chunks(_chunk, chunks, workers)
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    log(f"  {stills} scene stills -> {len(data['face_labels'])} cards in {time.time() - t:.0f}s")
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **data)
    return data


def flat_crops(data: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The corner crops and labels as the index recipe takes them, left-out crops dropped."""
    x = data["crops"].reshape(-1, *data["crops"].shape[2:])
    y = data["labels"].reshape(-1)
    keep = y != DROP
    return x[keep], y[keep]
