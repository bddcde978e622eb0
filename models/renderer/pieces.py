"""Chess piece sprites (pre-rendered from Debian's 3D models) and paper tokens, composited into a
render with perspective scale, the tilt of the vertical, a soft shadow, and occlusion."""

from __future__ import annotations

import math
import os
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from . import assets
from .geometry import Camera, cell_centre
from .scene import sub_seed

KINDS = ["pawn", "rook", "knight", "bishop", "queen", "king"]
SIDES = ["white", "black"]
SPRITE_PX_PER_CM = 24.0
ELEVATIONS = [30, 40, 50, 60, 70, 80, 90]
AZIMUTHS = [0, 45, 90, 135, 180, 225, 270, 315]  # only the knight needs them
LIGHTS = [45, 135, 225, 315]  # light direction relative to the view, pre-rendered variants
KING_HEIGHT_CM = 7.5
TOKEN_DIAMETER_CM = 3.6

PIECE_SETS = {
    "brutalchess": {"kind": "obj", "dir": "/usr/share/games/brutalchess/models",
                    "package": "brutalchess", "licence": "GPL-2+",
                    "white": (205, 225, 238), "black": (45, 40, 38)},
    "dreamchess": {"kind": "dcm", "dir": "/usr/share/games/dreamchess/pieces/classic",
                   "package": "dreamchess-data", "licence": "GPL-3+",
                   "white": (175, 200, 215), "black": (30, 30, 38)},
    # held out: a turned-wood set generated here from lathe profiles (our own, CC0)
    "lathe": {"kind": "lathe", "dir": "", "package": "", "licence": "CC0 (this project)",
              "white": (140, 195, 232), "black": (35, 45, 80)},
}

# (radius, height) profiles in cm, bottom to top, for the turned set
_PROFILES = {
    "pawn": [(0, 0), (1.5, 0), (1.5, 0.4), (1.2, 0.6), (0.7, 1.0), (0.55, 2.2), (0.95, 2.4),
             (0.4, 2.6), (0.75, 2.9), (0.85, 3.3), (0.7, 3.75), (0.35, 4.05), (0, 4.1)],
    "rook": [(0, 0), (1.6, 0), (1.6, 0.45), (1.3, 0.7), (0.95, 1.2), (0.85, 3.2), (1.2, 3.4),
             (1.2, 4.5), (0.9, 4.5), (0.9, 4.2), (0, 4.2)],
    "bishop": [(0, 0), (1.55, 0), (1.55, 0.4), (1.2, 0.7), (0.65, 1.3), (0.5, 3.4), (0.95, 3.6),
               (0.45, 3.8), (0.7, 4.3), (0.75, 4.8), (0.5, 5.4), (0.2, 5.75), (0.3, 5.95),
               (0, 6.1)],
    "queen": [(0, 0), (1.7, 0), (1.7, 0.45), (1.35, 0.8), (0.75, 1.5), (0.55, 4.6), (1.05, 4.8),
              (0.55, 5.0), (0.95, 6.0), (0.7, 6.2), (0.6, 6.3), (0.3, 6.6), (0.3, 6.8),
              (0, 6.9)],
    "king": [(0, 0), (1.75, 0), (1.75, 0.45), (1.4, 0.8), (0.8, 1.5), (0.6, 4.9), (1.1, 5.1),
             (0.6, 5.3), (0.95, 6.3), (0.5, 6.5), (0.2, 6.6), (0.2, 7.5), (0, 7.5)],
    "knight": [(0, 0), (1.6, 0), (1.6, 0.45), (1.25, 0.7), (1.0, 1.2), (1.05, 1.4), (0, 1.4)],
}
# the knight's head: convex pieces of a horse-head silhouette in the (y, z) plane, facing +y
_KNIGHT_HEAD = [
    [(-0.9, 1.3), (0.9, 1.3), (0.6, 3.0), (-1.0, 3.2)],
    [(-1.0, 3.0), (0.5, 2.9), (1.8, 3.6), (1.7, 4.2), (0.2, 5.0), (-0.9, 4.6)],
    [(-0.6, 4.5), (0.3, 4.9), (-0.1, 5.6), (-0.5, 5.4)],
]


PROC_PREFIX = "proc-"  # "proc-<seed>": a procedurally varied training set (below)


def set_info(name: str) -> dict:
    """The PIECE_SETS entry of a set, or the description of a procedural one ("proc-<seed>")."""
    if name in PIECE_SETS:
        return PIECE_SETS[name]
    if name.startswith(PROC_PREFIX) and name[len(PROC_PREFIX):].isdigit():
        from .procedural_pieces import set_colours

        seed = int(name[len(PROC_PREFIX):])
        white, black = set_colours(seed)
        return {"kind": "procedural", "dir": "", "package": "", "licence": "CC0 (this project)",
                "seed": seed, "white": white, "black": black}
    raise KeyError(f"unknown piece set {name!r}")


