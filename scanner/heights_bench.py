"""`royal-table pieces heights`: how often the height gauge (`scanner.piece_height`) orders a
side's units as their kinds stand, on filmed set-ups.

Engine games whose armies hold a king and a queen are filmed up to the first initiative draw
(the set-up cards, then each unit placed on its bare card), in turn with the held-out `lathe`
set and the training sets `brutalchess` and `dreamchess`, cameras as the fixtures'. Each unit is
gauged from the settled frame before it was placed and the one after, through the 4-corner
profile a player would click. Printed per set: pairs of one side's units (king above queen;
king or queen above the others; a pawn below rooks, knights and bishops) ordered right, wrong,
and left unordered (no height, or heights within STATURE_GAP).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

PIECE_SETS = (("lathe", "heldout", "gnome-tango"), ("brutalchess", "train", "gnome-berlin"),
              ("dreamchess", "train", "kde-nicu-white"))
FIRST_SEED = 1000


def setup_clips(count: int, root: Path, log=print) -> list[Path]:
    """`count` filmed set-ups (cached in `root`), seeds from FIRST_SEED whose armies hold a
    king and a queen on one side."""
    from engines.royal_battles.selfplay import record_game
    from models.renderer.fixtures import game_scene
    from models.renderer.video import record_video

    from .scan_cli import _filmed

    out, seed = [], FIRST_SEED
    while len(out) < count:
        seed += 1
        armies = record_game(seed)[0][1]["armies"]
        if not any("king" in a and "queen" in a for a in armies.values()):
            continue
        piece_set, split, design = PIECE_SETS[len(out) % len(PIECE_SETS)]
        folder = root / f"su-s{seed}-{piece_set}"
        if not (folder / "scene.json").exists():
            log(f"filming the set-up of game {seed} ({piece_set}) ...")
            scene = game_scene(seed * 7 + 1, split, design, piece_set, 960, 540)
            record_video(seed, folder, scene=scene, max_rounds=0, log=lambda _m: None)
        _filmed(folder, seed, 0, split, design, piece_set, (960, 540), 0)  # the profile
        out.append(folder)
    return out


def gauged_units(folder: Path) -> list[tuple[str, str, str, float | None]]:
    """(side, kind, cell, height) of each unit placed in a filmed set-up."""
    import cv2

    from calibration.profile import Profile

    from .evaluate import read_truth
    from .piece_crops import as_board_camera
    from .piece_height import foreshortening, gauge_crop, height_cm

    rows = list(read_truth(folder / "truth.jsonl.gz"))
    cap = cv2.VideoCapture(str(folder / "game.mp4"))
    frames = []
    while len(frames) < len(rows):
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    cam = as_board_camera(Profile.load(folder / "profile.json"), frames[0].shape)
    units = []
    for i in range(1, len(frames)):
        doing = rows[i]["doing"] or ""
        if " place " not in doing or rows[i - 1]["doing"] == doing:
            continue
        side, _, kind, cell = doing.split()
        before = max(b for b in range(i) if rows[b]["settled"])
        after = next((a for a in range(i, len(frames)) if rows[a]["settled"]), None)
        if after is None:
            continue
        after = min(after + 2, len(frames) - 1)
        h = height_cm(gauge_crop(frames[before], cam, cell), gauge_crop(frames[after], cam, cell),
                      foreshortening(cam, cell))
        units.append((side, kind, cell, h))
    return units


PAIRS = ("king-queen", "tall-lower", "pawn-lower")


def _pair(kind_a: str, kind_b: str) -> str:
    kinds = {kind_a, kind_b}
    if kinds == {"king", "queen"}:
        return "king-queen"
    return "tall-lower" if kinds & {"king", "queen"} else "pawn-lower"


def ordered_pairs(units: list[tuple[str, str, str, float | None]]) -> dict[str, list[int]]:
    """Per pair kind (king above queen; king or queen above the others; a pawn below rooks,
    knights and bishops): [right, wrong, unordered]."""
    from .piece_height import STATURE_GAP, stature_order

    out = {key: [0, 0, 0] for key in PAIRS}
    for i, (side, kind, _c, h) in enumerate(units):
        for side2, kind2, _c2, h2 in units[i + 1:]:
            order = stature_order(kind, kind2) if side == side2 else None
            if order is None:
                continue
            key = _pair(kind, kind2)
            if not h or not h2 or abs(h - h2) / ((h + h2) / 2) < STATURE_GAP:
                out[key][2] += 1
            else:
                out[key][0 if (h > h2) == (order[1] == 0) else 1] += 1
    return out


def run(clips: int, as_json: bool = False) -> int:
    from models.renderer.assets import cache_dir

    root = cache_dir().parent / "setup-clips"
    folders = setup_clips(clips, root, log=lambda m: print(m, file=sys.stderr))
    by_set: dict[str, dict[str, list[int]]] = defaultdict(
        lambda: {key: [0, 0, 0] for key in PAIRS})
    for folder in folders:
        piece_set = folder.name.split("-")[-1]
        for key, counts in ordered_pairs(gauged_units(folder)).items():
            by_set[piece_set][key] = [a + b for a, b in zip(by_set[piece_set][key], counts,
                                                            strict=True)]
    if as_json:
        print(json.dumps({"clips": len(folders), "by_set": by_set}, indent=1))
        return 0
    print(f"{len(folders)} filmed set-ups; pairs ordered right / wrong / unordered")
    for piece_set, keys in sorted(by_set.items()):
        print(f"  {piece_set:12}" + "".join(
            f"  {key}: {r}/{w}/{u}" for key, (r, w, u) in keys.items()))
    return 0
