"""Hands and arms reaching over the table: shaded skin-coloured capsules in 3D, projected,
with a soft shadow on the table. They may carry a card or a piece."""

from __future__ import annotations

import math

import cv2
import numpy as np

from .geometry import BOARD_H, Camera


def _capsules(hand, scene) -> list[tuple]:
    """(p0, p1, r0, r1, colour, kind) in board cm for one arm."""
    tx, ty = hand.target
    sgn = -1.0 if hand.side == "white" else 1.0
    # right-handed players: the shoulder sits to the player's right of the target
    shoulder = np.array([tx * 0.4 - sgn * 18.0, sgn * (BOARD_H / 2 + 45.0), 32.0])
    wrist_at = np.array([tx, ty + sgn * 7.5, hand.height + 1.5])
    out_pos = np.array([shoulder[0], sgn * (BOARD_H / 2 + 80.0), 20.0])
    wrist = out_pos + (wrist_at - out_pos) * float(np.clip(hand.reach, 0, 1))
    elbow = (shoulder + wrist) / 2 + np.array([-sgn * 6.0, 0, -4.0])
    skin = np.array(scene.skin, np.float64)
    sleeve = np.array(scene.sleeve, np.float64)
    fwd = wrist - elbow
    fwd[2] = 0
    fwd /= max(np.linalg.norm(fwd), 1e-6)
    side = np.array([-fwd[1], fwd[0], 0.0])
    palm_c = wrist + fwd * 4.5 + [0, 0, -0.5]
    caps = [
        (shoulder, elbow, 5.0, 4.2, sleeve, "sleeve"),
        (elbow, wrist - fwd * 4.0, 4.0, 3.4, sleeve * 0.9, "sleeve"),
        (wrist - fwd * 4.0, wrist, 2.7, 2.5, skin, "skin"),
        (wrist, palm_c, 3.2, 3.6, skin, "skin"),
    ]
    for i, off in enumerate((-2.4, -0.8, 0.8, 2.4)):
        base = palm_c + fwd * 2.5 + side * off
        length = (6.0, 7.0, 6.8, 5.5)[i]
        tip = base + fwd * length * 0.8 + [0, 0, -min(hand.height, length * 0.5)]
        caps.append((base, tip, 0.95, 0.8, skin * 0.97, "finger"))
    th = palm_c - fwd * 1.0 - sgn * side * 3.6
    caps.append((palm_c - sgn * side * 1.5, th + fwd * 3.5 + [0, 0, -1.0], 1.2, 0.95, skin,
                 "thumb"))
    return caps


def _draw_capsule(img: np.ndarray, p0, p1, r0: float, r1: float, colour, light=1.0) -> None:
    d = p1 - p0
    n = np.array([-d[1], d[0]], np.float64)
    L = np.linalg.norm(n)
    n = n / L if L > 1e-6 else np.array([1.0, 0.0])
    # shading across the limb: dark edge, lit middle (three bands)
    for frac, shade in ((1.0, 0.72), (0.7, 0.9), (0.35, 1.05)):
        c = tuple(float(x) for x in np.clip(np.asarray(colour) * shade * light, 0, 255))
        q = np.array([p0 + n * r0 * frac, p1 + n * r1 * frac, p1 - n * r1 * frac,
                      p0 - n * r0 * frac])
        cv2.fillConvexPoly(img, np.round(q * 4).astype(np.int32), c, cv2.LINE_AA, shift=2)
        cv2.circle(img, tuple(np.round(p0 * 4).astype(int)), int(r0 * frac * 4), c, -1,
                   cv2.LINE_AA, shift=2)
        cv2.circle(img, tuple(np.round(p1 * 4).astype(int)), int(r1 * frac * 4), c, -1,
                   cv2.LINE_AA, shift=2)


