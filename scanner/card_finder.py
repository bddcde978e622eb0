"""Find card-shaped quadrilaterals anywhere in a photo, with no calibration.

Cards are the brightest, least coloured flat things on a table, so the finder thresholds
"whiteness" (bright and unsaturated) against its neighbourhood at a couple of scales, then keeps
the outlines that look like a card under perspective: four corners, convex, solid, a sane aspect.
A card partly under a piece or another card still yields its outline's minimum-area rectangle.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.geometry import order_quad, quad_area, quad_centre, quad_sides

MIN_AREA_FRAC = 0.0008  # of the image: smaller blobs are never readable cards
MAX_AREA_FRAC = 0.5
EDGE_LOW = (10,)  # Canny low thresholds tried (high = 3 x low)


def whiteness(image: np.ndarray) -> np.ndarray:
    """Bright and unsaturated -> high (uint8). Min over channels does both at once: a coloured
    cloth has one low channel, a white card none."""
    if image.ndim == 2:
        return image
    b, g, r = cv2.split(image)
    return cv2.min(cv2.min(b, g), r)


def _candidates(contours, min_area: float, max_area: float) -> list[np.ndarray]:
    """Card-like quads among a binary mask's contours."""
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


def _dedupe(scored: list[tuple[float, np.ndarray]]) -> list[np.ndarray]:
    """Keep one quad per card: among quads whose centres sit inside each other, the one with the
    cleanest edge all round (then the larger)."""
    scored = sorted(scored, key=lambda cq: (-round(cq[0] / 8), -quad_area(cq[1])))
    kept: list[np.ndarray] = []
    for _, q in scored:
        c = quad_centre(q)
        dup = False
        for k in kept:
            # inside a cleaner outline of similar size: a fragment or a second trace of it
            # (not inside a far smaller one: a pip or an index letter ringed cleanly at the
            # card's middle would take the card with it, and go itself as too small)
            if cv2.pointPolygonTest(k.reshape(-1, 1, 2), (float(c[0]), float(c[1])), False) >= 0 \
                    and quad_area(q) / 2.2 < quad_area(k) < 2.2 * quad_area(q):
                dup = True
                break
        if not dup:
            kept.append(q)
    return kept


def _without_containers(quads: list[np.ndarray]) -> list[np.ndarray]:
    """Drop the biggest quads while each holds the centres of two or more others of a card's
    size beside it (at least CONTAINED of its area: not its pips): a patch of table, a
    mattress or a tray holding the cards, which would make them look like pips beside it."""
    by_size = sorted(quads, key=quad_area, reverse=True)
    while len(by_size) > 2:
        big, area = by_size[0], quad_area(by_size[0])
        poly = big.reshape(-1, 1, 2)
        inside = sum(quad_area(q) >= CONTAINED * area and cv2.pointPolygonTest(
            poly, tuple(float(v) for v in quad_centre(q)), False) >= 0 for q in by_size[1:])
        if inside < 2:
            break
        by_size = by_size[1:]
    return [q for q in quads if any(q is k for k in by_size)]


CONTAINED = 0.1


def _without_clusters(quads: list[np.ndarray]) -> list[np.ndarray]:
    """Drop an outline that holds the centres of two or more other cards: cards that touch
    traced as one."""
    centres = [quad_centre(q) for q in quads]
    out = []
    for i, q in enumerate(quads):
        poly = q.reshape(-1, 1, 2)
        inside = sum(cv2.pointPolygonTest(poly, (float(c[0]), float(c[1])), False) >= 0
                     for j, c in enumerate(centres) if j != i)
        if inside < 2:
            out.append(q)
    return out


@dataclass
class TableMasks:
    """What the finder sees of one photo, at its working size (`scale` of the image): the
    whiteness, the outer contours of the masks of what is brighter than its surroundings (each
    mask also cut along the edges; whiteness masks first, `n_white` of them), the dilated edge
    map and the contours of the holes in it. The corner finder (`card_corners`) reads the
    same."""

    scale: float
    whiteness: np.ndarray
    mask_contours: list[tuple]
    n_white: int
    outline: np.ndarray
    outline_contours: tuple  # the edge map's outer contours and its holes (RETR_CCOMP)
    outline_holes: np.ndarray  # per outline contour, whether it is a hole


