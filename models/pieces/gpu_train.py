"""The piece classifier from scratch on one GPU, fed by CPU workers that render training scenes
(session 29; the design of `models/cards/gpu_index.py`). Three steps:

    python -m models.pieces.gpu_train pack data/pieces-gpu-pack \\
        --real ../shared/data/real-pieces-dev      # here: what the device needs (35.4 MB)
    # on the device, the pack carried (python3 there has torch with CUDA, OpenCV, onnx):
    python3 -m models.pieces.gpu_train train --pack data/pieces-gpu-pack --workers 14 \\
        --gen-only 90 --train 420 --stop-gen 450     # pieces.pt, summary.json, log.txt to $OUT
    python -m models.pieces.gpu_train export pieces.pt OUT_DIR [summary.json]   # here, CPU
    royal-table pieces bench --model OUT_DIR/piece_classifier.onnx
    python -m models.pieces.gpu_train unpack DIR CACHE   # any renderer use: ROYAL_TABLE_CACHE=CACHE

`pack` holds what the renderer reads from disk to render the CPU recipe's *training* scenes on
a machine with no Debian package: the rasters of the 19 training card designs (every face,
both jokers and the back), the sprites of the training 3D sets `brutalchess` and `dreamchess`
(7 elevations x 4 lights, the knight from 8 azimuths) with their anchors, and those sets' mesh
files (`pieces.height` and `base_radius` read the meshes). Never the held-out designs, never
the held-out set `lathe` (`pack` refuses them). Everything else the training scenes use is
code: the paper tokens, the procedural sets (`proc-<seed>`, their sprites built by the workers
on first use), the table surfaces, hands, clutter and light. Images are lossless WebP (quality
101), and the colour of transparent pixels, which WebP drops, is put back from `fixups.npz`,
so they decode to the renderer's PNG cache byte for byte and a scene renders there exactly as
here (same OpenCV build assumed). The card rasters are kept whole, not shrunk or lossy: at 22
MB they fit (pack 29.5 MB without the real crops, 35.4 MB with them, plus the 18 MB tracked
tree: 51 of the 64 MiB a call carries), and crops identical to the CPU recipe's keep the two
recipes comparable.
`--real DIR` adds the crops of the real photos training may use (`models.real_photos.
fit_source`, as the CPU recipe's `--real`; the bench measures the other half): those are lossy
WebP at quality 95 (6.2 MB with their labels, against 17 MB of lossless images; mean
absolute error 1.3 grey levels a pixel, 1.9 on the worst crop; `pack` refuses a crop over
`REAL_TOLERANCE`): they are 64 x 96 crops of JPEG photos already, and the training's own noise
and blur are larger.

`train` points the renderer's cache at the pack unpacked (`--cache`, PNG as built here), and
worker processes render scenes with `data.frame_crops` (the scanner's own crops, 3 random
tables a scene, hands, knocked-over pieces, jitter) by deterministic chunk seeds, in four
parts interleaved in proportion so whatever exists at any time is a mix (`PARTS`): the
training sets and tokens from seed 0 and procedural sets from seed 500,000, camera 30-90
degrees (the first chunks are the CPU recipe's `--scenes` and `--proc-scenes` data), and both
again from 70-90 degrees (from 600,000, the first ones those of the CPU recipe's
`--top-down-scenes`; procedural from 650,000), so that 70-90 degrees, the weakest views, get
about half of all scenes (`--above-share` 0.3 on top of uniform 30-90). Each chunk
adds its own flat distractors (`data.flat_distractors`, seeded by the chunk). Validation: 60
scenes of the same mix with seeds of their own (700,000 on), never trained on, read as the
scanner reads (each crop with its mirror image) and scored by `evaluate.rendered_metrics`; no
held-out asset is touched. From `--gen-only` s the net (`net.PieceNet`, from scratch, the
exported model's inputs and outputs) trains on class-balanced random batches of all crops made
so far (class weights 1/sqrt(count) as `train.train`), the real crops at `--real-share` of
each batch, augmented on the device (`augment_gpu`: `train._augment`'s draws, and `--defocus`
0.25 of them blurred hard), AdamW one-cycle over `--train` s; generation stops at `--stop-gen`
s from the start. How much data exists when depends on the machine, so a rerun is close, not
bit-equal. It also runs on a CPU with tiny budgets (tests, smoke runs; `--device` defaults to
cuda where there is one). `export` writes piece_classifier.onnx as
`train.export` does (batch norm folded, outputs logits, embedding, prototypes, features) and
checks that `scanner.piece_classifier.PieceClassifier` reads it as torch does. Needs the
'train' extra; the runtime never imports this module.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .train import HELDOUT_SEED0, PROC_SEED0, TOP_DOWN, TOP_DOWN_SEED0

FULL = (30.0, 90.0)  # the renderer's whole range of camera elevation, degrees
VAL_SEED0 = 700_000  # validation scenes: part k's i-th has seed VAL_SEED0 + VAL_STRIDE * k + i
VAL_STRIDE = 10_000
SPRITES_PER_SET = 728  # 7 elevations x 4 lights x 2 sides x (5 kinds + the knight's 8 azimuths)
CARDS_PER_DESIGN = 55  # 52 faces, both jokers, the back
REAL_QUALITY = 95
REAL_TOLERANCE = 2.5  # grey levels: the most a real crop's mean absolute error may reach
CARRY_LIMIT = 64 * 2 ** 20  # bytes a device call carries, the tracked tree included
GROUPS = ("sets", "tokens", "procedural", "distractors", "real")


@dataclass(frozen=True)
class Part:
    """Scenes of one kind: seeds `seed0 + i` (i < capacity), procedural sets or the training
    sets and tokens, the camera's elevation range."""

    name: str
    seed0: int
    capacity: int
    procedural: bool
    elevation: tuple[float, float]


