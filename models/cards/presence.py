"""Training recipe for the card-presence check (`card_presence.onnx`), see scanner.card_presence.

Examples are what the board finder really hands the check: rendered stills of the training
designs, piece sets and cloths (random positions, 20-90 % of cells laid, up to 8 units on
cards, 960x540 to 1920x1080), the finder run on every zone with the still's exact profile, and
each quad it accepts labelled by the still's truth: a card (the top card is visible and the quad
lies on it) or not (the cell or initiative pile is empty). The threshold is picked on stills of
other seeds so that at least 99.9 % of real cards pass; the held-out designs are left to
`royal-table cards bench`.

    royal-table train cards --presence [--stills N --epochs E]

Needs the 'train' extra (torch CPU, onnx); runtime never imports this module.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from scanner.card_presence import RING, SIZE, presence_crops
from scanner.rectify import normalise

HERE = Path(__file__).resolve().parent
MODEL_FILE = HERE / "card_presence.onnx"
META_FILE = HERE / "card_presence.json"
DATA_VERSION = 2  # 2: no initiative card cut by the frame counts as a card
FRAME_SIZES = [(1280, 720), (960, 540), (1920, 1080)]
KINDS = ["pawn", "knight", "bishop", "rook", "queen", "king"]
MIN_RECALL = 0.999  # real cards that must pass the threshold on the validation stills


def _position(rng: np.random.Generator) -> dict:
    from models.renderer.assets import ALL_CODES
    from scanner.cards_bench import random_position

    pos = random_position(rng, fill=float(rng.uniform(0.2, 0.9)))
    laid = sorted(pos["board"])
    for cell in rng.permutation(laid)[:int(rng.integers(0, 9))]:
        pos["board"][str(cell)]["unit"] = {"side": str(rng.choice(["white", "black"])),
                                           "kind": str(rng.choice(KINDS))}
    for side in ("white", "black"):
        if rng.random() < 0.3:
            pos["initiative"][side] = None
        elif rng.random() < 0.1:
            pos["initiative"][side] = str(rng.choice(ALL_CODES))
    return pos


def finder_still(seed: int, frame_sizes: list[tuple[int, int]], **scene_args):
    """One rendered still of a random position (the seed picks its frame size, position and
    scene; `scene_args` go to `Scene.random`) and the board finder with the still's exact
    profile (no reader, no presence check): (RenderResult, TableScanner)."""
    from models.renderer import Scene, render_scene
    from scanner.cards_bench import truth_profile
    from scanner.pipeline import TableScanner

    rng = np.random.default_rng(seed)
    w, h = frame_sizes[int(rng.integers(len(frame_sizes)))]
    res = render_scene(_position(rng), Scene.random(seed, width=w, height=h, **scene_args))
    return res, TableScanner(truth_profile(res.truth), reader=object(), presence=None)


def cut_by_frame(quad: np.ndarray, w: int, h: int) -> bool:
    """Does a card's true outline reach beyond a w x h frame?"""
    return bool((quad < 0).any() or (quad[:, 0] >= w).any() or (quad[:, 1] >= h).any())


def finder_missed(quad: np.ndarray, truth_quad: np.ndarray) -> bool:
    """Is the finder's quad off the true card by more than a quarter of its width?"""
    width = np.linalg.norm(truth_quad[1] - truth_quad[0])
    return bool(np.linalg.norm(quad.mean(0) - truth_quad.mean(0)) > 0.25 * width)


