"""The index reader from scratch on one GPU, fed by CPU workers (session 23's stage 6 start).

The CPU recipe (`train.train`) sees 48,000 cards' crops a few times in an hour; a GPU lease of
a few minutes sees eleven times as many cards, each crop freshly augmented on the GPU on every
draw. Three steps:

    python -m models.cards.gpu_index pack DIR        # here: what the device needs (~32 MB)
    # on the device, DIR carried (python3 there has torch with CUDA, OpenCV, onnx):
    python3 -m models.cards.gpu_index train --pack DIR --workers 14 --gen-only 95 \\
        --train 360 --stop-gen 390               # writes index.pt, summary.json, log.txt to $OUT
    python -m models.cards.gpu_index export index.pt OUT_DIR [summary.json]   # here, CPU

`pack` holds the training and validation decks' rasters (lossless WebP plus the colour of the
transparent pixels WebP drops, so they decode to the renderer's PNG cache byte for byte) and the
fonts `procedural` draws with; never the held-out decks. `train` generates `train.MIX` with the
recipe's chunk seeds (the first chunks are the CPU recipe's data) for as long as `--stop-gen`
allows, and trains `train.make_model` on random batches of what exists so far (index crops, and
blank corners at 0.35 their share, as `train.train`), one-cycle over `--train` seconds. How
much data exists when depends on the machine, so a rerun is close, not bit-equal. `export`
writes `card_index.onnx` and picks temperature and threshold on the validation decks as
`train.recalibrate` does.

`train --nets N` trains N index readers side by side (each from its own start, on its own draws
of the same pool: the GPU waits on Python for nets this small, so a second costs few steps), as
`index.pt`, `index-1.pt`, ...; `export index.pt OUT summary.json --with index-1.pt` writes them
as one reader whose scores are the mean of theirs (`ensemble`), calibrated as one.

`train --face` does the same for the whole-card reader (`face.py`'s recipe: the training decks
and half as many procedural faces, 22-130 px wide, half with a piece-like blob, with the
recipe's chunk seeds; validation `face_data(seed + 1, ...)`), every face drawn alike, turned
end over half the time (`face.either_end_up`), and trains one model per `--looks`: `plain`
(that alone, the CPU recipe) and `photo` (plus `augment_gpu`, the recipe's `--augment`) side by
side on the same draws, batch 1024, one-cycle to 6e-3. `export --face face-LOOK.pt OUT
summary.json` writes card_face.onnx/.json, fits its temperature and picks its fused threshold
beside OUT's card_index (copied from the committed one where OUT has none) with
`face.calibrate`. Needs the 'train' extra; runtime never imports this module.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tarfile
import time
from pathlib import Path

import numpy as np

HELD_OUT = {"gnome-plastic", "gnome-simplistic", "gnome-tango"}


def pack(dest: Path, decks: list[str] | None = None, fonts: bool = True) -> None:
    """The decks' rasters (default: the training and validation decks) and the fonts, for a
    machine with neither rsvg nor the font packages. Builds the raster cache here first where
    it is missing."""
    import cv2

    from models.cards.train import VAL_DESIGNS, training_decks
    from models.renderer.assets import build_card_cache, cache_dir, webp_lossless

    decks = decks if decks is not None else training_decks() + VAL_DESIGNS
    if set(decks) & HELD_OUT:
        raise ValueError("the held-out decks are never trained on")
    build_card_cache(decks)
    fix = {}
    for d in decks:
        (dest / "rasters" / d).mkdir(parents=True, exist_ok=True)
        for f in sorted((cache_dir() / "cards" / d).glob("*.png")):
            buf, idx, val = webp_lossless(cv2.imread(str(f), cv2.IMREAD_UNCHANGED))
            (dest / "rasters" / d / f"{f.stem}.webp").write_bytes(buf.tobytes())
            fix[f"{d}/{f.stem}.idx"], fix[f"{d}/{f.stem}.val"] = idx, val
    np.savez_compressed(dest / "rasters" / "fixups.npz", **fix)
    files = sorted(str(p) for p in Path("/usr/share/fonts").rglob("*")
                   if p.suffix in (".ttf", ".otf")) if fonts else []
    if fonts:
        with tarfile.open(dest / "fonts.tar.xz", "w:xz") as tf:
            for f in files:
                tf.add(f)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    print(f"packed {len(decks)} decks and {len(files)} fonts into {dest}: {size / 1e6:.1f} MB")


def augment_gpu(x, generator):
    """`train.augment_index` without a Python loop or boolean indexing, for a GPU: the same
    draws (shift, scale, turn; a third blurred; gain and offset; a tenth grey; noise; a
    quarter with a patch erased)."""
    import torch

    from models.cards.train import blur_121, jitter_pose

    dev = x.device

    def rand(*shape):
        return torch.rand(*shape, generator=generator, device=dev)

    n, c, h, w = x.shape
    x = jitter_pose(x, rand)
    x = torch.where((rand(n) < 0.3).view(n, 1, 1, 1), blur_121(x), x)
    x = x * (1 + (rand(n, c, 1, 1) - 0.5) * 0.3) + (rand(n, 1, 1, 1) - 0.5) * 0.6
    x = torch.where((rand(n) < 0.1).view(n, 1, 1, 1),
                    x.mean(1, keepdim=True).expand(-1, c, -1, -1), x)
    x = x + torch.randn(x.shape, generator=generator, device=dev) * rand(n, 1, 1, 1) * 0.15
    erase = rand(n) < 0.25
    y0, x0 = (rand(n) * (h - 12)).long(), (rand(n) * (w - 8)).long()
    hh, ww = 6 + (rand(n) * 8).long(), 6 + (rand(n) * 6).long()
    val = rand(n) - 0.5
    ys, xs = torch.arange(h, device=dev).view(1, h), torch.arange(w, device=dev).view(1, w)
    rows = (ys >= y0[:, None]) & (ys < (y0 + hh)[:, None])
    cols = (xs >= x0[:, None]) & (xs < (x0 + ww)[:, None])
    patch = (rows[:, :, None] & cols[:, None, :] & erase[:, None, None])[:, None]
    return torch.where(patch, val.view(n, 1, 1, 1), x)


def one_cycle(p: float, top: float) -> tuple[float, float]:
    """torch's OneCycleLR (pct_start 0.3, div 25, final div 1e4, beta1 0.95 -> 0.85 -> 0.95)
    as a function of the share `p` of the training time gone: (lr, beta1)."""
    lo, end = top / 25, top / 25 / 1e4
    p = min(max(p, 0.0), 1.0)
    if p < 0.3:
        c = (1 - math.cos(math.pi * p / 0.3)) / 2
        return lo + (top - lo) * c, 0.95 - 0.10 * c
    c = (1 + math.cos(math.pi * (p - 0.3) / 0.7)) / 2
    return end + (top - end) * c, 0.85 + 0.10 * (1 - c)


# -- on the device ------------------------------------------------------------------------------

_FONT_DIR: Path | None = None


def _init_worker(font_dir: Path | None = None) -> None:
    import cv2

    cv2.setNumThreads(1)
    from models.cards import procedural

    if font_dir is not None:
        procedural.FONT_DIR = font_dir


def _unpack_deck(args: tuple[str, str, str]) -> int:
    import cv2

    from models.renderer.assets import from_webp_lossless

    pack_dir, cache, deck = (Path(a) for a in args)
    fix = np.load(pack_dir / "rasters" / "fixups.npz")
    out = cache / "cards" / deck.name
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for f in sorted((pack_dir / "rasters" / deck.name).glob("*.webp")):
        img = from_webp_lossless(np.fromfile(str(f), np.uint8),
                                 fix[f"{deck.name}/{f.stem}.idx"],
                                 fix[f"{deck.name}/{f.stem}.val"])
        cv2.imwrite(str(out / f"{f.stem}.png"), img, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        n += 1
    return n


def _chunk(a: tuple) -> tuple[np.ndarray, np.ndarray]:
    from models.cards.dataset import make_set

    seed, n, designs, width = a
    return make_set(seed, n, list(designs), width)


def normalise_gpu(xb):
    """`scanner.rectify.normalise` on the device: uint8 N x H x W x 3 -> float N x 3 x H x W."""
    x = xb.permute(0, 3, 1, 2).float()
    f = x.reshape(len(x), -1)
    f = f - f.mean(1, keepdim=True)
    return (f / (f.pow(2).mean(1, keepdim=True).sqrt() + 8.0)).reshape(x.shape)


def _start_on_device(args: argparse.Namespace):
    """The fonts unpacked, the log opened in $OUT and the CPU workers' pool made: (start time,
    $OUT, log, pool)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    t0 = time.time()
    out = Path(os.environ.get("OUT", "/tmp/gpu_out"))
    log = run_log(out, t0)
    os.environ["ROYAL_TABLE_CACHE"] = args.cache
    font_root = Path(args.fonts)
    if not (font_root / "usr").exists():
        with tarfile.open(Path(args.pack) / "fonts.tar.xz") as tf:
            tf.extractall(font_root, filter="data")
    font_dir = font_root / "usr" / "share" / "fonts"
    _init_worker(font_dir)
    # spawned, not forked, as `models.pieces.gpu_train`'s: a child forked from a process
    # that has run OpenCV's or torch's thread pools can inherit a held lock and wait for ever
    ex = ProcessPoolExecutor(args.workers, mp_context=mp.get_context("spawn"),
                             initializer=_init_worker, initargs=(font_dir,))
    return t0, out, log, ex