PARTS = (
    Part("sets", 0, 100_000, False, FULL),  # the CPU recipe's --scenes
    Part("proc", PROC_SEED0, 100_000, True, FULL),  # its --proc-scenes
    Part("sets-above", TOP_DOWN_SEED0, 50_000, False, TOP_DOWN),  # its --top-down-scenes' half
    Part("proc-above", TOP_DOWN_SEED0 + 50_000, 50_000, True, TOP_DOWN),
)
# no two parts share a seed, and none reaches the validation or the held-out seeds
assert all(a.seed0 + a.capacity <= b.seed0 for a, b in zip(PARTS, PARTS[1:], strict=False))
assert PARTS[-1].seed0 + PARTS[-1].capacity <= VAL_SEED0
assert VAL_SEED0 + VAL_STRIDE * len(PARTS) <= HELDOUT_SEED0


@dataclass(frozen=True)
class Chunk:
    """A worker's job: these scenes of one part, and `distractors` flat distractors per crop."""

    part: str
    seeds: tuple[int, ...]
    procedural: bool
    elevation: tuple[float, float]
    distractors: float = 0.0
    distractor_scale: float = 1.8


def part_shares(proc_share: float, above_share: float) -> dict[str, float]:
    """Each part's share of the scenes: `proc_share` of them procedural, `above_share` from
    70-90 degrees (on top of the third of the 30-90 degree scenes that land there)."""
    return {"sets": (1 - proc_share) * (1 - above_share), "proc": proc_share * (1 - above_share),
            "sets-above": (1 - proc_share) * above_share, "proc-above": proc_share * above_share}


def _part_chunks(part: Part, seed0: int, n: int, per_chunk: int, distractors: float,
                 scale: float) -> list[Chunk]:
    seeds = list(range(seed0, seed0 + n))
    return [Chunk(part.name, tuple(seeds[i:i + per_chunk]), part.procedural, part.elevation,
                  distractors, scale) for i in range(0, n, per_chunk)]


def chunks(n_scenes: int, proc_share: float = 0.65, above_share: float = 0.3,
           per_chunk: int = 2, distractors: float = 0.12, scale: float = 1.8,
           skip: int = 0) -> list[Chunk]:
    """The training data, made without end: `n_scenes` scenes over the parts by their shares,
    in chunks of `per_chunk` scenes, interleaved in proportion (whatever is made first is a
    mix). Each part's first chunks are the CPU recipe's scenes; `skip` passes over the first
    `skip` scenes so (each part its share), so that a run continuing another sees new ones."""
    shares = part_shares(proc_share, above_share)
    parts = []
    for part in PARTS:
        n, k = (int(round(v * shares[part.name])) for v in (n_scenes, skip))
        if k + n > part.capacity:
            raise ValueError(f"{part.name}: {k} + {n} scenes, at most {part.capacity}")
        parts.append(_part_chunks(part, part.seed0 + k, n, per_chunk, distractors, scale))
    return [c for _, _, c in sorted(((i / len(ch), k, c) for k, ch in enumerate(parts)
                                     for i, c in enumerate(ch)), key=lambda t: (t[0], t[1]))]


def val_chunks(n_scenes: int, proc_share: float = 0.65, above_share: float = 0.3,
               per_chunk: int = 2) -> list[Chunk]:
    """The validation scenes: the same mix and assets (training split), seeds of their own."""
    shares = part_shares(proc_share, above_share)
    out = []
    for k, part in enumerate(PARTS):
        n = int(round(n_scenes * shares[part.name]))
        if n > VAL_STRIDE:
            raise ValueError(f"at most {VAL_STRIDE} validation scenes a part")
        out += _part_chunks(part, VAL_SEED0 + VAL_STRIDE * k, n, per_chunk, 0.0, 1.0)
    return out


def render_chunk(chunk: Chunk):
    """A chunk's crops (`data.CropSet`; distractors labelled empty, set "distractor", as the
    CPU recipe adds them) and the seconds it took. Deterministic in the chunk."""
    from .data import CropSet, flat_distractors, generate

    t = time.perf_counter()
    cs = generate(list(chunk.seeds), "train", procedural=chunk.procedural,
                  elevation=chunk.elevation)
    n = int(round(chunk.distractors * len(cs.y)))
    empty = cs.X[cs.y == 0]
    if n > 0 and len(empty):
        D = flat_distractors(empty, n, seed=chunk.seeds[0], scale=chunk.distractor_scale)
        cs = CropSet.concat([cs, CropSet(D, np.zeros(n, np.int64), np.array(["distractor"] * n),
                                         np.full(n, -1, np.int64), np.zeros(n, np.float32))])
    return cs, time.perf_counter() - t


def group_of(piece_set: str) -> int:
    """Which kind of crop, an index into GROUPS."""
    if piece_set == "paper-token":
        return 1
    if piece_set.startswith("proc-"):
        return 2
    if piece_set == "distractor":
        return 3
    return 4 if piece_set == "real" else 0


# -- pack (here) ---------------------------------------------------------------------------------

def pack_contents() -> tuple[list[str], list[str]]:
    """The card designs and 3D piece sets the training scenes draw from (the committed split's
    training part): what `pack` holds by default."""
    from models.renderer.assets import split

    sp = split()
    return list(sp["cards"]["train"]), list(sp["pieces"]["train"])


def _check_training_only(designs: list[str], sets: list[str]) -> None:
    from models.renderer.assets import split

    sp = split()
    if bad := sorted(set(designs) - set(sp["cards"]["train"])):
        raise ValueError(f"not training card designs (held out or spare): {bad}")
    if bad := sorted(set(sets) - set(sp["pieces"]["train"])):
        raise ValueError(f"not training piece sets: {bad} (tokens and procedural sets are code)")


