"""Still frames with truth, the benchmark and the contact sheet."""

from __future__ import annotations

import json
import random
import statistics
import time
from pathlib import Path

import cv2
import numpy as np

from .geometry import CELLS, FILES, cell_centre
from .render import Hand, render_scene
from .scene import Scene, sub_seed

KINDS = ["pawn", "rook", "knight", "bishop", "queen", "king"]
CODES = [r + s for s in "CDHS" for r in
         ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]] + ["JK"]


def random_position(seed: int) -> dict:
    """A plausible mid-game table: set-up rows, cards spread from them, 2-4 units a side,
    initiative cards. It need not be reachable; stills only need variety."""
    rng = random.Random(sub_seed("position", seed))
    board: dict[str, dict] = {}
    for rank in ("1", "5"):
        for f in "aceg":
            board[f + rank] = {"cards": [rng.choice(CODES)], "orientation": "portrait"}
    for cell in rng.sample(CELLS, rng.randint(3, 14)):
        st = board.setdefault(cell, {"cards": [], "orientation": "portrait"})
        st["cards"].append(rng.choice(CODES))
        if rng.random() < 0.12:
            st["orientation"] = "landscape"
    for side in ("white", "black"):
        cells = [c for c in board if "unit" not in board[c]]
        for cell in rng.sample(cells, rng.randint(1, 4)):
            board[cell]["unit"] = {"side": side, "kind": rng.choice(KINDS),
                                   "injury": rng.randint(0, 5)}
    return {"game": "royal-battles", "round": rng.randint(1, 20),
            "to_move": rng.choice(["white", "black"]),
            "initiative": {"white": rng.choice(CODES), "black": rng.choice(CODES)},
            "board": board, "hands": {"white": None, "black": None},
            "decks": {"white": rng.randint(10, 45), "black": rng.randint(10, 45)}}


def random_hands(seed: int, position: dict) -> list[Hand]:
    rng = random.Random(sub_seed("hands", seed))
    hands = []
    for _ in range(rng.choice([0, 0, 1, 1, 2])):
        side = rng.choice(["white", "black"])
        cell = rng.choice(FILES) + str(rng.randint(1, 5))
        x, y = cell_centre(cell)
        carry = rng.random()
        hands.append(Hand(side, (x, y), rng.uniform(0.6, 1.0), rng.uniform(3, 10),
                          carry_card=rng.choice(CODES) if carry < 0.4 else None,
                          carry_unit={"side": side, "kind": rng.choice(KINDS), "injury": 0}
                          if carry > 0.8 else None))
    return hands


def write_stills(out: Path, seeds: list[int], split: str = "train", width: int = 1280,
                 height: int = 720, quality: int = 90, whole_board: bool = True) -> list[Path]:
    """Render one still per seed as out/still_<seed>.jpg, .json (the truth, with the position)
    and _occluders.png (pieces, tokens and hands)."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for seed in seeds:
        scene = Scene.random(seed, split=split, width=width, height=height,
                             whole_board=whole_board)
        pos = random_position(seed)
        r = render_scene(pos, scene, hands=random_hands(seed, pos))
        p = out / f"still_{seed:05d}.jpg"
        cv2.imwrite(str(p), r.image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        truth = dict(r.truth)
        truth["position"] = pos
        (out / f"still_{seed:05d}.json").write_text(json.dumps(truth, separators=(",", ":")))
        # the occluded regions (pieces, tokens, hands) as a 1-bit mask
        cv2.imwrite(str(out / f"still_{seed:05d}_occluders.png"),
                    (r.masks["occluder"] > 0).astype(np.uint8) * 255,
                    [cv2.IMWRITE_PNG_BILEVEL, 1])
        paths.append(p)
    return paths


def bench(frames: int = 20, width: int = 1280, height: int = 720) -> dict:
    """Per-frame render time with warm caches: CPU time of this one process (what one core
    spends; the figure to compare with the 0.2 s budget) and wall time. OpenCV is held to one
    thread so that the figure is one core's."""
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    cpu, wall = [], []
    for i in range(frames):
        scene = Scene.random(1000 + i % 5, width=width, height=height)
        pos = random_position(i)
        hands = random_hands(i, pos)
        render_scene(pos, scene, hands=hands)  # warm the asset caches for this scene
        t, c = time.perf_counter(), time.process_time()
        render_scene(pos, scene, hands=hands, frame=1)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    cv2.setNumThreads(threads)
    return {"frames": frames, "median_ms": round(statistics.median(cpu) * 1000, 1),
            "max_ms": round(max(cpu) * 1000, 1),
            "median_wall_ms": round(statistics.median(wall) * 1000, 1), "size": f"{width}x{height}"}


CREDITS = [
    "Top: renders (odd tiles held-out assets). Real photos: 'poker cards' v4, Roboflow Universe "
    "project poker-cards-fmjio, CC BY 4.0;",
    "'Chess Pieces' v24, Roboflow Universe project chess-pieces-new, public domain. "
    "Real card photos are stretched to square by their publisher.",
]


def contact_sheet(out: Path, real_dirs: list[Path], n: int = 8, seed: int = 0) -> Path:
    """A grid: renders (top rows) beside real photographs (bottom rows), 320x240 tiles."""
    tile = (320, 240)
    renders = []
    for i in range(n):
        split = "heldout" if i % 2 else "train"
        scene = Scene.random(seed + i, split=split, width=960, height=720, whole_board=i % 3 > 0)
        pos = random_position(seed + i)
        img = render_scene(pos, scene, hands=random_hands(seed + i, pos)).image
        renders.append(cv2.resize(img, tile, interpolation=cv2.INTER_AREA))
    reals = []
    rng = random.Random(seed)
    for d in real_dirs:
        files = sorted(d.glob("*.jpg"))
        for f in rng.sample(files, min(len(files), n // max(1, len(real_dirs)))):
            img = cv2.imread(str(f))
            if img is not None:
                reals.append(cv2.resize(img, tile, interpolation=cv2.INTER_AREA))
    while len(reals) < n:
        reals.append(np.zeros((tile[1], tile[0], 3), np.uint8))

    def label(img, text):
        img = img.copy()
        cv2.rectangle(img, (0, 0), (tile[0], 22), (0, 0, 0), -1)
        cv2.putText(img, text, (6, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255), 1,
                    cv2.LINE_AA)
        return img

    per_row = 4
    rows = []
    for items, name in ((renders, "render"), (reals[:n], "real photo")):
        for r in range(0, n, per_row):
            rows.append(np.hstack([label(im, f"{name}") for im in items[r:r + per_row]]))
    sheet = np.vstack(rows)
    foot = np.full((44, sheet.shape[1], 3), 255, np.uint8)
    for k, text in enumerate(CREDITS):
        cv2.putText(foot, text, (8, 17 + 20 * k), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (0, 0, 0), 1,
                    cv2.LINE_AA)
    sheet = np.vstack([sheet, foot])
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), sheet, [cv2.IMWRITE_PNG_COMPRESSION, 9])
    return out