def run_log(out: Path, t0: float):
    """A device run's log: each line stamped with the seconds since `t0`, printed and
    appended to `out`/log.txt (made if need be) at once, so a run cut short keeps its log;
    its `close()` closes the file (a run inside another process, as tests make)."""
    out.mkdir(parents=True, exist_ok=True)
    log_file = open(out / "log.txt", "a")  # noqa: SIM115 (open for the whole run)

    def log(*a) -> None:
        s = f"[{time.time() - t0:6.1f}s] " + " ".join(str(x) for x in a)
        print(s, flush=True)
        log_file.write(s + "\n")
        log_file.flush()

    log.close = log_file.close
    return log


def save_state(state: dict, path: Path) -> None:
    """A state dict saved whole or not at all (the lease may end mid-write)."""
    import torch

    torch.save({k: v.detach().cpu().contiguous() for k, v in state.items()},
               path.with_suffix(".tmp"))
    os.replace(path.with_suffix(".tmp"), path)


class DevicePool:
    """What the CPU workers made, on the GPU as it comes: uint8 images (N x H x W x 3) with
    their rank and suit labels; with `blank` (the no-index class), where the index crops and
    the blank corners lie, so a batch draws them in the CPU recipe's shares."""

    def __init__(self, cap: int, size: tuple[int, int], dev, blank: int | None = None):
        import torch

        self.cap, self.dev, self.blank = cap, dev, blank
        self.images = torch.empty((cap, *size, 3), dtype=torch.uint8, device=dev)
        self.ranks = torch.empty(cap, dtype=torch.int64, device=dev)
        self.suits = torch.empty(cap, dtype=torch.int64, device=dev)
        self.at_index = torch.empty(cap if blank is not None else 0, dtype=torch.int64,
                                    device=dev)
        self.at_blank = torch.empty(cap if blank is not None else 0, dtype=torch.int64,
                                    device=dev)
        self.n = self.n_index = self.n_blank = 0
        self.stopped = False
        self._taken: set[int] = set()

    def ingest(self, futures, log) -> None:
        """Every finished chunk not taken yet (x, y), while there is room."""
        import torch

        from models.cards.train import factor_labels

        for f in futures:
            if id(f) in self._taken or not f.done() or f.cancelled():
                continue
            self._taken.add(id(f))
            if f.exception() is not None:
                log("chunk failed:", repr(f.exception()))
                continue
            x, y = f.result()
            f._result = None  # the pool on the GPU holds the images now
            a, n = self.n, len(y)
            if a + n > self.cap:
                continue
            self.images[a:a + n] = torch.from_numpy(x).to(self.dev)
            r, s = factor_labels(y)
            self.ranks[a:a + n] = torch.from_numpy(r).to(self.dev)
            self.suits[a:a + n] = torch.from_numpy(s).to(self.dev)
            if self.blank is not None:
                idx = np.arange(a, a + n)
                ii = torch.from_numpy(idx[y != self.blank]).to(self.dev)
                bb = torch.from_numpy(idx[y == self.blank]).to(self.dev)
                self.at_index[self.n_index:self.n_index + len(ii)] = ii
                self.at_blank[self.n_blank:self.n_blank + len(bb)] = bb
                self.n_index += len(ii)
                self.n_blank += len(bb)
            self.n += n

    def tend(self, futures, log, stop: bool) -> None:
        """Take in what is made; with `stop`, cancel what is not made yet (once)."""
        self.ingest(futures, log)
        if stop and not self.stopped:
            for f in futures:
                f.cancel()
            self.stopped = True
            log(f"generation stopped: {self.n} images")

    def draw(self, batch: int, generator, blank_share: float = 0.35):
        """A batch's indices: uniform, or index crops and blank corners as `train.train`'s
        epochs hold them (every index crop, `blank_share` of the blanks)."""
        import torch

        if self.blank is None:
            return torch.randint(self.n, (batch,), device=self.dev, generator=generator)
        k = int(round(batch * self.n_index / (self.n_index + blank_share * self.n_blank)))
        return torch.cat([
            self.at_index[torch.randint(self.n_index, (k,), device=self.dev,
                                        generator=generator)],
            self.at_blank[torch.randint(self.n_blank, (batch - k,), device=self.dev,
                                        generator=generator)]])


