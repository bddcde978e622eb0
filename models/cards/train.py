"""Training recipe for the card index classifier (`royal-table train cards`).

Rebuilds `models/cards/card_index.onnx` and `card_index.json` reproducibly from the renderer's
TRAINING card designs only: 3 of them are kept aside as a validation split that picks the softmax
temperature and the confidence threshold (answers at or above it must be >= 99.9 % right there).
The held-out designs are never touched here; `royal-table cards bench` measures on them.

Needs the 'train' extra (torch CPU build, onnx). Runtime never imports this module.
"""

from __future__ import annotations

import json
import math
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from models.cards.dataset import CLASSES, NONE, PROCEDURAL, data_version, make_set
from scanner.rectify import CROP_H, CROP_W, normalise

HERE = Path(__file__).resolve().parent
MODEL_FILE = HERE / "card_index.onnx"
META_FILE = HERE / "card_index.json"
VAL_DESIGNS = ["gnome-berlin", "gnome-orell", "kde-nicu-white"]  # aside, from the train part
TARGET_PRECISION = 0.999


WIDE = (44.0, 130.0)  # card widths in pixels as a 1280x720 or larger frame shows them
SMALL = (34.0, 80.0)  # small cards: a 960x540 frame, a far rank, a high camera
# The training mix (seed offset, cards, designs, widths): the training decks at all sizes, again
# small, and procedural faces whose index styles no deck limits.
MIX = [(0, 1.0, "decks", WIDE), (100, 0.375, "decks", SMALL), (200, 0.625, "procedural",
                                                                (34.0, 130.0))]


def _chunk(args: tuple) -> tuple[np.ndarray, np.ndarray]:
    seed, n, designs, width = args
    return make_set(seed, n, designs, width)


def _cache_file(seed: int, n_cards: int, designs: list[str],
                width: tuple[float, float] = WIDE) -> Path:
    import hashlib

    from models.renderer.assets import cache_dir

    what = (data_version(designs), seed, n_cards, designs) + (
        () if width == WIDE else (tuple(width),))
    key = hashlib.sha1(repr(what).encode()).hexdigest()[:16]
    return cache_dir().parent / "card-crops" / f"{key}.npz"


def build_data(seed: int, n_cards: int, designs: list[str], workers: int,
               log=print, width: tuple[float, float] = WIDE) -> tuple[np.ndarray, np.ndarray]:
    """Generated in fixed chunks of 500 cards, each with its own seed, so the result does not
    depend on the number of workers; cached on disk keyed by data_version() and the arguments."""
    return cached_arrays(_cache_file(seed, n_cards, designs, width),
                         lambda: _generate(seed, n_cards, designs, workers, log, width),
                         f"{n_cards} cards of {len(designs)} designs", log)


def cached_arrays(path: Path, make, what: str, log=print) -> tuple[np.ndarray, np.ndarray]:
    """Training arrays (x, y) from `path`, or made by `make()` and saved there."""
    if path.exists():
        d = np.load(path)
        log(f"  {what}: cached {path}")
        return d["x"], d["y"]
    x, y = make()
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, x=x, y=y)
    return x, y


def map_chunks(fn, chunks: list, workers: int) -> list:
    """`fn` over every chunk of work, in `workers` processes (1: here); results in order, so
    what is made does not depend on the number of workers."""
    if workers > 1:
        with ProcessPoolExecutor(workers) as ex:
            return list(ex.map(fn, chunks))
    return [fn(c) for c in chunks]


