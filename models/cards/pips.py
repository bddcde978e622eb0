"""Training recipe for the pip reader (`card_pips.onnx`), the suit witness of scanner.pip_suits.

Data: number cards (A-10) of the training decks (the validation decks apart) and procedural
faces (`procedural.py`: fonts' and drawn suit shapes), warped onto tables and rectified through
a jittered quad exactly as the index reader's data (`dataset.sample`, 30-130 px wide, a
piece-like blob on 30 %), then cut into pips by `scanner.pip_suits.pip_blobs`; each pip is
labelled with its card's suit and knows its size in frame pixels (the card's width times its
share). Validation: the same from the validation decks (`gnome-berlin`, `gnome-orell`,
`kde-nicu-white`); the held-out decks are left to `royal-table cards bench`.

    royal-table train cards --pips --seed 11 [--epochs 8 --workers 2 --threads 2]
    royal-table train cards --pips --marks     # only measure the committed model's index marks

The index marks under a court card's rank are suit shapes too (`scanner.pip_suits.index_marks`);
the recipe measures how the model names them on the validation decks' court cards, per smallest
mark width (`validation_court_marks` in the meta), where MARK_MIN_PX is chosen.

About 6 min of data and 6 min of training on 2 cores. Needs the 'train' extra (torch CPU,
onnx); runtime never imports this module.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from scanner.pip_suits import (
    COURT_RANKS,
    MARK_MIN_PX,
    MIN_PX,
    PATCH,
    PIP_RANKS,
    SUITS,
    TWIN,
    index_marks,
    pip_blobs,
    size_feature,
)

HERE = Path(__file__).resolve().parent
MODEL_FILE = HERE / "card_pips.onnx"
META_FILE = HERE / "card_pips.json"
WIDTHS = (30.0, 130.0)  # card width in frame pixels
CHUNKS = 20


def _chunk(args: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pips of `n` sampled cards: crops, suits, sizes (frame px), card numbers; with `marks`,
    instead the index marks (`index_marks`) of the court cards among them."""
    from models.cards import dataset as D

    seed, n, designs, *rest = args
    marks = bool(rest and rest[0])
    rng = np.random.default_rng(seed)
    xs, ys, px, card = [], [], [], []
    seen: dict = {}
    for k in range(n):
        _, _, face, label = D.sample(rng, designs, p_none=0, p_back=0, width=WIDTHS,
                                     p_piece=0.3, face_size=(100, 140), seen=seen)
        code = D.CLASSES[label]
        wanted = code[:-1] in COURT_RANKS and code != "JK" if marks else \
            code[:-1] in PIP_RANKS  # ("JK"[:-1] is "J": the joker has no pips, no suit mark)
        if not wanted:
            continue
        width = seen["width"]
        face = _blurred(face, width, rng)
        found = index_marks(face, "ne-sw" if seen["mirrored"] else "nw-se") if marks \
            else pip_blobs(face)
        for crop, share in found:
            xs.append(crop)
            ys.append(SUITS.index(code[-1]))
            px.append(share * width)
            card.append(seed * 100_000 + k)
    return (np.array(xs, np.float32).reshape(-1, PATCH, PATCH), np.array(ys, np.int64),
            np.array(px, np.float32), np.array(card, np.int64))


