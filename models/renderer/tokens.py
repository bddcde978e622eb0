"""The printable paper tokens the rulebook allows instead of pieces: a disc in the side's colour
with a chess glyph. One set of polygons draws both the printable sheet (SVG) and the render."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from .geometry import Camera

TOKEN_MM = 36.0
SIDE_COLOURS = {"white": ((236, 236, 232), (25, 25, 25)), "black": ((38, 38, 42), (235, 235, 230))}
_BASE = [(0.24, 0.78), (0.76, 0.78), (0.76, 0.87), (0.24, 0.87)]

# glyphs in a unit box (y down): list of ("poly", points) / ("circle", (cx, cy, r))
GLYPHS: dict[str, list] = {
    "pawn": [("circle", (0.5, 0.3, 0.13)),
             ("poly", [(0.4, 0.4), (0.6, 0.4), (0.7, 0.78), (0.3, 0.78)]), ("poly", _BASE)],
    "rook": [("poly", [(0.27, 0.16), (0.36, 0.16), (0.36, 0.24), (0.455, 0.24), (0.455, 0.16),
                       (0.545, 0.16), (0.545, 0.24), (0.64, 0.24), (0.64, 0.16), (0.73, 0.16),
                       (0.73, 0.36), (0.27, 0.36)]),
             ("poly", [(0.33, 0.35), (0.67, 0.35), (0.71, 0.78), (0.29, 0.78)]), ("poly", _BASE)],
    "knight": [("poly", [(0.28, 0.8), (0.31, 0.6), (0.47, 0.45), (0.3, 0.5), (0.2, 0.42),
                         (0.38, 0.22), (0.5, 0.12), (0.56, 0.19), (0.68, 0.27), (0.75, 0.5),
                         (0.72, 0.8)]), ("poly", _BASE)],
    "bishop": [("circle", (0.5, 0.13, 0.055)), ("ellipse", (0.5, 0.37, 0.15, 0.2)),
               ("poly", [(0.42, 0.5), (0.58, 0.5), (0.68, 0.78), (0.32, 0.78)]),
               ("poly", _BASE), ("cut", [(0.52, 0.27), (0.58, 0.3), (0.5, 0.42), (0.45, 0.39)])],
    "queen": [("poly", [(0.22, 0.24), (0.35, 0.52), (0.39, 0.2), (0.5, 0.48), (0.61, 0.2),
                        (0.65, 0.52), (0.78, 0.24), (0.69, 0.76), (0.31, 0.76)]),
              ("circle", (0.22, 0.22, 0.05)), ("circle", (0.39, 0.18, 0.05)),
              ("circle", (0.61, 0.18, 0.05)), ("circle", (0.78, 0.22, 0.05)),
              ("poly", _BASE)],
    "king": [("poly", [(0.46, 0.08), (0.54, 0.08), (0.54, 0.15), (0.62, 0.15), (0.62, 0.23),
                       (0.54, 0.23), (0.54, 0.36), (0.46, 0.36), (0.46, 0.23), (0.38, 0.23),
                       (0.38, 0.15), (0.46, 0.15)]),
             ("poly", [(0.28, 0.36), (0.72, 0.36), (0.64, 0.77), (0.36, 0.77)]), ("poly", _BASE)],
}


@lru_cache(maxsize=16)
def token_image(kind: str, side: str, size: int = 256) -> np.ndarray:
    """A BGRA raster of one token (transparent outside the disc)."""
    bg, fg = SIDE_COLOURS[side]
    ss = 4
    S = size * ss
    img = np.zeros((S, S, 4), np.uint8)
    c = S // 2
    cv2.circle(img, (c, c), c - 2, (*bg, 255), -1, cv2.LINE_AA)
    cv2.circle(img, (c, c), int(c * 0.93), (*fg, 255), max(2, S // 60), cv2.LINE_AA)
    inner = 0.62 * S
    off = (S - inner) / 2

    def tr(pts):
        return (np.array(pts) * inner + off).astype(np.int32)

    for shape, data in GLYPHS[kind]:
        if shape == "poly":
            cv2.fillPoly(img, [tr(data)], (*fg, 255), cv2.LINE_AA)
        elif shape == "cut":
            cv2.fillPoly(img, [tr(data)], (*bg, 255), cv2.LINE_AA)
        elif shape == "circle":
            x, y, r = data
            cv2.circle(img, tuple(tr([(x, y)])[0]), int(r * inner), (*fg, 255), -1, cv2.LINE_AA)
        elif shape == "ellipse":
            x, y, rx, ry = data
            cv2.ellipse(img, tuple(tr([(x, y)])[0]), (int(rx * inner), int(ry * inner)), 0, 0,
                        360, (*fg, 255), -1, cv2.LINE_AA)
    return cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA)


def draw_token(canvas: np.ndarray, occ: np.ndarray, cam: Camera, kind: str, side: str,
               x: float, y: float, z: float) -> None:
    """Lay a token flat on the table at (x, y), upright for its owner."""
    from .render import _warp_quad

    r = TOKEN_MM / 20.0
    s = 1.0 if side == "white" else -1.0
    pts = np.array([[x - s * r, y + s * r, z], [x + s * r, y + s * r, z],
                    [x + s * r, y - s * r, z], [x - s * r, y - s * r, z]])
    dst = cam.project_ideal(pts)
    img = token_image(kind, side)
    _warp_quad(canvas, img, dst)
    ring = np.array([[x + r * np.cos(t), y + r * np.sin(t), z]
                     for t in np.linspace(0, 2 * np.pi, 24, endpoint=False)])
    cv2.fillConvexPoly(occ, np.round(cam.project_ideal(ring)).astype(np.int32), 255)


def token_sheet_svg() -> str:
    """An A4 printable sheet: a row per unit kind, two white and two black tokens in each row
    (print it twice for four of a kind). Cut along the grey circles."""
    mm = TOKEN_MM
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<svg xmlns="http://www.w3.org/2000/svg" width="210mm" height="297mm" '
             'viewBox="0 0 210 297">',
             '<title>Royal Table paper tokens (36 mm, cut along the grey circles)</title>']

    def col(c):
        return f"#{c[2]:02x}{c[1]:02x}{c[0]:02x}"

    for row, kind in enumerate(GLYPHS):
        cy = 20 + mm / 2 + row * (mm + 6)
        for i, side in enumerate(("white", "white", "black", "black")):
            bg, fg = SIDE_COLOURS[side]
            cx = 17 + mm / 2 + i * (mm + 9)
            inner, off_x, off_y = 0.62 * mm, cx - 0.31 * mm, cy - 0.31 * mm
            parts.append(f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{mm / 2 - 0.2:.2f}" '
                         f'fill="{col(bg)}" stroke="#888" stroke-width="0.3"/>')
            parts.append(f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{mm / 2 * 0.93:.2f}" '
                         f'fill="none" stroke="{col(fg)}" stroke-width="0.6"/>')
            for shape, data in GLYPHS[kind]:
                fill = col(bg) if shape == "cut" else col(fg)
                if shape in ("poly", "cut"):
                    pts = " ".join(f"{px * inner + off_x:.2f},{py * inner + off_y:.2f}"
                                   for px, py in data)
                    parts.append(f'<polygon points="{pts}" fill="{fill}"/>')
                elif shape == "circle":
                    px, py, r = data
                    parts.append(f'<circle cx="{px * inner + off_x:.2f}" '
                                 f'cy="{py * inner + off_y:.2f}" r="{r * inner:.2f}" '
                                 f'fill="{fill}"/>')
                else:
                    px, py, rx, ry = data
                    parts.append(f'<ellipse cx="{px * inner + off_x:.2f}" '
                                 f'cy="{py * inner + off_y:.2f}" rx="{rx * inner:.2f}" '
                                 f'ry="{ry * inner:.2f}" fill="{fill}"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_token_sheet(path: Path) -> Path:
    path.write_text(token_sheet_svg())
    return path
