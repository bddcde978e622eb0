"""The token glyph reader (`token_glyph.onnx`): which printed paper token, if any, a cell's top
view shows, learnt from rendered tables (`royal-table train tokens`; needs the 'train' extra).

`scanner.token_reader` finds a token's glyph by correlation with the printed discs; far from
the camera (a 3.6 cm disc 15-25 px tall) the print blurs and the correlation no longer tells a
pawn from a bishop surely. This small CNN reads the same top views (`TokenReader.top_view`,
52 x 52 grey at 10 px per cm) as the renderer makes them, far and near, turned, lit and blurred,
and says one of 13: the 12 tokens or `none` (a bare card, a 3D piece, the table).

Steps, each reproducible from its seeds:
- views: every labelled cell's top view of the training split's renders (`TRAIN_PARTS`:
  paper-token tables, and 3D sets and procedural sets for what is not a token), cached as npz;
- train: the net on those, each view freshly turned (up to 45 degrees, as players lay them),
  scaled (print sizes 86-106 %), shifted, blurred and relit every draw;
- thresholds on other training-split renders (`VAL_PARTS`, the renders the correlation's
  thresholds were chosen on): the sure threshold is the lowest at which no token of them is
  named wrongly, the certain one above every bare card and 3D piece there;
- export: ONNX (opset 17) and `token_glyph.json`.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from scanner.token_reader import KINDS, SIDES

KEYS = [f"{s}-{k}" for s in SIDES for k in KINDS]  # the correlation's glyph order
NONE = len(KEYS)  # the 13th class: no token there
VIEW = 52  # TokenReader.top_view's size (PATCH)
# (piece sets, seeds, procedural): training-split renders, 3 tables each
TRAIN_PARTS = [
    (["paper-token"], range(1000, 1800), False),
    (["brutalchess"], range(1800, 1900), False),
    (["dreamchess"], range(1900, 2000), False),
    (None, range(500400, 500500), True),
    (["paper-token"], range(2000, 2800), False),
    (["brutalchess"], range(2800, 2850), False),
    (["dreamchess"], range(2850, 2900), False),
    (None, range(500500, 500550), True),
]
VAL_PARTS = [
    (["paper-token"], range(0, 150), False),
    (["brutalchess"], range(150, 210), False),
    (["dreamchess"], range(210, 270), False),
    (None, range(500000, 500060), True),
]
# each view is read as it is and turned 12 degrees either way, and the three looks' log
# probabilities averaged: on the validation renders the reader is then sure of 98.76 % of the
# tokens, not 97.85 % (held-out views 97.78 -> 98.74 %), at three times the cost (session 41)
TURNS = (0.0, -12.0, 12.0)
HERE = Path(__file__).resolve().parent
MODEL_FILE = HERE / "token_glyph.onnx"
META_FILE = HERE / "token_glyph.json"


def normalise(views: np.ndarray) -> np.ndarray:
    """Top views (N x 52 x 52, grey 0-255) as the net reads them: each view at zero mean and
    unit contrast (a flat view stays flat)."""
    v = np.asarray(views, np.float32)
    v = (v - v.mean(axis=(-1, -2), keepdims=True)) / (v.std(axis=(-1, -2), keepdims=True) + 4.0)
    return (v - v.mean(axis=(-1, -2), keepdims=True)) / (v.std(axis=(-1, -2), keepdims=True)
                                                         + 0.05)


def turned(views: np.ndarray, angle: float) -> np.ndarray:
    """The views turned by `angle` degrees about their centre (edges replicated)."""
    if not angle:
        return np.asarray(views)
    import cv2

    M = cv2.getRotationMatrix2D((VIEW / 2, VIEW / 2), angle, 1.0)
    return np.stack([cv2.warpAffine(np.asarray(v, np.float32), M, (VIEW, VIEW),
                                    flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
                     for v in views])


def pooled(looks: list[np.ndarray]) -> np.ndarray:
    """Several looks' probabilities (each N x 13) as one: their mean log probability,
    normalised again."""
    mean = np.mean([np.log(np.asarray(p, np.float64) + 1e-9) for p in looks], axis=0)
    e = np.exp(mean - mean.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def _views_worker(args) -> tuple[np.ndarray, np.ndarray]:
    seeds, piece_sets, procedural = args
    from models.pieces.evaluate import CLASSES, UNSURE_CLASS, board_frames
    from scanner.piece_crops import as_board_camera
    from scanner.token_reader import TokenReader

    reader = TokenReader(glyphs=None)  # its top views only
    views, labels = [], []
    for seed in seeds:
        for image, cam, cell_labels, pset in board_frames(seed, "train", piece_sets,
                                                          procedural=procedural):
            bc = as_board_camera(cam, image.shape)
            cells = [c for c, lab in cell_labels.items() if lab != UNSURE_CLASS]
            for cell, v in reader.top_views(image, bc, cells).items():
                name = CLASSES[cell_labels[cell]]
                views.append(np.clip(np.round(v), 0, 255).astype(np.uint8))
                labels.append(KEYS.index(name) if pset == "paper-token" and name in KEYS
                              else NONE)
    return (np.array(views, np.uint8).reshape(-1, VIEW, VIEW), np.array(labels, np.int64))


def views(parts, workers: int = 2, cache: Path | None = None, log=print
          ) -> tuple[np.ndarray, np.ndarray]:
    """Every labelled cell's top view of the renders `parts` name, and its class."""
    out_v, out_y = [], []
    for piece_sets, seeds, procedural in parts:
        name = f"token-views-{'proc' if procedural else '-'.join(piece_sets)}-" \
               f"{seeds.start}-{seeds.stop}.npz"
        path = cache / name if cache else None
        if path is not None and path.exists():
            d = np.load(path)
            v, y = d["views"], d["labels"]
        else:
            t0 = time.time()
            seeds = list(seeds)
            chunks = [(seeds[i::workers], piece_sets, procedural) for i in range(workers)]
            if workers == 1:
                parts_out = [_views_worker(chunks[0])]
            else:
                import multiprocessing as mp

                with mp.get_context("fork").Pool(workers) as pool:
                    parts_out = pool.map(_views_worker, chunks)
            v = np.concatenate([p[0] for p in parts_out])
            y = np.concatenate([p[1] for p in parts_out])
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                np.savez_compressed(path, views=v, labels=y)
            log(f"  {name}: {len(y)} views in {time.time() - t0:.0f} s")
        out_v.append(v)
        out_y.append(y)
    return np.concatenate(out_v), np.concatenate(out_y)


