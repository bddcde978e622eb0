"""Procedural table surfaces and light: wood, felt, cloth, patterns; colour temperature,
gradients, hard shadows, glare; camera effects (defocus, motion blur, noise, compression)."""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np

SURFACES = ["wood", "felt", "cloth", "pattern", "laminate"]
TEX_PX_PER_CM = 4.0
TABLE_W_CM, TABLE_H_CM = 320.0, 240.0  # the table patch the texture covers, centred on the board


def _noise(rng: np.random.Generator, h: int, w: int, scale: int) -> np.ndarray:
    small = rng.random((max(2, h // scale), max(2, w // scale))).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def table_texture(kind: str, seed: int) -> np.ndarray:
    """A BGR texture of the table top, TABLE_W_CM x TABLE_H_CM at TEX_PX_PER_CM."""
    rng = np.random.default_rng(seed)
    w, h = int(TABLE_W_CM * TEX_PX_PER_CM), int(TABLE_H_CM * TEX_PX_PER_CM)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind == "wood":
        base = np.array(rng.choice([[40, 80, 140], [30, 60, 110], [60, 110, 170], [25, 45, 80],
                                    [90, 150, 200]]), np.float32)
        warp = _noise(rng, h, w, 60) * 40 + _noise(rng, h, w, 15) * 6
        freq = rng.uniform(0.15, 0.4)
        grain = np.sin((yy + warp) * freq) * 0.5 + 0.5
        fine = _noise(rng, h, w, 2) * 0.5 + _noise(rng, h, w, 8) * 0.5
        shade = 0.75 + 0.2 * grain + 0.12 * fine
        plank = rng.uniform(40, 70) * TEX_PX_PER_CM
        seams = (np.abs(((yy + 3) % plank) - 1) < 1.2).astype(np.float32)
        shade *= 1 - 0.35 * seams
        img = base[None, None, :] * shade[..., None]
        if rng.random() < 0.5:
            img = img.transpose(1, 0, 2)
            img = cv2.resize(img, (w, h))
    elif kind == "felt":
        base = np.array(rng.choice([[40, 110, 30], [90, 60, 20], [30, 30, 120], [60, 60, 60],
                                    [50, 90, 40], [110, 70, 40]]), np.float32)
        n = _noise(rng, h, w, 1) * 0.5 + _noise(rng, h, w, 6) * 0.3 + _noise(rng, h, w, 40) * 0.2
        img = base[None, None, :] * (0.8 + 0.35 * n[..., None])
    elif kind == "cloth":
        c1 = rng.uniform(60, 230, 3).astype(np.float32)
        c2 = c1 * rng.uniform(0.5, 0.85)
        period = rng.uniform(1.5, 4.0) * TEX_PX_PER_CM
        check = ((np.floor(xx / period) + np.floor(yy / period)) % 2).astype(np.float32)
        if rng.random() < 0.5:  # gingham: stripes both ways
            check = 0.5 * ((np.floor(xx / period) % 2) + (np.floor(yy / period) % 2))
        weave = 0.9 + 0.1 * np.sin(xx * 2.2) * np.sin(yy * 2.2)
        img = (c1 * (1 - check[..., None]) + c2 * check[..., None]) * weave[..., None]
        img *= (0.9 + 0.15 * _noise(rng, h, w, 30))[..., None]
    elif kind == "pattern":
        bg = rng.uniform(120, 240, 3).astype(np.float32)
        fg = rng.uniform(20, 200, 3).astype(np.float32)
        img = np.empty((h, w, 3), np.float32)
        img[:] = bg
        period = int(rng.uniform(6, 14) * TEX_PX_PER_CM)
        r = period * rng.uniform(0.15, 0.3)
        mask = np.zeros((h, w), np.uint8)
        shape = rng.integers(0, 3)
        for y in range(0, h + period, period):
            for x in range(0, w + period, period):
                ox = (period // 2) * ((y // period) % 2)
                c = (x + ox, y)
                if shape == 0:
                    cv2.circle(mask, c, int(r), 255, -1, cv2.LINE_AA)
                elif shape == 1:
                    pts = np.array([[c[0], c[1] - r], [c[0] + r, c[1]], [c[0], c[1] + r],
                                    [c[0] - r, c[1]]], np.int32)
                    cv2.fillConvexPoly(mask, pts, 255, cv2.LINE_AA)
                else:
                    for k in range(5):
                        a = k * 2 * math.pi / 5
                        cv2.circle(mask, (int(c[0] + r * math.cos(a)), int(c[1] + r * math.sin(a))),
                                   int(r * 0.45), 255, -1, cv2.LINE_AA)
        m = mask.astype(np.float32)[..., None] / 255
        img = bg * (1 - m) + fg * m
        img *= (0.92 + 0.12 * _noise(rng, h, w, 20))[..., None]
    else:  # laminate / plain painted table
        base = rng.uniform(150, 235, 3).astype(np.float32)
        img = base[None, None, :] * (0.93 + 0.1 * _noise(rng, h, w, 50))[..., None]
        img = np.broadcast_to(img, (h, w, 3)).copy()
    return np.clip(img, 0, 255).astype(np.uint8)


def kelvin_to_bgr_gain(kelvin: float) -> np.ndarray:
    """Approximate white-point gains of a black-body light (Tanner Helland's fit), normalised
    so the largest channel is 1; a camera with fixed daylight white balance sees this tint."""
    t = kelvin / 100.0
    r = 255.0 if t <= 66 else 329.7 * ((t - 60) ** -0.1332)
    g = 99.47 * math.log(t) - 161.1 if t <= 66 else 288.1 * ((t - 60) ** -0.0755)
    b = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5 * math.log(t - 10) - 305.0)
    rgb = np.clip(np.array([r, g, b]), 1, 255)
    # partial auto white balance: cameras correct most of the tint
    rgb = rgb / rgb.max()
    rgb = 0.45 * rgb + 0.55
    return (rgb[::-1] / rgb.max()).astype(np.float32)


def light_field(rng: np.random.Generator, w: int, h: int, p: dict) -> np.ndarray:
    """A HxW float32 multiplicative light field: gradient, vignette, hard shadow."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = p["gradient_angle"]
    g = ((xx - w / 2) * math.cos(a) + (yy - h / 2) * math.sin(a)) / max(w, h)
    field = 1.0 + p["gradient"] * g * 2
    r2 = ((xx - w / 2) / w) ** 2 + ((yy - h / 2) / h) ** 2
    field *= 1.0 - p["vignette"] * r2 * 2
    if p["shadow"] > 0:
        m = np.zeros((h, w), np.uint8)
        pts = np.array(p["shadow_poly"], np.float32) * [w, h]
        cv2.fillPoly(m, [pts.astype(np.int32)], 255, cv2.LINE_AA)
        k = int(p["shadow_soft"]) | 1
        if k > 1:
            m = cv2.GaussianBlur(m, (k, k), 0)
        field *= 1.0 - p["shadow"] * m.astype(np.float32) / 255
    return field.astype(np.float32)


def glare(img: np.ndarray, rng: np.random.Generator, p: dict) -> None:
    """Add a specular hot spot in place (blown highlight of a lamp on glossy cards)."""
    if p["glare"] <= 0:
        return
    h, w = img.shape[:2]
    cx, cy = p["glare_xy"][0] * w, p["glare_xy"][1] * h
    s = p["glare_size"] * w
    x0, x1 = int(max(0, cx - 3 * s)), int(min(w, cx + 3 * s))
    y0, y1 = int(max(0, cy - 3 * s)), int(min(h, cy + 3 * s))
    if x1 <= x0 or y1 <= y0:
        return
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    d2 = ((xx - cx) ** 2 + ((yy - cy) * 1.6) ** 2) / (s * s)
    add = (p["glare"] * 255 * np.exp(-d2))[..., None]
    roi = img[y0:y1, x0:x1].astype(np.float32) + add
    img[y0:y1, x0:x1] = np.clip(roi, 0, 255).astype(np.uint8)


@lru_cache(maxsize=4)
def _noise_bank(sigma: int, h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian sensor noise as positive and negative uint8 parts (saturating adds are fast)."""
    n = np.random.default_rng(sigma).standard_normal((h, w, 3)).astype(np.float32) * sigma
    return np.clip(n, 0, 255).astype(np.uint8), np.clip(-n, 0, 255).astype(np.uint8)


def camera_effects(img: np.ndarray, rng: np.random.Generator, p: dict) -> np.ndarray:
    """Defocus, motion blur, sensor noise and compression, in that order."""
    if p["defocus"] > 0.3:
        k = int(p["defocus"] * 2) * 2 + 1
        img = cv2.GaussianBlur(img, (k, k), p["defocus"])
    if p["motion"] >= 2:
        n = int(p["motion"])
        kern = np.zeros((n, n), np.float32)
        kern[n // 2, :] = 1.0 / n
        rot = cv2.getRotationMatrix2D(((n - 1) / 2, (n - 1) / 2), p["motion_angle"], 1.0)
        kern = cv2.warpAffine(kern, rot, (n, n))
        kern /= max(kern.sum(), 1e-6)
        img = cv2.filter2D(img, -1, kern)
    if p["noise"] > 0.5:
        pos, neg = _noise_bank(int(round(p["noise"])), img.shape[0] + 32, img.shape[1] + 32)
        oy, ox = (int(v) for v in rng.integers(0, 32, 2))
        h, w = img.shape[:2]
        img = cv2.subtract(cv2.add(img, pos[oy:oy + h, ox:ox + w]), neg[oy:oy + h, ox:ox + w])
    if p["jpeg"] < 100:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(p["jpeg"])])
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img
