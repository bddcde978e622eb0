"""Board registration: from the set-up cards, from 4 clicked corners, or from ArUco markers; the
re-check that notices a moved camera or board; refinement as more cards appear.

Automatic registration uses what survives any camera pose: straight lines. The four set-up cards
of a home rank (files a, c, e, g) have collinear centres whose cross-ratio is fixed (positions
0, 2, 4, 6 -> 4/3), so the two home ranks are found among any card quads in view; the 8 centres
then give the lattice homography. The board's 180° symmetry is broken by the initiative cards
(beside file g) when seen, else by which image edge white sits at (default: the bottom).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import cv2
import numpy as np

from .geometry import (
    CELLS,
    DEFAULT_CARD_CELLS,
    SETUP_CELLS,
    apply_h,
    card_board_corners,
    cell_at,
    cell_xy,
    fit_homography,
    is_proper,
    orientation_sign,
    quad_area,
    quad_centre,
)
from .profile import DEFAULT_INITIATIVE, Profile

SETUP_CROSS_RATIO = 4.0 / 3.0
WHOLE_CARD = 0.7  # of the median card's size: a smaller rectangle on a cell is part of a card
# a registered board's cards, refitted as rectangles of one size on their cells, at most this
# far off (RMS over centres and corners, in file pitches): on 180 held-out set-up stills the
# right boards were 0.016-0.12 off, the two wrong ones 0.18 and (4 cards on cells) unfittable
MAX_SHAPE_RESIDUAL = 0.15
WHITE_EDGES = ("bottom", "top", "left", "right")
# Board-plane positions (cell units) of ArUco markers 0..3: just outside the corners of a1, g1,
# g5 and a5, diagonally (the printable sheet says so).
MARKER_XY = {0: (-1.0, -1.0), 1: (7.0, -1.0), 2: (7.0, 5.0), 3: (-1.0, 5.0)}
BOARD_CORNERS_XY = np.array([[-0.5, -0.5], [6.5, -0.5], [6.5, 4.5], [-0.5, 4.5]])


class RegistrationError(RuntimeError):
    """The board could not be found; the message says what was seen."""


@dataclass
class Fit:
    H: np.ndarray
    residual_px: float
    matched: dict[str, np.ndarray]  # cell -> card quad used


def _cross_ratio(t: np.ndarray) -> float:
    a, b, c, d = t
    den = (c - b) * (d - a)
    return float((c - a) * (d - b) / den) if abs(den) > 1e-9 else 0.0


def _rank_rows(centres: np.ndarray, tol: float) -> list[list[int]]:
    """Ordered 4-tuples of card centres that could be a home rank's a, c, e, g cards."""
    rows = []
    for combo in itertools.combinations(range(len(centres)), 4):
        p = centres[list(combo)]
        mean = p.mean(0)
        _, _, vt = np.linalg.svd(p - mean)
        d = vt[0]
        t = (p - mean) @ d
        off = np.abs((p - mean) @ vt[1])
        span = t.max() - t.min()
        if span <= 0 or off.max() > tol * span:
            continue
        order = np.argsort(t)
        cr = _cross_ratio(t[order])
        if abs(cr - SETUP_CROSS_RATIO) > 0.08:
            continue
        rows.append([combo[i] for i in order])
    return rows