def train_on_device(args: argparse.Namespace) -> None:
    """See the module's docstring. Writes into $OUT: log.txt, index.pt (every
    --ckpt-every s and at the end), summary.json."""
    t0, out, log, ex = _start_on_device(args)
    pack_dir = Path(args.pack)
    import torch
    import torch.nn.functional as F

    from models.cards.dataset import NONE, PROCEDURAL
    from models.cards.train import (
        MIX,
        VAL_DESIGNS,
        fit_temperature,
        make_model,
        pick_threshold,
        seeded_chunks,
        training_decks,
    )
    from scanner.card_reader import softmax
    from scanner.rectify import normalise

    decks = training_decks()
    assert not set(decks) & HELD_OUT
    n_png = sum(ex.map(_unpack_deck, [(str(pack_dir), args.cache, d)
                                      for d in decks + VAL_DESIGNS]))
    log(f"{n_png} rasters unpacked; {len(decks)} training decks")
    val_chunks = [(s, n, tuple(VAL_DESIGNS), w)
                  for s, n, _, w in seeded_chunks(args.seed + 1, args.n_val, VAL_DESIGNS,
                                                  MIX[0][3])]
    parts = []
    for offset, share, what, width in MIX:
        designs = tuple(decks) if what == "decks" else (PROCEDURAL,)
        ch = [(s, n, designs, width) for s, n, *_ in
              seeded_chunks(args.seed + offset, int(round(args.n_max * share)), designs, width)]
        parts.append([(len(parts), i / len(ch), c) for i, c in enumerate(ch)])
    # the three parts interleaved in proportion, so that whatever is made by any time is a mix
    order = [c for _, _, c in sorted((p for part in parts for p in part),
                                     key=lambda t: (t[1], t[0]))]
    futs_val = [ex.submit(_chunk, c) for c in val_chunks]
    futs = [ex.submit(_chunk, c) for c in order]

    dev = torch.device(args.device)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    pool = DevicePool(args.cap, (52, 32), dev, blank=NONE)

    xva, yva = (np.concatenate(v) for v in zip(*(f.result() for f in futs_val), strict=True))
    Xva = torch.from_numpy(normalise(xva)).to(dev)
    log(f"validation: {len(yva)} crops of {args.n_val} cards of {VAL_DESIGNS}")
    # --nets N: N readers from different starts, each on its own draws of the same pool, in
    # the same seconds (the GPU waits on Python for nets this small); exported as one
    # ensemble (`export --with`) or alone
    models, opts, gens = [], [], []
    for k in range(args.nets):
        torch.manual_seed(args.seed + 1000 * k)
        models.append(make_model().to(dev).to(memory_format=torch.channels_last))
        opts.append(torch.optim.AdamW(models[-1].parameters(), lr=args.lr, weight_decay=1e-4))
        gens.append(torch.Generator(device=dev).manual_seed(args.seed + 1000 * k))

    def val_logits(model) -> np.ndarray:
        model.eval()
        with torch.no_grad():
            lv = torch.cat([model(Xva[i:i + 4096].contiguous(memory_format=torch.channels_last))
                            for i in range(0, len(Xva), 4096)])
        model.train()
        return lv.float().cpu().numpy()

    def save() -> None:
        for k, model in enumerate(models):
            save_state(model.state_dict(), out / ("index.pt" if k == 0 else f"index-{k}.pt"))

    # a batch needs index crops and blank corners both: wait for the first chunk if need be
    while time.time() < t0 + args.gen_only or not (pool.n_index and pool.n_blank):
        time.sleep(1.0)
        pool.ingest(futs, log)
    log(f"training starts on {pool.n} crops of {pool.n // 4} cards, {args.nets} net(s)")
    step = samples = 0
    t_start = last_ck = last_ev = time.time()
    loss_sum, n_loss = 0.0, 0
    while (now := time.time()) < t_start + args.train:
        lr, beta1 = one_cycle((now - t_start) / args.train, args.lr)
        if step % 20 == 0:
            pool.tend(futs, log, stop=now - t0 > args.stop_gen)
        for model, opt, gk in zip(models, opts, gens, strict=True):
            sel = pool.draw(args.batch, gk)
            x = augment_gpu(normalise_gpu(pool.images[sel]), gk).contiguous(
                memory_format=torch.channels_last)
            for group in opt.param_groups:
                group["lr"], group["betas"] = lr, (beta1, 0.999)
            r, s = model.heads(x)
            loss = F.cross_entropy(r, pool.ranks[sel], label_smoothing=0.02) + \
                F.cross_entropy(s, pool.suits[sel], ignore_index=-100, label_smoothing=0.02)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            loss_sum, n_loss = loss_sum + loss.detach(), n_loss + 1
        step, samples = step + 1, samples + args.batch
        if now - last_ev > 30:
            lvs = [val_logits(m) for m in models]
            accs = [float((lv.argmax(1) == yva).mean()) for lv in lvs]
            ens = float((np.mean(lvs, 0).argmax(1) == yva).mean())
            log(f"step {step} lr {lr:.2e} pool {pool.n} crops: loss "
                f"{float(loss_sum) / n_loss:.4f}, validation crop accuracy "
                + " ".join(f"{a:.4f}" for a in accs)
                + (f", together {ens:.4f}" if len(models) > 1 else ""))
            last_ev, loss_sum, n_loss = now, 0.0, 0
        if now - last_ck > args.ckpt_every:
            last_ck = now
            save()
    ex.shutdown(wait=False, cancel_futures=True)
    save()
    lvs = [val_logits(m) for m in models]
    per_net = []
    for lv in lvs + ([np.mean(lvs, 0)] if len(lvs) > 1 else []):
        T = fit_temperature(lv, yva)
        thr, stats = pick_threshold(softmax(lv / T), yva)
        per_net.append({"temperature": T, "threshold": thr, **stats})
    summary = {"steps": step, "batch": args.batch, "samples": samples, "pool_crops": pool.n,
               "pool_cards": pool.n // 4, "train_s": args.train, "lr": args.lr,
               "seed": args.seed, "workers": args.workers, "nets": args.nets, **per_net[0]}
    if len(per_net) > 1:
        summary["models"] = per_net
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    log(f"done: {step} steps, {samples} samples a net from {pool.n // 4} cards; "
        + "; ".join(str(s) for s in per_net))


