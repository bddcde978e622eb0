"""Find card-shaped quadrilaterals anywhere in a photo, with no calibration.

Cards are the brightest, least coloured flat things on a table, so the finder thresholds
"whiteness" (bright and unsaturated) against its neighbourhood at a couple of scales, then keeps
the outlines that look like a card under perspective: four corners, convex, solid, a sane aspect.
A card partly under a piece or another card still yields its outline's minimum-area rectangle.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.geometry import order_quad, quad_area, quad_centre, quad_sides

MIN_AREA_FRAC = 0.0008  # of the image: smaller blobs are never readable cards
MAX_AREA_FRAC = 0.5


def whiteness(image: np.ndarray) -> np.ndarray:
    """Bright and unsaturated -> high (uint8). Min over channels does both at once: a coloured
    cloth has one low channel, a white card none."""
    if image.ndim == 2:
        return image
    return image.min(axis=2)


def _candidates(mask: np.ndarray, min_area: float, max_area: float) -> list[np.ndarray]:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = []
    for c in contours:
        area = cv2.contourArea(c)
        if area < min_area or area > max_area:
            continue
        hull = cv2.convexHull(c)
        hull_area = cv2.contourArea(hull)
        if hull_area <= 0:
            continue
        peri = cv2.arcLength(hull, True)
        quad = None
        for eps in (0.015, 0.025, 0.035, 0.05, 0.07, 0.1):
            approx = cv2.approxPolyDP(hull, eps * peri, True)
            if len(approx) == 4:
                quad = approx.reshape(4, 2).astype(np.float32)
                break
        if quad is None:
            quad = cv2.boxPoints(cv2.minAreaRect(c)).astype(np.float32)
        qa = quad_area(quad)
        if qa <= 0 or area / qa < 0.5 or hull_area / qa > 1.3 or hull_area / qa < 0.85:
            continue  # not a solid quadrilateral: merged cards, a hand, a shadow edge
        sides = quad_sides(quad)
        if sides.min() < 8:
            continue
        # opposite sides, averaged: long/short of the card as seen
        a, b = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
        ratio = max(a, b) / max(min(a, b), 1e-6)
        if ratio > 3.6:
            continue
        out.append(order_quad(quad))
    return out


def _dedupe(quads: list[np.ndarray]) -> list[np.ndarray]:
    """Keep one quad per card: among quads whose centres sit inside each other, the largest."""
    quads = sorted(quads, key=quad_area, reverse=True)
    kept: list[np.ndarray] = []
    for q in quads:
        c = quad_centre(q)
        dup = False
        for k in kept:
            if cv2.pointPolygonTest(k.reshape(-1, 1, 2), (float(c[0]), float(c[1])), False) >= 0:
                kc = quad_centre(k)
                if cv2.pointPolygonTest(q.reshape(-1, 1, 2), (float(kc[0]), float(kc[1])),
                                        False) >= 0:
                    dup = True
                    break
        if not dup:
            kept.append(q)
    return kept


def find_cards(image: np.ndarray, max_side: int = 800) -> list[np.ndarray]:
    """Every card-like quadrilateral in a BGR (or gray) image, as 4x2 float32 corners clockwise
    from the top-left, in the image's own pixels. Never raises on odd images: a blank, black or
    tiny image simply has no cards."""
    if image is None or image.size == 0 or image.ndim not in (2, 3):
        return []
    h, w = image.shape[:2]
    if h < 16 or w < 16:
        return []
    scale = min(1.0, max_side / max(h, w))
    small = cv2.resize(image, (int(round(w * scale)), int(round(h * scale))),
                       interpolation=cv2.INTER_AREA) if scale < 1.0 else image
    g = whiteness(small)
    if int(g.max()) - int(g.min()) < 20:
        return []  # featureless: blank, black or blown-out frame
    sh, sw = g.shape[:2]
    min_area, max_area = MIN_AREA_FRAC * sh * sw, MAX_AREA_FRAC * sh * sw
    g = cv2.GaussianBlur(g, (3, 3), 0)
    quads: list[np.ndarray] = []
    kernel = np.ones((3, 3), np.uint8)
    # local contrast at two scales (a card is brighter than the table around it), plus Otsu for
    # frames where cards fill much of the view
    for frac in (0.12, 0.3):
        block = int(max(sh, sw) * frac) | 1
        m = cv2.adaptiveThreshold(g, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY,
                                  block, -12)
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, kernel)
        quads += _candidates(m, min_area, max_area)
    _, m = cv2.threshold(g, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    m = cv2.morphologyEx(m, cv2.MORPH_OPEN, kernel)
    quads += _candidates(m, min_area, max_area)
    quads = _dedupe(quads)
    return [(q / scale).astype(np.float32) for q in quads]