def _one_missing(centres: np.ndarray, rows: list[list[int]], ideal1: np.ndarray,
                 ideal5: np.ndarray) -> list[tuple[float, np.ndarray, list[int]]]:
    """One full home rank plus 3 cards of the other (a court card the finder missed, a hand):
    try each collinear triple in each of the 4 ways it can miss one file. Every fit close
    enough is returned (the caller weighs them by what else they explain)."""
    fits = []
    n = len(centres)
    for full in rows:
        rest = [i for i in range(n) if i not in full]
        for tri in itertools.combinations(rest, 3):
            p = centres[list(tri)]
            mean = p.mean(0)
            _, _, vt = np.linalg.svd(p - mean)
            t = (p - mean) @ vt[0]
            if np.ptp(t) <= 0 or np.abs((p - mean) @ vt[1]).max() > 0.06 * np.ptp(t):
                continue
            tri_o = [tri[i] for i in np.argsort(t)]
            for full_is_1 in (True, False):
                for miss in range(4):
                    keep = [k for k in range(4) if k != miss]
                    for rev, revf in itertools.product((False, True), repeat=2):
                        t3 = tri_o[::-1] if rev else tri_o
                        fo = full[::-1] if revf else full
                        if full_is_1:
                            src = np.vstack([ideal1, ideal5[keep]])
                        else:
                            src = np.vstack([ideal1[keep], ideal5])
                        idx = fo + t3 if full_is_1 else t3 + fo
                        dst = centres[idx]
                        H = fit_homography(src, dst)
                        if H is None or not is_proper(H):
                            continue
                        err = np.linalg.norm(apply_h(H, src) - dst, axis=1)
                        scale = float(np.linalg.norm(centres[full[3]] - centres[full[0]])) / 6
                        rel = float(np.sqrt((err ** 2).mean())) / max(scale, 1e-6)
                        if rel < 0.08 and _triple_predicted(src, dst, idx.index(t3[0])):
                            fits.append((rel, H, idx))
    return fits


def _triple_predicted(src: np.ndarray, dst: np.ndarray, first: int) -> bool:
    """Whether each card of the partial rank is where the other six cards put it. Three
    collinear points fit any three files of a rank exactly, so the residual cannot tell a
    shifted rank (e1, g1 and the initiative card taken for a1, c1, e1); left out one at a
    time, a card of a wrongly placed rank lands far from the fit of the rest. Measured on the
    board (cells), as perspective shrinks the far rank: over 40 synthetic poses a right rank's
    worst card lands within 0.26 cell, a shifted one 0.6 or more away."""
    for k in range(first, first + 3):
        rest = [j for j in range(len(src)) if j != k]
        H = fit_homography(src[rest], dst[rest])
        if H is None or np.linalg.norm(apply_h(np.linalg.inv(H), dst[k:k + 1])[0]
                                       - src[k]) > 0.4:
            return False
    return True


# how far (board cells, along and across the files) a card's centre may lie from an initiative
# zone's centre and still be the card on that zone: players drop it roughly beside file g
INITIATIVE_REACH = (0.8, 0.5)


def _on_zone(b: np.ndarray, zone: tuple[float, float]) -> bool:
    """Is the board point b on the initiative zone centred at `zone`?"""
    return bool(abs(b[0] - zone[0]) < INITIATIVE_REACH[0]
                and abs(b[1] - zone[1]) < INITIATIVE_REACH[1])


