"""Render a position under a scene: composite the table, cards, pieces and hands, and say the
truth (every card's corners, pieces' footprints, occlusion, the camera)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from . import assets
from .geometry import (
    CARD_H_CM,
    CELLS,
    DECK_POS,
    INITIATIVE_POS,
    Camera,
    card_corners,
    cell_centre,
)
from .scene import Scene, sub_seed
from .surfaces import (
    TABLE_H_CM,
    TABLE_W_CM,
    TEX_PX_PER_CM,
    camera_effects,
    glare,
    kelvin_to_bgr_gain,
    light_field,
    table_texture,
)

TOKEN_DIAMETER_CM = 3.6
CARD_THICK_CM = 0.03


@dataclass
class Hand:
    """An arm reaching in from `side`'s edge toward `target` (board cm, x y). `reach` 0 is
    outside the frame, 1 is at the target; `height` is the hand's height above the table (cm).
    It may carry a card (code, face up) or a unit dict."""

    side: str
    target: tuple[float, float]
    reach: float = 1.0
    height: float = 5.0
    carry_card: str | None = None
    carry_unit: dict | None = None
    carry_design: str | None = None


@dataclass
class RenderResult:
    image: np.ndarray  # BGR uint8
    truth: dict
    masks: dict = field(default_factory=dict)  # "occluder": uint8 mask (final image geometry)


@lru_cache(maxsize=16)
def _table(kind: str, seed: int) -> np.ndarray:
    return table_texture(kind, seed)


@lru_cache(maxsize=16)
def _camera_for(scene_key: tuple) -> Camera:
    return Scene(**dict(scene_key)).camera()


_LIGHT_CACHE: dict = {}


def _light_u8(scene: Scene) -> np.ndarray:
    """The scene's light (colour x field) as uint8 gains, 128 = 1.0; cached per scene."""
    key = repr(sorted(scene.to_dict().items()))
    if key not in _LIGHT_CACHE:
        if len(_LIGHT_CACHE) > 8:
            _LIGHT_CACHE.clear()
        gain = kelvin_to_bgr_gain(scene.kelvin) * scene.brightness
        lrng = np.random.default_rng(sub_seed("light", scene.seed))
        f = light_field(lrng, scene.width, scene.height, scene.to_dict())
        _LIGHT_CACHE[key] = np.clip(f[..., None] * gain[None, None, :] * 128, 0, 255).astype(
            np.uint8)
    return _LIGHT_CACHE[key]


def scene_camera(scene: Scene) -> Camera:
    key = tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                       for k, v in scene.to_dict().items()
                       if k in ("elevation", "azimuth", "roll", "hfov", "board_fraction", "k1",
                                "k2", "target", "width", "height")))
    key = tuple((k, tuple(tuple(x) if isinstance(x, list) else x for x in v)
                 if isinstance(v, tuple) else v) for k, v in key)
    return _camera_for(key)


def _plane_h(cam: Camera, z: float = 0.0) -> np.ndarray:
    """Homography from board-plane (x, y) cm at height z to the ideal image."""
    M = np.column_stack([cam.R[:, 0], cam.R[:, 1], cam.R[:, 2] * z + cam.t])
    return cam.K @ M


def _blend_roi(canvas: np.ndarray, warped: np.ndarray, x0: int, y0: int,
               shade: float = 1.0) -> np.ndarray:
    """Alpha-blend a BGRA patch onto the canvas at (x0, y0); returns the alpha used (float)."""
    h, w = warped.shape[:2]
    roi = canvas[y0:y0 + h, x0:x0 + w]
    a = warped[:, :, 3:4].astype(np.float32) * (1.0 / 255)
    src = warped[:, :, :3].astype(np.float32)
    if shade != 1.0:
        src = np.minimum(src * shade, 255.0)
    roi[:] = (src * a + roi.astype(np.float32) * (1 - a)).astype(np.uint8)
    return a