def table_masks(image: np.ndarray, max_side: int = 1024) -> TableMasks | None:
    """The masks of a BGR (or gray) image, or None where it can hold no card (empty, tiny,
    featureless: blank, black or blown-out)."""
    if image is None or image.size == 0 or image.ndim not in (2, 3):
        return None
    h, w = image.shape[:2]
    if h < 16 or w < 16:
        return None
    scale = min(1.0, max_side / max(h, w))
    small = cv2.resize(image, (int(round(w * scale)), int(round(h * scale))),
                       interpolation=cv2.INTER_AREA) if scale < 1.0 else image
    g = whiteness(small)
    if int(g.max()) - int(g.min()) < 20:
        return None
    sh, sw = g.shape[:2]
    # brightness too: court cards' coloured figures are dark in whiteness and would split the
    # card in two, but are bright in the max channel
    v = cv2.max(cv2.max(*cv2.split(small)[:2]), small[:, :, 2]) if small.ndim == 3 else small
    kernel = np.ones((3, 3), np.uint8)
    masks = []
    for chan in (g, v):
        chan = cv2.GaussianBlur(chan, (3, 3), 0)
        # local contrast at two scales (a card is brighter than the table around it), plus
        # Otsu for frames where cards fill much of the view
        for frac in (0.12, 0.3):
            block = int(max(sh, sw) * frac) | 1
            masks.append(cv2.adaptiveThreshold(chan, 255, cv2.ADAPTIVE_THRESH_MEAN_C,
                                               cv2.THRESH_BINARY, block, -12))
        masks.append(cv2.threshold(chan, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)[1])
    # outlines: a card on a white table is no brighter than it, but its edge still shows
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
    outline = None
    for lo in EDGE_LOW:
        edges = cv2.dilate(cv2.Canny(cv2.GaussianBlur(gray, (5, 5), 0), lo, 3 * lo), kernel)
        outline = edges if outline is None else cv2.max(outline, edges)
    # a card touching a bright patch of the table (or another card) merges with it in a
    # mask, but the edge between them still cuts it off: each mask is read whole and cut
    cut = cv2.bitwise_not(outline)
    contours = []
    for m in masks:
        m = cv2.morphologyEx(m, cv2.MORPH_OPEN, kernel)
        for each in (m, cv2.bitwise_and(m, cut)):
            contours.append(cv2.findContours(each, cv2.RETR_EXTERNAL,
                                             cv2.CHAIN_APPROX_SIMPLE)[0])
    rims, hierarchy = cv2.findContours(outline, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    holes = hierarchy[0][:, 3] >= 0 if hierarchy is not None else np.zeros(0, bool)
    return TableMasks(scale, g, contours, len(contours) // 2, outline, rims, holes)


def find_cards(image: np.ndarray, max_side: int = 1024,
               seen: TableMasks | None = None, rims: bool = False) -> list[np.ndarray]:
    """Every card-like quadrilateral in a BGR (or gray) image, as 4x2 float32 corners clockwise
    from the top-left, in the image's own pixels. Never raises on odd images: a blank, black or
    tiny image simply has no cards. `seen`: the image's `table_masks`, where already made.
    `rims`: also the cards traced only by their rim (`_closed_ring_holes`), for photos of
    cards close up (on the real photos' fit half found 72.0 -> 77.8 %); registration from
    small rendered set-up cards did worse with them (43 -> 39 of 80 right), so it goes
    without."""
    seen = seen if seen is not None else table_masks(image, max_side)
    if seen is None:
        return []
    scale, g, outline = seen.scale, seen.whiteness, seen.outline
    sh, sw = g.shape[:2]
    min_area, max_area = MIN_AREA_FRAC * sh * sw, MAX_AREA_FRAC * sh * sw
    quads: list[np.ndarray] = []
    for contours in seen.mask_contours:
        quads += _candidates(contours, min_area, max_area)
    n_mask = len(quads)
    # the outline's outer contour, and the holes in it: a card that touches others is a
    # hole ringed by its own edge and theirs
    quads += _candidates(seen.outline_contours, min_area, max_area)
    white_enough = margin_whiteness(g)
    if rims:
        quads += _closed_ring_holes(outline, g, min_area, max_area, white_enough)
    scored = []
    if quads:
        qs = np.array(quads, np.float32)
        # a card on a table of its own white shows no step at its rim, but its outline does:
        # an outline's quad traced all round by edges, and white inside, is a card (the
        # quads are outer contours of the dilated outline: a little slack)
        traced = np.zeros(len(qs), bool)
        if len(qs) > n_mask:
            near = cv2.dilate(outline, np.ones((5, 5), np.uint8))
            white = inner_whiteness(g, qs[n_mask:]) >= white_enough
            traced[n_mask:] = (outline_coverage(near, qs[n_mask:]) >= MIN_TRACED) & white
            # an outline's quad pulled off the rim by the pips or index marks touching it:
            # each side moved to the straight line along the rim the edges cover best (on
            # the fit half of real-cards-dev found 79.2 -> 81.8 %; the mask's quads moved
            # too, or ends moved up to 5 or 12 %: fewer right answers or more wrong ones)
            todo = n_mask + np.flatnonzero(~traced[n_mask:] & white)
            if len(todo):
                moved, coverage = trace_sides(near, qs[todo])
                ok = (coverage >= MIN_TRACED) & (inner_whiteness(g, moved) >= white_enough)
                qs[todo[ok]] = moved[ok]
                traced[todo[ok]] = True
        contrast = card_contrasts(g, qs)
        low = np.flatnonzero((contrast < MIN_CONTRAST) & ~traced)
        if len(low):
            snapped, ok = snap_to_edges(g, qs[low])
            qs[low[ok]] = snapped[ok]
            contrast[low[ok]] = card_contrasts(g, snapped[ok])
        score = np.where(traced, np.maximum(contrast, MIN_CONTRAST), contrast)
        scored = [(float(c), q) for c, q in zip(score, qs, strict=True) if c >= MIN_CONTRAST]
    kept = _dedupe(scored)
    if kept:
        # cards in one view are of a size; far smaller quads are pips and index marks
        kept = _without_containers(kept)
        big = max(quad_area(q) for q in kept)
        kept = [q for q in kept if quad_area(q) >= 0.2 * big]
        kept = _without_clusters(kept)
    return [(q / scale).astype(np.float32) for q in kept]


MIN_CONTRAST = 8.0
CLOSE_GAPS = (1, 2)  # gaps in the edge map closed for `rims`, px
# a hole longer than this for its width is the strip of a card that others cover (a fanned
# hand), whose index corner `card_corners` reads; taken for a whole card it hid that corner
RIM_MAX_RATIO = 2.2


def _long_short(q: np.ndarray) -> float:
    """A quad's long sides over its short ones (opposite sides averaged)."""
    s = quad_sides(q)
    a, b = (s[0] + s[2]) / 2, (s[1] + s[3]) / 2
    return max(a, b) / max(min(a, b), 1e-6)


def _closed_ring_holes(outline: np.ndarray, g: np.ndarray, min_area: float, max_area: float,
                       white_enough: float) -> list[np.ndarray]:
    """Cards traced by their own rim, found as holes in the edge map once its small gaps are
    closed (CLOSE_GAPS px): on a table as white as the cards, the rim is all there is, and a
    rim with a gap of a pixel or two (an index mark touching it, a neighbour's edge) leaves
    no hole in the map itself. Each hole gives its enclosing rectangle and its outline's
    quad, their sides then refitted to the rim's edge pixels."""
    quads: list[np.ndarray] = []
    for gap in CLOSE_GAPS:
        k = 2 * gap + 1
        closed = cv2.dilate(outline, np.ones((k, k), np.uint8))
        cs, hier = cv2.findContours(closed, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
        if hier is None:
            continue
        holes = [c for c, h in zip(cs, hier[0], strict=True)
                 if h[3] >= 0 and min_area <= cv2.contourArea(c) <= max_area]
        for c in holes:
            # index marks that touch the rim bite into the hole, but its enclosing rectangle
            # still reaches the rim along the middle of each side
            box = cv2.boxPoints(cv2.minAreaRect(c)).astype(np.float32)
            if cv2.contourArea(c) >= 0.75 * quad_area(box) and _long_short(box) <= RIM_MAX_RATIO:
                quads.append(order_quad(box))
        quads += [q for q in _candidates(holes, min_area, max_area)
                  if _long_short(q) <= RIM_MAX_RATIO]
    # one refit per hole: the two gaps and the two fits mostly trace the same rim
    distinct: list[np.ndarray] = []
    for q in quads:
        if all(np.abs(q - d).max() > 2.0 for d in distinct):
            distinct.append(q)
    if not distinct:
        return []
    # a pip's or an index letter's ring is dark inside: no card, and not worth refitting
    qs = np.array(distinct, np.float32)
    qs = qs[inner_whiteness(g, qs) >= 0.75 * white_enough]
    return [order_quad(q) for q in snap_sides_to(outline, qs)]


SIDE_BAND = 6  # px either side of a quad's side searched for its edge
FIT_POINTS = 60  # points a side's line is fitted through, at most


def snap_sides_to(edges: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """Each side of N quads refitted as the line through the edge pixels within SIDE_BAND px
    of it (clear of the corners; the side kept where too few lie there), the corners then
    where neighbouring sides meet."""
    h, w = edges.shape[:2]
    out = []
    for q in np.asarray(quads, np.float32).reshape(-1, 4, 2):
        lines = []
        for i in range(4):
            p0, p1 = q[i], q[(i + 1) % 4]
            d = p1 - p0
            length = float(np.linalg.norm(d))
            u = d / max(length, 1e-6)
            n = np.array([-u[1], u[0]], np.float32)
            # the edge pixels around this side only: a card's box holds several times as
            # many. Row by row, as they lie in the card's box, so the same points are fitted
            x0, y0 = np.maximum(np.floor(np.minimum(p0, p1)).astype(int) - SIDE_BAND - 1, 0)
            x1, y1 = np.minimum(np.ceil(np.maximum(p0, p1)).astype(int) + SIDE_BAND + 2, [w, h])
            ys, xs = np.nonzero(edges[y0:y1, x0:x1])
            pix = np.stack([xs + x0, ys + y0], 1).astype(np.float32)
            rel = pix - p0
            along, across = rel @ u, rel @ n
            sel = (np.abs(across) <= SIDE_BAND) & (along > 0.1 * length) & (along < 0.9 * length)
            if sel.sum() < 0.5 * length:
                lines.append((p0, u))
                continue
            on = pix[sel]
            on = on[::max(1, len(on) // FIT_POINTS)]  # a rim's line needs few of its pixels
            vx, vy, px, py = cv2.fitLine(on, cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
            lines.append((np.array([px, py], np.float32), np.array([vx, vy], np.float32)))
        corners = []
        for i in range(4):  # corner i is where side i-1 meets side i
            (a, r), (b, t) = lines[i - 1], lines[i]
            den = r[0] * t[1] - r[1] * t[0]
            if abs(den) < 1e-3:
                corners.append(q[i])
                continue
            k = ((b - a)[0] * t[1] - (b - a)[1] * t[0]) / den
            corners.append(a + k * r)
        c = np.array(corners, np.float32)
        # a refit that moved a corner far is no refit of this card
        out.append(c if np.abs(c - q).max() <= 2 * SIDE_BAND else q)
    return np.array(out, np.float32)


MIN_TRACED = 0.9  # of an outline's quad's side samples on an edge, its weakest side
MIN_INNER_WHITE = 120  # median whiteness just inside an outline's quad: a card's margin
# ... or half the photo's brightest whiteness (99th percentile), where that is less: in a dim
# photo the cards' margins are grey (real-cards-dev: 80 on a table of 77), but still the
# whitest thing there. The share was chosen on the photos' fit half (0.8/0.7/0.6/0.5/0.4/0.3:
# found 78.3/78.6/78.8/79.1/79.1/79.1 %, unread strays 44/44/44/44/47/52; 120 alone: 77.8 %,
# 65); it lowers the margin in any photo whose whitest is under 240, not only in dim ones.
MARGIN_OF_BRIGHTEST = 0.5


def margin_whiteness(g: np.ndarray) -> float:
    """The whiteness an outline's margin needs to be a card in this photo (`g`, whiteness)."""
    brightest = float(np.percentile(g[::4, ::4], 99))  # every 16th pixel: plenty
    return min(float(MIN_INNER_WHITE), MARGIN_OF_BRIGHTEST * brightest)


def outline_coverage(edges: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """For N quads, the share of points along each side that lie on an edge pixel (a dilated
    Canny map), the weakest side's."""
    _, pts = _side_points(quads)
    return (_pixels(edges, pts) > 0).mean(2).min(1)


TRACE_SHIFT = 0.08  # of the quad's size across a side: how far each end of it may move
TRACE_STEPS = 17  # shifts tried for each end, evenly over that range


def trace_sides(near: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """N quads with each side moved to the straight line nearest it that the edge map `near`
    covers best (each end of the side shifted across it independently, up to TRACE_SHIFT of
    the quad's size that way, in TRACE_STEPS steps), the corners where the moved sides meet;
    and the moved quads' `outline_coverage`."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    p0, p1 = q, np.roll(q, -1, axis=1)
    d = p1 - p0
    length = np.linalg.norm(d, axis=2, keepdims=True)
    u = d / np.maximum(length, 1e-6)
    n = np.stack([-u[..., 1], u[..., 0]], axis=-1) * np.roll(length, -1, axis=1)  # N x 4 x 2
    o = np.linspace(-TRACE_SHIFT, TRACE_SHIFT, TRACE_STEPS, dtype=np.float32)
    o0, o1 = (x.ravel() for x in np.meshgrid(o, o, indexing="ij"))  # K shifts of both ends
    # a side's sample point at t moves by (1 - t) o0 + t o1 across it: each point's pixels
    # are looked up once on a fine grid of such shifts, and every line gathers its own
    fine = 8 * (TRACE_STEPS - 1) + 1
    grid = np.linspace(-TRACE_SHIFT, TRACE_SHIFT, fine, dtype=np.float32)
    base = p0[:, :, None] + _T[None, None, :, None] * d[:, :, None]  # N x 4 x 12 x 2
    pts = base[:, :, :, None] + grid[None, None, None, :, None] * n[:, :, None, None]
    on = _pixels(near, pts) > 0  # N x 4 x 12 x fine
    shift = (1 - _T)[:, None] * o0[None] + _T[:, None] * o1[None]  # 12 x K
    at = np.rint((shift + TRACE_SHIFT) / (2 * TRACE_SHIFT) * (fine - 1)).astype(np.intp)
    cov = on[:, :, np.arange(len(_T))[:, None], at].mean(2)  # N x 4 x K
    # the best covered line; of equals, the one moved least
    k = (cov - 1e-3 * (np.abs(o0) + np.abs(o1))[None, None]).argmax(-1)
    a = p0 + o0[k][..., None] * n
    b = p1 + o1[k][..., None] * n  # N x 4 x 2: the moved sides
    r, t = b - a, np.roll(b - a, 1, axis=1)
    pb = np.roll(a, 1, axis=1)  # side i and side i-1 meet at corner i
    den = t[..., 0] * r[..., 1] - t[..., 1] * r[..., 0]
    safe = np.abs(den) > 1e-3
    kk = ((a - pb)[..., 0] * r[..., 1] - (a - pb)[..., 1] * r[..., 0]) / np.where(safe, den, 1)
    moved = np.where(safe[..., None], pb + kk[..., None] * t, q).astype(np.float32)
    return moved, outline_coverage(near, moved)


def inner_whiteness(g: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """Median whiteness of N quads' rims just inside their edges (a card's white margin)."""
    c, pts = _side_points(quads)
    return np.median(_pixels(g, c + (pts - c) * 0.92).reshape(len(pts), -1), axis=1)


def _side_points(quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """N quads' centres (N x 1 x 1 x 2) and points along their sides (N x 4 x 12 x 2), clear
    of the rounded corners."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    p0, p1 = q[:, :, None], np.roll(q, -1, axis=1)[:, :, None]
    return q.mean(1)[:, None, None], p0 + _T[None, None, :, None] * (p1 - p0)


def _pixels(image: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """The image's values at the nearest pixels to `pts` (..., 2), clipped to the image."""
    h, w = image.shape[:2]
    ii = np.rint(pts).astype(np.int32)
    # each coordinate against its own scalar bounds: clipping both against a pair broadcast
    # over the points cost 4 times as much on `trace_sides`' 60,000 of them
    x = np.minimum(np.maximum(ii[..., 0], 0), w - 1)
    y = np.minimum(np.maximum(ii[..., 1], 0), h - 1)
    return image[y, x]


_T = (np.arange(12) + 0.5) / 12 * 0.8 + 0.1  # along each side, clear of the rounded corners


def card_contrast(g: np.ndarray, quad: np.ndarray) -> float:
    """How much whiter (or, on a white table, greyer) the quad's rim just inside its edges is
    than the table just outside: a card has a clean margin all round; a check of a tablecloth,
    a glare patch or two merged cards do not. Returns the weakest side's step."""
    return float(card_contrasts(g, np.asarray(quad, np.float32).reshape(1, 4, 2))[0])


_SNAP_T = (np.arange(10) + 0.5) / 10 * 0.8 + 0.1
_SNAP_SHIFT = np.linspace(-0.08, 0.16, 13)  # of the quad's size across the side: mostly out


def _rim_steps(g: np.ndarray, inner: np.ndarray, outer: np.ndarray) -> np.ndarray:
    return np.median(_pixels(g, inner).astype(np.float32) - _pixels(g, outer), axis=-1)


def card_contrasts(g: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """`card_contrast` of N quads (N x 4 x 2) at once."""
    c, pts = _side_points(quads)
    steps = _rim_steps(g, c + (pts - c) * 0.92, c + (pts - c) * 1.1)  # N x 4
    # either way round: a card is whiter than a dark table, greyer than a white one
    return np.maximum(steps.min(1), -steps.max(1))


def _areas(quads: np.ndarray) -> np.ndarray:
    """`quad_area` of N quads (N x 4 x 2)."""
    x, y = quads[..., 0], quads[..., 1]
    return 0.5 * np.abs((x * np.roll(y, -1, 1) - y * np.roll(x, -1, 1)).sum(1))


def snap_to_edges(g: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Move each side of N card-like quads along its normal to where the step from card to
    table is sharpest, and meet the four lines again. A threshold blob often stops short of
    the card's edge (a dark outline, pips touching the margin, uneven light), and its rim test
    then compares card with card. Returns (quads, usable)."""
    q = np.asarray(quads, np.float64).reshape(-1, 4, 2)
    c = q.mean(1)[:, None]  # N x 1 x 2
    p0, p1 = q, np.roll(q, -1, axis=1)
    d = p1 - p0  # N x 4 x 2
    length = np.maximum(np.linalg.norm(d, axis=2, keepdims=True), 1e-9)
    n = np.stack([d[..., 1], -d[..., 0]], axis=2) / length
    mid = (p0 + p1) / 2
    out_dir = np.sign(((mid - c) * n).sum(2, keepdims=True))
    n = n * np.where(out_dir == 0, 1, out_dir)  # outward
    across = 2 * np.abs(((mid - c) * n).sum(2))  # N x 4: the quad's size across each side
    pts = p0[:, :, None] + _SNAP_T[None, None, :, None] * d[:, :, None]  # N x 4 x 10 x 2
    shifts = _SNAP_SHIFT[None, None] * across[..., None]  # N x 4 x S
    gap = np.maximum(1.5, 0.04 * across)[..., None, None, None]
    base = pts[:, :, None] + shifts[..., None, None] * n[:, :, None, None]  # N x 4 x S x 10 x 2
    nn = n[:, :, None, None]
    step = _rim_steps(g, base - gap * nn, base + gap * nn)  # N x 4 x S
    # the rim samples straddle the edge over a few shifts alike: the middle of that plateau
    size = np.abs(step)
    top = size >= 0.9 * size.max(2, keepdims=True)
    s = (shifts * top).sum(2) / top.sum(2)  # N x 4
    a = p0 + s[..., None] * n  # a point on each moved side
    # corner k is where side k-1 meets side k
    a_prev, d_prev = np.roll(a, 1, axis=1), np.roll(d, 1, axis=1)
    det = d_prev[..., 0] * (-d[..., 1]) - (-d[..., 0]) * d_prev[..., 1]
    rhs = a - a_prev
    t = (rhs[..., 0] * (-d[..., 1]) - (-d[..., 0]) * rhs[..., 1]) / np.where(
        np.abs(det) < 1e-6, np.nan, det)
    corners = a_prev + t[..., None] * d_prev
    ok = np.isfinite(corners).all((1, 2)) & (_areas(corners) >= 0.5 * _areas(q)) \
        & (length[..., 0] >= 4).all(1)
    return np.nan_to_num(corners).astype(np.float32), ok