def seeded_chunks(seed: int, n: int, *rest) -> list[tuple]:
    """n samples as chunks of 500, each with its own seed (seed * 1000 + i) and `rest`: the
    first k samples of n are those of k, whatever the number of workers."""
    return [(seed * 1000 + i, min(500, n - i * 500), *rest) for i in range((n + 499) // 500)]


def training_decks() -> list[str]:
    """The renderer's training decks less the validation decks."""
    from models.renderer.assets import split

    return [d for d in split()["cards"]["train"] if d not in VAL_DESIGNS]


def export_onnx(model, shape: tuple[int, int], path: Path, input_name: str,
                output_name: str = "logits") -> None:
    """The model in eval mode as ONNX (opset 17) for inputs of n x 3 x `shape` (h, w)."""
    import torch

    model.eval()
    torch.onnx.export(model, torch.zeros(1, 3, *shape), str(path), input_names=[input_name],
                      output_names=[output_name], dynamic_axes={input_name: {0: "n"},
                                                                output_name: {0: "n"}},
                      opset_version=17, dynamo=False)


def _generate(seed: int, n_cards: int, designs: list[str], workers: int,
              log=print, width: tuple[float, float] = WIDE) -> tuple[np.ndarray, np.ndarray]:
    chunks = seeded_chunks(seed, n_cards, designs, width)
    t = time.time()
    parts = map_chunks(_chunk, chunks, workers)
    log(f"  {n_cards} cards -> {sum(len(p[1]) for p in parts)} crops in {time.time() - t:.0f}s")
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


N_CARDS = CLASSES.index("JK")  # the 52 rank-and-suit classes come first, suit-major
N_RANKS = 13
# rank head: 13 ranks, joker, back, no index; suit head: C D H S
RANK_CLASSES = 16


def factor_labels(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """55-class labels -> (rank-head label, suit-head label or -100 where no suit is shown)."""
    y = np.asarray(y)
    is_card = y < N_CARDS
    rank = np.where(is_card, y % N_RANKS, y - N_CARDS + N_RANKS)
    suit = np.where(is_card, y // N_RANKS, -100)
    return rank.astype(np.int64), suit.astype(np.int64)


def make_model(crop: tuple[int, int] = (CROP_H, CROP_W)):
    """Rank and suit are read by two heads over one trunk: a suit looks the same above every
    rank, so each head learns from 4 or 13 times the examples a 55-way head has per class. The
    exported graph still gives the reader 55 scores (log-probabilities of rank x suit)."""
    import torch
    import torch.nn as nn

    def block(i, o):
        return [nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(),
                nn.MaxPool2d(2)]

    class IndexNet(nn.Module):
        def __init__(self):
            super().__init__()
            # 52x32 -> 26x16 -> 13x8 -> 6x4; ~4.5 M multiply-adds per index crop
            self.trunk = nn.Sequential(
                *block(3, 16), *block(16, 32), *block(32, 64), nn.Flatten(),
                nn.Linear(64 * (crop[0] // 8) * (crop[1] // 8), 128), nn.ReLU(), nn.Dropout(0.2))
            self.rank = nn.Linear(128, RANK_CLASSES)
            self.suit = nn.Linear(128, 4)
            # fixed maps from the two heads' log-probabilities to the 55 classes
            a = torch.zeros(len(CLASSES), RANK_CLASSES)
            b = torch.zeros(len(CLASSES), 4)
            for k in range(len(CLASSES)):
                if k < N_CARDS:
                    a[k, k % N_RANKS] = 1
                    b[k, k // N_RANKS] = 1
                else:
                    a[k, k - N_CARDS + N_RANKS] = 1
            self.register_buffer("to_rank", a)
            self.register_buffer("to_suit", b)

        def heads(self, x):
            h = self.trunk(x)
            return self.rank(h), self.suit(h)

        def forward(self, x):
            r, s = self.heads(x)
            return (torch.log_softmax(r, 1) @ self.to_rank.T
                    + torch.log_softmax(s, 1) @ self.to_suit.T)

    return IndexNet()


def init_trunk(model, path: str, log=print) -> None:
    """Start from earlier weights: a factorised model's, or the trunk of the 55-way model."""
    import torch

    state = torch.load(path, weights_only=True)
    if any(k.startswith("trunk.") for k in state):
        model.load_state_dict(state)
    else:  # the old nn.Sequential: its first 14 modules are this trunk
        trunk = {k: v for k, v in state.items() if int(k.split(".")[0]) < 14}
        model.trunk.load_state_dict(trunk)
    log(f"  starting from {path}")


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The temperature minimising validation NLL (a 1-D search is plenty)."""
    best_t, best_nll = 1.0, float("inf")
    for t in np.exp(np.linspace(np.log(0.3), np.log(5.0), 60)):
        z = logits / t
        z = z - z.max(1, keepdims=True)
        nll = float(-(z[np.arange(len(z)), labels] - np.log(np.exp(z).sum(1))).mean())
        if nll < best_nll:
            best_t, best_nll = float(t), nll
    return best_t


def decide_cards(corner_probs: np.ndarray, face_probs: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per card (n x 4 corner probabilities, and n whole-card probabilities where the reader
    fuses): (predicted class or -1 for face down, confidence), decided by the reader's own
    `combine` or `fuse`, so that thresholds picked on them mean what the reader does."""
    from scanner.card_reader import combine, fuse

    n_cards = back = CLASSES.index("back")  # 52 cards and the joker come before it
    pred, conf = [], []
    for i in range(len(corner_probs)):
        if face_probs is None:
            k, down, _, c = combine(corner_probs[i], n_cards, back)
        else:
            k, down, _, c = fuse(corner_probs[i], face_probs[i], n_cards, back)
        pred.append(-1 if down else k)
        conf.append(0.0 if down else c)
    return np.array(pred), np.array(conf)


def card_level(probs: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validation crops come 4 per card (nw, ne, se, sw): combine them as the reader does.
    Returns per card (truth class or -1 for no card / a back, predicted class, confidence)."""
    n_cards = CLASSES.index("back")
    lab = labels[:len(labels) // 4 * 4].reshape(-1, 4)
    truth = np.array([next((x for x in row if x < n_cards), -1) for row in lab])
    pred, conf = decide_cards(probs[:len(lab) * 4].reshape(len(lab), 4, -1))
    return truth, pred, conf


def threshold_at_precision(conf: np.ndarray, right: np.ndarray,
                           target: float = TARGET_PRECISION,
                           fallback: float | None = None) -> float:
    """The lowest confidence at which the answers at or above it are at least `target` right,
    kept within [0.5, 0.999999]; where none is, `fallback` (default: the highest confidence)."""
    order = np.argsort(-conf)
    c = conf[order]
    prec = np.cumsum(right[order]) / np.arange(1, len(c) + 1)
    good = np.nonzero(prec >= target)[0]
    if len(good):
        thr = float(c[good.max()])
    elif fallback is not None:
        thr = fallback
    else:
        thr = float(c[0]) if len(c) else 1.0
    return min(max(thr, 0.5), 0.999999)


def pick_threshold(probs: np.ndarray, labels: np.ndarray,
                   target: float = TARGET_PRECISION) -> tuple[float, dict]:
    """Lowest card-level confidence threshold at which the answers given at or above it are at
    least `target` right on the validation cards (combined over their corners as the reader
    combines them)."""
    truth, pred, conf = card_level(probs, labels)
    thr = threshold_at_precision(conf, pred == truth, target)
    keep = conf >= thr
    has_card = truth >= 0
    stats = {
        "val_crop_accuracy": float((probs.argmax(1) == labels).mean()),
        "val_card_accuracy": float((pred[has_card] == truth[has_card]).mean()),
        "val_answered_precision": float((pred[keep] == truth[keep]).mean()) if keep.any()
        else 0.0,
        "val_card_recall": float(((pred == truth) & keep & has_card).sum()
                                 / max(has_card.sum(), 1)),
    }
    return thr, stats


def run_batched(session, x: np.ndarray, batch: int = 2048) -> np.ndarray:
    """An onnxruntime session's first output over x, a batch at a time."""
    name = session.get_inputs()[0].name
    return np.concatenate([session.run(None, {name: x[i:i + batch]})[0]
                           for i in range(0, len(x), batch)])


def fit_epoch(model, opt, sched, X, ranks, suits, order, augment=None,
              batch: int = 256) -> float:
    """One pass over the examples in `order` with the rank and suit losses (suit ignored where
    no suit is shown); `augment(x)` changes each batch first. Returns the mean loss."""
    import torch.nn.functional as F

    tot = 0.0
    for i in range(0, len(order), batch):
        idx = order[i:i + batch]
        x = X[idx] if augment is None else augment(X[idx])
        r, s = model.heads(x)
        loss = F.cross_entropy(r, ranks[idx], label_smoothing=0.02) + \
            F.cross_entropy(s, suits[idx], ignore_index=-100, label_smoothing=0.02)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        tot += float(loss.detach()) * len(idx)
    return tot / len(order)


def jitter_pose(x, rand):
    """N x C x H x W tensors each shifted up to ~3 px, scaled 0.88-1.12 and turned up to 6
    degrees, by the draws of `rand(n)`, edges replicated."""
    import torch
    import torch.nn.functional as F

    n, _, h, w = x.shape
    ang = (rand(n) - 0.5) * math.radians(12)
    sc = 1 + (rand(n) - 0.5) * 0.24
    tx, ty = (rand(n) - 0.5) * 0.2, (rand(n) - 0.5) * 0.12
    cos, sin = torch.cos(ang) / sc, torch.sin(ang) / sc
    theta = torch.stack([torch.stack([cos, -sin * h / w, tx], 1),
                         torch.stack([sin * w / h, cos, ty], 1)], 1)
    return F.grid_sample(x, F.affine_grid(theta, list(x.shape), align_corners=False),
                         padding_mode="border", align_corners=False)


def blur_121(x):
    """N x C x H x W tensors blurred by the separable 1-2-1 kernel, edges replicated."""
    import torch
    import torch.nn.functional as F

    c = x.shape[1]
    k = torch.tensor([0.25, 0.5, 0.25], device=x.device)
    x = F.conv2d(F.pad(x, (1, 1, 0, 0), mode="replicate"),
                 k.view(1, 1, 1, 3).repeat(c, 1, 1, 1), groups=c)
    return F.conv2d(F.pad(x, (0, 0, 1, 1), mode="replicate"),
                    k.view(1, 1, 3, 1).repeat(c, 1, 1, 1), groups=c)


def augment_index(generator):
    """A fresh look at each index crop every epoch (normalised N x 3 x H x W tensors): shifted
    up to ~3 px, scaled 0.88-1.12 and turned up to 6 degrees, a third blurred, per-channel gain,
    a tenth grey, noise, and a quarter with a patch erased. The cached crops are otherwise seen
    identically every epoch, and the readers learnt the training decks' index shapes rather
    than a suit's (session 13: from scratch on the same data, 5 epochs of 10, held-out clubs
    read as clubs 79.4 % against the committed reader's 69.7 %; see the model card)."""
    import torch

    def rand(*shape):
        return torch.rand(*shape, generator=generator)

    def aug(x):
        n, _, h, w = x.shape
        x = jitter_pose(x, rand)
        blur = rand(n) < 0.3
        if blur.any():
            x[blur] = blur_121(x[blur])
        x = x * (1 + (rand(n, 3, 1, 1) - 0.5) * 0.3) + (rand(n, 1, 1, 1) - 0.5) * 0.6
        grey = rand(n) < 0.1
        x[grey] = x[grey].mean(1, keepdim=True).expand(-1, 3, -1, -1)
        x = x + torch.randn(x.shape, generator=generator) * rand(n, 1, 1, 1) * 0.15
        for i in torch.nonzero(rand(n) < 0.25).squeeze(1).tolist():
            y0, x0 = int(rand(1) * (h - 12)), int(rand(1) * (w - 8))
            x[i, :, y0:y0 + 6 + int(rand(1) * 8), x0:x0 + 6 + int(rand(1) * 6)] = \
                float(rand(1) - 0.5)
        return x

    return aug


def logits_of(model, X, batch: int = 1024) -> np.ndarray:
    """The model's outputs over X in eval mode, without gradients."""
    import torch

    model.eval()
    with torch.no_grad():
        return torch.cat([model(X[i:i + batch]) for i in range(0, len(X), batch)]).numpy()


def recalibrate(seed: int = 7, n_val: int = 3000, workers: int = 2, out: Path = HERE,
                log=print) -> dict:
    """Re-pick temperature and threshold for an exported model from the validation designs."""
    import onnxruntime as ort

    meta_path = out / META_FILE.name
    meta = json.loads(meta_path.read_text())
    xva, yva = build_data(seed + 1, n_val, VAL_DESIGNS, workers, log)
    from scanner.card_reader import softmax

    sess = ort.InferenceSession(str(out / MODEL_FILE.name), providers=["CPUExecutionProvider"])
    lv = run_batched(sess, normalise(xva))
    T = fit_temperature(lv, yva)
    thr, stats = pick_threshold(softmax(lv / T), yva)
    meta.update({"temperature": T, "threshold": thr, **stats})
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    log(f"temperature {T:.3f}, threshold {thr:.6f}, {stats}")
    return meta


def training_mix(seed: int, n_cards: int, workers: int,
                 log=print) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The MIX, scaled so that the training decks at all sizes give `n_cards` cards."""
    decks = training_decks()
    xs, ys = [], []
    for offset, share, what, width in MIX:
        designs = decks if what == "decks" else [PROCEDURAL]
        x, y = build_data(seed + offset, int(round(n_cards * share)), designs, workers, log,
                          width)
        xs.append(x)
        ys.append(y)
    return np.concatenate(xs), np.concatenate(ys), decks


def train(seed: int = 7, n_cards: int = 16000, n_val: int = 3000, epochs: int = 14,
          workers: int = 2, threads: int = 1, out: Path = HERE, init: str | None = None,
          lr: float = 3e-3, none_share: float = 0.35, augment: bool = False,
          log=print) -> dict:
    """Train (or, with epochs=0 and init, only export and calibrate) the index classifier.
    Each epoch sees every index crop and a `none_share` sample of the blank corners, which are
    half the crops and easy."""
    import torch

    from scanner.card_reader import softmax

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    xtr, ytr, train_designs = training_mix(seed, n_cards, workers, log)
    log(f"training designs ({len(train_designs)}): {', '.join(train_designs)} + procedural")
    log(f"validation designs: {', '.join(VAL_DESIGNS)}")
    xva, yva = build_data(seed + 1, n_val, VAL_DESIGNS, workers, log)
    Xtr = torch.from_numpy(normalise(xtr))
    rank, suit = factor_labels(ytr)
    Rtr, Str = torch.from_numpy(rank), torch.from_numpy(suit)
    Xva = torch.from_numpy(normalise(xva))
    model = make_model()
    if init:  # continue from an earlier run's weights (see the .pt beside the crop cache)
        init_trunk(model, init, log)
    is_none = torch.from_numpy(ytr == NONE)
    index_crops = torch.nonzero(~is_none).squeeze(1)
    blank_crops = torch.nonzero(is_none).squeeze(1)
    per_epoch = len(index_crops) + int(len(blank_crops) * none_share)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    steps = max(1, epochs * ((per_epoch + 255) // 256))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps)
    g = torch.Generator().manual_seed(seed)
    weights = _cache_file(seed, n_cards, train_designs).with_suffix(".pt")
    log(f"  {len(Xtr)} crops, {per_epoch} per epoch")
    for ep in range(epochs):
        model.train()
        t = time.time()
        blanks = blank_crops[torch.randperm(len(blank_crops), generator=g)[
            :per_epoch - len(index_crops)]]
        chosen = torch.cat([index_crops, blanks])
        perm = chosen[torch.randperm(len(chosen), generator=g)]
        loss = fit_epoch(model, opt, sched, Xtr, Rtr, Str, perm,
                         augment=augment_index(g) if augment else None)
        acc = float((logits_of(model, Xva).argmax(1) == yva).mean())
        torch.save(model.state_dict(), weights)  # a run cut short still leaves its weights
        log(f"  epoch {ep + 1}/{epochs}: loss {loss:.4f}, val crop accuracy "
            f"{acc:.4f} ({time.time() - t:.0f}s)")
    lv = logits_of(model, Xva)
    T = fit_temperature(lv, yva)
    thr, stats = pick_threshold(softmax(lv / T), yva)
    log(f"temperature {T:.3f}, threshold {thr:.4f}, {stats}")
    out.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), weights)
    log(f"weights: {weights}")
    export_onnx(model, (CROP_H, CROP_W), out / MODEL_FILE.name, "crops")
    meta = {
        "classes": CLASSES, "crop": [CROP_H, CROP_W], "temperature": T, "threshold": thr,
        "outputs": "log-probabilities of rank x suit (two heads)",
        "seed": seed, "n_cards": n_cards, "mix": [list(m) for m in MIX], "n_val": n_val,
        "epochs": epochs, "lr": lr, "none_share": none_share, "augment": augment,
        "init": Path(init).name if init else None,
        "train_designs": train_designs + [PROCEDURAL], "val_designs": VAL_DESIGNS, **stats,
    }
    (out / META_FILE.name).write_text(json.dumps(meta, indent=1) + "\n")
    log(f"wrote {out / MODEL_FILE.name} ({(out / MODEL_FILE.name).stat().st_size / 1e3:.0f} kB)")
    return meta
