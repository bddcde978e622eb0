"""The procedurally varied training sets: deterministic, varied, and never the held-out set."""

from __future__ import annotations

import numpy as np

from models.renderer import pieces, procedural_pieces


def test_sets_are_deterministic_and_varied():
    a = procedural_pieces.profiles(3)
    assert a == procedural_pieces.profiles(3)
    b = procedural_pieces.profiles(4)
    assert set(a) == set(pieces.KINDS)
    assert a["bishop"][0] != b["bishop"][0]


def test_no_set_is_the_held_out_set():
    for seed in range(200):
        for kind, (prof, _) in procedural_pieces.profiles(seed).items():
            assert not procedural_pieces._is_heldout(kind, prof)
    # and the check itself would catch the held-out profile
    assert procedural_pieces._is_heldout("rook", pieces._PROFILES["rook"])


def test_a_procedural_set_loads_like_any_set():
    info = pieces.set_info("proc-12")
    assert info["kind"] == "procedural"
    assert np.mean(info["white"]) > np.mean(info["black"]) or info["white"][2] > 150  # red
    meshes = pieces.load_set("proc-12")
    heights = {k: float(v[:, 2].max()) for k, (v, _) in meshes.items()}
    assert abs(heights["king"] - pieces.KING_HEIGHT_CM) < 1e-6
    assert heights["pawn"] < heights["bishop"] < heights["king"]
    img, _ = pieces.render_mesh(*meshes["knight"], info["white"], 40, 90)
    assert img.shape[2] == 4 and (img[:, :, 3] > 0).mean() > 0.2