def _blurred(card: np.ndarray, width: float, rng: np.random.Generator) -> np.ndarray:
    """The rectified card as a defocused or shaken camera gives it, more often and more than
    `dataset.sample` blurs (which the index reader is trained with): a pip blurred out of
    shape must be read unsure, not as the suit its blur resembles (session 43: clubs under a
    6 px motion blur read as spades by the first pip reader). Blur lengths are in frame
    pixels, so a small card's pips blur more."""
    import cv2

    to_card = 100.0 / width  # canonical px per frame px
    u = rng.random()
    if u < 0.3:
        return card
    img = card.astype(np.float32)
    if u < 0.7:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.5, 2.5) * to_card)
    if u >= 0.55:
        length = rng.uniform(2.0, 9.0) * to_card
        k = int(np.ceil(length)) | 1
        ker = np.zeros((k, k), np.float32)
        ker[k // 2, (k - int(round(length))) // 2:(k + int(round(length))) // 2 + 1] = 1.0
        M = cv2.getRotationMatrix2D(((k - 1) / 2, (k - 1) / 2), rng.uniform(0, 180), 1.0)
        ker = cv2.warpAffine(ker, M, (k, k))
        img = cv2.filter2D(img, -1, ker / max(ker.sum(), 1e-6))
    return np.clip(img, 0, 255).astype(np.uint8)


def pip_data(seed: int, n_cards: int, designs: list[str], workers: int = 2, log=print,
             marks: bool = False):
    t = time.time()
    jobs = [(seed * 1000 + i, n_cards // CHUNKS, designs, marks) for i in range(CHUNKS)]
    with Pool(workers) as pool:
        parts = pool.map(_chunk, jobs)
    out = tuple(np.concatenate([p[j] for p in parts]) for j in range(4))
    log(f"  {len(out[0])} pips of {n_cards} cards ({', '.join(designs[:3])}"
        f"{'...' if len(designs) > 3 else ''}) in {time.time() - t:.0f} s")
    return out


def make_model(width: int = 1):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    a, b, c = 16 * width, 32 * width, 64 * width

    class PipNet(nn.Module):
        """3 conv blocks 16-32-64 (times `width`) on the 24 x 24 pip, its size joined before
        the dense layer."""

        def __init__(self):
            super().__init__()
            self.c1, self.b1 = nn.Conv2d(1, a, 3, padding=1), nn.BatchNorm2d(a)
            self.c2, self.b2 = nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b)
            self.c3, self.b3 = nn.Conv2d(b, c, 3, padding=1), nn.BatchNorm2d(c)
            self.fc, self.out = nn.Linear(c * 3 * 3 + 1, c), nn.Linear(c, 4)

        def forward(self, x, size):
            x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
            x = F.max_pool2d(F.relu(self.b2(self.c2(x))), 2)
            x = F.max_pool2d(F.relu(self.b3(self.c3(x))), 2)
            x = torch.cat([x.flatten(1), size[:, None]], 1)
            return F.log_softmax(self.out(F.relu(self.fc(x))), 1)

    return PipNet()


def _augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Either end up (a card's lower pips stand on their heads), mirrored, lit, noised and
    shifted by up to 2 px."""
    n = len(x)
    turn = rng.random(n) < 0.5
    x[turn] = x[turn][:, ::-1, ::-1]
    flip = rng.random(n) < 0.5
    x[flip] = x[flip][:, :, ::-1]
    x = x * rng.uniform(0.6, 1.3, (n, 1, 1)) + rng.normal(0, 0.05, (n, 1, 1)) \
        + rng.normal(0, 0.04, x.shape)
    out = np.empty_like(x)
    for i in range(n):
        dx, dy = rng.integers(-2, 3, 2)
        out[i] = np.roll(np.roll(x[i], dx, 1), dy, 0)
    return out.astype(np.float32)


def card_pair_accuracy(lp: np.ndarray, ys: np.ndarray, px: np.ndarray, cards: np.ndarray,
                       min_px: float = MIN_PX) -> tuple[int, int]:
    """Cards whose pips (at least `min_px` wide) name the right suit of the card's colour:
    (right, cards with such pips)."""
    by_card = defaultdict(list)
    for k in np.flatnonzero(px >= min_px):
        by_card[int(cards[k])].append(k)
    right = 0
    for idx in by_card.values():
        total = lp[idx].sum(0)
        s = int(ys[idx[0]])
        right += total[s] > total[TWIN[s]]
    return right, len(by_card)


def mark_accuracy(log_probs, seed: int = 13, n_val: int = 16000, workers: int = 2,
                  log=print) -> dict:
    """The court cards of the validation decks read by their index marks, as the reader
    reads them (`log_probs(crops, sizes)`: N x 4): per smallest mark width, cards whose marks
    name the right suit of their colour, and the wrong ones. MARK_MIN_PX is chosen here."""
    from models.cards.train import VAL_DESIGNS

    xv, yv, sv, cv = pip_data(seed, n_val, list(VAL_DESIGNS), workers, log, marks=True)
    lp = log_probs(xv, sv) if len(xv) else np.zeros((0, 4))
    out = {}
    for min_px in (0.0, 4.0, 5.0, 6.0, 7.0):
        right, n = card_pair_accuracy(lp, yv, sv, cv, min_px)
        out[f"{min_px:g} px"] = {"right": int(right), "wrong": int(n - right)}
    log(f"validation courts by their index marks, per smallest width: {out}")
    return out


def train(seed: int = 11, n_cards: int = 60000, n_proc: int = 60000, n_val: int = 8000,
          epochs: int = 8, workers: int = 2, threads: int = 2, out: Path = HERE,
          log=print, width: int = 1) -> dict:
    import torch
    import torch.nn.functional as F

    from models.cards.dataset import PROCEDURAL
    from models.cards.train import VAL_DESIGNS, training_decks

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    t0 = time.time()
    xd, yd, sd, _ = pip_data(seed, n_cards, training_decks(), workers, log)
    xp, yp, sp, _ = pip_data(seed + 1, n_proc, [PROCEDURAL], workers, log)
    xv, yv, sv, cv = pip_data(seed + 2, n_val, list(VAL_DESIGNS), workers, log)
    x, y = np.concatenate([xd, xp]), np.concatenate([yd, yp])
    size = size_feature(np.concatenate([sd, sp]))
    net = make_model(width)
    batch = 256
    steps = epochs * (len(x) // batch)
    opt = torch.optim.AdamW(net.parameters(), 3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=steps)
    rng = np.random.default_rng(0)

    def net_log_probs(xs: np.ndarray, px: np.ndarray) -> np.ndarray:
        net.eval()
        xs_t, px_t = torch.from_numpy(xs[:, None]), torch.from_numpy(size_feature(px))
        with torch.no_grad():
            return torch.cat([net(xs_t[i:i + 4096], px_t[i:i + 4096])
                              for i in range(0, len(xs), 4096)]).numpy()

    for ep in range(epochs):
        t = time.time()
        net.train()
        perm = rng.permutation(len(x))
        total = 0.0
        for k in range(len(x) // batch):
            idx = perm[k * batch:(k + 1) * batch]
            xb = torch.from_numpy(_augment(x[idx].copy(), rng))[:, None]
            sb = torch.from_numpy(size[idx] + rng.normal(0, 0.05, len(idx)).astype(np.float32))
            loss = F.nll_loss(net(xb, sb), torch.from_numpy(y[idx]))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
        lp = net_log_probs(xv, sv)
        log(f"  epoch {ep + 1}/{epochs}: loss {total / (len(x) // batch):.3f}, validation pips "
            f"{(lp.argmax(1) == yv).mean():.4f} (four suits), {time.time() - t:.0f} s")
    lp = net_log_probs(xv, sv)
    by_size = {}
    for lo, hi in ((0, 4), (4, 6), (6, 9), (9, 14), (14, 1e9)):
        sel = (sv >= lo) & (sv < hi)
        by_size[f"{lo}-{hi if hi < 1e9 else 'up'} px"] = round(
            float((lp.argmax(1)[sel] == yv[sel]).mean()), 4)
    right, n = card_pair_accuracy(lp, yv, sv, cv)
    marks = mark_accuracy(net_log_probs, seed + 3, workers=workers, log=log)
    out.mkdir(parents=True, exist_ok=True)
    export_onnx(net, out / MODEL_FILE.name)
    meta = {"suits": SUITS, "patch": PATCH, "min_px": MIN_PX, "weight": 1.0, "pool": "mean",
            "mark_min_px": MARK_MIN_PX,
            "seed": seed,
            "train_pips": int(len(x)), "validation_pips": int(len(xv)),
            "validation_pips_right_by_size": by_size,
            "validation_cards_suit_of_colour_right": round(right / max(n, 1), 4),
            "validation_cards": n, "validation_court_marks": marks, "epochs": epochs,
            "width": width,
            "minutes": round((time.time() - t0) / 60, 1)}
    (out / META_FILE.name).write_text(json.dumps(meta, indent=1) + "\n")
    log(f"pip reader: validation cards' suit (of their colour) {right}/{n} right; pips by size "
        f"{by_size}; {out / MODEL_FILE.name}")
    return meta


def measure_marks(folder: Path = HERE, workers: int = 2, log=print) -> dict:
    """`mark_accuracy` of the pip reader in `folder`, written into its meta."""
    from scanner.pip_suits import PipReader

    reader = PipReader(folder / MODEL_FILE.name, folder / META_FILE.name)
    name_x, name_s = (i.name for i in reader.session.get_inputs())

    def onnx_log_probs(xs: np.ndarray, px: np.ndarray) -> np.ndarray:
        return np.concatenate([reader.session.run(None, {
            name_x: xs[i:i + 4096, None], name_s: size_feature(px[i:i + 4096])})[0]
            for i in range(0, len(xs), 4096)])

    meta = json.loads((folder / META_FILE.name).read_text())
    meta["validation_court_marks"] = mark_accuracy(onnx_log_probs, meta.get("seed", 11) + 3,
                                                   workers=workers, log=log)
    (folder / META_FILE.name).write_text(json.dumps(meta, indent=1) + "\n")
    return meta["validation_court_marks"]


def export_onnx(net, path: Path) -> None:
    import torch

    net.eval()
    torch.onnx.export(net, (torch.zeros(1, 1, PATCH, PATCH), torch.zeros(1)), str(path),
                      input_names=["pips", "size"], output_names=["log_probs"],
                      dynamic_axes={"pips": {0: "n"}, "size": {0: "n"}, "log_probs": {0: "n"}},
                      opset_version=17, dynamo=False)
