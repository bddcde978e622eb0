"""Train the piece classifier from renders and export it to ONNX.

    python -m models.pieces.train ...                  # the recorded two steps: MODEL_CARD.md
    python -m models.pieces.train --scenes 4 --heldout-scenes 2 --epochs 1 --cache none \
        --out /tmp/p.onnx                                   # a smoke run

Steps: render random tables (train piece sets and card designs only) and crop every cell as
the scanner does; train the CNN (PyTorch, CPU, one thread by default); export ONNX (opset 17);
measure it with onnxruntime on held-out renders (held-out piece set, tokens, held-out designs).
Needs the 'train' extra (torch, onnx) and the renderer's asset cache.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "piece_classifier.onnx"
HELDOUT_SEED0 = 1_000_000  # held-out tables use seeds from here on, never seen in training
PROC_SEED0 = 500_000  # scenes with procedurally varied sets ("proc-<seed>") start here
TOP_DOWN_SEED0 = 600_000  # scenes seen from above (`--top-down-scenes`) start here
TOP_DOWN = (70.0, 90.0)  # their camera elevation, degrees


def _defocus(x, gen, p: float):
    """Blur a share `p` of a batch (N x 3 x H x W) as a webcam out of focus or in low light
    does, far past `_augment`'s mild blur: a Gaussian of sigma 1-2.5 crop pixels (session 28:
    the validation games' pieces seen from above are that soft, the renders' are sharp)."""
    import torch
    from torch.nn import functional as F

    pick = torch.rand(x.shape[0], generator=gen) < p
    if not pick.any():
        return x
    x = x.clone()
    sigma = 1.0 + 1.5 * torch.rand(x.shape[0], generator=gen)
    r = torch.arange(-4, 5, dtype=torch.float32)
    for lo, hi in ((1.0, 1.5), (1.5, 2.0), (2.0, 2.5)):  # a kernel for each third of sigmas
        m = pick & (sigma >= lo) & (sigma < hi)
        if not m.any():
            continue
        k = torch.exp(-r ** 2 / (2 * ((lo + hi) / 2) ** 2))
        k = k / k.sum()
        xb = F.pad(x[m], (4, 4, 4, 4), mode="replicate")
        xb = F.conv2d(xb, k.view(1, 1, 1, 9).expand(3, 1, 1, 9), groups=3)
        x[m] = F.conv2d(xb, k.view(1, 1, 9, 1).expand(3, 1, 9, 1), groups=3)
    return x


def _augment(x, gen, defocus: float = 0.0):
    """Photometric and small geometric changes on a batch (N x 3 x H x W, 0..1); `defocus`:
    the share blurred hard (`_defocus`)."""
    import torch
    from torch.nn import functional as F

    n = x.shape[0]
    # colour: per-channel gain (white balance), brightness, contrast, gamma
    gain = 1 + 0.12 * torch.randn(n, 3, 1, 1, generator=gen)
    bright = 1 + 0.25 * (torch.rand(n, 1, 1, 1, generator=gen) * 2 - 1)
    x = x * gain * bright
    mean = x.mean((1, 2, 3), keepdim=True)
    contrast = 1 + 0.3 * (torch.rand(n, 1, 1, 1, generator=gen) * 2 - 1)
    x = (x - mean) * contrast + mean
    x = x.clamp(0, 1) ** torch.exp(0.25 * torch.randn(n, 1, 1, 1, generator=gen))
    gray = torch.rand(n, 1, 1, 1, generator=gen) < 0.1
    x = torch.where(gray, x.mean(1, keepdim=True).expand_as(x), x)
    # geometry: scale 0.9-1.1, shift 2 px, slight rotation, mirror
    s = 1 + 0.1 * (torch.rand(n, generator=gen) * 2 - 1)
    a = 0.06 * torch.randn(n, generator=gen)
    tx = 0.06 * (torch.rand(n, generator=gen) * 2 - 1)
    ty = 0.04 * (torch.rand(n, generator=gen) * 2 - 1)
    flip = torch.where(torch.rand(n, generator=gen) < 0.5, -1.0, 1.0)
    theta = torch.zeros(n, 2, 3)
    theta[:, 0, 0] = torch.cos(a) / s * flip
    theta[:, 0, 1] = -torch.sin(a) / s
    theta[:, 1, 0] = torch.sin(a) / s * flip
    theta[:, 1, 1] = torch.cos(a) / s
    theta[:, 0, 2] = tx
    theta[:, 1, 2] = ty
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, padding_mode="border", align_corners=False)
    # blur some, noise all
    blur = torch.rand(n, generator=gen) < 0.3
    if blur.any():
        k = torch.tensor([0.25, 0.5, 0.25])
        k2 = (k[:, None] * k[None, :]).expand(3, 1, 3, 3)
        xb = F.conv2d(F.pad(x[blur], (1, 1, 1, 1), mode="replicate"), k2, groups=3)
        x = x.clone()
        x[blur] = xb
    x = _defocus(x, gen, defocus)
    x = x + 0.02 * torch.rand(n, 1, 1, 1, generator=gen) * torch.randn(x.shape, generator=gen)
    return x.clamp(0, 1)


def train(X: np.ndarray, y: np.ndarray, epochs: int, seed: int, batch: int = 128,
          lr: float = 3e-3, init: Path | None = None, log=print,
          teacher: Path | None = None, taught: np.ndarray | None = None,
          defocus: float = 0.0):
    """`teacher` (an exported model) with `taught` (a mask over X): those examples are learnt
    from the teacher's answers on the same augmented crop (its class probabilities and its
    embedding) instead of their labels, so the new model keeps the teacher's behaviour there
    (learning without forgetting) while it learns the other examples from their labels."""
    import torch
    from torch.nn import functional as F

    from scanner.piece_classifier import CLASSES

    from .net import PieceNet, from_onnx

    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    if init is not None:
        net = from_onnx(init, len(CLASSES))
    else:
        net = PieceNet(len(CLASSES))
    teach = None
    if teacher is not None:
        teach = from_onnx(teacher, len(CLASSES)).eval()
        for prm in teach.parameters():
            prm.requires_grad_(False)
        taught_t = torch.from_numpy(np.asarray(taught, bool))
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * ((len(X) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps,
                                                pct_start=0.15)
    Xt = torch.from_numpy(X)  # N x H x W x 3 uint8
    yt = torch.from_numpy(y)
    # rarer classes (the pieces, unsure) are drawn as often as empty cells, in expectation
    counts = np.bincount(y, minlength=len(CLASSES)).astype(np.float64)
    w = 1.0 / np.maximum(counts[y], 1) ** 0.5
    sampler_w = torch.from_numpy(w / w.sum())
    for ep in range(epochs):
        net.train()
        t0 = time.time()
        idx = torch.multinomial(sampler_w, len(X), replacement=True, generator=gen)
        tot, correct, loss_sum = 0, 0, 0.0
        for i in range(0, len(idx), batch):
            b = idx[i:i + batch]
            xb = Xt[b].permute(0, 3, 1, 2).float() / 255
            xb = _augment(xb, gen, defocus)
            logits, emb, _, feats = net(xb)
            if teach is None:
                loss = F.cross_entropy(logits, yt[b], label_smoothing=0.05)
            else:
                m = taught_t[b]
                with torch.no_grad():
                    t_logits, t_emb, _, t_feats = teach(xb[m])
                ce = F.cross_entropy(logits[~m], yt[b][~m], label_smoothing=0.05,
                                     reduction="sum") if (~m).any() else logits.sum() * 0
                kl = F.kl_div(F.log_softmax(logits[m], 1), F.softmax(t_logits, 1),
                              reduction="sum")
                # the embedding and pooled features too: adapting to a set reads them
                cos = (1 - (emb[m] * t_emb).sum(1)).sum() + (1 - F.cosine_similarity(
                    feats[m], t_feats, dim=1)).sum()
                loss = (ce + kl + cos) / len(b)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += float(loss.detach()) * len(b)
            correct += int((logits.argmax(1) == yt[b]).sum())
            tot += len(b)
        log(f"epoch {ep + 1}/{epochs}: loss {loss_sum / tot:.4f}, train acc "
            f"{correct / tot:.4f}, {time.time() - t0:.0f} s")
    net.eval()
    return net


def export(net, path: Path) -> None:
    import torch

    from scanner.piece_crops import CROP_H, CROP_W

    dummy = torch.zeros(1, 3, CROP_H, CROP_W)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(net, (dummy,), str(path), input_names=["crops"],
                      output_names=["logits", "embedding", "prototypes", "features"],
                      dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"},
                                    "embedding": {0: "n"}, "features": {0: "n"}},
                      opset_version=17, dynamo=False)


def crops_for(split: str, seeds: list[int], workers: int, cache: Path | None, log=print,
              procedural: bool = False, elevation: tuple[float, float] | None = None):
    from .data import CropSet, generate

    above = "" if elevation is None else f"-el{elevation[0]:.0f}-{elevation[1]:.0f}"
    name = f"{split}{'-proc' if procedural else ''}{above}-{seeds[0]}-{len(seeds)}.npz"
    if cache is not None and (cache / name).exists():
        log(f"crops: {cache / name} (cached)")
        return CropSet.load(cache / name)
    t0 = time.time()
    kw: dict = {"procedural": True} if procedural else {}
    if elevation is not None:
        kw["elevation"] = elevation
    cs = generate(seeds, split, workers=workers, log_every=20, **kw)
    log(f"crops: {len(cs.y)} from {len(seeds)} {split} tables in {time.time() - t0:.0f} s")
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        cs.save(cache / name)
    return cs


def proc_crops(n_scenes: int, workers: int, cache: Path | None, chunk: int = 40,
               log=print) -> list:
    """Crops of `n_scenes` scenes with procedurally varied sets, rendered (and cached) in
    chunks of `chunk` scenes so that a long render can be resumed."""
    seeds = list(range(PROC_SEED0, PROC_SEED0 + n_scenes))
    return [crops_for("train", seeds[i:i + chunk], workers, cache, log, procedural=True)
            for i in range(0, len(seeds), chunk)]


def register(parser: argparse.ArgumentParser) -> None:
    """For a `royal-table train pieces` subcommand: the same arguments and handler."""
    add_arguments(parser)
    parser.set_defaults(handler=run)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--scenes", type=int, default=220,
                    help="training scenes to render (3 tables each)")
    ap.add_argument("--heldout-scenes", type=int, default=60,
                    help="held-out scenes (3 tables each)")
    ap.add_argument("--proc-scenes", type=int, default=0,
                    help="extra training scenes, each with its own procedurally varied set")
    ap.add_argument("--top-down-scenes", type=int, default=0,
                    help="more scenes seen from 70-90 degrees above, half of them with "
                         "procedurally varied sets (the classifier's weakest views)")
    ap.add_argument("--flat-distractors", type=int, default=0,
                    help="extra empty crops with card-like marks drawn on them (data.py)")
    ap.add_argument("--distractor-scale", type=float, default=1.0,
                    help="size of the distractors' marks (1: 1-3 cm)")
    ap.add_argument("--real", type=Path, default=None,
                    help="a real-photo set (real-pieces-dev layout): its training half of the "
                         "source photos joins the data (models.real_photos.fit_source; the "
                         "bench measures the other half)")
    ap.add_argument("--real-repeat", type=int, default=1,
                    help="how many times each real crop is put in the training set")
    ap.add_argument("--teacher", type=Path, default=None,
                    help="an exported model whose answers the rendered crops are learnt from "
                         "(the real crops still from their labels): keeps its behaviour on "
                         "renders while learning real photos")
    ap.add_argument("--defocus", type=float, default=0.0,
                    help="share of training crops blurred hard (sigma 1-2.5 px), as a webcam "
                    "out of focus or in low light sees pieces")
    ap.add_argument("--epochs", type=int, default=14)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=3e-3, help="peak learning rate")
    ap.add_argument("--init", type=Path, default=None,
                    help="continue training from an exported model (.onnx)")
    ap.add_argument("--workers", type=int, default=2, help="rendering processes")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--cache", type=Path, default=Path("data/pieces"),
                    help="where rendered crops are kept between runs (none: nowhere)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--export-only", action="store_true",
                    help="write --init's weights with this recipe's outputs, no training "
                         "(how the committed model gained its `features` output)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.pieces.train", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    return run(ap.parse_args(argv))


def run(args) -> int:
    try:
        import torch
    except ImportError:
        print("error: training needs torch: pip install torch==2.13.0 onnx", file=sys.stderr)
        return 2
    for flag, model in (("--init", args.init), ("--teacher", args.teacher)):
        if model is not None and not model.is_file():  # before minutes of rendering
            print(f"error: {flag} {model}: no such model", file=sys.stderr)
            return 2
    if args.export_only:
        if args.init is None:
            print("error: --export-only needs --init MODEL.onnx", file=sys.stderr)
            return 2
        from scanner.piece_classifier import CLASSES

        from .net import from_onnx

        export(from_onnx(args.init, len(CLASSES)).eval(), args.out)
        print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")
        return 0
    if args.scenes < 1 or args.epochs < 1:
        print("error: --scenes and --epochs must be at least 1", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    cache = None if str(args.cache) in ("", ".", "none") else args.cache
    try:
        tr = crops_for("train", list(range(args.scenes)), args.workers, cache)
    except RuntimeError as exc:  # the renderer's assets: a Debian package missing, say
        print(f"error: cannot render training scenes: {exc}", file=sys.stderr)
        return 2
    if args.proc_scenes > 0:
        from .data import CropSet

        tr = CropSet.concat([tr] + proc_crops(args.proc_scenes, args.workers, cache))
    if args.top_down_scenes > 0:
        from .data import CropSet

        half = args.top_down_scenes // 2
        seeds = list(range(TOP_DOWN_SEED0, TOP_DOWN_SEED0 + args.top_down_scenes))
        tr = CropSet.concat([tr, crops_for("train", seeds[:half], args.workers, cache,
                                           elevation=TOP_DOWN),
                             crops_for("train", seeds[half:], args.workers, cache,
                                       procedural=True, elevation=TOP_DOWN)])
    if args.flat_distractors > 0:
        from .data import CropSet, flat_distractors

        n = args.flat_distractors
        D = flat_distractors(tr.X[tr.y == 0], n, seed=args.seed, scale=args.distractor_scale)
        tr = CropSet.concat([tr, CropSet(D, np.zeros(n, np.int64), np.array(["distractor"] * n),
                                         np.full(n, -1, np.int64), np.zeros(n, np.float32))])
    if args.real is not None:
        from models.real_photos import fit_source

        from .data import CropSet
        from .evaluate import real_crops

        if not (args.real / "labels").is_dir():
            print(f"error: --real {args.real}: no labels/ folder", file=sys.stderr)
            return 2
        X, y, src = real_crops(args.real)
        fit = np.array([fit_source(s) for s in src], bool)
        n = int(fit.sum())
        print(f"real crops: {n} of {len(y)} from {len(set(src[fit].tolist()))} of "
              f"{len(set(src.tolist()))} source photos, each {args.real_repeat} times")
        real = CropSet(X[fit], y[fit], np.array(["real"] * n), np.full(n, -1, np.int64),
                       np.full(n, np.nan, np.float32))
        tr = CropSet.concat([tr] + [real] * args.real_repeat)
    print(f"train crops: {len(tr.y)}; per class {np.bincount(tr.y).tolist()}")
    net = train(tr.X, tr.y, args.epochs, args.seed, lr=args.lr, init=args.init,
                teacher=args.teacher, taught=tr.piece_set != "real", defocus=args.defocus)
    export(net, args.out)
    size = args.out.stat().st_size
    print(f"wrote {args.out} ({size / 1e6:.2f} MB)")
    ho = crops_for("heldout", list(range(HELDOUT_SEED0, HELDOUT_SEED0 + args.heldout_scenes)),
                   args.workers, cache)
    from scanner.piece_classifier import PieceClassifier

    from .evaluate import rendered_metrics

    clf = PieceClassifier(args.out)
    m = rendered_metrics(clf, ho)
    print(json.dumps(m, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