def _board_targets(H: np.ndarray, centres: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Under the fit H, the cards lying on a set-up cell or an initiative zone (the zones
    beside file g, or where the board's 180° twin puts them), each with its place: (card
    indices, board positions)."""
    b = apply_h(np.linalg.inv(H), centres)
    zones = np.array(list(DEFAULT_INITIATIVE.values()))
    places = np.vstack([[cell_xy(c) for c in SETUP_CELLS], zones, [6.0, 4.0] - zones])
    reach = np.array([[0.35, 0.35]] * len(SETUP_CELLS) + [INITIATIVE_REACH] * (2 * len(zones)))
    d = np.abs(b[:, None] - places[None])
    near = ((d / reach[None]) ** 2).sum(2)
    taken: dict[int, tuple[float, int]] = {}  # place -> (distance, card): nearest card wins
    for i in range(len(b)):
        k = int(near[i].argmin())
        if near[i, k] <= 1.0 and (k not in taken or near[i, k] < taken[k][0]):
            taken[k] = (float(near[i, k]), i)
    cards = [i for _, i in taken.values()]
    return cards, places[list(taken)]


def _likeliest_board(fits: list[tuple[float, np.ndarray, list[int]]], centres: np.ndarray,
                     quads: list[np.ndarray] | None = None) -> tuple[float, np.ndarray, list[int]]:
    """Of the fits of two home ranks, the board: the one under which the most cards lie on
    set-up cells and initiative zones, then the one that fits all of those best. Why not the
    rows' residual alone: a rank's c, e, g cards and the initiative card beside g are four
    collinear cards at nearly the set-up's cross-ratio (2, 4, 6, 7.3: 1.25 against 4/3), and a
    rank with a card missing fits three files either way along it; a fit two files off then
    leaves cards unexplained, or fits them worse. Where two different boards explain the
    cards' centres equally well, the cards' own outlines (`quads`) may still tell: on the
    board they lie as rectangles of one size, and a board two files off along one rank must
    shear them (`_shape_residual`); the one that fits them at most half as far off is taken.
    Else the set-up is ambiguous and RegistrationError says so (a wrong board would misplace
    every card of the game)."""
    scored = []
    for fit in fits:
        cards, places = _board_targets(fit[1], centres)
        H = fit_homography(places, centres[cards]) if len(cards) >= 5 else None
        if H is None:
            continue
        pitch = float(np.linalg.norm(apply_h(H, np.array([[4.0, 2.0]]))
                                     - apply_h(H, np.array([[3.0, 2.0]]))))
        err = np.linalg.norm(apply_h(H, places) - centres[cards], axis=1)
        scored.append((len(cards), float(np.sqrt((err ** 2).mean())) / max(pitch, 1e-6), fit))
    if not scored:
        return min(fits, key=lambda f: f[0])
    scored.sort(key=lambda s: (-s[0], s[1]))
    n_best, res_best, best = scored[0]
    lattice = np.array([cell_xy(c) for c in CELLS])
    at = apply_h(best[1], lattice)
    pitch = float(np.linalg.norm(at[1] - at[0]))  # a1 -> b1

    def same_board(H: np.ndarray, at: np.ndarray, twin: np.ndarray) -> bool:
        other = apply_h(H, lattice)
        return min(np.abs(other - at).max(), np.abs(other - twin).max()) <= 0.5 * pitch

    rivals = [best]
    for n, res, fit in scored[1:]:
        if n < n_best or res > 1.5 * res_best + 0.01:
            break
        if not any(same_board(fit[1], apply_h(r[1], lattice),
                              apply_h(r[1], [6.0, 4.0] - lattice)) for r in rivals):
            rivals.append(fit)
    if len(rivals) == 1:
        return best
    if quads is not None:
        shapes = sorted((_shape_residual(r[1], quads), i) for i, r in enumerate(rivals))
        if shapes[0][0] <= 0.5 * shapes[1][0]:
            return rivals[shapes[0][1]]
    raise RegistrationError(
        f"the {len(centres)} cards seen fit two different boards equally well (is a set-up "
        "card hidden or out of view?): show all 8 set-up cards, or click the 4 board corners")


def _shape_residual(H: np.ndarray, quads: list[np.ndarray]) -> float:
    """How far the cards' outlines are from rectangles of one size on the cells they lie on
    under board `H`, refitted to them: RMS over centres and corners, in file pitches."""
    matched = match_cards(H, quads, whole=WHOLE_CARD)
    if len(matched) < 5:
        return float("inf")
    H2, res = refit(H, matched, _card_size(H, list(matched.values())))
    pitch = float(np.linalg.norm(apply_h(H2, np.array([[4.0, 2.0]]))
                                 - apply_h(H2, np.array([[3.0, 2.0]]))))
    return res / max(pitch, 1e-6)


def _card_size(H: np.ndarray, quads: list[np.ndarray]) -> tuple[float, float]:
    """Median card width and height in cell units (cards on the board lie along the lattice)."""
    ws, hs = [], []
    Hi = np.linalg.inv(H)
    for q in quads:
        b = apply_h(Hi, q)
        s = np.linalg.norm(b - np.roll(b, -1, axis=0), axis=1)
        e = b - np.roll(b, -1, axis=0)
        # sides mostly along x are widths
        for k in range(4):
            (ws if abs(e[k, 0]) > abs(e[k, 1]) else hs).append(s[k])
    if not ws or not hs:
        return DEFAULT_CARD_CELLS
    w, h = float(np.median(ws)), float(np.median(hs))
    return (w, h) if w < h else (h, w)  # portrait: width is the short side


def refit(H: np.ndarray, matched: dict[str, np.ndarray],
          card_size: tuple[float, float]) -> tuple[np.ndarray, float]:
    """Least-squares homography from matched cards' centres and corners; returns it and the RMS
    residual in pixels. Corners are matched to the nearest ideal corner of the card's cell."""
    src, dst = [], []
    Hi = np.linalg.inv(H)
    for cell, q in matched.items():
        c = cell_xy(cell) if cell in CELLS else None
        if c is None:
            continue
        src.append(c)
        dst.append(quad_centre(q))
        b = apply_h(Hi, q)
        landscape = np.ptp(b[:, 0]) > np.ptp(b[:, 1])
        ideal = card_board_corners(c, card_size, bool(landscape))
        for k in range(4):
            j = int(np.argmin(np.linalg.norm(ideal - b[k], axis=1)))
            src.append(ideal[j])
            dst.append(q[k])
    H2 = fit_homography(np.array(src), np.array(dst))
    if H2 is None:
        return H, float("inf")
    r = np.linalg.norm(apply_h(H2, np.array(src)) - np.array(dst), axis=1)
    return H2, float(np.sqrt((r ** 2).mean()))


def match_cards(H: np.ndarray, quads: list[np.ndarray], tol: float = 0.3,
                whole: float = 0.0) -> dict[str, np.ndarray]:
    """Cards whose centres fall within `tol` cells of a cell centre, by cell: the nearest to
    it, and none under `whole` times the size of the median card matched (registration asks
    WHOLE_CARD: a court card's picture frame split in two halves, each within `tol` of the
    cell, would pull the fit sideways)."""
    if not quads:
        return {}
    Hi = np.linalg.inv(H)
    near: dict[str, tuple[float, np.ndarray, float]] = {}
    for q in quads:
        b = apply_h(Hi, q)
        centre = apply_h(Hi, quad_centre(q)[None])[0]
        cell = cell_at(*centre)
        if cell is None:
            continue
        d = float(np.hypot(*(centre - cell_xy(cell))))
        if d <= tol and (cell not in near or d < near[cell][0]):
            near[cell] = (d, q, float(quad_area(b)))
    if not near:
        return {}
    typical = float(np.median([a for _, _, a in near.values()]))
    return {cell: q for cell, (_, q, a) in near.items() if a >= whole * typical}


def _toward_edge(H: np.ndarray, edge: str, size: tuple[int, int]) -> float:
    """How far white's home rank lies toward `edge` of the image compared with black's."""
    w1 = apply_h(H, np.array([[3.0, 0.0]]))[0]
    b5 = apply_h(H, np.array([[3.0, 4.0]]))[0]
    d = w1 - b5
    return {"bottom": d[1], "top": -d[1], "right": d[0], "left": -d[0]}[edge]


def _initiative_votes(H: np.ndarray, quads: list[np.ndarray], used: set[int]) -> int:
    Hi = np.linalg.inv(H)
    votes = 0
    for i, q in enumerate(quads):
        if i in used:
            continue
        b = apply_h(Hi, quad_centre(q)[None])[0]
        for zx, zy in DEFAULT_INITIATIVE.values():
            votes += int(_on_zone(b, (zx, zy))) - int(_on_zone(b, (6 - zx, 4 - zy)))
    return votes


def register_from_cards(quads: list[np.ndarray], image_size: tuple[int, int],
                        white_edge: str = "auto") -> Profile:
    """Fit the lattice to the 8 set-up cards among `quads` (image corners of every card seen).
    `white_edge`: "auto" (initiative cards, else bottom) or one of WHITE_EDGES."""
    quads = [np.asarray(q, np.float32).reshape(4, 2) for q in quads]
    if len(quads) < 8:
        raise RegistrationError(
            f"saw {len(quads)} card(s); the board needs the 8 set-up cards (files a, c, e, g "
            "on ranks 1 and 5) in view")
    if len(quads) > 14:  # keep the search small: the largest cards are the board's
        quads = quads[:14]  # the finder lists the cleanest card outlines first
    centres = np.array([quad_centre(q) for q in quads])
    rows = _rank_rows(centres, tol=0.06)
    fits: list[tuple[float, np.ndarray, list[int]]] = []
    ideal_rank1 = np.array([cell_xy(c) for c in SETUP_CELLS[:4]])
    ideal_rank5 = np.array([cell_xy(c) for c in SETUP_CELLS[4:]])
    for r1, r5 in itertools.permutations(rows, 2):
        if set(r1) & set(r5):
            continue
        for rev1, rev5 in itertools.product((False, True), repeat=2):
            r1o = r1[::-1] if rev1 else r1
            r5o = r5[::-1] if rev5 else r5
            src = np.vstack([ideal_rank1, ideal_rank5])
            dst = centres[r1o + r5o]
            H = fit_homography(src, dst)
            if H is None or not is_proper(H):
                continue  # mirrored or twisted: not a camera looking down at a table
            err = float(np.sqrt((np.linalg.norm(apply_h(H, src) - dst, axis=1) ** 2).mean()))
            scale = float(np.linalg.norm(dst[3] - dst[0])) / 6.0  # pixels per cell, roughly
            rel = err / max(scale, 1e-6)
            if rel > 0.12:
                continue
            fits.append((rel, H, r1o + r5o))
    fits += _one_missing(centres, rows, ideal_rank1, ideal_rank5)
    if not fits:
        raise RegistrationError(
            f"saw {len(quads)} card(s) but no two rows of 4 set-up cards (files a, c, e, g "
            f"on ranks 1 and 5); found {len(rows)} candidate row(s)")
    best = _likeliest_board(fits, centres, quads)
    _, H, used = best
    # the 180° twin fits equally well: (f, r) -> (6 - f, 4 - r)
    flip = np.array([[-1.0, 0, 6], [0, -1.0, 4], [0, 0, 1]])
    twin = H @ flip
    if white_edge == "auto":
        votes = _initiative_votes(H, quads, set(used))
        if votes < 0 or (votes == 0 and _toward_edge(twin, "bottom", image_size)
                         > _toward_edge(H, "bottom", image_size)):
            H = twin
    else:
        if white_edge not in WHITE_EDGES:
            raise ValueError(f"white_edge must be auto or one of {', '.join(WHITE_EDGES)}")
        if _toward_edge(twin, white_edge, image_size) > _toward_edge(H, white_edge, image_size):
            H = twin
    matched = match_cards(H, quads, whole=WHOLE_CARD)
    size = _card_size(H, list(matched.values()))
    H, res = refit(H, matched, size)
    size = _card_size(H, list(matched.values()))
    # the last word: the cards must lie on the board's cells as rectangles of one size
    off = _shape_residual(H, quads)
    if off > MAX_SHAPE_RESIDUAL:
        on_cells = len(match_cards(H, quads, whole=WHOLE_CARD))
        raise RegistrationError(
            f"the {len(quads)} cards seen do not lie on one board's cells as cards of one size "
            f"({on_cells} on cells" + (f", {off:.2f} of a cell off" if on_cells >= 5 else "")
            + "): show all 8 set-up cards, or click the 4 board corners")
    profile = Profile(H=H, image_size=tuple(image_size), card_size=size, method="cards",
                      residual_px=res)
    _place_initiative(profile, quads)
    return profile


def _place_initiative(profile: Profile, quads: list[np.ndarray]) -> None:
    """Move each initiative zone onto the card seen there, if any."""
    Hi = np.linalg.inv(profile.H)
    for side, (zx, zy) in list(profile.initiative.items()):
        for q in quads:
            b = apply_h(Hi, quad_centre(q)[None])[0]
            if _on_zone(b, (zx, zy)):
                profile.initiative[side] = (round(float(b[0]), 3), round(float(b[1]), 3))
                break


def register_from_corners(corners: np.ndarray, image_size: tuple[int, int]) -> Profile:
    """Manual fallback: the board's 4 outer corners clicked in order a1, g1, g5, a5 (the outer
    corner of each of those cells)."""
    c = np.asarray(corners, np.float64).reshape(-1, 2)
    if c.shape != (4, 2):
        raise RegistrationError("need exactly 4 corners: a1, g1, g5, a5")
    H = fit_homography(BOARD_CORNERS_XY, c)
    if H is None or cv2.contourArea(c.astype(np.float32)) < 100:
        raise RegistrationError("the 4 corners do not span a board (collinear or too small)")
    if orientation_sign(H) >= 0:
        raise RegistrationError("corners are mirrored: click them in order a1, g1, g5, a5 "
                                "(clockwise as seen from above, starting at white's left)")
    return Profile(H=H, image_size=tuple(image_size), method="corners")


ARUCO_DICT = cv2.aruco.DICT_4X4_50


def detect_markers(image: np.ndarray) -> dict[int, np.ndarray]:
    """ArUco markers 0..3 in view: id -> centre."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    det = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(ARUCO_DICT),
                                  cv2.aruco.DetectorParameters())
    corners, ids, _ = det.detectMarkers(gray)
    out: dict[int, np.ndarray] = {}
    if ids is None:
        return out
    for c, i in zip(corners, ids.ravel(), strict=True):
        if int(i) in MARKER_XY:
            out[int(i)] = c.reshape(4, 2).mean(0)
    return out


def register_from_markers(image: np.ndarray) -> Profile:
    found = detect_markers(image)
    if len(found) < 4:
        raise RegistrationError(f"saw ArUco marker(s) {sorted(found) or 'none'}; need 0, 1, 2, 3 "
                                "at the corners beside a1, g1, g5, a5")
    src = np.array([MARKER_XY[i] for i in sorted(found)])
    dst = np.array([found[i] for i in sorted(found)])
    H = fit_homography(src, dst)
    if H is None or orientation_sign(H) >= 0:
        raise RegistrationError("markers are not laid out as a board (check ids and order)")
    h, w = image.shape[:2]
    return Profile(H=H, image_size=(w, h), method="markers")


def check_registration(profile: Profile, quads: list[np.ndarray]) -> str:
    """'ok' when the cards in view sit on the lattice, 'moved' when most do not, 'unknown' when
    too few cards are visible to tell."""
    return registration_check(profile, quads)[0]


def registration_check(profile: Profile, quads: list[np.ndarray]) -> tuple[str, int]:
    """`check_registration`'s verdict and how many of the cards in view sit on the lattice
    (0 where too few are visible to tell)."""
    if len(quads) < 3:
        return "unknown", 0
    matched = len(match_cards(profile.H, [np.asarray(q, np.float32) for q in quads], tol=0.25))
    on_board = 0
    Hi = np.linalg.inv(profile.H)
    for q in quads:
        b = apply_h(Hi, quad_centre(q)[None])[0]
        if -0.6 <= b[0] <= 6.6 and -0.6 <= b[1] <= 4.6:
            on_board += 1
    if matched >= max(3, 0.5 * len(quads)):
        return "ok", matched
    return ("moved" if len(quads) - on_board + (on_board - matched) > 0.5 * len(quads)
            else "unknown"), matched


def refine(profile: Profile, quads: list[np.ndarray], min_cards: int = 6) -> Profile:
    """Refit the homography with every card now on the lattice (more cards, better fit); the
    profile is returned unchanged when too few match or the fit gets worse."""
    matched = match_cards(profile.H, [np.asarray(q, np.float32) for q in quads], tol=0.25)
    if len(matched) < min_cards:
        return profile
    H, res = refit(profile.H, matched, profile.card_size)
    if not np.isfinite(res) or res > max(2.0 * profile.residual_px, 3.0):
        return profile
    return Profile(H=H, image_size=profile.image_size,
                   card_size=_card_size(H, list(matched.values())), K=profile.K,
                   dist=profile.dist, initiative=dict(profile.initiative),
                   method=profile.method, residual_px=res, signature=list(profile.signature))
