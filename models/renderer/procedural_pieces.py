"""Procedurally varied chess sets for training ("proc-<seed>" piece sets).

Two 3D sets are too few for a classifier to learn what makes a bishop a bishop rather than
what makes a *brutalchess* bishop one. Each seed here turns a new Staunton-like set: random
proportions (heights, widths, base and collar shapes, stem taper) and the heads that tell the
kinds apart, each with its own random shape: a ball (pawn), a crenellated tower (rook), a
mitre with a finial (bishop), a flared crown with a coronet (queen), a crown with a cross
(king), an extruded, more or less blocky horse head (knight); and random materials (light
side: ivory, cream, light wood, white or red plastic; dark side: ebony, dark wood, black,
dark red or blue).

The held-out set `lathe` (pieces.py `_PROFILES`, `_KNIGHT_HEAD`) is never produced here: these
profiles come from independent random parameters, not from perturbing the held-out ones, and
`meshes` checks that no generated profile equals a held-out one.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

KINDS = ["pawn", "rook", "knight", "bishop", "queen", "king"]
# relative heights (king = 1); the renderer scales every set to its king's height
_REL_HEIGHT = {"pawn": (0.48, 0.62), "rook": (0.55, 0.72), "knight": (0.6, 0.8),
               "bishop": (0.72, 0.88), "queen": (0.85, 0.97), "king": (1.0, 1.0)}
_LIGHT = [(200, 225, 240), (170, 210, 235), (120, 170, 215), (235, 235, 235), (190, 195, 200),
          (150, 200, 225), (110, 150, 200)]  # BGR: ivory, cream, light wood, white, grey, ...
_DARK = [(30, 50, 85), (30, 30, 32), (40, 60, 100), (30, 30, 100), (80, 45, 30), (45, 45, 45),
         (25, 35, 60)]  # BGR: dark wood, black, walnut, dark red, dark blue, grey-black, ebony


def _rng(seed: int, what: str) -> np.random.Generator:
    from .scene import sub_seed

    return np.random.default_rng(sub_seed("procedural-pieces", seed, what))


def set_colours(seed: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(light side, dark side) BGR base colours of set `seed`."""
    rng = _rng(seed, "colours")
    if rng.random() < 0.1:  # red against black
        white = (int(rng.integers(25, 60)), int(rng.integers(25, 60)), int(rng.integers(160, 220)))
        black = (int(rng.integers(15, 40)),) * 3
        return white, black
    w = np.array(_LIGHT[int(rng.integers(len(_LIGHT)))]) + rng.integers(-18, 19, 3)
    b = np.array(_DARK[int(rng.integers(len(_DARK)))]) + rng.integers(-10, 11, 3)
    return tuple(int(c) for c in np.clip(w, 0, 255)), tuple(int(c) for c in np.clip(b, 0, 255))


def _ball(r: float, zc: float, from_deg: float = -70, n: int = 7) -> list:
    """A profile arc of a sphere of radius r around height zc, from `from_deg` up to the top."""
    return [(r * math.cos(math.radians(a)), zc + r * math.sin(math.radians(a)))
            for a in np.linspace(from_deg, 90, n)]


def _base_and_stem(rng, H: float, head_h: float, rb: float) -> tuple[list, float, float]:
    """Foot, stem and collar up to where the head starts; returns (profile, z, neck radius)."""
    u = rng.uniform
    hb = u(0.25, 0.65)
    prof = [(0.0, 0.0), (rb, 0.0), (rb, hb)]
    z = hb
    for _ in range(int(rng.integers(0, 3))):  # steps and rings of the foot
        r = prof[-1][0] * u(0.72, 0.95)
        z += u(0.08, 0.3)
        prof.append((r, z))
        if rng.random() < 0.5:
            z += u(0.05, 0.2)
            prof.append((r * u(0.88, 1.0), z))
    r0 = rb * u(0.42, 0.72)
    z += u(0.15, 0.5)
    prof.append((r0, z))
    top = max(H - head_h - u(0.2, 0.45), z + 0.3)
    r1 = r0 * u(0.5, 0.95)
    if rng.random() < 0.5:  # a curved stem
        zm = (z + top) / 2
        prof.append(((r0 + r1) / 2 * u(0.8, 1.0), zm))
    prof.append((r1, top))
    # the collar
    rc = max(r1 * u(1.25, 2.0), r1 + 0.2)
    z = top
    prof.append((rc, z + u(0.05, 0.15)))
    z += u(0.15, 0.35)
    prof.append((rc * u(0.8, 1.0), z))
    neck = r1 * u(0.6, 0.95)
    z += u(0.05, 0.2)
    prof.append((neck, z))
    return prof, z, neck