def still_examples(seed: int, split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """(crops, labels 1 = card) of every quad the finder accepts in one rendered still."""
    res, scanner = finder_still(seed, FRAME_SIZES, split=split)
    h, w = res.image.shape[:2]
    quads, labels = [], []
    for key in scanner.zone_names():
        q, _step = scanner._find_in_patch(res.image, key)
        if q is None:
            continue
        if key.startswith("init/"):
            tr = res.truth["initiative"].get(key[5:])
            card = tr is not None
        else:
            tr = res.truth["cells"].get(key) or {}
            card = tr.get("card") is not None
            if card and (tr.get("in_frame", 0) < 1.0 or tr.get("visible_fraction", 0) < 0.5):
                continue  # half hidden or cut by the frame: not a clean example either way
        if card:
            truth_q = np.asarray(tr["corners"], np.float32)
            if cut_by_frame(truth_q, w, h) or finder_missed(q, truth_q):
                continue  # cut by the frame's edge, or missed: the quad is neither
        quads.append(q)
        labels.append(int(card))
    if not quads:
        return np.zeros((0, SIZE[1], SIZE[0], 3), np.uint8), np.zeros(0, np.int64)
    return presence_crops(res.image, quads), np.array(labels, np.int64)


def _chunk(args: tuple[int, int, str]) -> tuple[np.ndarray, np.ndarray]:
    first, n, split = args
    parts = [still_examples(s, split) for s in range(first, first + n)]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def build_data(first_seed: int, stills: int, workers: int, log=print,
               split: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """Examples of `stills` stills, in chunks of 25 (the result does not depend on workers);
    cached on disk keyed by DATA_VERSION and the arguments."""
    import hashlib

    from models.cards.train import cached_arrays, map_chunks
    from models.renderer.assets import cache_dir

    key = hashlib.sha1(repr((DATA_VERSION, first_seed, stills, split)).encode()).hexdigest()[:16]
    path = cache_dir().parent / "card-presence" / f"{key}.npz"

    def make():
        t = time.time()
        chunks = [(first_seed + i, min(25, stills - i), split) for i in range(0, stills, 25)]
        parts = map_chunks(_chunk, chunks, workers)
        x = np.concatenate([p[0] for p in parts])
        y = np.concatenate([p[1] for p in parts])
        log(f"  {stills} stills -> {len(y)} quads ({int((y == 0).sum())} not cards) "
            f"in {time.time() - t:.0f}s")
        return x, y

    return cached_arrays(path, make, f"{stills} {split} stills", log)


def make_model():
    import torch.nn as nn

    def block(i: int, o: int, pool: bool) -> list:
        return [nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()] + \
            ([nn.MaxPool2d(2)] if pool else [])

    return nn.Sequential(*block(3, 16, True), *block(16, 32, True), *block(32, 48, False),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(48, 1))


def _logits(model, X, batch: int = 2048) -> np.ndarray:
    import torch

    model.eval()
    with torch.no_grad():
        return torch.cat([model(X[i:i + batch]) for i in range(0, len(X), batch)]).numpy() \
            .reshape(-1)


def pick_threshold(p: np.ndarray, y: np.ndarray, min_recall: float = MIN_RECALL) -> float:
    """The highest threshold that still passes `min_recall` of the real cards."""
    cards = np.sort(p[y == 1])
    k = int(np.floor(len(cards) * (1 - min_recall)))
    return float(cards[k]) if len(cards) else 0.5


def train(seed: int = 5, stills: int = 1200, val_stills: int = 200, epochs: int = 12,
          workers: int = 2, threads: int = 1, out: Path = HERE, log=print) -> dict:
    import torch
    import torch.nn.functional as F

    from models.cards.train import export_onnx

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    x, y = build_data(seed * 100_000, stills, workers, log)
    xv, yv = build_data(seed * 100_000 + 50_000, val_stills, workers, log)
    X = torch.from_numpy(normalise(x))
    Y = torch.from_numpy(y.astype(np.float32))
    Xv = torch.from_numpy(normalise(xv))
    model = make_model()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    batch = 256
    steps = epochs * ((len(y) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=max(steps, 1))
    # the few empty-cell quads weigh as much as the many cards
    pos_weight = torch.tensor(max(1.0, float((y == 0).sum())) / max(1.0, float((y == 1).sum())))
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        model.train()
        t = time.time()
        order = rng.permutation(len(y))
        tot = 0.0
        for i in range(0, len(order), batch):
            idx = torch.from_numpy(order[i:i + batch])
            xb = X[idx]
            if rng.random() < 0.5:  # a card looks the same turned half round
                xb = torch.flip(xb, dims=(2, 3))
            logit = model(xb).reshape(-1)
            loss = F.binary_cross_entropy_with_logits(logit, Y[idx], pos_weight=pos_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot += float(loss.detach()) * len(idx)
        p = 1 / (1 + np.exp(-_logits(model, Xv)))
        acc = float(((p >= 0.5) == (yv == 1)).mean())
        log(f"  epoch {epoch + 1}/{epochs}: loss {tot / len(y):.4f}, val accuracy {acc:.4f} "
            f"({time.time() - t:.0f}s)")
    p = 1 / (1 + np.exp(-_logits(model, Xv)))
    threshold = pick_threshold(p, yv)
    cards, empty = yv == 1, yv == 0
    figures = {
        "threshold": threshold, "size": list(SIZE), "ring": RING,
        "val_stills": val_stills, "val_cards": int(cards.sum()), "val_not_cards": int(empty.sum()),
        "val_cards_passed": float((p[cards] >= threshold).mean()),
        "val_not_cards_rejected": float((p[empty] < threshold).mean()) if empty.any() else None,
        "train_stills": stills, "train_quads": int(len(y)), "epochs": epochs, "seed": seed,
    }
    log(f"  threshold {threshold:.4f}: cards passed {figures['val_cards_passed']:.4f}, "
        f"not-cards rejected {figures['val_not_cards_rejected']}")
    out.mkdir(parents=True, exist_ok=True)
    export_onnx(model, (SIZE[1], SIZE[0]), out / MODEL_FILE.name, "crop", "logit")
    (out / META_FILE.name).write_text(json.dumps(figures, indent=1) + "\n")
    torch.save(model.state_dict(), out / "card_presence.pt")
    return figures
