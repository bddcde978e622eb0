"""Things that lie about on a real table beside the game: mugs, phones, card boxes, a pen.
Simple shaded solids off the board, with soft shadows; they are distractors, not truth."""

from __future__ import annotations

import math

import cv2
import numpy as np

from .geometry import BOARD_H, BOARD_W, Camera
from .scene import sub_seed


def _box(cx, cy, w, d, h, ang):
    c, s = math.cos(ang), math.sin(ang)
    pts = []
    for z in (0.0, h):
        for dx, dy in ((-w / 2, -d / 2), (w / 2, -d / 2), (w / 2, d / 2), (-w / 2, d / 2)):
            pts.append([cx + c * dx - s * dy, cy + s * dx + c * dy, z])
    v = np.array(pts)
    faces = [[4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]]
    return v, faces


def _cylinder(cx, cy, r, h, n=20):
    ring = [[cx + r * math.cos(t), cy + r * math.sin(t)] for t in
            np.linspace(0, 2 * math.pi, n, endpoint=False)]
    v = np.array([[x, y, 0.0] for x, y in ring] + [[x, y, h] for x, y in ring])
    faces = [[n + i for i in range(n)]]
    faces += [[i, (i + 1) % n, n + (i + 1) % n, n + i] for i in range(n)]
    return v, faces


def clutter_items(scene) -> list[tuple[np.ndarray, list, tuple]]:
    """0-3 objects placed off the board (and off the initiative/deck area), seeded."""
    rng = np.random.default_rng(sub_seed("clutter", scene.seed))
    items = []
    for _ in range(int(rng.choice([0, 1, 1, 2, 3]))):
        for _try in range(10):
            x = rng.uniform(-BOARD_W / 2 - 45, BOARD_W / 2 + 60)
            y = rng.uniform(-BOARD_H / 2 - 35, BOARD_H / 2 + 35)
            if abs(x) > BOARD_W / 2 + 28 or abs(y) > BOARD_H / 2 + 10:
                break
        else:
            continue
        kind = rng.choice(["mug", "phone", "box", "pen"])
        colour = tuple(float(c) for c in rng.integers(20, 235, 3))
        if kind == "mug":
            v, f = _cylinder(x, y, rng.uniform(3.5, 4.5), rng.uniform(8, 11))
        elif kind == "phone":
            v, f = _box(x, y, 7.2, 15.0, 0.9, rng.uniform(0, math.pi))
            colour = tuple(float(c) for c in rng.integers(10, 60, 3))
        elif kind == "box":
            v, f = _box(x, y, 6.8, 9.5, rng.uniform(2.0, 3.5), rng.uniform(0, math.pi))
        else:  # a pen
            v, f = _box(x, y, 0.9, 14.0, 0.9, rng.uniform(0, math.pi))
        items.append((v, f, colour))
    return items


def draw_clutter(canvas: np.ndarray, occ: np.ndarray, cam: Camera, scene) -> int:
    items = clutter_items(scene)
    if not items:
        return 0
    from .render import darken

    H_, W_ = canvas.shape[:2]
    ld = np.array([math.cos(scene.light_dir), math.sin(scene.light_dir), 0.0])
    sm = np.zeros((H_, W_), np.uint8)
    k = 1.0 / math.tan(scene.light_elev)
    for v, _, _ in items:
        if cam.to_cam(v)[:, 2].min() < 1:
            continue
        shadow = v.copy()
        shadow[:, :2] += ld[:2] * v[:, 2:3] * k
        shadow[:, 2] = 0
        pts = np.vstack([cam.project_ideal(v[v[:, 2] < 0.01]), cam.project_ideal(shadow)])
        hull = cv2.convexHull(pts.astype(np.float32)).astype(np.int32)
        cv2.fillConvexPoly(sm, hull, 255, cv2.LINE_AA)
    darken(canvas, cv2.GaussianBlur(sm, (0, 0), 4), 0.4)
    light = np.array([-ld[0], -ld[1], math.tan(scene.light_elev)])
    light /= np.linalg.norm(light)
    cpos = cam.centre()
    for v, faces, colour in sorted(items, key=lambda it: -float(
            np.linalg.norm(it[0].mean(0) - cpos))):
        if cam.to_cam(v)[:, 2].min() < 1:
            continue
        uv = cam.project_ideal(v)
        centre = v.mean(0)
        polys = []
        for face in faces:
            p = v[face]
            n = np.cross(p[1] - p[0], p[2] - p[0])
            if np.linalg.norm(n) < 1e-9:
                continue
            n /= np.linalg.norm(n)
            if np.dot(n, p.mean(0) - centre) < 0:
                n = -n
            if np.dot(n, cpos - p.mean(0)) <= 0:
                continue  # faces away from the camera
            shade = 0.45 + 0.65 * max(0.0, float(np.dot(n, light)))
            depth = float(np.linalg.norm(p.mean(0) - cpos))
            polys.append((depth, uv[face], shade))
        for _, q, shade in sorted(polys, key=lambda t: -t[0]):
            c = tuple(min(255.0, ch * shade) for ch in colour)
            qi = np.round(q * 4).astype(np.int32)
            cv2.fillPoly(canvas, [qi], c, cv2.LINE_AA, shift=2)
            cv2.fillPoly(occ, [qi], 255, cv2.LINE_8, shift=2)
    return len(items)