def procedural_meshes(seed: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    from .procedural_pieces import meshes

    return meshes(seed)


def lathe(profile: list, segments: int = 28) -> tuple[np.ndarray, np.ndarray]:
    """A surface of revolution: the (radius, height) profile turned about the vertical."""
    verts, faces = [], []
    m = len(profile)
    for k in range(segments):
        a = 2 * math.pi * k / segments
        for r, z in profile:
            verts.append([r * math.cos(a), r * math.sin(a), z])
    for k in range(segments):
        k2 = (k + 1) % segments
        for j in range(m - 1):
            a, b = k * m + j, k * m + j + 1
            c, d = k2 * m + j, k2 * m + j + 1
            faces += [[a, c, b], [b, c, d]]
    return np.array(verts, np.float64), np.array(faces, np.int64)


def prism_faces(n: int, base: int) -> list:
    """Triangles of a prism whose 2 x n vertices (one polygon, then its copy) start at `base`."""
    faces = [[base, base + i, base + i + 1] for i in range(1, n - 1)]
    faces += [[base + n, base + n + i + 1, base + n + i] for i in range(1, n - 1)]
    for i in range(n):
        j = (i + 1) % n
        faces += [[base + i, base + j, base + n + j], [base + i, base + n + j, base + n + i]]
    return faces


def _prism(poly: list, half: float, base: int) -> tuple[list, list]:
    verts = [[-half, y, z] for y, z in poly] + [[half, y, z] for y, z in poly]
    return verts, prism_faces(len(poly), base)


def _load_lathe(kind: str) -> tuple[np.ndarray, np.ndarray]:
    v, f = lathe(_PROFILES[kind])
    if kind != "knight":
        return v, f
    verts, faces = v.tolist(), f.tolist()
    for poly in _KNIGHT_HEAD:
        pv, pf = _prism(poly, 0.65, len(verts))
        verts += pv
        faces += pf
    return np.array(verts, np.float64), np.array(faces, np.int64)


def _load_obj(path: Path) -> tuple[np.ndarray, np.ndarray]:
    verts, faces = [], []
    for line in path.read_text().splitlines():
        if line.startswith("v "):
            verts.append([float(x) for x in line.split()[1:4]])
        elif line.startswith("f "):
            idx = []
            for tok in line.split()[1:]:
                i = int(tok.split("/")[0])
                idx.append(i - 1 if i > 0 else len(verts) + i)
            for k in range(1, len(idx) - 1):
                faces.append([idx[0], idx[k], idx[k + 1]])
    v = np.array(verts, np.float64)
    v = v[:, [0, 2, 1]]  # y-up -> z-up
    v[:, 1] *= -1
    return v, np.array(faces, np.int64)


def _load_dcm(path: Path) -> tuple[np.ndarray, np.ndarray]:
    toks = path.read_text().split()
    assert toks[0] == "DCM" and toks[1] == "0100", f"{path}: not a DCM 0100 model"
    n = int(toks[2])
    pos = 3
    v = np.array([float(x) for x in toks[pos:pos + 3 * n]]).reshape(n, 3)
    pos += 3 * n + 3 * n + 2 * n  # skip normals and texture coordinates
    nprim = int(toks[pos])
    pos += 1
    faces = []
    for _ in range(nprim):
        kind, cnt = toks[pos], int(toks[pos + 1])
        idx = [int(x) for x in toks[pos + 2:pos + 2 + cnt]]
        pos += 2 + cnt
        if kind == "TRIANGLES":
            faces += [idx[i:i + 3] for i in range(0, cnt - 2, 3)]
        else:
            for i in range(cnt - 2):
                tri = idx[i:i + 3]
                faces.append(tri if i % 2 == 0 else [tri[1], tri[0], tri[2]])
    return v, np.array(faces, np.int64)


def mesh_dir(name: str) -> Path:
    """Where the asset cache keeps a copy of a Debian set's mesh files, if it has one."""
    return assets.cache_dir() / "meshes" / name


def mesh_files(name: str) -> list[Path]:
    """The installed mesh files `load_set` reads for a Debian set, one per kind."""
    info = set_info(name)
    ext = ".obj" if info["kind"] == "obj" else ".dcm"
    return [Path(info["dir"]) / (kind + ext) for kind in KINDS]


@lru_cache(maxsize=8)
def load_set(name: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The six meshes of a set, z-up, base at z=0, centred, in cm (king 7.5 cm tall)."""
    info = set_info(name)
    d = Path(info["dir"])
    if info["kind"] in ("obj", "dcm") and not d.exists():
        # a packed asset cache (`models.pieces.gpu_train pack`) carries the set's mesh files
        # to a machine without the Debian package
        d = mesh_dir(name) if mesh_dir(name).exists() else d
    if info["kind"] == "lathe":
        meshes = {kind: _load_lathe(kind) for kind in KINDS}
    elif info["kind"] == "procedural":
        meshes = procedural_meshes(int(info["seed"]))
    elif not d.exists():
        raise RuntimeError(f"{d} missing: apt-get install {info['package']}")
    else:
        meshes = {}
        for kind in KINDS:
            p = d / (kind + (".obj" if info["kind"] == "obj" else ".dcm"))
            meshes[kind] = _load_obj(p) if info["kind"] == "obj" else _load_dcm(p)
    king_h = np.ptp(meshes["king"][0][:, 2])
    s = KING_HEIGHT_CM / king_h
    out = {}
    for kind, (v, f) in meshes.items():
        v = (v - [0, 0, v[:, 2].min()]) * s
        base = v[v[:, 2] < 0.15 * v[:, 2].max()]
        cx = (base[:, 0].max() + base[:, 0].min()) / 2
        cy = (base[:, 1].max() + base[:, 1].min()) / 2
        v[:, 0] -= cx
        v[:, 1] -= cy
        out[kind] = (v, f)
    return out


@lru_cache(maxsize=256)
def base_radius(name: str, kind: str) -> float:
    if name == "paper-token":
        return TOKEN_DIAMETER_CM / 2
    v, _ = load_set(name)[kind]
    low = v[v[:, 2] < 0.1 * v[:, 2].max()]
    return float(np.sqrt((low[:, :2] ** 2).sum(1)).max())


@lru_cache(maxsize=256)
def height(name: str, kind: str) -> float:
    if name == "paper-token":
        return 0.05
    return float(load_set(name)[kind][0][:, 2].max())


def render_mesh(v: np.ndarray, f: np.ndarray, colour: tuple, elev: float, azim: float,
                ss: int = 2, light_rel: float = 225.0) -> tuple[np.ndarray, tuple[float, float]]:
    """Orthographic render of a mesh seen from `elev` degrees above the horizon and azimuth
    `azim` (0: seen from -y, looking toward +y). Returns BGRA and the base-centre pixel."""
    e, a = math.radians(elev), math.radians(azim)
    view = np.array([math.sin(a) * math.cos(e), math.cos(a) * math.cos(e), -math.sin(e)])
    right = np.array([math.cos(a), -math.sin(a), 0.0])
    down = np.cross(view, right)
    down = -down if down[2] > 0 else down
    scale = SPRITE_PX_PER_CM * ss
    xs = v @ right * scale
    ys = v @ down * scale
    zs = v @ view
    pad = 4 * ss
    x0, y0 = xs.min() - pad, ys.min() - pad
    w, h = int(xs.max() - x0 + pad), int(ys.max() - y0 + pad)
    pts = np.stack([xs - x0, ys - y0], 1)
    tri = pts[f]
    n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    nl = np.linalg.norm(n, axis=1, keepdims=True)
    n = n / np.maximum(nl, 1e-12)
    # orient normals outward (meshes differ in winding): away from the piece's axis
    cen = v[f].mean(1)
    radial = cen - np.array([0, 0, 1.0]) * cen[:, 2:3]
    flip = (n * radial).sum(1) < 0
    n[flip] *= -1
    facing = (n @ view) < 0.05
    # the direction toward the light, `light_rel` degrees from the viewing direction
    # (0: the light faces the viewer, a backlit piece; 180: it is behind the viewer), 50° up
    la = a + math.radians(light_rel)
    light = np.array([math.sin(la) * 0.64, math.cos(la) * 0.64, 0.77])
    light /= np.linalg.norm(light)
    diff = np.clip(n @ light, 0, 1)
    half = light - view
    half /= np.linalg.norm(half)
    spec = np.clip(n @ half, 0, 1) ** 30
    depth = zs[f].mean(1)
    order = np.argsort(-depth)
    img = np.zeros((h, w, 3), np.float32)
    mask = np.zeros((h, w), np.uint8)
    col = np.array(colour, np.float32)
    shade = 0.35 + 0.75 * diff
    rim = 1.0 - np.abs(n @ view)
    for i in order:
        if not facing[i] and not flip[i]:
            pass
        c = col * shade[i] + 170 * spec[i] + 25 * rim[i] ** 3
        p = np.round(tri[i] * 4).astype(np.int32)
        cv2.fillConvexPoly(img, p, c.tolist(), cv2.LINE_8, shift=2)
        cv2.fillConvexPoly(mask, p, 255, cv2.LINE_8, shift=2)
    img = np.clip(img, 0, 255).astype(np.uint8)
    out = np.dstack([img, mask])
    out = cv2.resize(out, (max(1, w // ss), max(1, h // ss)), interpolation=cv2.INTER_AREA)
    anchor = ((0 - x0) / ss, (0 - y0) / ss)
    return out, anchor


def _sprite_path(name: str, kind: str, side: str, elev: int, azim: int, light: int) -> Path:
    return (assets.cache_dir() / "pieces" / name /
            f"{side}_{kind}_e{elev}_a{azim}_l{light}.png")


@lru_cache(maxsize=2048)
def sprite(name: str, kind: str, side: str, elev: int, azim: int,
           light: int = 225) -> tuple[np.ndarray, tuple]:
    """A cached BGRA sprite at SPRITE_PX_PER_CM and its base-centre anchor pixel."""
    azim = azim if kind == "knight" else 0
    path = _sprite_path(name, kind, side, elev, azim, light)
    meta = path.with_suffix(".txt")
    if path.exists() and meta.exists():
        img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        ax, ay = (float(x) for x in meta.read_text().split())
        return img, (ax, ay)
    v, f = load_set(name)[kind]
    img, anchor = render_mesh(v, f, set_info(name)[side], elev, azim, light_rel=light)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f"{anchor[0]:.3f} {anchor[1]:.3f}"
    tmp = meta.with_name(f".{meta.name}.{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, meta)
    assets.write_png_atomic(path, img)
    # the anchor as the cache gives it back: a scene renders the same whether its sprites
    # were built just now or read (two workers sharing a cache make the same crops)
    ax, ay = (float(x) for x in text.split())
    return img, (ax, ay)


def build_sprite_cache(names: list[str] | None = None, log=print) -> int:
    n = 0
    for name in names or list(PIECE_SETS):
        for side in SIDES:
            for kind in KINDS:
                for e in ELEVATIONS:
                    for a in AZIMUTHS if kind == "knight" else [0]:
                        for light in LIGHTS:
                            sprite(name, kind, side, e, a, light)
                            n += 1
        log(f"pieces: {name} done")
    return n


def _facing(side: str) -> float:
    return 0.0 if side == "white" else 180.0


def draw_units(canvas: np.ndarray, occ: np.ndarray, cam: Camera, scene, units: list,
               card_xy: dict | None = None) -> dict:
    """Draw every (cell, unit) far to near with shadows, each standing on its card (at the
    card's jittered centre, a few millimetres off by hand); returns truth per cell."""
    items = []
    for cell, unit in units:
        x, y = (card_xy or {}).get(cell, cell_centre(cell))
        rng = np.random.default_rng(sub_seed("unit", scene.seed, cell, unit.get("kind")))
        dx, dy = rng.uniform(-0.3, 0.3, 2)
        items.append((cell, unit, x + dx, y + dy, 0.0))
    return draw_piece_items(canvas, occ, cam, scene, items, {})


def draw_piece_items(canvas, occ, cam: Camera, scene, items: list, truth: dict) -> dict:
    """items: (key, unit, x, y, z). Shadows on the table first, then sprites far to near."""
    from . import tokens

    set_name = scene.piece_set
    H_, W_ = canvas.shape[:2]
    cpos = cam.centre()
    depth = [float(cam.to_cam(np.array([x, y, z]))[0, 2]) for _, _, x, y, z in items]
    # soft shadows, drawn at a quarter resolution into one mask and blurred once
    if set_name != "paper-token" and items:
        q = 4
        sm = np.zeros((H_ // q + 1, W_ // q + 1), np.uint8)
        ld = np.array([math.cos(scene.light_dir), math.sin(scene.light_dir)])
        for _, unit, x, y, z in items:
            hgt = height(set_name, unit["kind"])
            r = base_radius(set_name, unit["kind"])
            length = (hgt + z) / math.tan(scene.light_elev)
            ring = []
            for t in np.linspace(0, 2 * math.pi, 12, endpoint=False):
                ring.append([x + r * math.cos(t), y + r * math.sin(t), 0])
                ring.append([x + ld[0] * length + 0.6 * r * math.cos(t),
                             y + ld[1] * length + 0.6 * r * math.sin(t), 0])
            uv = cam.project_ideal(np.array(ring)) / q
            hull = cv2.convexHull(uv.astype(np.float32)).astype(np.int32)
            cv2.fillConvexPoly(sm, hull, 255, cv2.LINE_AA)
        sm = cv2.GaussianBlur(sm, (0, 0), 2.0)
        sm = cv2.resize(sm, (sm.shape[1] * q, sm.shape[0] * q))[:H_, :W_]
        from .render import darken

        darken(canvas, sm, 0.45)
    for i in np.argsort(depth)[::-1]:
        key, unit, x, y, z = items[i]
        kind, side = unit["kind"], unit["side"]
        base = np.array([x, y, z])
        fp3 = np.array([[x + base_radius(set_name, kind) * math.cos(t),
                         y + base_radius(set_name, kind) * math.sin(t), z]
                        for t in np.linspace(0, 2 * math.pi, 16, endpoint=False)])
        entry = {"set": set_name, "footprint": cam.project(fp3).round(1).tolist(),
                 "base_centre": cam.project(base[None]).round(2)[0].tolist()}
        if set_name == "paper-token":
            tokens.draw_token(canvas, occ, cam, kind, side, x, y, z + 0.03)
            top = base
            hgt = 0.0
        else:
            rel = base - cpos
            elev = math.degrees(math.atan2(-rel[2], math.hypot(rel[0], rel[1])))
            elev = min(ELEVATIONS, key=lambda e: abs(e - elev))
            view_az = math.degrees(math.atan2(rel[0], rel[1]))  # direction camera -> piece
            az = (view_az - _facing(side)) % 360
            az = min(AZIMUTHS, key=lambda a: min(abs(a - az), 360 - abs(a - az))) % 360
            # where the light comes from (opposite the shadows), relative to the view
            light_az = math.degrees(math.atan2(-math.cos(scene.light_dir),
                                               -math.sin(scene.light_dir)))
            lrel = (light_az - view_az) % 360
            light = min(LIGHTS, key=lambda v: min(abs(v - lrel), 360 - abs(v - lrel)))
            img, (ax, ay) = sprite(set_name, kind, side, elev, int(az), light)
            hgt = height(set_name, kind)
            top = base + [0, 0, hgt]
            p0, p1 = cam.project_ideal(np.array([base, top]))
            ppc = cam.pixel_per_cm(base)
            s = ppc / SPRITE_PX_PER_CM
            # rotate so the sprite's up (-y) follows the projected vertical
            d = p1 - p0
            ang = math.degrees(math.atan2(d[0], -d[1])) if np.linalg.norm(d) > 1e-3 else 0.0
            # foreshortened verticals: stretch by the ratio of projected to sprite height
            sprite_h = hgt * SPRITE_PX_PER_CM * math.cos(math.radians(elev)) * s
            sy = float(np.clip(np.linalg.norm(d) / max(sprite_h, 1e-3), 0.6, 1.6)) \
                if elev < 85 else 1.0
            A = np.array([[s, 0, 0], [0, s * sy, 0]], np.float64)
            A[:, 2] = -A[:, :2] @ [ax, ay]
            c, sn = math.cos(math.radians(ang)), math.sin(math.radians(ang))
            Rm = np.array([[c, -sn], [sn, c]])
            A = np.column_stack([Rm @ A[:, :2], Rm @ A[:, 2] + p0])
            h, w = img.shape[:2]
            box = np.array([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]], np.float64) @ A.T
            x0, y0 = np.maximum(np.floor(box.min(0)).astype(int), 0)
            x1, y1 = np.minimum(np.ceil(box.max(0)).astype(int), [W_, H_])
            if x1 > x0 and y1 > y0:
                A2 = A.copy()
                A2[:, 2] -= [x0, y0]
                warped = cv2.warpAffine(img, A2, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
                a = warped[:, :, 3:4].astype(np.float32) / 255
                roi = canvas[y0:y1, x0:x1]
                roi[:] = (warped[:, :, :3] * a + roi * (1 - a)).astype(np.uint8)
                occ[y0:y1, x0:x1][warped[:, :, 3] > 127] = 255
                ys, xs = np.nonzero(warped[:, :, 3] > 127)
                if len(xs):
                    bb = np.array([[xs.min() + x0, ys.min() + y0], [xs.max() + x0,
                                                                    ys.max() + y0]], np.float64)
                    bb = cam.distort_ideal(bb)
                    entry["bbox"] = bb.round(1).ravel().tolist()
        entry["top"] = cam.project(top[None]).round(2)[0].tolist()
        entry["height_cm"] = round(hgt, 2)
        entry["kind"], entry["side"] = kind, side
        truth[key] = entry
    return truth