def _block(poly_yz: list, half: float, rot: float = 0.0, dx: float = 0.0) -> np.ndarray:
    """Vertices of a prism: a convex polygon in the (y, z) plane extruded ±half along x, moved
    dx along x, then turned `rot` radians about the vertical."""
    v = np.array([[dx - half, y, z] for y, z in poly_yz] + [[dx + half, y, z] for y, z in poly_yz])
    c, s = math.cos(rot), math.sin(rot)
    return v @ np.array([[c, s, 0], [-s, c, 0], [0, 0, 1.0]])


def _convex(points: list) -> list:
    import cv2

    hull = cv2.convexHull(np.array(points, np.float32)).reshape(-1, 2)
    return [(float(a), float(b)) for a, b in hull]


def _head(kind: str, rng, H: float, z: float, neck: float, rb: float) -> tuple[list, list]:
    """The head of a piece: more profile points from height z up to H, and extra blocks
    (list of (poly_yz, half, rot, dx))."""
    u = rng.uniform
    h = H - z
    prof: list = []
    blocks: list = []
    if kind == "pawn":
        r = min(h / 2 * u(0.85, 1.0), rb * u(0.5, 0.7))
        prof += _ball(r, H - r, -60 if rng.random() < 0.5 else -80)
    elif kind == "rook":
        rr = max(rb * u(0.62, 0.95), neck + 0.25)
        zt = H - (u(0.35, 0.7) if rng.random() < 0.7 else 0.0)
        prof += [(rr * u(0.85, 1.0), z + 0.1), (rr, z + h * u(0.2, 0.4)), (rr, zt)]
        if zt < H:  # crenellated: merlons around the rim
            inner = rr * u(0.5, 0.72)
            prof += [(inner, zt), (inner, zt - u(0.15, 0.4)), (0.0, zt - u(0.15, 0.4))]
            n = int(rng.integers(4, 8))
            w = 2 * math.pi * rr / n * u(0.3, 0.55)
            off = u(0, 2 * math.pi)
            for k in range(n):
                blocks.append(([(inner, zt - 0.05), (rr, zt - 0.05), (rr, H), (inner, H)],
                               w / 2, off + 2 * math.pi * k / n, 0.0))
        else:
            prof += [(rr * u(0.5, 0.8), H), (0.0, H - u(0.1, 0.4))]
    elif kind == "bishop":
        fin = u(0.15, 0.3) if rng.random() < 0.8 else 0.0
        zt = H - 2 * fin - 0.05
        rm = max(neck * u(1.1, 1.8), 0.45) * u(0.9, 1.3)
        hm = zt - z
        p = u(0.6, 1.0)
        for t in np.linspace(0.05, 1.0, 9):  # an ovoid with a point on top
            r = rm * math.sin(math.pi * min(t * u(0.95, 1.05) * 0.55 / 0.55, 1.0) ** p) \
                * (1.0 - 0.35 * t)
            prof.append((max(r, 0.0), z + hm * t))
        prof[-1] = (0.12, zt)
        if fin:
            prof += _ball(fin, H - fin, -90)
        if rng.random() < 0.6:  # the mitre's cut: a thin dark-edged slab across the head
            blocks.append(([(rm * 0.2, z + hm * 0.45), (rm * 1.05, z + hm * 0.55),
                            (rm * 1.02, z + hm * 0.62), (rm * 0.2, z + hm * 0.55)],
                           rm * 0.9, u(0, 2 * math.pi), 0.0))
    elif kind in ("queen", "king"):
        top_extra = u(0.7, 1.2) if kind == "king" else u(0.2, 0.45)
        zc = H - top_extra
        flare = u(1.3, 2.1) if kind == "queen" else u(1.1, 1.6)
        rt = max(neck * flare * 1.4, rb * u(0.5, 0.8))
        zr = z + (zc - z) * u(0.6, 0.85)
        prof += [(neck * u(1.0, 1.2), z + (zr - z) * 0.3), (rt, zr)]
        if kind == "queen":
            prof += [(rt * u(0.55, 0.8), zr + 0.15), (rt * u(0.45, 0.7), zc)]
            bead = top_extra / 2
            prof += _ball(bead, H - bead, -90)
            n = int(rng.integers(6, 11))  # the coronet: points around the rim
            pw = 2 * math.pi * rt / n * u(0.2, 0.4)
            off = u(0, 2 * math.pi)
            ph = u(0.2, 0.5)
            for k in range(n):
                blocks.append(([(rt * 0.8, zr - 0.05), (rt * 1.02, zr - 0.05),
                                (rt * 0.95, zr + ph)], pw / 2, off + 2 * math.pi * k / n, 0.0))
        else:
            prof += [(rt * u(0.8, 0.95), zr + 0.15), (rt * u(0.4, 0.6), zc), (0.0, zc + 0.05)]
            w = u(0.25, 0.4)
            arm = u(0.65, 1.05)
            rot = float(rng.choice([0.0, math.pi / 2])) + u(-0.2, 0.2)
            blocks.append(([(-w / 2, zc - 0.05), (w / 2, zc - 0.05), (w / 2, H), (-w / 2, H)],
                           w / 2, rot, 0.0))
            za = zc + top_extra * u(0.45, 0.65)
            blocks.append(([(-arm / 2, za), (arm / 2, za), (arm / 2, za + w), (-arm / 2, za + w)],
                           w / 2, rot, 0.0))
    return prof, blocks


