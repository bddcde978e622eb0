"""Labelled crops for the recognition work."""

from __future__ import annotations

from models.renderer import assets
from models.renderer.dataset import card_crops, piece_crops


def test_card_crops_are_labelled_and_sized():
    crops = list(card_crops(seed=1, n_frames=2, split="heldout", width=640, height=360))
    assert len(crops) >= 10
    held = set(assets.split()["cards"]["heldout"])
    for img, label in crops:
        assert img.shape == (175, 125, 3)
        assert label["code"] in assets.ALL_CODES
        assert set(label["designs"]) <= held


def test_piece_crops_carry_kind_and_side():
    got = list(piece_crops(seed=3, n_frames=3, width=640, height=360))
    assert got, "three random tables without a standing 3D piece"
    for img, label in got:
        assert img.ndim == 3 and min(img.shape[:2]) >= 4
        assert label["kind"] in {"pawn", "rook", "knight", "bishop", "queen", "king"}
        assert label["side"] in {"white", "black"} and label["set"] != "paper-token"
