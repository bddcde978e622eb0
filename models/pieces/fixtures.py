"""Write the piece tests' fixture stills (tests/fixtures/pieces/*.jpg + truth .json) from the
renderer, with the held-out piece set and card designs only.

    python -m models.pieces.fixtures [--out tests/fixtures/pieces]

Truth labels per cell: "empty", a piece ("white-knight"), "unsure" (a piece knocked over, or a
hand over most of the cell: the scanner must not guess) or "any" (a hand over part of the
cell: either answer is acceptable).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from unittest import mock

import cv2
import numpy as np

from scanner.piece_crops import as_board_camera, cell_centre, crop_quad, warp_quad

from .data import _COL0, _COL1, _ROW0, _ROW1, HAND_CLEAR, HAND_UNSURE, _hand_mask, paste_fallen

OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "pieces"
SEED0 = 2_000_000  # apart from training (0..) and the bench's held-out scenes (1_000_000..)


def _unit(label: str) -> dict:
    side, kind = label.split("-")
    return {"kind": kind, "side": side}


def _position(cards: list[str], units: dict[str, str]) -> dict:
    codes = ["3H", "9S", "JD", "5C", "KH", "2S", "7D", "QC", "4H", "10S", "AD", "8C", "6H"]
    board = {}
    for i, cell in enumerate(cards):
        board[cell] = {"cards": [codes[i % len(codes)]], "orientation": "portrait"}
        if cell in units:
            board[cell]["unit"] = _unit(units[cell])
    return {"board": board}


SETUP_UNITS = {"a1": "white-rook", "c1": "white-queen", "e1": "white-knight", "g1": "white-pawn",
               "a5": "black-pawn", "c5": "black-bishop", "e5": "black-king", "g5": "black-knight"}
MID_UNITS = {"b2": "white-king", "c3": "black-queen", "d2": "white-bishop", "e3": "black-rook",
             "d4": "black-knight", "f2": "white-pawn", "b4": "white-knight", "f4": "black-pawn"}

STILLS = {
    # the set-up position: each army on its home rank, a few empty cards between
    "setup-lathe": dict(units=SETUP_UNITS, cards=["a1", "c1", "e1", "g1", "a5", "c5", "e5", "g5",
                                                  "b3", "d3", "f3", "d2"],
                        scene=dict(elevation=50.0, azimuth=8.0, piece_set="lathe")),
    # a game under way, pieces pushed toward their cell's border, a low camera
    "border-lathe": dict(units=MID_UNITS, cards=list(MID_UNITS) + ["a3", "g3", "d5", "c1"],
                         offsets={"b2": (1.8, 0.0), "e3": (-1.8, 1.5), "d4": (0.0, -2.0),
                                  "f2": (1.5, 1.5)},
                         fallen={"a3": ("black", "queen"), "g3": ("white", "rook")},
                         scene=dict(elevation=36.0, azimuth=350.0, piece_set="lathe", k1=0.0,
                                    k2=0.0)),
    # hands reaching over the board
    "hands-lathe": dict(units=MID_UNITS, cards=list(MID_UNITS) + ["a3", "g3"],
                        hands=[("white", "d2", 0.95, 5.0), ("black", "e3", 1.0, 8.0)],
                        scene=dict(elevation=58.0, azimuth=180.0, piece_set="lathe")),
    # the rulebook's paper tokens, seen from high up
    "tokens": dict(units=SETUP_UNITS | MID_UNITS, cards=list(SETUP_UNITS | MID_UNITS),
                   scene=dict(elevation=72.0, azimuth=20.0, piece_set="paper-token")),
    # straight down: the crop's vertical degenerates
    "topdown-lathe": dict(units=MID_UNITS, cards=list(MID_UNITS) + ["a3", "g3"],
                          scene=dict(elevation=89.0, azimuth=0.0, piece_set="lathe")),
}


def render_still(name: str, spec: dict, seed: int):
    from models.renderer import Hand, Scene, render_scene
    from models.renderer import pieces as pieces_mod
    from models.renderer.render import scene_camera

    scene = Scene.random(seed, split="heldout")
    for k, v in spec["scene"].items():
        setattr(scene, k, v)
    scene.defocus, scene.motion = 0.0, 0.0
    pos = _position(spec["cards"], spec["units"])
    hands = [Hand(side=s, target=cell_centre(c), reach=r, height=h)
             for s, c, r, h in spec.get("hands", [])]
    offsets = spec.get("offsets", {})
    orig = pieces_mod.cell_centre

    def moved(cell):
        x, y = orig(cell)
        dx, dy = offsets.get(cell, (0.0, 0.0))
        return x + dx, y + dy

    with mock.patch.object(pieces_mod, "cell_centre", moved):
        res = render_scene(pos, scene, hands=hands)
    image, truth = res.image, res.truth
    rng = np.random.default_rng(seed)
    for cell, (side, kind) in spec.get("fallen", {}).items():
        x, y = cell_centre(cell)
        paste_fallen(image, scene_camera(scene), scene.piece_set, kind, side, x, y, rng)
    labels = {c: spec["units"].get(c, "empty") for c in spec["cards"]}
    for cell in spec.get("fallen", {}):
        labels[cell] = "unsure"
    hmask = _hand_mask(truth, image.shape)
    if hmask is not None:
        cam = as_board_camera(truth["camera"], image.shape)
        for cell in labels:
            frac = float((warp_quad(hmask, crop_quad(cam, *cell_centre(cell)))
                          [_ROW0:_ROW1, _COL0:_COL1] > 127).mean())
            if frac > HAND_UNSURE:
                labels[cell] = "unsure"
            elif frac > HAND_CLEAR:
                labels[cell] = "any"
    cam = truth["camera"]
    meta = {"camera": {k: cam[k] for k in ("K", "R", "t", "dist")}, "labels": labels,
            "offsets_cm": offsets, "scene": scene.to_dict(), "seed": seed}
    return image, meta


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.pieces.fixtures", description=__doc__)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for i, (name, spec) in enumerate(STILLS.items()):
        image, meta = render_still(name, spec, SEED0 + i)
        cv2.imwrite(str(args.out / f"{name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 88])
        (args.out / f"{name}.json").write_text(json.dumps(meta, indent=1) + "\n")
        print(f"{name}: {sum(v not in ('empty',) for v in meta['labels'].values())} "
              f"non-empty cells, labels {meta['labels']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
