"""Training samples cut from renders: card crops and piece crops with their labels.

    for crop, label in card_crops(seed=0, n_frames=10, split="train"):
        ...   # crop: BGR, rectified upright card; label: {"code", "design", "visible", ...}
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .render import crop_card, render_scene
from .scene import Scene
from .stills import random_hands, random_position


def _frames(seed: int, n_frames: int, split: str, width: int, height: int, whole_board: bool):
    for i in range(n_frames):
        s = seed * 100_003 + i
        scene = Scene.random(s, split=split, width=width, height=height, whole_board=whole_board)
        pos = random_position(s)
        yield scene, pos, render_scene(pos, scene, hands=random_hands(s, pos))


def card_crops(seed: int = 0, n_frames: int = 10, split: str = "train",
               size: tuple[int, int] = (125, 175), min_visible: float = 0.0,
               width: int = 1280, height: int = 720,
               whole_board: bool = False) -> Iterator[tuple[np.ndarray, dict]]:
    """Every top card (and initiative card) of `n_frames` random renders, rectified upright
    (w, h = size), with its label; cards partly out of frame are skipped."""
    for scene, _, r in _frames(seed, n_frames, split, width, height, whole_board):
        entries = [(c, e) for c, e in r.truth["cells"].items() if "corners" in e]
        entries += [(f"initiative-{s}", e) for s, e in r.truth["initiative"].items() if e]
        for where, e in entries:
            if e.get("in_frame", 1.0) < 1.0 or e["visible_fraction"] < min_visible:
                continue
            label = {"code": e["card"], "where": where, "visible": e["visible_fraction"],
                     "orientation": e.get("orientation"), "seed": scene.seed,
                     "designs": sorted({scene.design_white, scene.design_black})}
            yield crop_card(r.image, e["corners"], size), label


def piece_crops(seed: int = 0, n_frames: int = 10, split: str = "train", margin: float = 0.15,
                width: int = 1280, height: int = 720,
                whole_board: bool = False) -> Iterator[tuple[np.ndarray, dict]]:
    """The bounding box (plus a margin) of every standing piece, with its kind and side."""
    for _scene, _, r in _frames(seed, n_frames, split, width, height, whole_board):
        H, W = r.image.shape[:2]
        for cell, e in r.truth["cells"].items():
            p = e.get("piece")
            if not p or "bbox" not in p:
                continue
            x0, y0, x1, y1 = p["bbox"]
            mx, my = (x1 - x0) * margin, (y1 - y0) * margin
            x0, y0 = int(max(0, x0 - mx)), int(max(0, y0 - my))
            x1, y1 = int(min(W, x1 + mx)), int(min(H, y1 + my))
            if x1 - x0 < 4 or y1 - y0 < 4:
                continue
            yield r.image[y0:y1, x0:x1].copy(), {"kind": p["kind"], "side": p["side"],
                                                  "set": p["set"], "cell": cell,
                                                  "visible": e.get("visible_fraction")}