def encode_real(crop: np.ndarray) -> np.ndarray:
    """A real crop as lossy WebP (`REAL_QUALITY`)."""
    import cv2

    ok, buf = cv2.imencode(".webp", crop, [cv2.IMWRITE_WEBP_QUALITY, REAL_QUALITY])
    if not ok:
        raise RuntimeError("WebP encoding failed")
    return buf


def _tree_bytes() -> int | None:
    """Bytes of the repository's tracked files (what a device call carries besides the pack)."""
    root = Path(__file__).resolve().parents[2]
    try:
        names = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True,
                               check=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        return None
    return sum((root / n).stat().st_size for n in names if n and (root / n).is_file())


def pack(dest: Path, designs: list[str] | None = None, sets: list[str] | None = None,
         real: Path | None = None, log=print) -> dict:
    """Write the pack (module docstring) into `dest`: by default every training design and
    training 3D set; the renderer's cache here is filled first where it lacks any of them.
    `real`: a real-photo set (real-pieces-dev layout) whose trainable half joins as lossy
    WebP. Returns the manifest."""
    import cv2

    from models.renderer import pieces
    from models.renderer.assets import build_card_cache, cache_dir, webp_lossless

    d_designs, d_sets = pack_contents()
    designs = d_designs if designs is None else list(designs)
    sets = d_sets if sets is None else list(sets)
    _check_training_only(designs, sets)
    build_card_cache(designs, log=lambda *_: None)
    pieces.build_sprite_cache(sets, log=lambda *_: None)
    dest.mkdir(parents=True, exist_ok=True)
    fix: dict[str, np.ndarray] = {}
    counts: dict[str, int] = {}
    for kind, names in (("cards", designs), ("pieces", sets)):
        for name in names:
            out = dest / kind / name
            out.mkdir(parents=True, exist_ok=True)
            anchors = {}
            files = [f for f in sorted((cache_dir() / kind / name).glob("*.png"))
                     if not f.name.startswith(".")]
            for f in files:
                buf, idx, val = webp_lossless(cv2.imread(str(f), cv2.IMREAD_UNCHANGED))
                (out / f"{f.stem}.webp").write_bytes(buf.tobytes())
                if len(idx):
                    fix[f"{kind}/{name}/{f.stem}.idx"] = idx
                    fix[f"{kind}/{name}/{f.stem}.val"] = val
                if kind == "pieces":
                    anchors[f.stem] = f.with_suffix(".txt").read_text()
            if kind == "pieces":
                (out / "anchors.json").write_text(json.dumps(anchors, indent=0) + "\n")
            want = CARDS_PER_DESIGN if kind == "cards" else SPRITES_PER_SET
            if len(files) < want:
                raise RuntimeError(f"{kind}/{name}: {len(files)} images in the cache, "
                                   f"expected {want}")
            counts[f"{kind}/{name}"] = len(files)
    np.savez_compressed(dest / "fixups.npz", **fix)
    with tarfile.open(dest / "meshes.tar.xz", "w:xz") as tf:
        for name in sets:
            for f in pieces.mesh_files(name):
                tf.add(f, arcname=f"{name}/{f.name}")
    if real is None:  # a pack made before into the same folder may have left its real crops
        (dest / "real.npz").unlink(missing_ok=True)
    manifest = {"format": 1, "designs": designs, "sets": sets, "images": counts,
                "images_lossless": True, "real": pack_real(dest, real) if real else None}
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    manifest["bytes"] = size
    tree = _tree_bytes()
    line = (f"packed {len(designs)} card designs and {len(sets)} piece sets"
            + (f" and {manifest['real']['crops']} real crops" if real else "")
            + f" into {dest}: {size / 1e6:.1f} MB ({size / 2 ** 20:.1f} MiB)")
    if tree is not None:
        line += (f"; with the tracked tree ({tree / 2 ** 20:.1f} MiB) {(size + tree) / 2 ** 20:.1f}"
                 f" MiB of the {CARRY_LIMIT / 2 ** 20:.0f} MiB a device call carries")
    log(line)
    return manifest


def pack_real(dest: Path, root: Path) -> dict:
    """The real crops training may use (`fit_source`), lossy WebP, into dest/real.npz."""
    import cv2

    from models.real_photos import fit_source

    from .evaluate import real_crops

    if not (root / "labels").is_dir():
        raise ValueError(f"{root}: no labels/ folder (a real-pieces-dev layout is expected)")
    X, y, src = real_crops(root)
    fit = np.array([fit_source(s) for s in src], bool)
    bufs, errs = [], []
    for x in X[fit]:
        b = encode_real(x)
        bufs.append(b.ravel())
        errs.append(float(np.abs(cv2.imdecode(b, cv2.IMREAD_COLOR).astype(np.int16) - x).mean()))
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in bufs])]).astype(np.int64)
    np.savez(dest / "real.npz", blob=np.concatenate(bufs) if bufs else np.zeros(0, np.uint8),
             offsets=offsets, y=y[fit], source=src[fit])
    if errs and max(errs) > REAL_TOLERANCE:
        raise RuntimeError(f"a real crop lost {max(errs):.2f} grey levels (> {REAL_TOLERANCE})")
    return {"crops": int(fit.sum()), "sources": len(set(src[fit].tolist())),
            "of_crops": int(len(y)), "webp_quality": REAL_QUALITY,
            "mean_abs_error": round(float(np.mean(errs)), 3) if errs else None,
            "worst_crop_mean_abs_error": round(max(errs), 3) if errs else None}