def _knight_head(rng, H: float, z: float, neck: float, rb: float) -> list:
    """Blocks (poly_yz, half, rot, dx) of a horse head facing +y, from height z up to H."""
    u = rng.uniform
    h = H - z
    t = u(0.4, 0.8)  # half thickness
    nw = max(neck * u(1.2, 1.8), 0.6)
    blocks = []
    zn = z + h * u(0.45, 0.6)  # where the neck meets the head
    lean = u(-0.3, 0.4)
    neck_poly = _convex([(-nw, z - 0.1), (nw * 0.9, z - 0.1), (nw * 0.8 + lean, zn),
                         (-nw * 1.1 + lean, zn + h * u(0.05, 0.2))])
    blocks.append((neck_poly, t, 0.0, 0.0))
    muzzle = u(1.1, 2.1)
    jaw = zn - h * u(0.0, 0.12)
    blocky = rng.random() < 0.4
    head = [(-nw * 1.0 + lean, zn - 0.2), (muzzle, jaw),
            (muzzle * u(0.85, 1.0), jaw + h * u(0.18, 0.3)),
            (0.1 + lean, H - h * u(0.05, 0.15)), (-nw * 0.9 + lean, H - h * u(0.15, 0.3))]
    if not blocky:  # a rounder skull
        head.append((-0.3 + lean, H - h * 0.02))
    blocks.append((_convex(head), t * u(0.75, 1.0), 0.0, 0.0))
    ear = [(-0.35 + lean, H - h * 0.1), (0.05 + lean, H - h * 0.1), (-0.2 + lean, H)]
    blocks.append((_convex(ear), t * 0.5, 0.0, 0.0))
    if rng.random() < 0.5:  # a mane down the back
        mane = [(-nw * 1.2 + lean, zn + 0.1), (-nw * 0.8 + lean, zn + 0.1),
                (-nw * 0.7 + lean, H - h * 0.2), (-nw * 1.05 + lean, H - h * 0.25)]
        blocks.append((_convex(mane), t * 0.4, 0.0, 0.0))
    return blocks


def profiles(seed: int) -> dict[str, tuple[list, list]]:
    """Per kind: (lathe profile [(r, z)...], blocks) of set `seed`, in cm, king 7.5 cm."""
    rng = _rng(seed, "shapes")
    u = rng.uniform
    rb_king = u(1.4, 1.95)
    out = {}
    for kind in KINDS:
        lo, hi = _REL_HEIGHT[kind]
        H = 7.5 * u(lo, hi)
        rb = rb_king * (u(0.8, 0.95) if kind == "pawn" else u(0.92, 1.04))
        head_share = {"pawn": (0.3, 0.42), "rook": (0.28, 0.42), "knight": (0.55, 0.7),
                      "bishop": (0.38, 0.5), "queen": (0.32, 0.45), "king": (0.36, 0.48)}[kind]
        head_h = H * u(*head_share)
        if kind == "knight":
            prof, z, neck = _base_and_stem(rng, H * u(0.25, 0.4) + 0.6, 0.0, rb)
            blocks = _knight_head(rng, H, z, neck, rb)
            prof.append((0.0, z))
        else:
            prof, z, neck = _base_and_stem(rng, H, head_h, rb)
            head, blocks = _head(kind, rng, H, z, neck, rb)
            prof += head
            if prof[-1][0] > 0:
                prof.append((0.0, prof[-1][1]))
        out[kind] = (prof, blocks)
    return out


def _is_heldout(kind: str, prof: list) -> bool:
    from .pieces import _PROFILES

    ref = np.array(_PROFILES[kind], np.float64)
    p = np.array(prof, np.float64)
    return p.shape == ref.shape and bool(np.allclose(p, ref, atol=0.05))


@lru_cache(maxsize=16)
def meshes(seed: int, segments: int = 24) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The six meshes (vertices, triangles) of set `seed`, z-up, base at z=0."""
    from .pieces import lathe, prism_faces  # pieces imports this module lazily too

    out = {}
    for kind, (prof, blocks) in profiles(seed).items():
        if _is_heldout(kind, prof):
            raise AssertionError(f"procedural set {seed}: {kind} equals the held-out profile")
        v, f = lathe(prof, segments)
        verts, faces = v.tolist(), f.tolist()
        for poly, half, rot, dx in blocks:
            base = len(verts)
            verts += _block(poly, half, rot, dx).tolist()
            faces += prism_faces(len(poly), base)
        out[kind] = (np.array(verts, np.float64), np.array(faces, np.int64))
    return out
