"""Rectify a card quadrilateral to a canonical upright card and cut its four index corners.

Training (models/cards/dataset.py) and reading (scanner/card_reader.py) both cut crops here, so
the classifier always sees exactly what it was trained on.

Corner crops come in a fixed order: nw, ne, se, sw of the rectified portrait card. Each is turned
so that its corner is at the crop's top-left: nw as is, se turned 180°, and ne / sw mirrored
(ne left-right; sw turned 180° then mirrored). An index printed on the ne-sw diagonal therefore
reaches the classifier mirrored; the model is trained on mirrored crops too, which also reads
mirrored photographs.
"""

from __future__ import annotations

from collections import OrderedDict

import cv2
import numpy as np

CANON_W, CANON_H = 100, 140  # a 63 x 88 mm card at ~1.6 px/mm
CROP_W, CROP_H = 32, 52  # the index region at one corner (big-index decks reach 0.37 H)
CORNER_NAMES = ("nw", "ne", "se", "sw")
_NEXT = np.array([1, 2, 3, 0])
_OPPOSITE = np.array([2, 3, 0, 1])
CANON_RECT = np.array([[0, 0], [CANON_W, 0], [CANON_W, CANON_H], [0, CANON_H]], np.float32)


def portrait_order(quad: np.ndarray, plane: np.ndarray | None = None) -> np.ndarray:
    """Reorder a clockwise quad so its first side (corner 0 -> 1) is a short side: the card read
    as portrait. Of the two portrait orders (180° apart) the one starting nearer the image's
    top-left is kept; the reader looks at both index diagonals anyway.
    `plane`: the same four corners where lengths are true (the board plane), which then decides
    the short side. Seen from the side, a card's long side foreshortens: below ~46° elevation a
    portrait card pointing at the camera looks landscape in the image, and ordered by the image
    its index reached the reader turned a quarter and squashed."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    p = q if plane is None else np.asarray(plane, np.float64).reshape(4, 2)
    d = p[_NEXT] - p
    s = np.sqrt((d * d).sum(1))
    if s[0] + s[2] > s[1] + s[3]:
        q = q[_NEXT]  # 0->1 was long: start one corner later
    if q[2].sum() < q[0].sum():
        q = q[_OPPOSITE]
    return q


def rectify(image: np.ndarray, quad: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The card under `quad` (corner 0 = its top-left, 0 -> 1 its top edge) as a
    CANON_W x CANON_H image with the image's channels (written into `out` where given)."""
    # (OpenCV refuses a view whose rows are not contiguous, e.g. corners picked by index)
    q = np.ascontiguousarray(quad, np.float32).reshape(4, 2)
    M = cv2.getPerspectiveTransform(q, CANON_RECT)
    return cv2.warpPerspective(image, M, (CANON_W, CANON_H), dst=out, flags=cv2.INTER_LINEAR,
                               borderMode=border_for(q, image.shape))