def load_real(pack_dir: Path | None) -> tuple[np.ndarray, np.ndarray]:
    """The pack's real crops (N x H x W x 3 uint8) and labels; empty where it has none."""
    import cv2

    from scanner.piece_crops import CROP_H, CROP_W

    f = pack_dir / "real.npz" if pack_dir is not None else None
    if f is None or not f.exists():
        return np.zeros((0, CROP_H, CROP_W, 3), np.uint8), np.zeros(0, np.int64)
    d = np.load(f)
    blob, off = d["blob"], d["offsets"]
    X = np.array([cv2.imdecode(blob[off[i]:off[i + 1]], cv2.IMREAD_COLOR)
                  for i in range(len(off) - 1)], np.uint8).reshape(-1, CROP_H, CROP_W, 3)
    return X, d["y"].astype(np.int64)


def _unpack_folder(job: tuple[str, str, str, str]) -> int:
    """One design's rasters or one set's sprites (and anchors) into the cache, as PNG."""
    from models.renderer.assets import from_webp_lossless, write_png_atomic

    pack_dir, cache, kind, name = job
    src, out = Path(pack_dir) / kind / name, Path(cache) / kind / name
    out.mkdir(parents=True, exist_ok=True)
    fix = np.load(Path(pack_dir) / "fixups.npz")
    keys = set(fix.files)
    anchors = json.loads((src / "anchors.json").read_text()) if kind == "pieces" else {}
    n = 0
    for f in sorted(src.glob("*.webp")):
        key = f"{kind}/{name}/{f.stem}"
        img = from_webp_lossless(np.fromfile(str(f), np.uint8),
                                 *((fix[f"{key}.idx"], fix[f"{key}.val"]) if f"{key}.idx" in keys
                                   else ()))
        if kind == "pieces":  # the renderer takes a sprite only with its anchor beside it
            (out / f"{f.stem}.txt").write_text(anchors[f.stem])
        write_png_atomic(out / f"{f.stem}.png", img)
        n += 1
    return n


def unpack(pack_dir: Path, cache: Path, ex=None) -> int:
    """The pack as a renderer asset cache at `cache` (point $ROYAL_TABLE_CACHE at it): the
    images as PNG and the mesh files under meshes/ (`pieces.load_set` looks there when the
    Debian package is missing). `ex`: an executor to spread the images over. Returns the
    image count."""
    manifest = json.loads((pack_dir / "manifest.json").read_text())
    _check_training_only(manifest["designs"], manifest["sets"])
    jobs = [(str(pack_dir), str(cache), "cards", d) for d in manifest["designs"]] + \
        [(str(pack_dir), str(cache), "pieces", s) for s in manifest["sets"]]
    counts = list((ex.map if ex is not None else map)(_unpack_folder, jobs))
    for (_, _, kind, name), n in zip(jobs, counts, strict=True):
        if n != manifest["images"][f"{kind}/{name}"]:
            raise RuntimeError(f"{kind}/{name}: {n} images unpacked of "
                               f"{manifest['images'][f'{kind}/{name}']}")
    with tarfile.open(pack_dir / "meshes.tar.xz") as tf:
        tf.extractall(cache / "meshes", filter="data")
    return sum(counts)


# -- on the device -------------------------------------------------------------------------------

def augment_gpu(x, generator, defocus: float = 0.0):
    """`train._augment` on the device, without a Python loop or boolean indexing: the same
    draws (per-channel gain, brightness, contrast, gamma, a tenth grey; scale, shift, a slight
    turn, mirror; a 3x3 blur on 30 %; noise) and `defocus`, the share blurred hard as
    `train._defocus` (a Gaussian of sigma 1-2.5 crop pixels). x: N x 3 x H x W in 0..1."""
    import torch
    from torch.nn import functional as F

    n, dev = x.shape[0], x.device

    def rand(*shape):
        return torch.rand(*shape, generator=generator, device=dev)

    def randn(*shape):
        return torch.randn(*shape, generator=generator, device=dev)

    x = x * (1 + 0.12 * randn(n, 3, 1, 1)) * (1 + 0.25 * (rand(n, 1, 1, 1) * 2 - 1))
    mean = x.mean((1, 2, 3), keepdim=True)
    x = (x - mean) * (1 + 0.3 * (rand(n, 1, 1, 1) * 2 - 1)) + mean
    x = x.clamp(0, 1) ** torch.exp(0.25 * randn(n, 1, 1, 1))
    x = torch.where(rand(n, 1, 1, 1) < 0.1, x.mean(1, keepdim=True).expand_as(x), x)
    s = 1 + 0.1 * (rand(n) * 2 - 1)
    a = 0.06 * randn(n)
    tx, ty = 0.06 * (rand(n) * 2 - 1), 0.04 * (rand(n) * 2 - 1)
    flip = torch.where(rand(n) < 0.5, -1.0, 1.0)
    cos, sin = torch.cos(a) / s, torch.sin(a) / s
    theta = torch.stack([torch.stack([cos * flip, -sin, tx], 1),
                         torch.stack([sin * flip, cos, ty], 1)], 1)
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, padding_mode="border", align_corners=False)
    k = torch.tensor([0.25, 0.5, 0.25], device=dev)
    k2 = (k[:, None] * k[None, :]).expand(3, 1, 3, 3).contiguous()
    blurred = F.conv2d(F.pad(x, (1, 1, 1, 1), mode="replicate"), k2, groups=3)
    x = torch.where((rand(n) < 0.3).view(n, 1, 1, 1), blurred, x)
    x = defocus_gpu(x, generator, defocus)
    x = x + 0.02 * rand(n, 1, 1, 1) * randn(*x.shape)
    return x.clamp(0, 1)


