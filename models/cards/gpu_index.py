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
`train.recalibrate` does. Needs the 'train' extra; runtime never imports this module.
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
    from models.renderer.assets import build_card_cache, cache_dir

    decks = decks if decks is not None else training_decks() + VAL_DESIGNS
    if set(decks) & HELD_OUT:
        raise ValueError("the held-out decks are never trained on")
    build_card_cache(decks)
    fix = {}
    for d in decks:
        (dest / "rasters" / d).mkdir(parents=True, exist_ok=True)
        for f in sorted((cache_dir() / "cards" / d).glob("*.png")):
            img = cv2.imread(str(f), cv2.IMREAD_UNCHANGED)
            ok, buf = cv2.imencode(".webp", img, [cv2.IMWRITE_WEBP_QUALITY, 101])
            (dest / "rasters" / d / f"{f.stem}.webp").write_bytes(buf.tobytes())
            back = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED).reshape(-1, 4)
            diff = np.nonzero((back != img.reshape(-1, 4)).any(1))[0]
            fix[f"{d}/{f.stem}.idx"] = diff.astype(np.int32)
            fix[f"{d}/{f.stem}.val"] = img.reshape(-1, 4)[diff]
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
    import torch.nn.functional as F

    dev = x.device

    def rand(*shape):
        return torch.rand(*shape, generator=generator, device=dev)

    n, c, h, w = x.shape
    ang = (rand(n) - 0.5) * math.radians(12)
    sc = 1 + (rand(n) - 0.5) * 0.24
    tx, ty = (rand(n) - 0.5) * 0.2, (rand(n) - 0.5) * 0.12
    cos, sin = torch.cos(ang) / sc, torch.sin(ang) / sc
    theta = torch.stack([torch.stack([cos, -sin * h / w, tx], 1),
                         torch.stack([sin * w / h, cos, ty], 1)], 1)
    x = F.grid_sample(x, F.affine_grid(theta, [n, c, h, w], align_corners=False),
                      padding_mode="border", align_corners=False)
    k = torch.tensor([0.25, 0.5, 0.25], device=dev)
    xb = F.conv2d(F.pad(x, (1, 1, 0, 0), mode="replicate"),
                  k.view(1, 1, 1, 3).repeat(c, 1, 1, 1), groups=c)
    xb = F.conv2d(F.pad(xb, (0, 0, 1, 1), mode="replicate"),
                  k.view(1, 1, 3, 1).repeat(c, 1, 1, 1), groups=c)
    x = torch.where((rand(n) < 0.3).view(n, 1, 1, 1), xb, x)
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

    pack_dir, cache, deck = (Path(a) for a in args)
    fix = np.load(pack_dir / "rasters" / "fixups.npz")
    out = cache / "cards" / deck.name
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for f in sorted((pack_dir / "rasters" / deck.name).glob("*.webp")):
        img = cv2.imdecode(np.fromfile(str(f), np.uint8), cv2.IMREAD_UNCHANGED)
        flat = img.reshape(-1, 4)
        flat[fix[f"{deck.name}/{f.stem}.idx"]] = fix[f"{deck.name}/{f.stem}.val"]
        cv2.imwrite(str(out / f"{f.stem}.png"), img, [cv2.IMWRITE_PNG_COMPRESSION, 1])
        n += 1
    return n


def _chunk(a: tuple) -> tuple[np.ndarray, np.ndarray]:
    from models.cards.dataset import make_set

    seed, n, designs, width = a
    return make_set(seed, n, list(designs), width)


