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

import cv2
import numpy as np

CANON_W, CANON_H = 100, 140  # a 63 x 88 mm card at ~1.6 px/mm
CROP_W, CROP_H = 32, 52  # the index region at one corner (big-index decks reach 0.37 H)
CORNER_NAMES = ("nw", "ne", "se", "sw")
_NEXT = np.array([1, 2, 3, 0])
_OPPOSITE = np.array([2, 3, 0, 1])
CANON_RECT = np.array([[0, 0], [CANON_W, 0], [CANON_W, CANON_H], [0, CANON_H]], np.float32)


def portrait_order(quad: np.ndarray) -> np.ndarray:
    """Reorder a clockwise quad so its first side (corner 0 -> 1) is a short side: the card read
    as portrait. Of the two portrait orders (180° apart) the one starting nearer the image's
    top-left is kept; the reader looks at both index diagonals anyway."""
    q = np.asarray(quad, np.float32).reshape(4, 2)
    d = q[_NEXT] - q
    s = np.sqrt((d * d).sum(1))
    if s[0] + s[2] > s[1] + s[3]:
        q = q[_NEXT]  # 0->1 was long: start one corner later
    if q[2].sum() < q[0].sum():
        q = q[_OPPOSITE]
    return q


def rectify(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """The card under `quad` (corner 0 = its top-left, 0 -> 1 its top edge) as a
    CANON_W x CANON_H image with the image's channels."""
    M = cv2.getPerspectiveTransform(np.asarray(quad, np.float32).reshape(4, 2), CANON_RECT)
    return cv2.warpPerspective(image, M, (CANON_W, CANON_H), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def corner_crops(card: np.ndarray, crop: tuple[int, int] = (CROP_H, CROP_W)) -> np.ndarray:
    """The four index crops (nw, ne, se, sw) of a rectified card: 4 x H x W [x C]."""
    ch, cw = crop
    rot = card[::-1, ::-1]
    nw = card[:ch, :cw]
    ne = card[:ch, CANON_W - cw:][:, ::-1]
    se = rot[:ch, :cw]
    sw = rot[:ch, CANON_W - cw:][:, ::-1]
    return np.stack([nw, ne, se, sw])


def normalise(crops: np.ndarray) -> np.ndarray:
    """uint8 crops (N x H x W x 3, BGR) -> float32 N x 3 x H x W, each crop scaled to zero mean
    and unit contrast so the light's colour and strength matter little."""
    x = crops.astype(np.float32)
    mean = x.mean(axis=(1, 2, 3), keepdims=True)
    std = x.std(axis=(1, 2, 3), keepdims=True)
    x = (x - mean) / (std + 8.0)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))