def defocus_gpu(x, generator, p: float):
    """`train._defocus` on the device: a share `p` of the batch blurred by a Gaussian of sigma
    1-2.5 crop pixels (a kernel for each third of the sigmas). It draws as `_defocus` does, so
    on the CPU with the same generator `augment_gpu` makes `train._augment`'s crops."""
    import torch
    from torch.nn import functional as F

    n, dev = x.shape[0], x.device
    pick = torch.rand(n, generator=generator, device=dev) < p
    if p <= 0:
        return x
    sigma = 1.0 + 1.5 * torch.rand(n, generator=generator, device=dev)
    r = torch.arange(-4, 5, dtype=x.dtype, device=dev)
    out = x
    for lo, hi in ((1.0, 1.5), (1.5, 2.0), (2.0, 2.5)):
        k = torch.exp(-r ** 2 / (2 * ((lo + hi) / 2) ** 2))
        k = k / k.sum()
        xb = F.conv2d(F.pad(x, (4, 4, 4, 4), mode="replicate"),
                      k.view(1, 1, 1, 9).expand(3, 1, 1, 9).contiguous(), groups=3)
        xb = F.conv2d(xb, k.view(1, 1, 9, 1).expand(3, 1, 9, 1).contiguous(), groups=3)
        m = pick & (sigma >= lo) & (sigma < hi)
        out = torch.where(m.view(n, 1, 1, 1), xb, out)
    return out


class CropPool:
    """What the workers made, on the device as it comes: uint8 crops (N x H x W x 3), their
    classes and kinds (GROUPS), growing by doubling up to `cap`; batches are drawn with class
    weights 1/sqrt(count) per crop, as `train.train` samples."""

    def __init__(self, cap: int, dev, n_classes: int, start: int = 4096):
        import torch

        from scanner.piece_crops import CROP_H, CROP_W

        self.cap, self.dev, self.n_classes = cap, dev, n_classes
        size = min(start, cap)
        self.images = torch.empty((size, CROP_H, CROP_W, 3), dtype=torch.uint8, device=dev)
        self.labels = torch.empty(size, dtype=torch.int64, device=dev)
        self.n = 0
        self.group_counts = np.zeros(len(GROUPS), np.int64)
        self.full = False
        self._index = None

    def add(self, X: np.ndarray, y: np.ndarray, groups: np.ndarray) -> bool:
        """Take a chunk's crops; False when the pool is full."""
        import torch

        a, n = self.n, len(y)
        if a + n > self.cap:
            self.full = True
            return False
        if a + n > len(self.labels):  # grow: doubling keeps the copies rare
            size = min(max(2 * len(self.labels), a + n), self.cap)
            images = torch.empty((size, *self.images.shape[1:]), dtype=torch.uint8,
                                 device=self.dev)
            labels = torch.empty(size, dtype=torch.int64, device=self.dev)
            images[:a], labels[:a] = self.images[:a], self.labels[:a]
            self.images, self.labels = images, labels
        self.images[a:a + n] = torch.from_numpy(np.ascontiguousarray(X)).to(self.dev)
        self.labels[a:a + n] = torch.from_numpy(np.asarray(y, np.int64)).to(self.dev)
        self.group_counts += np.bincount(groups, minlength=len(GROUPS))
        self.n += n
        self._index = None
        return True

    def class_counts(self) -> np.ndarray:
        import torch

        return torch.bincount(self.labels[:self.n], minlength=self.n_classes).cpu().numpy()

    def draw(self, batch: int, generator):
        """Indices of a batch: a class by weight sqrt(count), then a crop of it uniformly."""
        import torch

        if self._index is None:
            lab = self.labels[:self.n]
            order = torch.argsort(lab, stable=True)
            counts = torch.bincount(lab, minlength=self.n_classes)
            starts = torch.cumsum(counts, 0) - counts
            self._index = (order, counts, starts, counts.double().sqrt())
        order, counts, starts, w = self._index
        cls = torch.multinomial(w, batch, replacement=True, generator=generator)
        r = (torch.rand(batch, generator=generator, device=self.dev) * counts[cls]).long()
        return order[starts[cls] + torch.minimum(r, counts[cls] - 1)]


class Generation:
    """The workers' chunks in flight: finished ones go into the pool (each chunk's results
    dropped once taken), and on stop the ones not started are cancelled. Finished chunks are
    queued by a callback, so taking them costs nothing while thousands wait."""

    def __init__(self, ex, todo: list[Chunk]):
        self.waiting: dict[int, Future] = {}
        self._done: deque = deque()  # appended from the executor's thread
        for c in todo:
            f = ex.submit(render_chunk, c)
            self.waiting[id(f)] = f
            f.add_done_callback(lambda f, c=c: self._done.append((c, f)))
        self.scenes: dict[str, int] = {}
        self.render_s = 0.0
        self.failed = 0
        self.stopped = self.full_logged = False

    def take(self, pool: CropPool, log) -> None:
        while self._done:
            c, f = self._done.popleft()
            self.waiting.pop(id(f), None)
            if f.cancelled():
                continue
            if f.exception() is not None:
                self.failed += 1
                log(f"chunk {c.part} {c.seeds[0]} failed: {f.exception()!r}")
                continue
            cs, secs = f.result()
            if not pool.add(cs.X, cs.y, np.array([group_of(s) for s in cs.piece_set], np.int64)):
                if not self.full_logged:
                    log(f"the pool is full ({pool.n} crops): later chunks are left out")
                    self.full_logged = True
                continue
            self.scenes[c.part] = self.scenes.get(c.part, 0) + len(c.seeds)
            self.render_s += secs

    def tend(self, pool: CropPool, log, stop: bool) -> None:
        self.take(pool, log)
        if stop and not self.stopped:
            for f in list(self.waiting.values()):
                f.cancel()
            self.stopped = True
            log(f"generation stopped: {sum(self.scenes.values())} scenes, {pool.n} crops")

    @property
    def exhausted(self) -> bool:
        """Every chunk finished, failed or cancelled, and taken."""
        return not self.waiting and not self._done


