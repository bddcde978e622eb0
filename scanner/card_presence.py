"""Is there really a card under a quad the board finder found?

The finder (`scanner.pipeline`) accepts a zone as holding a card where the rectangle's rim is
whiter than the table just outside it. On a checked cloth a white square has such a rim, and
on any cloth the edge of a neighbour's card, slightly off its cell, can give one: an empty
cell then reads as an unreadable card, which the tracker must take for a card laid. This stage
looks at the quad with a ring of table around it (a tiny CNN, `models/cards/card_presence.onnx`)
and answers the probability that a card lies there; below the model's threshold the zone is
empty. Its recipe: `royal-table train cards --presence` (models/cards/presence.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from .card_finder import find_cards
from .onnx_session import one_core_session
from .rectify import KeptMaps, homography_map, normalise, portrait_order

MODEL_DIR = Path(__file__).resolve().parent.parent / "models" / "cards"
MODEL_FILE = MODEL_DIR / "card_presence.onnx"
META_FILE = MODEL_DIR / "card_presence.json"
SIZE = (24, 32)  # w, h of the crop the model sees (a portrait card and its ring)
RING = 1.3  # the crop spans the quad scaled this much about its centre: card and table
KEPT_MAPS = 1024  # crop sampling maps kept (6 kB each) for quads that recur frame to frame


def _crop_corners(size: tuple[int, int], ring: float) -> np.ndarray:
    """Where a quad's corners go in its crop: the card fills the middle 1/ring of it."""
    w, h = size
    mx, my = w * (1 - 1 / ring) / 2, h * (1 - 1 / ring) / 2
    return np.array([[mx, my], [w - mx, my], [w - mx, h - my], [mx, h - my]], np.float32)


def presence_map(quad: np.ndarray, size: tuple[int, int] = SIZE, ring: float = RING
                 ) -> np.ndarray:
    """h x w x 2 float32: where each pixel of the quad's crop samples the frame (what
    `presence_crops` warps), so many crops come from one remap."""
    H = cv2.getPerspectiveTransform(_crop_corners(size, ring),
                                    portrait_order(np.asarray(quad, np.float32)))
    return homography_map(H, size)


def presence_crops(image: np.ndarray, quads: list[np.ndarray], size: tuple[int, int] = SIZE,
                   ring: float = RING, maps: list[np.ndarray] | None = None) -> np.ndarray:
    """N x h x w x 3 uint8: each quad (portrait order) and the table around it, rectified;
    through their `presence_map`s in one remap where given."""
    w, h = size
    if maps is not None and len(maps):
        return cv2.remap(image, np.concatenate(maps), None, cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE).reshape(len(maps), h, w, 3)
    out = np.zeros((len(quads), h, w, 3), np.uint8)
    dst = _crop_corners(size, ring)
    for i, q in enumerate(quads):
        M = cv2.getPerspectiveTransform(portrait_order(np.asarray(q, np.float32)), dst)
        out[i] = cv2.warpPerspective(image, M, (w, h), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_REPLICATE)
    return out


class CardPresence:
    """P(a card lies there) for quads the finder found; `is_card` applies the threshold picked
    on validation renders (see the model card)."""

    def __init__(self, model_path: str | Path = MODEL_FILE, meta_path: str | Path = META_FILE):
        self.session = one_core_session(model_path)
        meta = json.loads(Path(meta_path).read_text())
        self.threshold = float(meta["threshold"])
        self.size = tuple(meta.get("size", SIZE))
        self.ring = float(meta.get("ring", RING))
        self.input_name = self.session.get_inputs()[0].name
        self._maps = KeptMaps(lambda q: presence_map(q, self.size, self.ring), KEPT_MAPS)

    @classmethod
    def default(cls) -> CardPresence | None:
        """The committed model, or None where it is missing (the finder alone then decides)."""
        return cls() if MODEL_FILE.exists() and META_FILE.exists() else None

    def probabilities(self, image: np.ndarray, quads: list[np.ndarray],
                      keep_maps: bool = False) -> np.ndarray:
        """P(card) per quad. `keep_maps`: the quads recur frame after frame (a calibrated
        board's hypotheses), so their crops' sampling maps are kept and all crops come from
        one remap."""
        if not quads:
            return np.zeros(0, np.float32)
        maps = [self._maps(q) for q in quads] if keep_maps else None
        x = normalise(presence_crops(image, quads, self.size, self.ring, maps))
        logits = self.session.run(None, {self.input_name: x})[0].reshape(-1)
        return 1.0 / (1.0 + np.exp(-logits))

    def is_card(self, image: np.ndarray, quads: list[np.ndarray],
                keep_maps: bool = False) -> np.ndarray:
        return self.probabilities(image, quads, keep_maps) >= self.threshold


def find_setup_cards(image: np.ndarray, max_side: int = 1024,
                     presence: CardPresence | None | str = "default") -> list[np.ndarray]:
    """The card quads registration fits the board to: `card_finder.find_cards`, less the quads
    the presence check says hold no card. A checked cloth's squares line up in rows as set-up
    cards do; on 80 held-out set-up stills the check dropped 256 such quads and no set-up or
    initiative card, and the wrong boards registered fell from 4 to 2.
    `presence=None` keeps every quad (the check's model missing: the finder alone)."""
    quads = find_cards(image, max_side=max_side)
    check = CardPresence.default() if presence == "default" else presence
    if check is None or not quads:
        return quads
    return [q for q, ok in zip(quads, check.is_card(image, quads), strict=True) if ok]
