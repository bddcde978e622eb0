"""Helpers for the card tests: a deck's card faces as the renderer's assets give them."""

from __future__ import annotations

import numpy as np


def card_face(design: str, code: str) -> np.ndarray:
    """The BGR face of `code` in `design`, its rounded corners (transparent in the asset) on
    white."""
    from models.renderer.assets import card_image

    face = card_image(design, code)
    if face.shape[2] == 4:
        a = face[:, :, 3:4] / 255.0
        face = (face[:, :, :3] * a + 255 * (1 - a)).astype(np.uint8)
    return face