class TorchReader:
    """The net read as `PieceClassifier` reads its export (each crop with its mirror image, the
    embeddings averaged), for `evaluate.rendered_metrics`; it keeps every answer it gave
    (`answers`, in order)."""

    def __init__(self, net, dev, threshold: float | None = None):
        from scanner.piece_classifier import DEFAULT_THRESHOLD

        self.net, self.dev = net, dev
        self.threshold = DEFAULT_THRESHOLD if threshold is None else threshold
        self.answers: list[np.ndarray] = []

    def embed(self, crops: np.ndarray) -> np.ndarray:
        import torch
        from torch.nn import functional as F

        x = torch.from_numpy(np.ascontiguousarray(crops)).to(self.dev).permute(0, 3, 1, 2)
        x = x.float() / 255
        with torch.no_grad():
            _, e1, p, _ = self.net(x)
            _, e2, _, _ = self.net(x.flip(3))
        self._prototypes = p.float().cpu().numpy()
        return F.normalize(e1 + e2, dim=1).float().cpu().numpy()

    def probabilities(self, desc: np.ndarray) -> np.ndarray:
        from scanner.piece_classifier import COSINE_SCALE, _softmax

        probs = _softmax(COSINE_SCALE * desc @ self._prototypes.T)
        self.answers.append(probs)
        return probs

    def decide(self, probs: np.ndarray) -> dict:
        from scanner.piece_classifier import decide

        return decide(probs, self.threshold)


def val_metrics(net, dev, cs) -> dict:
    """The bench's measures (`evaluate.rendered_metrics`) on the validation crops, plus the
    best class alone and the whole answer by kind of set and by camera elevation."""
    from scanner.piece_classifier import UNSURE_CLASS

    from .evaluate import rendered_metrics

    was_training = net.training
    net.eval()
    reader = TorchReader(net, dev)
    out = rendered_metrics(reader, cs, batch=1024)
    net.train(was_training)
    probs = np.concatenate(reader.answers)
    pred = reader.decide(probs)["piece"]
    out["top1"] = round(float((probs.argmax(1) == cs.y).mean()), 4)
    piece = (cs.y > 0) & (cs.y != UNSURE_CLASS)
    groups = np.array([group_of(s) for s in cs.piece_set])
    for name, sel in (("training_sets", groups == 0), ("procedural", groups == 2),
                      ("tokens", groups == 1), ("below_70", cs.elevation < 70),
                      ("above_70", cs.elevation >= 70)):
        m = piece & sel
        out[f"kind_colour_{name}"] = round(float((pred[m] == cs.y[m]).mean()), 4) \
            if m.any() else None
    return out


def _init_worker() -> None:
    import cv2

    cv2.setNumThreads(1)