def _warp_quad(canvas: np.ndarray, img: np.ndarray, dst: np.ndarray,
               src: np.ndarray | None = None, shade: float = 1.0) -> bool:
    """Warp `img` (BGRA) so that its rectangle `src` (default: the whole image) lands on the
    image quad `dst` (4x2, ideal canvas)."""
    H_, W_ = canvas.shape[:2]
    if src is None:
        h, w = img.shape[:2]
        src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    x0, y0 = np.floor(dst.min(0)).astype(int) - 1
    x1, y1 = np.ceil(dst.max(0)).astype(int) + 1
    x0c, y0c, x1c, y1c = max(x0, 0), max(y0, 0), min(x1, W_), min(y1, H_)
    if x1c <= x0c or y1c <= y0c:
        return False
    M = cv2.getPerspectiveTransform(src.astype(np.float32),
                                    (dst - [x0c, y0c]).astype(np.float32))
    warped = cv2.warpPerspective(img, M, (x1c - x0c, y1c - y0c), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    _blend_roi(canvas, warped, x0c, y0c, shade)
    return True


def card_pose(scene: Scene, key: str, base: tuple[float, float], angle: float,
              jitter: bool = True) -> tuple[float, float, float, float]:
    """(x, y, angle, bend) of one card, jittered by a seed stable across frames."""
    if not jitter:
        return base[0], base[1], angle, 0.0
    rng = np.random.default_rng(sub_seed("card", scene.seed, key))
    dx, dy = rng.uniform(-1, 1, 2) * scene.card_offset
    da = rng.uniform(-1, 1) * scene.card_rotation
    bend = rng.uniform(0, 1) * scene.card_bend
    return base[0] + dx, base[1] + dy, angle + da, bend


def _draw_card(canvas: np.ndarray, cam: Camera, img: np.ndarray, x: float, y: float,
               angle: float, bend: float, z: float, light: float = 1.0) -> np.ndarray:
    """Draw a card lying on the table; returns its 3D corners (face order)."""
    corners = card_corners(x, y, angle, z)
    if bend <= 0.02:
        dst = cam.project_ideal(corners)
        _warp_quad(canvas, img, dst, shade=light)
        return corners
    # a gently bent card: lift the middle, draw it as strips along its length
    n = 4
    h, w = img.shape[:2]
    tl, tr, br, bl = corners
    for i in range(n):
        t0, t1 = i / n, (i + 1) / n
        z0, z1 = bend * math.sin(math.pi * t0), bend * math.sin(math.pi * t1)
        p = [tl + (bl - tl) * t0, tr + (br - tr) * t0, tr + (br - tr) * t1, tl + (bl - tl) * t1]
        p = np.array(p)
        p[:2, 2] += z0
        p[2:, 2] += z1
        dst = cam.project_ideal(p)
        r0, r1 = int(round(h * t0)), int(round(h * t1))
        src = np.array([[0, 0], [w, 0], [w, r1 - r0], [0, r1 - r0]], np.float32)
        # the slope of each strip tilts it toward or away from the light
        slope = (z1 - z0) / (CARD_H_CM / n)
        _warp_quad(canvas, img[r0:r1], dst, src, shade=light * (1.0 + 0.35 * slope))
    return corners


def _card_shadow(canvas: np.ndarray, cam: Camera, corners: np.ndarray, scene: Scene,
                 strength: float) -> None:
    off = np.array([math.cos(scene.light_dir), math.sin(scene.light_dir), 0]) * 0.12
    quad = cam.project_ideal(corners + off).astype(np.int32)
    x0, y0 = np.maximum(quad.min(0) - 2, 0)
    x1, y1 = quad.max(0) + 2
    roi = canvas[y0:y1, x0:x1]
    if roi.size == 0:
        return
    m = np.zeros(roi.shape[:2], np.uint8)
    cv2.fillConvexPoly(m, quad - [x0, y0], 255, cv2.LINE_AA)
    roi[:] = (roi * (1 - strength * m[..., None].astype(np.float32) / 255)).astype(np.uint8)


def _card_face(design: str, code: str, key: str) -> np.ndarray:
    colour = "red" if sub_seed("joker", key) % 2 else "black"
    return assets.card_image(design, code, colour)


def _polygon_fraction(mask: np.ndarray, quad: np.ndarray) -> float:
    """Fraction of the polygon `quad` covered by `mask` (255)."""
    H_, W_ = mask.shape
    x0, y0 = np.maximum(np.floor(quad.min(0)).astype(int), 0)
    x1, y1 = np.minimum(np.ceil(quad.max(0)).astype(int) + 1, [W_, H_])
    if x1 <= x0 or y1 <= y0:
        return 1.0
    poly = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(poly, np.round(quad - [x0, y0]).astype(np.int32), 1)
    n = int(poly.sum())
    if n == 0:
        return 1.0
    return float((mask[y0:y1, x0:x1][poly > 0] > 0).sum()) / n


def in_frame_fraction(quad: np.ndarray, w: int, h: int) -> float:
    inside = (quad[:, 0] >= 0) & (quad[:, 0] < w) & (quad[:, 1] >= 0) & (quad[:, 1] < h)
    return float(inside.mean())


def render_scene(position: dict, scene: Scene, hands: list[Hand] | None = None,
                 effects: bool = True, frame: int = 0) -> RenderResult:
    """Render the engine's position JSON under `scene`, with optional hands over the table.
    `frame` only reseeds the sensor noise (for video). Returns the BGR image and its truth."""
    from . import hands as hands_mod
    from . import pieces as pieces_mod

    cam = scene_camera(scene)
    W, H = scene.width, scene.height
    rng = np.random.default_rng(sub_seed("frame", scene.seed, frame))
    # 1. table
    tex = _table(scene.surface, sub_seed("table", scene.seed))
    T = np.array([[1 / TEX_PX_PER_CM, 0, -TABLE_W_CM / 2],
                  [0, -1 / TEX_PX_PER_CM, TABLE_H_CM / 2], [0, 0, 1]])
    Hm = _plane_h(cam) @ T
    canvas = cv2.warpPerspective(tex, Hm, (W, H), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REFLECT)
    board = position.get("board") or {}
    truth_cells: dict[str, dict] = {}
    # 2. cards in play: the board, the initiative piles, the decks
    board_corners: dict[str, np.ndarray] = {}
    for cell in CELLS:
        st = board.get(cell) or {}
        cards = st.get("cards") or []
        orient = st.get("orientation", "portrait")
        owner_angle = 0.0 if int(cell[1]) <= 2 else 180.0
        base_angle = owner_angle + (90.0 if orient == "landscape" else 0.0)
        top = None
        for i, code in enumerate(cards[-2:]):
            idx = len(cards) - min(2, len(cards)) + i
            key = f"{cell}/{idx}/{code}"
            x, y, a, bend = card_pose(scene, key, cell_centre(cell), base_angle)
            design = scene.design_white if (sub_seed("owner", scene.seed, key) % 2) else \
                scene.design_black
            _card_shadow(canvas, cam, card_corners(x, y, a), scene, 0.25)
            top = _draw_card(canvas, cam, _card_face(design, code, key), x, y, a, bend,
                             CARD_THICK_CM * (idx + 1))
        if top is not None:
            board_corners[cell] = top
    init = position.get("initiative") or {}
    init_truth: dict[str, dict | None] = {}
    decks = position.get("decks") or {}
    for side in ("white", "black"):
        ang = 0.0 if side == "white" else 180.0
        design = scene.design_white if side == "white" else scene.design_black
        n = decks.get(side)
        if n:
            x, y, a, _ = card_pose(scene, f"deck/{side}", DECK_POS[side], ang)
            zt = CARD_THICK_CM * min(int(n), 54)
            _card_shadow(canvas, cam, card_corners(x, y, a), scene, 0.35)
            for z in (0.0, zt * 0.5):  # a visible side to the pile
                _draw_card(canvas, cam, assets.card_image(design, "back"), x, y, a, 0, z, 0.6)
            _draw_card(canvas, cam, assets.card_image(design, "back"), x, y, a, 0, zt)
        code = init.get(side)
        if code:
            key = f"init/{side}/{code}"
            x, y, a, bend = card_pose(scene, key, INITIATIVE_POS[side], ang)
            _card_shadow(canvas, cam, card_corners(x, y, a), scene, 0.25)
            c3 = _draw_card(canvas, cam, _card_face(design, code, key), x, y, a, bend, 0.05)
            init_truth[side] = {"card": code, "corners3d": c3}
        else:
            init_truth[side] = None
    # 3. pieces and tokens (shadows first, then far to near); 4. hands on top
    occ = np.zeros((H, W), np.uint8)
    units = []
    for cell in CELLS:
        unit = (board.get(cell) or {}).get("unit")
        if unit:
            units.append((cell, unit))
    piece_truth = pieces_mod.draw_units(canvas, occ, cam, scene, units)
    hand_truth = hands_mod.draw_hands(canvas, occ, cam, scene, hands or [])
    # 5. light, glare, lens, camera
    lrng = np.random.default_rng(sub_seed("light", scene.seed))
    canvas = cv2.multiply(canvas, _light_u8(scene), scale=1.0 / 128)
    glare(canvas, lrng, scene.to_dict())
    if scene.k1 or scene.k2:
        mx, my = cam.distortion_maps()
        canvas = cv2.remap(canvas, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        occ_final = cv2.remap(occ, mx, my, cv2.INTER_NEAREST)
    else:
        occ_final = occ
    if effects:
        canvas = camera_effects(canvas, rng, scene.to_dict())
    # truth
    for cell in CELLS:
        st = board.get(cell) or {}
        cards = st.get("cards") or []
        entry: dict = {"card": cards[-1] if cards else None, "stack": len(cards),
                       "orientation": st.get("orientation", "portrait") if cards else None,
                       "unit": st.get("unit")}
        if cell in board_corners:
            c3 = board_corners[cell]
            ideal = cam.project_ideal(c3)
            entry["corners"] = cam.project(c3).round(2).tolist()
            entry["visible_fraction"] = round(1.0 - _polygon_fraction(occ, ideal), 3)
            entry["in_frame"] = in_frame_fraction(np.array(entry["corners"]), W, H)
        if cell in piece_truth:
            entry["piece"] = piece_truth[cell]
        truth_cells[cell] = entry
    init_out = {}
    for side, t in init_truth.items():
        if t is None:
            init_out[side] = None
            continue
        ideal = cam.project_ideal(t["corners3d"])
        init_out[side] = {"card": t["card"], "corners": cam.project(t["corners3d"]).round(2)
                          .tolist(), "visible_fraction":
                          round(1.0 - _polygon_fraction(occ, ideal), 3)}
    truth = {
        "width": W, "height": H,
        "camera": cam.as_dict(),
        "scene": scene.to_dict(),
        "cells": truth_cells,
        "initiative": init_out,
        "hands": hand_truth,
        "corner_order": "card face top-left, top-right, bottom-right, bottom-left",
    }
    return RenderResult(canvas, truth, {"occluder": occ_final})