def make_net():
    import torch.nn as nn

    class GlyphNet(nn.Module):
        """4 conv blocks (16-32-64-64, three max-pools: 52 -> 6), dense 128, 13 classes;
        about 8 M multiply-adds a view."""

        def __init__(self) -> None:
            super().__init__()
            chans = [1, 16, 32, 64, 64]
            layers: list = []
            for i in range(4):
                layers += [nn.Conv2d(chans[i], chans[i + 1], 3, padding=1),
                           nn.BatchNorm2d(chans[i + 1]), nn.ReLU()]
                if i < 3:
                    layers.append(nn.MaxPool2d(2))
            self.f = nn.Sequential(*layers)
            self.h = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(64 * 6 * 6, 128),
                                   nn.ReLU(), nn.Linear(128, NONE + 1))

        def forward(self, x):
            return self.h(self.f(x))

    return GlyphNet()


def augment(x):
    """A fresh look at each view: turned up to 45 degrees either way, printed at 86-106 % of
    the sheet's size, shifted up to 2 px, blurred (40 % once, 20 % again), relit and noised,
    then normalised again."""
    import torch
    import torch.nn.functional as F

    n = x.shape[0]
    ang = (torch.rand(n) * 2 - 1) * np.deg2rad(45)
    sc = 1 / (0.86 + torch.rand(n) * 0.2)
    tx = (torch.rand(n) * 2 - 1) * 0.08
    ty = (torch.rand(n) * 2 - 1) * 0.08
    cos, sin = torch.cos(ang) * sc, torch.sin(ang) * sc
    theta = torch.stack([torch.stack([cos, -sin, tx], 1), torch.stack([sin, cos, ty], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, padding_mode="border", align_corners=False)
    k = torch.tensor([1, 4, 6, 4, 1.0]) / 16
    k2 = (k[:, None] * k[None, :])[None, None]
    for share in (0.4, 0.2):
        m = torch.rand(n) < share
        if m.any():
            x[m] = F.conv2d(F.pad(x[m], (2, 2, 2, 2), mode="replicate"), k2)
    x = x * (0.7 + 0.6 * torch.rand(n, 1, 1, 1)) + torch.randn_like(x) * 0.08 * torch.rand(
        n, 1, 1, 1)
    return (x - x.mean((2, 3), keepdim=True)) / (x.std((2, 3), keepdim=True) + 0.05)


def train_net(V: np.ndarray, Y: np.ndarray, epochs: int, seed: int = 0, threads: int = 2,
              log=print):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    X = torch.from_numpy(normalise(V))[:, None]
    T = torch.from_numpy(Y).long()
    counts = np.bincount(Y, minlength=NONE + 1)
    # every token class weighs about as much as `none`, which has 2-3 times their views
    weight = torch.tensor((counts.sum() / ((NONE + 1) * np.maximum(counts, 1))) ** 0.5,
                          dtype=torch.float32)
    net = make_net()
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    per_epoch = len(Y) // 256
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=epochs * per_epoch)
    t0 = time.time()
    for ep in range(epochs):
        net.train()
        perm = torch.randperm(len(Y))
        total = 0.0
        for i in range(per_epoch):
            idx = perm[i * 256:(i + 1) * 256]
            loss = F.cross_entropy(net(augment(X[idx].clone())), T[idx], weight=weight,
                                   label_smoothing=0.02)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
        log(f"  epoch {ep + 1}/{epochs}: loss {total / per_epoch:.4f} ({time.time() - t0:.0f} s)")
    net.eval()
    return net


def predict(net, V: np.ndarray, turns: tuple[float, ...] = TURNS) -> np.ndarray:
    """The net's probabilities for views `V`, each read at every turn of `turns` (pooled)."""
    import torch

    looks = []
    for angle in turns:
        out = []
        with torch.no_grad():
            for i in range(0, len(V), 1024):
                x = torch.from_numpy(normalise(turned(V[i:i + 1024], angle)))[:, None]
                out.append(torch.softmax(net(x), 1).numpy())
        looks.append(np.concatenate(out) if out else np.zeros((0, NONE + 1), np.float32))
    return pooled(looks)


def pick_thresholds(P: np.ndarray, Y: np.ndarray) -> dict:
    """On validation renders: `sure`, the lowest probability (in steps of 0.01) at which no
    token is named wrongly; `certain`, above every non-token's best token probability (so the
    reader alone may say a token is there, even against the piece classifier's bare card)."""
    tok = Y < NONE
    best = P[:, :NONE].argmax(1)
    p = P[:, :NONE].max(1)
    sure = 0.99
    for k in range(99, 49, -1):
        if np.any(tok & (p >= k / 100) & (best != Y)):
            break
        sure = k / 100
    certain = float(min(0.999, round(max(float(p[~tok].max(initial=0.0)) + 0.01, sure), 3)))
    named = tok & (p >= sure)
    return {"sure": sure, "certain": certain,
            "val_tokens": int(tok.sum()), "val_top1": round(float(np.mean(best[tok] == Y[tok])), 4),
            "val_sure": round(float(named.sum() / max(tok.sum(), 1)), 4),
            "val_sure_wrong": int(np.sum(named & (best != Y))),
            "val_non_tokens": int((~tok).sum())}


def export(net, out: Path, meta: dict) -> None:
    import torch

    out.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 1, VIEW, VIEW)
    torch.onnx.export(net, dummy, str(out / MODEL_FILE.name), input_names=["views"],
                      output_names=["logits"], dynamic_axes={"views": {0: "n"}, "logits": {0: "n"}},
                      opset_version=17, dynamo=False)
    (out / META_FILE.name).write_text(json.dumps({"classes": KEYS + ["none"], "view": VIEW,
                                                  **meta}, indent=1) + "\n")