def train_on_device(args: argparse.Namespace) -> None:
    """See the module's docstring. Writes into $OUT: log.txt, index.pt (every
    --ckpt-every s and at the end), summary.json."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    t0 = time.time()
    out = Path(os.environ.get("OUT", "/tmp/gpu_out"))
    out.mkdir(parents=True, exist_ok=True)
    log_file = open(out / "log.txt", "a")  # noqa: SIM115 (open for the whole run)

    def log(*a):
        s = f"[{time.time() - t0:6.1f}s] " + " ".join(str(x) for x in a)
        print(s, flush=True)
        log_file.write(s + "\n")
        log_file.flush()

    os.environ["ROYAL_TABLE_CACHE"] = args.cache
    pack_dir = Path(args.pack)
    font_root = Path(args.fonts)
    if not (font_root / "usr").exists():
        with tarfile.open(pack_dir / "fonts.tar.xz") as tf:
            tf.extractall(font_root, filter="data")
    font_dir = font_root / "usr" / "share" / "fonts"
    _init_worker(font_dir)
    import torch
    import torch.nn.functional as F

    from models.cards.dataset import NONE, PROCEDURAL
    from models.cards.train import (
        MIX,
        VAL_DESIGNS,
        factor_labels,
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
    ex = ProcessPoolExecutor(args.workers, mp_context=mp.get_context("fork"),
                             initializer=_init_worker, initargs=(font_dir,))
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
    g = torch.Generator(device=dev).manual_seed(args.seed)
    cap = args.cap
    pool = torch.empty((cap, 52, 32, 3), dtype=torch.uint8, device=dev)
    ranks = torch.empty(cap, dtype=torch.int64, device=dev)
    suits = torch.empty(cap, dtype=torch.int64, device=dev)
    at_index = torch.empty(cap, dtype=torch.int64, device=dev)
    at_blank = torch.empty(cap, dtype=torch.int64, device=dev)
    st = {"n": 0, "ni": 0, "nb": 0, "cards": 0}
    taken: set[int] = set()

    def ingest() -> None:
        for f in futs:
            if id(f) in taken or not f.done() or f.cancelled():
                continue
            taken.add(id(f))
            if f.exception() is not None:
                log("chunk failed:", repr(f.exception()))
                continue
            x, y = f.result()
            f._result = None  # the pool on the GPU holds the crops now
            a, n = st["n"], len(y)
            if a + n > cap:
                continue
            pool[a:a + n] = torch.from_numpy(x).to(dev)
            r, s = factor_labels(y)
            ranks[a:a + n] = torch.from_numpy(r).to(dev)
            suits[a:a + n] = torch.from_numpy(s).to(dev)
            idx = np.arange(a, a + n)
            ii = torch.from_numpy(idx[y != NONE]).to(dev)
            bb = torch.from_numpy(idx[y == NONE]).to(dev)
            at_index[st["ni"]:st["ni"] + len(ii)] = ii
            at_blank[st["nb"]:st["nb"] + len(bb)] = bb
            st["ni"] += len(ii)
            st["nb"] += len(bb)
            st["n"] += n
            st["cards"] += n // 4

    xva, yva = (np.concatenate(v) for v in zip(*(f.result() for f in futs_val), strict=True))
    Xva = torch.from_numpy(normalise(xva)).to(dev)
    log(f"validation: {len(yva)} crops of {args.n_val} cards of {VAL_DESIGNS}")
    model = make_model().to(dev).to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)

    def val_logits() -> np.ndarray:
        model.eval()
        with torch.no_grad():
            lv = torch.cat([model(Xva[i:i + 4096].contiguous(memory_format=torch.channels_last))
                            for i in range(0, len(Xva), 4096)])
        model.train()
        return lv.float().cpu().numpy()

    def save() -> None:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()},
                   out / "index.pt")

    def normalise_gpu(xb):  # scanner.rectify.normalise on the device
        x = xb.permute(0, 3, 1, 2).float()
        f = x.reshape(len(x), -1)
        f = f - f.mean(1, keepdim=True)
        return (f / (f.pow(2).mean(1, keepdim=True).sqrt() + 8.0)).reshape(x.shape)

    while time.time() < t0 + args.gen_only:
        time.sleep(1.0)
        ingest()
    ingest()
    log(f"training starts on {st['n']} crops of {st['cards']} cards")
    step = samples = 0
    k = 0
    t_start = last_ck = last_ev = time.time()
    stopped = False
    loss_sum, n_loss = 0.0, 0
    while (now := time.time()) < t_start + args.train:
        lr, beta1 = one_cycle((now - t_start) / args.train, args.lr)
        if step % 20 == 0:
            ingest()
            if not stopped and now - t0 > args.stop_gen:
                for f in futs:
                    f.cancel()
                stopped = True
                log(f"generation stopped: {st['cards']} cards, {st['n']} crops")
            k = int(round(args.batch * st["ni"] / (st["ni"] + 0.35 * st["nb"])))
        sel = torch.cat([at_index[torch.randint(st["ni"], (k,), device=dev, generator=g)],
                         at_blank[torch.randint(st["nb"], (args.batch - k,), device=dev,
                                                generator=g)]])
        x = augment_gpu(normalise_gpu(pool[sel]), g).contiguous(memory_format=torch.channels_last)
        for group in opt.param_groups:
            group["lr"], group["betas"] = lr, (beta1, 0.999)
        r, s = model.heads(x)
        loss = F.cross_entropy(r, ranks[sel], label_smoothing=0.02) + \
            F.cross_entropy(s, suits[sel], ignore_index=-100, label_smoothing=0.02)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss_sum, n_loss = loss_sum + loss.detach(), n_loss + 1
        step, samples = step + 1, samples + args.batch
        if now - last_ev > 30:
            acc = float((val_logits().argmax(1) == yva).mean())
            log(f"step {step} lr {lr:.2e} pool {st['n']} crops: loss "
                f"{float(loss_sum) / n_loss:.4f}, validation crop accuracy {acc:.4f}")
            last_ev, loss_sum, n_loss = now, 0.0, 0
        if now - last_ck > args.ckpt_every:
            last_ck = now
            save()
    ex.shutdown(wait=False, cancel_futures=True)
    save()
    lv = val_logits()
    T = fit_temperature(lv, yva)
    thr, stats = pick_threshold(softmax(lv / T), yva)
    summary = {"steps": step, "batch": args.batch, "samples": samples, "pool_crops": st["n"],
               "pool_cards": st["cards"], "train_s": args.train, "lr": args.lr,
               "seed": args.seed, "workers": args.workers, "temperature": T, "threshold": thr,
               **stats}
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    log(f"done: {step} steps, {samples} samples from {st['cards']} cards; {stats}")


def export(pt: Path, out: Path, summary: Path | None = None) -> dict:
    """The trained state dict as card_index.onnx + card_index.json in `out`, temperature and
    threshold picked on the validation decks as `train.recalibrate` does."""
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
    model = make_model()
    model.load_state_dict(torch.load(pt, weights_only=True))
    export_onnx(model, (CROP_H, CROP_W), out / "card_index.onnx", "crops")
    xva, yva = build_data(8, 3000, VAL_DESIGNS, 1)  # the recipe's validation set (seed 7 + 1)
    sess = ort.InferenceSession(str(out / "card_index.onnx"), providers=["CPUExecutionProvider"])
    lv = run_batched(sess, normalise(xva))
    T = fit_temperature(lv, yva)
    thr, stats = pick_threshold(softmax(lv / T), yva)
    run = json.loads(summary.read_text()) if summary else {}
    meta = {"classes": CLASSES, "crop": [CROP_H, CROP_W], "temperature": T, "threshold": thr,
            "outputs": "log-probabilities of rank x suit (two heads)", "seed": 7,
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
    t.add_argument("--cap", type=int, default=5_000_000, help="crops the GPU pool holds")
    t.add_argument("--n-max", type=int, default=480_000, help="cards of the largest mix part")
    t.add_argument("--n-val", type=int, default=3000)
    t.add_argument("--seed", type=int, default=7)
    t.add_argument("--batch", type=int, default=256)
    t.add_argument("--lr", type=float, default=3e-3)
    t.add_argument("--device", default="cuda")
    t.add_argument("--ckpt-every", type=float, default=60.0)
    t.add_argument("--cache", default="/tmp/rtcache/assets")
    t.add_argument("--fonts", default="/tmp/rtfonts")
    e = sub.add_parser("export", help="state dict -> card_index.onnx/.json in OUT")
    e.add_argument("pt")
    e.add_argument("out")
    e.add_argument("summary", nargs="?")
    args = p.parse_args(argv)
    if args.what == "pack":
        pack(Path(args.dir))
    elif args.what == "train":
        train_on_device(args)
    else:
        export(Path(args.pt), Path(args.out), Path(args.summary) if args.summary else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