# -- the whole-card reader (`face.py`'s recipe) on the device -------------------------------------

# what each whole-card model sees on every draw: face.py's CPU recipe turns half the batch end
# over (`face.either_end_up`); its `--augment` option adds the index reader's look
# (`train.augment_index`, here `augment_gpu`): both are trained side by side on the same draws
FACE_LOOKS = ("plain", "photo")


def either_end_up_gpu(x, generator):
    """`face.either_end_up` on the device: half the batch turned 180 degrees."""
    import torch

    flip = torch.rand(len(x), generator=generator, device=x.device) < 0.5
    return torch.where(flip[:, None, None, None], x.flip(2, 3), x)


def face_looks(names: list[str], generator) -> dict:
    """name -> the batch augmentation of that model (after `either_end_up_gpu`, which the
    models share)."""
    if set(names) - set(FACE_LOOKS):
        raise ValueError(f"looks are {FACE_LOOKS}")
    return {n: (lambda x: x) if n == "plain" else (lambda x: augment_gpu(x, generator))
            for n in names}


def face_chunks(seed: int, n_max: int, decks: list[str]) -> list[tuple]:
    """`face.train`'s data, made without end: the training decks (seed) and half as many
    procedural faces (seed + 100), in chunks of 500 with the recipe's chunk seeds (its first
    chunks are the CPU recipe's data), interleaved in proportion so that whatever is made by
    any time is a mix."""
    from models.cards.dataset import PROCEDURAL
    from models.cards.face import FACE_SIZE, WIDTHS
    from models.cards.train import seeded_chunks

    if (n_max + 499) // 500 > 1000:  # seed * 1000 + i would reach the validation seed's chunks
        raise ValueError("at most 500,000 deck cards")
    parts = [seeded_chunks(seed, n_max, tuple(decks), WIDTHS, FACE_SIZE),
             seeded_chunks(seed + 100, n_max // 2, (PROCEDURAL,), WIDTHS, FACE_SIZE)]
    return [c for _, _, c in sorted(((i / len(ch), k, c) for k, ch in enumerate(parts)
                                     for i, c in enumerate(ch)), key=lambda t: (t[0], t[1]))]


def train_face_on_device(args: argparse.Namespace) -> None:
    """`face.train` on the device: the whole-card data made by the CPU workers for as long as
    --stop-gen allows, and one model per --looks trained on random batches of all of it made
    so far (face.py draws every face alike), either end up and freshly looked at on every draw,
    one-cycle over --train s. Writes into $OUT: log.txt, face-LOOK.pt (every --ckpt-every s and
    at the end), summary.json."""
    t0, out, log, ex = _start_on_device(args)
    import torch
    import torch.nn.functional as F

    from models.cards.face import FACE_SIZE, WIDTHS
    from models.cards.face import _face_chunk as face_chunk
    from models.cards.train import (
        VAL_DESIGNS,
        fit_temperature,
        make_model,
        seeded_chunks,
        training_decks,
    )

    decks = training_decks()
    assert not set(decks) & HELD_OUT
    n_png = sum(ex.map(_unpack_deck, [(str(args.pack), args.cache, d)
                                      for d in decks + VAL_DESIGNS]))
    log(f"{n_png} rasters unpacked; {len(decks)} training decks; faces {FACE_SIZE} (w, h)")
    # face.train's validation set: face_data(seed + 1, n_val, VAL_DESIGNS)
    futs_val = [ex.submit(face_chunk, c)
                for c in seeded_chunks(args.seed + 1, args.n_val, VAL_DESIGNS, WIDTHS, FACE_SIZE)]
    futs = [ex.submit(face_chunk, c) for c in face_chunks(args.seed, args.n_max, decks)]

    dev = torch.device(args.device)
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    g = torch.Generator(device=dev).manual_seed(args.seed)
    w, h = FACE_SIZE
    pool = DevicePool(args.cap, (h, w), dev)

    xva, yva = (np.concatenate(v) for v in zip(*(f.result() for f in futs_val), strict=True))
    Xva = normalise_gpu(torch.from_numpy(xva).to(dev)).contiguous(
        memory_format=torch.channels_last)
    log(f"validation: {len(yva)} faces of {VAL_DESIGNS}; torch {torch.__version__} on "
        + (torch.cuda.get_device_name(dev) if dev.type == "cuda" else str(dev)))
    names = args.looks.split(",")
    looks = face_looks(names, g)
    models = {n: make_model((h, w)).to(dev).to(memory_format=torch.channels_last)
              for n in names}
    opts = {n: torch.optim.AdamW(m.parameters(), lr=args.lr, weight_decay=1e-4)
            for n, m in models.items()}

    def val_logits(m) -> np.ndarray:
        m.eval()
        with torch.no_grad():
            lv = torch.cat([m(Xva[i:i + 4096]) for i in range(0, len(Xva), 4096)])
        m.train()
        return lv.float().cpu().numpy()

    def save() -> None:
        for n, m in models.items():
            save_state(m.state_dict(), out / f"face-{n}.pt")

    while time.time() < t0 + args.gen_only or pool.n == 0:
        time.sleep(1.0)
        pool.ingest(futs, log)
    pool.ingest(futs, log)
    log(f"training {names} starts on {pool.n} faces, batch {args.batch}, lr {args.lr}")
    step = samples = 0
    t_start = last_ck = last_ev = time.time()
    loss_sum = {n: 0.0 for n in names}
    n_loss = 0
    while (now := time.time()) < t_start + args.train:
        lr, beta1 = one_cycle((now - t_start) / args.train, args.lr)
        if step % 20 == 0:
            pool.tend(futs, log, stop=now - t0 > args.stop_gen)
        sel = pool.draw(args.batch, g)
        x = either_end_up_gpu(normalise_gpu(pool.images[sel]), g)
        for n, m in models.items():
            for group in opts[n].param_groups:
                group["lr"], group["betas"] = lr, (beta1, 0.999)
            r, s = m.heads(looks[n](x).contiguous(memory_format=torch.channels_last))
            loss = F.cross_entropy(r, pool.ranks[sel], label_smoothing=0.02) + \
                F.cross_entropy(s, pool.suits[sel], ignore_index=-100, label_smoothing=0.02)
            opts[n].zero_grad(set_to_none=True)
            loss.backward()
            opts[n].step()
            loss_sum[n] = loss_sum[n] + loss.detach()
        n_loss += 1
        step, samples = step + 1, samples + args.batch
        if now - last_ev > 30:
            accs = {n: float((val_logits(m).argmax(1) == yva).mean()) for n, m in models.items()}
            log(f"step {step} lr {lr:.2e} pool {pool.n} faces "
                f"({samples / (now - t_start):.0f} samples/s): " + "; ".join(
                    f"{n} loss {float(loss_sum[n]) / n_loss:.4f} val face acc {accs[n]:.4f}"
                    for n in names))
            last_ev, n_loss = now, 0
            loss_sum = {n: 0.0 for n in names}
        if now - last_ck > args.ckpt_every:
            last_ck = now
            save()
    ex.shutdown(wait=False, cancel_futures=True)
    save()
    summary = {"steps": step, "batch": args.batch, "samples": samples, "pool_faces": pool.n,
               "passes": samples / max(pool.n, 1), "train_s": args.train, "lr": args.lr,
               "seed": args.seed, "workers": args.workers, "looks": names, "models": {}}
    for n, m in models.items():
        lv = val_logits(m)
        summary["models"][n] = {"temperature": fit_temperature(lv, yva),
                                "val_face_accuracy": float((lv.argmax(1) == yva).mean())}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    log(f"done: {step} steps, {samples} samples from {pool.n} faces; {summary['models']}")


def ensemble(models):
    """Readers trained apart read as one: the mean of their 55 log-probability scores (a
    geometric mean of their beliefs, which the reader's softmax renormalises), so the
    scanner's interface and calibration stay as for one net."""
    import torch
    import torch.nn as nn

    class Ensemble(nn.Module):
        def __init__(self):
            super().__init__()
            self.nets = nn.ModuleList(models)

        def forward(self, x):
            return torch.stack([m(x) for m in self.nets]).mean(0)

    return Ensemble()


def export(pt: Path, out: Path, summary: Path | None = None,
           others: list[Path] | None = None) -> dict:
    """The trained state dict as card_index.onnx + card_index.json in `out`, temperature and
    threshold picked on the validation decks as `train.recalibrate` does; with `others`, the
    ensemble of it and those (`ensemble`)."""
    import onnxruntime as ort
    import torch

    from models.cards.dataset import CLASSES, PROCEDURAL
    from models.cards.train import (
        MIX,
        VAL_DESIGNS,
        build_data,
        export_onnx,
        fit_temperature,
        make_model,
        pick_threshold,
        run_batched,
        training_decks,
    )
    from scanner.card_reader import softmax
    from scanner.rectify import CROP_H, CROP_W, normalise

    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    nets = []
    for f in [pt, *(others or [])]:
        nets.append(make_model())
        nets[-1].load_state_dict(torch.load(f, weights_only=True))
    model = nets[0] if len(nets) == 1 else ensemble(nets)
    export_onnx(model, (CROP_H, CROP_W), out / "card_index.onnx", "crops")
    xva, yva = build_data(8, 3000, VAL_DESIGNS, 1)  # the recipe's validation set (seed 7 + 1)
    sess = ort.InferenceSession(str(out / "card_index.onnx"), providers=["CPUExecutionProvider"])
    lv = run_batched(sess, normalise(xva))
    T = fit_temperature(lv, yva)
    thr, stats = pick_threshold(softmax(lv / T), yva)
    run = json.loads(summary.read_text()) if summary else {}
    meta = {"classes": CLASSES, "crop": [CROP_H, CROP_W], "temperature": T, "threshold": thr,
            "outputs": "log-probabilities of rank x suit (two heads)"
            + (f", the mean of {len(nets)} nets'" if len(nets) > 1 else ""), "seed": 7,
            "mix": [list(m) for m in MIX], "n_val": 3000,
            "augment": "models.cards.gpu_index.augment_gpu", "init": None,
            "train_designs": training_decks() + [PROCEDURAL], "val_designs": VAL_DESIGNS,
            "gpu_run": {k: v for k, v in run.items()
                        if k not in ("temperature", "threshold", "models")
                        and not k.startswith("val_")},
            **stats}
    (out / "card_index.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"temperature {T:.3f}, threshold {thr:.6f}, {stats}")
    return meta


def export_face(pt: Path, out: Path, summary: Path | None = None, seed: int = 11,
                n_val: int = 3000, index: Path | None = None, workers: int = 1,
                threads: int = 1) -> dict:
    """A whole-card state dict as card_face.onnx + card_face.json in `out`, its temperature
    fitted on face.train's validation faces, then its fused threshold picked beside the index
    reader in `out` by `face.calibrate` (copied there from `index`, default the committed one,
    where `out` has none)."""
    import shutil

    import onnxruntime as ort
    import torch

    from models.cards import face
    from models.cards.dataset import CLASSES, PROCEDURAL
    from models.cards.train import (
        HERE,
        VAL_DESIGNS,
        export_onnx,
        fit_temperature,
        make_model,
        run_batched,
        training_decks,
    )
    from scanner.rectify import normalise

    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(threads)
    w, h = face.FACE_SIZE
    model = make_model((h, w))
    model.load_state_dict(torch.load(pt, weights_only=True))
    export_onnx(model, (h, w), out / face.MODEL_FILE.name, "cards")
    xva, yva = face.face_data(seed + 1, n_val, VAL_DESIGNS, workers=workers)
    sess = ort.InferenceSession(str(out / face.MODEL_FILE.name),
                                providers=["CPUExecutionProvider"])
    lv = run_batched(sess, normalise(xva))
    T = fit_temperature(lv, yva)
    run = json.loads(summary.read_text()) if summary else {}
    look = pt.stem.removeprefix("face-")
    meta = {"classes": CLASSES, "size": [w, h], "temperature": T, "seed": seed,
            "n_cards": run.get("pool_faces"), "epochs": None, "lr": run.get("lr"),
            "widths": list(face.WIDTHS), "init": None,
            "augment": "models.cards.gpu_index.either_end_up_gpu"
            + (" + augment_gpu" if look == "photo" else ""),
            "train_designs": training_decks() + [PROCEDURAL], "val_designs": VAL_DESIGNS,
            "val_face_accuracy": float((lv.argmax(1) == yva).mean()),
            "gpu_run": {k: v for k, v in run.items() if k != "models"} | {"look": look}}
    (out / face.META_FILE.name).write_text(json.dumps(meta, indent=1) + "\n")
    print(f"temperature {T:.3f}, validation face accuracy {meta['val_face_accuracy']:.4f}")
    for f in ("card_index.onnx", "card_index.json"):
        if not (out / f).exists():
            shutil.copy(Path(index or HERE) / f, out / f)
    return face.calibrate(out, seed + 2, n_val, threads)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m models.cards.gpu_index",
                                description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    a = sub.add_parser("pack", help="pack the decks' rasters and the fonts into DIR")
    a.add_argument("dir")
    t = sub.add_parser("train", help="on the GPU machine: generate and train")
    t.add_argument("--pack", required=True, help="the folder `pack` wrote (carried)")
    t.add_argument("--workers", type=int, default=14)
    t.add_argument("--gen-only", type=float, default=95.0, help="s from start: training begins")
    t.add_argument("--train", type=float, default=360.0, help="s of training")
    t.add_argument("--stop-gen", type=float, default=390.0, help="s from start: no new chunks")
    t.add_argument("--cap", type=int, help="crops the GPU pool holds (default 5,000,000)")
    t.add_argument("--n-max", type=int, help="cards of the largest mix part (480,000)")
    t.add_argument("--n-val", type=int, default=3000)
    t.add_argument("--seed", type=int, help="7")
    t.add_argument("--batch", type=int, help="256")
    t.add_argument("--lr", type=float, help="3e-3")
    t.add_argument("--nets", type=int, default=1, help="index readers trained side by side, "
                   "each from its own start on its own draws (index.pt, index-1.pt, ...)")
    t.add_argument("--device", default="cuda")
    t.add_argument("--ckpt-every", type=float, default=60.0)
    t.add_argument("--cache", default="/tmp/rtcache/assets")
    t.add_argument("--fonts", default="/tmp/rtfonts")
    t.add_argument("--face", action="store_true",
                   help="the whole-card reader (face.py's recipe) instead of the index reader: "
                   "defaults then --seed 11, --n-max 400000 deck cards (and half as many "
                   "procedural), --cap 700000 faces, --batch 1024, --lr 6e-3")
    t.add_argument("--looks", default="plain,photo",
                   help=f"with --face: the models trained side by side, of {FACE_LOOKS}")
    e = sub.add_parser("export", help="state dict -> card_index.onnx/.json in OUT")
    e.add_argument("pt")
    e.add_argument("out")
    e.add_argument("summary", nargs="?")
    e.add_argument("--with", dest="others", nargs="+", type=Path, default=[],
                   help="more index state dicts: export the ensemble of all (mean scores)")
    e.add_argument("--face", action="store_true",
                   help="a whole-card state dict (face-LOOK.pt) -> card_face.onnx/.json in "
                   "OUT, fused threshold picked beside OUT's card_index (copied from --index)")
    e.add_argument("--index", help="with --face: the index reader's folder (default: the "
                   "committed one)")
    e.add_argument("--workers", type=int, default=1)
    e.add_argument("--threads", type=int, default=1)
    args = p.parse_args(argv)
    if args.what == "pack":
        pack(Path(args.dir))
    elif args.what == "train" and args.face:
        for k, v in {"seed": 11, "n_max": 400_000, "cap": 700_000, "batch": 1024,
                     "lr": 6e-3}.items():
            if getattr(args, k) is None:
                setattr(args, k, v)
        train_face_on_device(args)
    elif args.what == "train":
        for k, v in {"seed": 7, "n_max": 480_000, "cap": 5_000_000, "batch": 256,
                     "lr": 3e-3}.items():
            if getattr(args, k) is None:
                setattr(args, k, v)
        train_on_device(args)
    elif args.face:
        export_face(Path(args.pt), Path(args.out), Path(args.summary) if args.summary else None,
                    index=Path(args.index) if args.index else None, workers=args.workers,
                    threads=args.threads)
    else:
        export(Path(args.pt), Path(args.out), Path(args.summary) if args.summary else None,
               args.others)
    return 0


if __name__ == "__main__":
    sys.exit(main())