def draw_hands(canvas: np.ndarray, occ: np.ndarray, cam: Camera, scene, hands: list) -> list:
    """Draw arms (and what they carry); mark them in `occ`. Returns truth per hand."""
    from . import assets, pieces
    from .render import _draw_card

    if not hands:
        return []
    H_, W_ = canvas.shape[:2]
    truth = []
    # shadows: every capsule projected down onto the table along the light
    ld = np.array([math.cos(scene.light_dir), math.sin(scene.light_dir)])
    q = 4
    sm = np.zeros((H_ // q + 1, W_ // q + 1), np.uint8)
    all_caps = [(_capsules(h, scene), h) for h in hands]
    for caps, _ in all_caps:
        for p0, p1, r0, r1, _, _ in caps:
            s0 = np.array([p0[0] + ld[0] * p0[2] / math.tan(scene.light_elev),
                           p0[1] + ld[1] * p0[2] / math.tan(scene.light_elev), 0.0])
            s1 = np.array([p1[0] + ld[0] * p1[2] / math.tan(scene.light_elev),
                           p1[1] + ld[1] * p1[2] / math.tan(scene.light_elev), 0.0])
            if cam.to_cam(np.array([s0, s1]))[:, 2].min() < 1:
                continue
            a, b = cam.project_ideal(np.array([s0, s1])) / q
            _draw_capsule(sm, a, b, r0 * cam.pixel_per_cm(s0) / q, r1 * cam.pixel_per_cm(s1) / q,
                          (255,))
    sm = cv2.GaussianBlur(sm, (0, 0), 3.0)
    sm = cv2.resize(sm, (W_, H_))[:H_, :W_]
    canvas[:] = (canvas * (1 - 0.4 * sm[..., None].astype(np.float32) / 255)).astype(np.uint8)
    for caps, hand in all_caps:
        palm = caps[3][1]
        if hand.carry_card:
            design = hand.carry_design or scene.design_white
            ang = 0.0 if hand.side == "white" else 180.0
            img = assets.card_image(design, hand.carry_card)
            _draw_card(canvas, cam, img, palm[0], palm[1], ang, 0.0, max(palm[2] - 1.2, 0.2))
        if hand.carry_unit and scene.piece_set != "paper-token":
            pieces.draw_piece_items(canvas, occ, cam, scene,
                                    [("carried", hand.carry_unit, palm[0], palm[1] + 2.0,
                                      max(palm[2] - 6.0, 0.3))], {})
        elif hand.carry_unit:
            from .tokens import draw_token
            draw_token(canvas, occ, cam, hand.carry_unit["kind"], hand.carry_unit["side"],
                       palm[0], palm[1], max(palm[2] - 1.0, 0.2))
        layer = np.zeros_like(canvas)
        mask = np.zeros((H_, W_), np.uint8)
        for p0, p1, r0, r1, colour, _ in caps:
            if cam.to_cam(np.array([p0, p1]))[:, 2].min() < 1:
                continue
            a, b = cam.project_ideal(np.array([p0, p1]))
            if not (np.isfinite(a).all() and np.isfinite(b).all()):
                continue
            if max(abs(a).max(), abs(b).max()) > 20000:
                continue
            ra, rb = r0 * cam.pixel_per_cm(p0), r1 * cam.pixel_per_cm(p1)
            _draw_capsule(layer, a, b, ra, rb, colour)
            _draw_capsule(mask, a, b, ra, rb, (255,))
        cv2.copyTo(layer, mask, canvas)
        cv2.bitwise_or(occ, mask, occ)
        ys, xs = np.nonzero(mask[::4, ::4])
        entry = {"side": hand.side, "reach": hand.reach, "carry_card": hand.carry_card,
                 "carry_unit": hand.carry_unit}
        if len(xs):
            pts = np.stack([xs * 4, ys * 4], 1).astype(np.float32)
            hull = cv2.convexHull(pts).reshape(-1, 2)
            entry["hull"] = cam.distort_ideal(hull).round(1).tolist()
        truth.append(entry)
    return truth