def run(epochs: int = 12, seed: int = 0, workers: int = 2, threads: int = 2,
        cache: Path = Path("data/pieces"), out: Path = HERE, log=print) -> dict:
    log("training views:")
    V, Y = views(TRAIN_PARTS, workers, cache, log)
    log(f"  {len(Y)} views, {int(np.sum(Y < NONE))} of them tokens")
    log("validation views:")
    Vv, Yv = views(VAL_PARTS, workers, cache, log)
    t0 = time.time()
    net = train_net(V, Y, epochs, seed, threads, log)
    th = pick_thresholds(predict(net, Vv), Yv)
    meta = {"thresholds": th, "turns": list(TURNS), "epochs": epochs, "seed": seed,
            "train_views": int(len(Y)),
            "train_tokens": int(np.sum(Y < NONE)), "train_seconds": round(time.time() - t0),
            "train_parts": [[p, [s.start, s.stop], proc] for p, s, proc in TRAIN_PARTS],
            "val_parts": [[p, [s.start, s.stop], proc] for p, s, proc in VAL_PARTS]}
    export(net, Path(out), meta)
    if Path(out) != HERE:  # the weights beside a trial's ONNX, to re-pick or export again
        import torch

        torch.save(net.state_dict(), Path(out) / "token_glyph.pt")
    log(json.dumps(th))
    return meta