def train_on_device(args: argparse.Namespace) -> dict:
    """See the module's docstring. Writes into $OUT (default ./out): log.txt, pieces.pt (every
    --ckpt-every s and at the end), summary.json. Returns the summary."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from models.cards.gpu_index import one_cycle, run_log, save_state

    t0 = time.time()
    out = Path(os.environ.get("OUT", "out"))
    log = run_log(out, t0)
    if args.pack:
        os.environ["ROYAL_TABLE_CACHE"] = str(args.cache)  # the workers inherit it
    import torch
    import torch.nn.functional as F

    from scanner.piece_classifier import CLASSES

    from .data import CropSet
    from .net import PieceNet

    torch.set_num_threads(args.threads)
    # workers are spawned, not forked: a process that has run OpenCV's or torch's thread
    # pools can leave a lock held in a forked child, which then waits for ever (a test run
    # after other tests hung so in CI); spawned ones start clean and inherit the environment
    ex = ProcessPoolExecutor(args.workers, mp_context=mp.get_context("spawn"),
                             initializer=_init_worker)
    if args.pack:
        n_img = unpack(Path(args.pack), Path(args.cache), ex)
        log(f"{n_img} images of the pack unpacked into {args.cache}")
    Xr, yr = load_real(Path(args.pack) if args.pack else None)
    shares = (args.proc_share, args.above_share)
    todo_val = val_chunks(args.val_scenes, *shares, args.scenes_per_chunk)
    if not todo_val:
        raise ValueError(f"--val-scenes {args.val_scenes}: too few to give any part one")
    futs_val = [ex.submit(render_chunk, c) for c in todo_val]
    gen = Generation(ex, chunks(args.max_scenes, *shares, args.scenes_per_chunk,
                                args.distractors, args.distractor_scale, args.skip_scenes))

    # CUDA is first touched here
    dev = torch.device(args.device or default_device())
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    g = torch.Generator(device=dev).manual_seed(args.seed)
    pool = CropPool(args.cap, dev, len(CLASSES))
    val = CropSet.concat([f.result()[0] for f in futs_val])
    log(f"validation: {len(val.y)} crops of {len(set(val.frame.tolist()) - {-1})} scenes; "
        f"torch {torch.__version__} "
        f"on " + (torch.cuda.get_device_name(dev) if dev.type == "cuda" else str(dev)))
    real_x = torch.from_numpy(Xr).to(dev)
    real_y = torch.from_numpy(yr).to(dev)
    n_real = int(round(args.batch * args.real_share)) if len(yr) else 0
    if len(yr):
        log(f"{len(yr)} real crops, {n_real} of each batch of {args.batch}")
    net = PieceNet(len(CLASSES))
    if args.init:  # go on from an earlier run's weights (its pieces.pt)
        net.load_state_dict(torch.load(args.init, map_location="cpu", weights_only=True))
        log(f"starting from {args.init}")
    net = net.to(dev).to(memory_format=torch.channels_last)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4,
                            fused=dev.type == "cuda")

    while time.time() < t0 + args.gen_only or pool.n == 0:
        time.sleep(0.5)
        gen.tend(pool, log, stop=time.time() - t0 > args.stop_gen)
        if pool.n == 0 and gen.exhausted:
            raise RuntimeError(f"no training crops: {gen.failed} chunks failed (log.txt)")
    gen_scenes_at_start = sum(gen.scenes.values())
    log(f"training starts on {pool.n} crops of {gen_scenes_at_start} scenes, batch "
        f"{args.batch}, lr {args.lr}")
    step = samples = 0
    losses: list[dict] = []
    history: list[dict] = []
    t_start = last_ck = last_ev = last_take = time.time()
    loss_sum, n_loss = 0.0, 0
    while (now := time.time()) < t_start + args.train:
        lr, beta1 = one_cycle((now - t_start) / args.train, args.lr)
        if now - last_take > 1.0:
            gen.tend(pool, log, stop=now - t0 > args.stop_gen)
            last_take = now
        sel = pool.draw(args.batch - n_real, g)
        xb, yb = pool.images[sel], pool.labels[sel]
        if n_real:
            ri = torch.randint(len(real_y), (n_real,), device=dev, generator=g)
            xb, yb = torch.cat([xb, real_x[ri]]), torch.cat([yb, real_y[ri]])
        x = augment_gpu(xb.permute(0, 3, 1, 2).float() / 255, g, args.defocus)
        for group in opt.param_groups:
            group["lr"], group["betas"] = lr, (beta1, 0.999)
        logits = net(x.contiguous(memory_format=torch.channels_last))[0]
        loss = F.cross_entropy(logits, yb, label_smoothing=0.05)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        loss_sum, n_loss = loss_sum + loss.detach(), n_loss + 1
        step, samples = step + 1, samples + args.batch
        if now - last_ev > args.eval_every:
            m = val_metrics(net, dev, val)
            mean_loss = float(loss_sum) / n_loss
            losses.append({"t": round(now - t0, 1), "step": step, "loss": round(mean_loss, 4)})
            history.append({"t": round(now - t0, 1), "step": step, "top1": m["top1"],
                             "occupancy": m["occupancy"], "kind_colour_3d": m["kind_colour_3d"]})
            log(f"step {step} lr {lr:.2e} pool {pool.n} crops "
                f"({samples / (now - t_start):.0f} samples/s): loss {mean_loss:.4f}, validation "
                f"top1 {m['top1']:.4f} occupancy {m['occupancy']:.4f} kind+colour 3D "
                f"{m['kind_colour_3d']} tokens {m['kind_colour_tokens']}")
            last_ev, loss_sum, n_loss = now, 0.0, 0
        if now - last_ck > args.ckpt_every:
            last_ck = now
            save_state(net.state_dict(), out / "pieces.pt")
    train_s = time.time() - t_start
    gen.tend(pool, log, stop=True)
    ex.shutdown(wait=False, cancel_futures=True)
    save_state(net.state_dict(), out / "pieces.pt")
    if n_loss:
        losses.append({"t": round(time.time() - t0, 1), "step": step,
                       "loss": round(float(loss_sum) / n_loss, 4)})
    m = val_metrics(net, dev, val)
    scenes = sum(gen.scenes.values())
    summary = {
        "scenes": scenes, "scenes_by_part": gen.scenes, "crops": pool.n,
        "crops_by_kind": dict(zip(GROUPS[:4], pool.group_counts[:4].tolist(), strict=True)),
        "crops_per_scene": round(pool.n / max(scenes, 1), 1),
        "crops_per_class": pool.class_counts().tolist(), "real_crops": int(len(yr)),
        "real_per_batch": n_real, "scenes_at_training_start": gen_scenes_at_start,
        "chunks_failed": gen.failed, "pool_full": pool.full,
        "render_s_per_scene_per_worker": round(gen.render_s / max(scenes, 1), 3),
        "scenes_per_s_per_worker": round(scenes / max(gen.render_s, 1e-9), 3),
        "steps": step, "steps_per_s": round(step / max(train_s, 1e-9), 2),
        "batch": args.batch, "samples": samples, "passes": round(samples / max(pool.n, 1), 2),
        "losses": losses, "final_loss": losses[-1]["loss"] if losses else None,
        "val_scenes": args.val_scenes, "val_crops": int(len(val.y)), "val": m,
        "val_history": history,
        "gen_only_s": args.gen_only, "train_s": args.train, "stop_gen_s": args.stop_gen,
        "wall_s": round(time.time() - t0, 1), "lr": args.lr, "seed": args.seed,
        "workers": args.workers, "defocus": args.defocus, "distractors": args.distractors,
        "distractor_scale": args.distractor_scale, "shares": part_shares(*shares),
        "scenes_per_chunk": args.scenes_per_chunk, "pack": bool(args.pack),
        "init": args.init, "skip_scenes": args.skip_scenes,
        "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else str(dev),
        "torch": torch.__version__,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    log(f"done: {step} steps ({summary['steps_per_s']}/s), {samples} samples from {pool.n} "
        f"crops of {scenes} scenes; validation top1 {m['top1']}, occupancy {m['occupancy']}, "
        f"kind+colour 3D {m['kind_colour_3d']}, 70-90 degrees {m['kind_colour_above_70']}")
    log.close()
    ex.shutdown(wait=True)  # the chunks still running when training ended: seconds at most
    return summary


# -- export (here) -------------------------------------------------------------------------------

def export(pt: Path, out: Path, summary: Path | None = None) -> Path:
    """The trained state dict as `out`/piece_classifier.onnx, exported as `train.export` does;
    checked against torch through `PieceClassifier` (the scanner's reader). With `summary`,
    the run's record goes beside it as gpu_run.json."""
    import torch

    from scanner.piece_classifier import CLASSES, PieceClassifier
    from scanner.piece_crops import CROP_H, CROP_W

    from .net import PieceNet
    from .train import export as export_onnx

    torch.set_num_threads(1)
    net = PieceNet(len(CLASSES))
    net.load_state_dict(torch.load(pt, weights_only=True))
    net.eval()
    out.mkdir(parents=True, exist_ok=True)
    path = out / "piece_classifier.onnx"
    export_onnx(net, path)
    crops = np.random.default_rng(0).integers(0, 256, (8, CROP_H, CROP_W, 3), dtype=np.uint8)
    clf = PieceClassifier(path, mirror=False, tokens=False)
    mine = clf.embed(crops)[:, :clf.embed_dim]
    with torch.no_grad():
        ref = net(torch.from_numpy(crops).permute(0, 3, 1, 2).float() / 255)[1].numpy()
    if not np.allclose(mine, ref, atol=1e-4):
        raise RuntimeError(f"the ONNX model's embeddings differ from torch's by "
                           f"{np.abs(mine - ref).max():.2e}")
    if summary is not None:
        run = json.loads(summary.read_text())
        (out / "gpu_run.json").write_text(json.dumps(run, indent=1) + "\n")
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return path


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m models.pieces.gpu_train",
                                description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    a = sub.add_parser("pack", help="pack what the renderer needs for training scenes into DIR")
    a.add_argument("dir")
    a.add_argument("--real", type=Path, default=None,
                   help="a real-photo set (real-pieces-dev layout): its trainable half joins")
    u = sub.add_parser("unpack", help="a pack as a renderer asset cache ($ROYAL_TABLE_CACHE)")
    u.add_argument("dir")
    u.add_argument("cache")
    t = sub.add_parser("train", help="on the GPU machine: render and train")
    t.add_argument("--pack", help="the folder `pack` wrote (carried); without it the "
                   "renderer's own cache (a machine with the Debian packages)")
    t.add_argument("--cache", type=Path,
                   default=Path(tempfile.gettempdir()) / "royal-table-gpu-pack" / "assets",
                   help="where the pack is unpacked")
    t.add_argument("--workers", type=int, default=14, help="rendering processes")
    t.add_argument("--gen-only", type=float, default=90.0, help="s from start: training begins")
    t.add_argument("--train", type=float, default=420.0, help="s of training")
    t.add_argument("--stop-gen", type=float, default=450.0, help="s from start: no new scenes")
    t.add_argument("--seed", type=int, default=0, help="the net's start and the batches' draws "
                   "(the scenes are the recipe's own seeds)")
    t.add_argument("--batch", type=int, default=512)
    t.add_argument("--lr", type=float, default=4e-3, help="peak learning rate")
    t.add_argument("--max-scenes", type=int, default=40_000, help="scenes queued in all")
    t.add_argument("--scenes-per-chunk", type=int, default=2)
    t.add_argument("--skip-scenes", type=int, default=0, help="pass over the first N scenes "
                   "(each part its share): new scenes for a run that goes on from --init")
    t.add_argument("--init", default=None, help="an earlier run's pieces.pt to start from")
    t.add_argument("--val-scenes", type=int, default=60)
    t.add_argument("--proc-share", type=float, default=0.65,
                   help="share of scenes with a procedurally varied set")
    t.add_argument("--above-share", type=float, default=0.3,
                   help="share of scenes seen from 70-90 degrees (the rest 30-90)")
    t.add_argument("--distractors", type=float, default=0.12,
                   help="flat distractors a chunk adds per crop it made")
    t.add_argument("--distractor-scale", type=float, default=1.8)
    t.add_argument("--defocus", type=float, default=0.25,
                   help="share of training crops blurred hard (train.py's --defocus)")
    t.add_argument("--real-share", type=float, default=0.1,
                   help="share of each batch from the pack's real crops, where it has them")
    t.add_argument("--cap", type=int, default=1_500_000, help="crops the device pool holds")
    t.add_argument("--device", default=None, help="cuda where there is one, else cpu")
    t.add_argument("--threads", type=int, default=1, help="torch threads of the main process")
    t.add_argument("--ckpt-every", type=float, default=60.0)
    t.add_argument("--eval-every", type=float, default=30.0)
    e = sub.add_parser("export", help="pieces.pt -> OUT_DIR/piece_classifier.onnx")
    e.add_argument("pt")
    e.add_argument("out")
    e.add_argument("summary", nargs="?")
    args = p.parse_args(argv)
    if args.what == "pack":
        pack(Path(args.dir), real=args.real)
    elif args.what == "unpack":
        n = unpack(Path(args.dir), Path(args.cache))
        print(f"{n} images into {args.cache}: set ROYAL_TABLE_CACHE={args.cache}")
    elif args.what == "train":
        if min(args.gen_only, args.train, args.stop_gen, args.skip_scenes) < 0:
            p.error("the budgets are seconds >= 0")
        if min(args.workers, args.val_scenes, args.scenes_per_chunk) < 1 or args.batch < 2:
            p.error("--workers, --val-scenes, --scenes-per-chunk >= 1 and --batch >= 2")
        if not 0 <= args.real_share < 1:
            p.error("--real-share is a share of the batch, 0 to 1")
        train_on_device(args)
    else:
        export(Path(args.pt), Path(args.out), Path(args.summary) if args.summary else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
