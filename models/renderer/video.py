"""Recorded-game videos: a seeded engine game filmed with hands doing the work, plus a per-frame
truth file (gzipped JSON lines)."""

from __future__ import annotations

import copy
import gzip
import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from .geometry import INITIATIVE_POS, cell_centre
from .render import Hand, render_scene
from .scene import Scene

FPS = 10
REACH_IN = [0.3, 0.6, 0.85, 1.0]
REACH_OUT = [0.7, 0.35]
SETTLED_FRAMES = 6  # a real table rests for seconds between moves; trackers need a few quiet frames


def empty_position(first: dict) -> dict:
    """The empty table before set-up (the engine's records start after the first action):
    the engine's own new game with the recorded armies, else the first position emptied."""
    try:
        from engines.royal_battles import GameState, Side
        from engines.royal_battles.position import to_json

        armies = first["armies"]
        return to_json(GameState.new({Side.WHITE: list(armies["white"]),
                                      Side.BLACK: list(armies["black"])}))
    except (ImportError, KeyError, TypeError, ValueError):
        pass
    pos = copy.deepcopy(first)
    pos["board"] = {}
    pos["initiative"] = {"white": None, "black": None}
    pos["decks"] = {"white": 54, "black": 54}
    return pos


def _cell_state(truth_cell: dict) -> dict:
    out = {"card": truth_cell["card"], "stack": truth_cell["stack"],
           "orientation": truth_cell["orientation"], "unit": truth_cell["unit"]}
    if "corners" in truth_cell:
        out["corners"] = [[round(x, 1), round(y, 1)] for x, y in truth_cell["corners"]]
        out["visible_fraction"] = truth_cell["visible_fraction"]
    if "piece" in truth_cell:
        p = truth_cell["piece"]
        out["piece_bbox"] = p.get("bbox")
        out["piece_base"] = p.get("base_centre")
    return out


def _steps(prev: dict, action: str, pos: dict) -> list[tuple[dict, dict, Hand | None]]:
    """Physical steps of one action: (drawn before, drawn after, the hand that does it).
    An empty list: nothing visible changes (draws into a hand, passes, attacks that remove
    nobody)."""
    words = action.split()
    side, verb = words[0], words[1]
    sgn = -1 if side == "white" else 1
    if verb == "setup":
        cell, card = words[2], words[3]
        return [(prev, pos, Hand(side, cell_centre(cell), carry_card=card))]
    if verb == "place":
        cell = words[3]
        unit = pos["board"][cell].get("unit")
        return [(prev, pos, Hand(side, cell_centre(cell), height=8.0, carry_unit=unit))]
    if verb == "initiative":
        return [(prev, pos, Hand(side, INITIATIVE_POS[side], carry_card=words[2]))]
    if verb == "move":
        frm, to = words[2].split("-")
        card = words[3]
        unit = prev["board"][frm].get("unit")
        mid = copy.deepcopy(prev)
        st = mid["board"].setdefault(to, {"cards": [], "orientation": "portrait"})
        st["cards"] = list(st.get("cards", [])) + [card]
        if pos["board"].get(to, {}).get("orientation"):
            st["orientation"] = pos["board"][to]["orientation"]
        if frm == to:
            lifted = copy.deepcopy(prev)
            lifted["board"][frm].pop("unit", None)
            mid["board"][to]["unit"] = unit
            return [(lifted, pos, Hand(side, cell_centre(to), carry_card=card))]
        steps = [(prev, mid, Hand(side, cell_centre(to), carry_card=card))]
        lifted = copy.deepcopy(mid)
        lifted["board"][frm].pop("unit", None)
        x0, y0 = cell_centre(frm)
        steps.append((mid, lifted, Hand(side, (x0, y0 + sgn * 2), height=8.0)))
        steps.append((lifted, pos, Hand(side, cell_centre(to), height=8.0, carry_unit=unit)))
        return steps
    # an attack that removes units: a hand takes each one off the board
    steps = []
    cur = prev
    for cell, st in sorted(prev.get("board", {}).items()):
        if st.get("unit") and not pos["board"].get(cell, {}).get("unit"):
            nxt = copy.deepcopy(cur)
            nxt["board"][cell].pop("unit", None)
            owner = st["unit"]["side"]
            steps.append((cur, nxt, Hand(owner, cell_centre(cell), height=8.0)))
            cur = nxt
    if steps:
        steps.append((cur, pos, None))
    return steps