def homography_map(H: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """h x w x 2 float32: the source point each pixel of a w x h output samples under `H`
    (output -> source), what warpPerspective computes on every call; kept, such maps let one
    remap fetch many warps."""
    w, h = size
    H = np.asarray(H, np.float64)
    x, y = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    d = H[2, 0] * x + H[2, 1] * y + H[2, 2]
    return np.stack([(H[0, 0] * x + H[0, 1] * y + H[0, 2]) / d,
                     (H[1, 0] * x + H[1, 1] * y + H[1, 2]) / d], axis=2).astype(np.float32)


class KeptMaps:
    """Sampling maps made once per quad by `make(quad)`, kept for the `limit` quads used
    last: a calibrated board's card quads come from a fixed set of hypotheses per cell, so the
    same quads recur frame after frame."""

    def __init__(self, make, limit: int):
        self.make, self.limit = make, limit
        self._kept: OrderedDict[bytes, object] = OrderedDict()

    def __call__(self, quad: np.ndarray):
        k = np.asarray(quad, np.float32).tobytes()
        maps = self._kept.get(k)
        if maps is None:
            maps = self._kept[k] = self.make(quad)
            if len(self._kept) > self.limit:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(k)
        return maps

    def __len__(self) -> int:
        return len(self._kept)


def rectify_maps(quad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What `rectify` computes for `quad` on every call, once: the fixed-point sampling maps
    of its canonical card, for `cv2.remap` (warpPerspective makes the same internally)."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    xy = homography_map(cv2.getPerspectiveTransform(CANON_RECT, q), (CANON_W, CANON_H))
    m1, m2 = cv2.convertMaps(xy, None, cv2.CV_16SC2)
    return m1, m2


def rectify_mapped(image: np.ndarray, quad: np.ndarray, maps: tuple[np.ndarray, np.ndarray],
                   out: np.ndarray | None = None) -> np.ndarray:
    """`rectify` through maps made by `rectify_maps` for the same quad."""
    return cv2.remap(image, maps[0], maps[1], cv2.INTER_LINEAR, dst=out,
                     borderMode=border_for(np.asarray(quad, np.float32).reshape(4, 2),
                                           image.shape))


def border_for(points: np.ndarray, shape: tuple[int, ...]) -> int:
    """The border mode for a warp that samples inside the convex hull of `points`: where they
    all lie a pixel or more inside the image the border is never sampled, and OpenCV's
    replicated border costs far more than none (on a 1280x720 frame, 220 against 125 us a
    card) for the same pixels."""
    h, w = shape[:2]
    inside = points.min() >= 1.0 and points[:, 0].max() <= w - 2.0 \
        and points[:, 1].max() <= h - 2.0
    return cv2.BORDER_CONSTANT if inside else cv2.BORDER_REPLICATE


def corner_crops(card: np.ndarray, crop: tuple[int, int] = (CROP_H, CROP_W)) -> np.ndarray:
    """The four index crops (nw, ne, se, sw) of a rectified card: 4 x H x W [x C]."""
    ch, cw = crop
    rot = card[::-1, ::-1]
    nw = card[:ch, :cw]
    ne = card[:ch, CANON_W - cw:][:, ::-1]
    se = rot[:ch, :cw]
    sw = rot[:ch, CANON_W - cw:][:, ::-1]
    return np.stack([nw, ne, se, sw])


def diagonal_crops(cards: np.ndarray, diagonal: str,
                   crop: tuple[int, int] = (CROP_H, CROP_W)) -> np.ndarray:
    """The two index crops of one diagonal of N rectified cards, as `corner_crops` cuts them,
    card by card: nw, se for "nw-se"; ne, sw for "ne-sw". (2N) x H x W [x C]."""
    ch, cw = crop
    rot = cards[:, ::-1, ::-1]
    if diagonal == "nw-se":
        pair = (cards[:, :ch, :cw], rot[:, :ch, :cw])
    else:
        pair = (cards[:, :ch, CANON_W - cw:][:, :, ::-1], rot[:, :ch, CANON_W - cw:][:, :, ::-1])
    return np.stack(pair, axis=1).reshape(-1, ch, cw, *cards.shape[3:])


def normalise(crops: np.ndarray) -> np.ndarray:
    """uint8 crops (N x H x W x 3, BGR) -> float32 N x 3 x H x W, each crop scaled to zero mean
    and unit contrast so the light's colour and strength matter little."""
    n, h, w, c = crops.shape
    # channels first while still bytes (a quarter of the memory to move)
    x = np.ascontiguousarray(crops.transpose(0, 3, 1, 2)).reshape(n, c * h * w) \
        .astype(np.float32)
    x -= x.mean(axis=1, keepdims=True)
    # the standard deviation from the centred values in one pass (x.std() centres again)
    std = np.sqrt(np.einsum("ij,ij->i", x, x) / max(x.shape[1], 1))[:, None]
    x /= std + 8.0
    return x.reshape(n, c, h, w)