class VideoOut:
    """H.264 through Debian's ffmpeg (libx264, CRF) when it is installed, else OpenCV's
    MPEG-4 part 2 writer (OpenCV's wheels have no H.264 encoder)."""

    def __init__(self, path: Path, fps: int, width: int, height: int, crf: int = 30) -> None:
        exe = shutil.which("ffmpeg")
        self.proc = None
        self.writer = None
        if exe:
            self.codec = "h264"
            self.proc = subprocess.Popen(
                [exe, "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "bgr24", "-s",
                 f"{width}x{height}", "-r", str(fps), "-i", "-", "-c:v", "libx264", "-preset",
                 "slow", "-crf", str(crf), "-pix_fmt", "yuv420p", "-movflags", "+faststart",
                 str(path)], stdin=subprocess.PIPE)
        else:
            self.codec = "mp4v"
            self.writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), fps,
                                          (width, height))
            if not self.writer.isOpened():
                raise RuntimeError("no video writer: apt-get install ffmpeg")

    def write(self, img: np.ndarray) -> None:
        if self.proc is not None:
            self.proc.stdin.write(np.ascontiguousarray(img).tobytes())
        else:
            self.writer.write(img)

    def release(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            if self.proc.wait() != 0:
                raise RuntimeError("ffmpeg failed")
        else:
            self.writer.release()


def game_frames(record: list[tuple[str, dict]], scene: Scene, max_rounds: int = 12,
                fps: int = FPS) -> Iterator[tuple[np.ndarray, dict]]:
    """Frames and truth lines for a recorded game (cut after `max_rounds` rounds)."""
    prev = empty_position(record[0][1])
    engine_pos = prev
    pending_actions: list[str] = []
    frame = 0

    def emit(drawn: dict, hands: list[Hand], settled: bool, doing: str | None):
        nonlocal frame, pending_actions
        r = render_scene(drawn, scene, hands=hands, frame=frame)
        t = r.truth
        line = {"frame": frame, "t": round(frame / fps, 2), "settled": settled,
                "doing": doing, "actions": pending_actions, "position": engine_pos,
                "cells": {c: _cell_state(e) for c, e in t["cells"].items() if e["stack"]},
                "initiative": t["initiative"],
                "hands": [{"side": h["side"], "hull": h.get("hull")} for h in t["hands"]]}
        pending_actions = []
        frame += 1
        return r.image, line

    yield emit(prev, [], True, None)
    for action, pos in record:
        if pos.get("round", 0) > max_rounds:
            break
        steps = _steps(prev, action, pos)
        for before, after, hand in steps:
            if hand is None:
                continue
            carrying = Hand(hand.side, hand.target, 0.0, hand.height, hand.carry_card,
                            hand.carry_unit)
            for reach in REACH_IN[:-1]:
                carrying.reach = reach
                yield emit(before, [carrying], False, action)
            empty = Hand(hand.side, hand.target, 1.0, hand.height + 1.0)
            yield emit(after, [empty], False, action)
            for reach in REACH_OUT:
                empty.reach = reach
                yield emit(after, [empty], False, action)
        pending_actions.append(action)
        engine_pos = pos
        prev = pos
        if steps:
            for _ in range(SETTLED_FRAMES):
                yield emit(prev, [], True, None)
    yield emit(prev, [], True, None)


def record_video(seed: int, out_dir: Path, scene: Scene | None = None, split: str = "train",
                 max_rounds: int = 12, fps: int = FPS, width: int = 960, height: int = 540,
                 log=print) -> dict:
    """Play engine game `seed`, film it into out_dir/game.mp4 + truth.jsonl.gz + scene.json."""
    from engines.royal_battles.selfplay import record_game

    out_dir.mkdir(parents=True, exist_ok=True)
    if scene is None:
        scene = Scene.random(seed, split=split, width=width, height=height, whole_board=True)
        scene.motion = 0.0
        scene.jpeg = 100
    record = record_game(seed)
    writer = VideoOut(out_dir / "game.mp4", fps, scene.width, scene.height)
    n = 0
    with gzip.open(out_dir / "truth.jsonl.gz", "wt", compresslevel=9) as f:
        for img, line in game_frames(record, scene, max_rounds, fps):
            writer.write(img)
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
            n += 1
            if n % 100 == 0:
                log(f"  {n} frames")
    writer.release()
    meta = {"seed": seed, "frames": n, "fps": fps, "codec": writer.codec, "max_rounds": max_rounds,
            "scene": scene.to_dict()}
    (out_dir / "scene.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def read_truth(path: Path) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]
