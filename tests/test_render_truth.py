"""The renderer's truth must be right: card corners where the cards are drawn, stable seeds."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import cv2
import numpy as np
import pytest

from models.renderer import Scene, assets, crop_card, render_scene
from models.renderer.stills import random_hands, random_position
from models.renderer.tokens import token_sheet_svg

POSITION = {
    "game": "royal-battles", "round": 5, "to_move": "black",
    "initiative": {"white": "3D", "black": "5S"},
    "board": {"a1": {"cards": ["2C"], "unit": {"side": "white", "kind": "king", "injury": 0}},
              "d2": {"cards": ["JS", "8D"], "orientation": "landscape"},
              "c3": {"cards": ["9H"]},
              "g4": {"cards": ["JK"], "unit": {"side": "black", "kind": "knight", "injury": 0}},
              "e5": {"cards": ["QH"]}},
    "hands": {"black": ["8D"], "white": None}, "decks": {"white": 40, "black": 38},
}


def _clean_scene(seed: int, **kw) -> Scene:
    sc = Scene.random(seed, whole_board=True, **kw)
    sc.card_bend = 0.0
    sc.glare = 0.0
    sc.shadow = 0.0
    return sc


def test_split_is_fixed_and_disjoint():
    sp = assets.split()
    train, held = set(sp["cards"]["train"]), set(sp["cards"]["heldout"])
    spare = set(sp["cards"].get("spare", []))
    assert len(train | held) >= 12 and len(held) >= 3 and not train & held
    assert not spare & (train | held)
    assert not set(sp["pieces"]["train"]) & set(sp["pieces"]["heldout"])


@pytest.mark.parametrize("name", ["gnome-anglo", "gnome-simplistic", "kde-nicu-white",
                                  "gnome-anglo_modern_4_color", "kde-oxygen-air"])
def test_card_image_has_face_joker_and_back(name):
    for code in ("AS", "10H", "KC", "JK", "back"):
        img = assets.card_image(name, code)
        assert img.shape == (assets.CARD_H, assets.CARD_W, 4)
        assert img[175, 125, 3] == 255  # opaque middle
        assert img[:, :, 3].mean() > 200  # a whole card, not a fragment of one


def test_a_deck_without_jokers_takes_them_from_its_named_deck():
    d = assets.design("kde-oxygen-air")
    assert d.joker_from == "kde-nicu-ornamental"
    for colour in ("red", "black"):
        assert assets.card_path(d.name, "JK", colour) == \
            assets.card_path("kde-nicu-ornamental", "JK", colour)
    assert assets.card_path(d.name, "AS").parent.name == d.name  # its own faces stay its own


def test_every_design_of_the_split_is_described_and_named_once():
    sp = assets.split()
    names = sp["cards"]["train"] + sp["cards"]["heldout"] + sp["cards"].get("spare", [])
    assert len(names) == len(set(names))
    for name in names:
        d = assets.design(name)
        assert d.naming in ("aisleriot", "kde")
        assert d.joker_from is None or assets.design(d.joker_from).joker_from is None
    with pytest.raises(KeyError):
        assets.design("no-such-deck")


@pytest.mark.parametrize("seed", [3, 11, 27, 40])
def test_truth_corners_match_drawn_card_edges(seed):
    """Render each card alone against the same table with and without it: the changed pixels
    must fill the quadrilateral of the truth corners, and their outline must meet them."""
    scene = _clean_scene(seed, split="heldout" if seed % 2 else "train")
    empty = dict(POSITION, board={}, initiative={}, decks={})
    base = render_scene(empty, scene, effects=False).image.astype(np.int16)
    for cell, st in POSITION["board"].items():
        pos = dict(empty, board={cell: {"cards": st["cards"][-1:],
                                        "orientation": st.get("orientation", "portrait")}})
        r = render_scene(pos, scene, effects=False)
        diff = np.abs(r.image.astype(np.int16) - base).max(2) > 12
        diff = cv2.morphologyEx(diff.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
        corners = np.array(r.truth["cells"][cell]["corners"], np.float32)
        quad = np.zeros_like(diff)
        cv2.fillConvexPoly(quad, np.round(corners).astype(np.int32), 1)
        # the drawn card (with its faint shadow) against the truth quad
        n, labels, stats, _ = cv2.connectedComponentsWithStats(diff)
        big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
        drawn = (labels == big).astype(np.uint8)
        # pure-white card parts on a white-ish table may not differ: fill the outline
        cnts, _ = cv2.findContours(drawn, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        filled = np.zeros_like(drawn)
        cv2.drawContours(filled, cnts, -1, 1, -1)
        inter = (filled & quad).sum()
        iou = inter / max((filled | quad).sum(), 1)
        assert iou > 0.85, f"{cell}: IoU {iou:.2f}"
        # every truth corner lies on the drawn outline (within a few pixels)
        pts = np.vstack([c.reshape(-1, 2) for c in cnts]).astype(np.float32)
        scale = max(2.0, 0.04 * float(np.linalg.norm(corners[0] - corners[2])))
        for c in corners:
            d = np.sqrt(((pts - c) ** 2).sum(1)).min()
            assert d < scale, f"{cell}: corner {c} is {d:.1f}px off the drawn card"


def test_corner_order_follows_the_card_face():
    """Corner 0 is the face's top-left: for white's portrait cards it is the corner nearest
    white's left and black's edge."""
    scene = _clean_scene(5)
    scene.card_rotation = 0.0
    r = render_scene({"board": {"c2": {"cards": ["5H"]}}}, scene, effects=False)
    cam = r.truth["camera"]
    K, R, t = (np.array(cam[k]) for k in ("K", "R", "t"))
    from models.renderer.geometry import card_corners, cell_centre

    c3 = card_corners(*cell_centre("c2"), 0.0)
    assert c3[0][0] < c3[1][0] and c3[0][1] > c3[3][1]  # left of TR, toward black from BL
    pc = c3 @ R.T + t
    uv = (pc @ K.T)[:, :2] / (pc @ K.T)[:, 2:]
    got = np.array(r.truth["cells"]["c2"]["corners"])
    assert np.abs(uv - got).max() < 0.05 * r.truth["width"]  # same order (distortion aside)


def test_rendering_is_deterministic_for_a_seed():
    pos = random_position(7)
    a = render_scene(pos, Scene.random(7), hands=random_hands(7, pos))
    b = render_scene(pos, Scene.random(7), hands=random_hands(7, pos))
    assert np.array_equal(a.image, b.image)
    assert json.dumps(a.truth, sort_keys=True) == json.dumps(b.truth, sort_keys=True)
    c = render_scene(pos, Scene.random(8), hands=random_hands(7, pos))
    assert not np.array_equal(a.image, c.image)


def test_occlusion_by_hands_and_pieces_is_reported():
    from models.renderer import Hand

    scene = _clean_scene(12)
    pos = {"board": {"d3": {"cards": ["7C"]}, "b2": {"cards": ["4D"]}}}
    free = render_scene(pos, scene, effects=False).truth["cells"]
    assert free["d3"]["visible_fraction"] == 1.0
    covered = render_scene(pos, scene, hands=[Hand("white", (0.0, 0.0), 1.0, 3.0)],
                           effects=False).truth
    assert covered["cells"]["d3"]["visible_fraction"] < 0.8
    assert covered["hands"] and covered["hands"][0]["hull"]
    pos["board"]["b2"]["unit"] = {"side": "white", "kind": "queen", "injury": 0}
    t = render_scene(pos, scene, effects=False).truth["cells"]["b2"]
    assert t["visible_fraction"] < 1.0 and len(t["piece"]["footprint"]) == 16


def test_scene_random_respects_ranges():
    for seed in range(40):
        sc = Scene.random(seed)
        assert 30 <= sc.elevation <= 90 and 2700 <= sc.kelvin <= 6500
        assert 0.3 <= sc.board_fraction <= 0.95
        assert Scene.from_dict(json.loads(json.dumps(sc.to_dict()))) == sc
    held = Scene.random(1, split="heldout")
    assert held.design_white in assets.split()["cards"]["heldout"]


def test_token_sheet_is_an_svg_with_every_token():
    root = ET.fromstring(token_sheet_svg())
    circles = [e for e in root.iter() if e.tag.endswith("circle")]
    assert len(circles) >= 6 * 4 * 2
    committed = Path(__file__).resolve().parents[1] / "models/renderer/token-sheet.svg"
    assert committed.read_text() == token_sheet_svg()


@pytest.mark.parametrize("seed", [2, 13])
def test_crop_at_truth_corners_is_the_named_card_upright(seed):
    """Rectifying the frame at the truth corners gives back the card's own face, the right way
    up: it matches its design's raster far better than the same crop turned 180 degrees or any
    other card does."""
    scene = _clean_scene(seed)
    scene.card_offset = 0.0
    pos = {"board": {"b2": {"cards": ["KH"]}, "d4": {"cards": ["7S"]},
                     "f2": {"cards": ["QC"], "orientation": "landscape"}}}
    r = render_scene(pos, scene, effects=False)

    def score(a, b):
        a = cv2.cvtColor(a, cv2.COLOR_BGR2GRAY).astype(np.float32)
        b = cv2.cvtColor(b, cv2.COLOR_BGR2GRAY).astype(np.float32)
        a, b = a - a.mean(), b - b.mean()
        return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-6))

    for cell, st in pos["board"].items():
        crop = crop_card(r.image, r.truth["cells"][cell]["corners"])
        design = scene.design_white if scene.design_white == scene.design_black else None
        candidates = [scene.design_white, scene.design_black] if design is None else [design]
        own = max(score(crop, cv2.resize(assets.card_image(d, st["cards"][0])[:, :, :3],
                                         (125, 175))) for d in candidates)
        raster = cv2.resize(assets.card_image(candidates[0], st["cards"][0])[:, :, :3], (125, 175))
        flipped = score(crop[::-1, ::-1].copy(), raster)
        other = max(score(crop, cv2.resize(assets.card_image(candidates[0], c)[:, :, :3],
                                           (125, 175))) for c in ("2D", "9C", "AH"))
        assert own > 0.6, f"{cell}: {own:.2f}"
        assert own > other + 0.1, f"{cell}: {own:.2f} {other:.2f}"
        # a card printed the same either end up (a two-headed court with both indices) has no
        # upright to check
        if score(raster, raster[::-1, ::-1].copy()) < 0.97:
            assert own > flipped, f"{cell}: {own:.2f} turned {flipped:.2f}"


@pytest.mark.parametrize("piece_set", ["brutalchess", "dreamchess", "lathe", "paper-token"])
def test_piece_stands_on_its_footprint(piece_set):
    """The drawn piece covers most of its truth footprint (the base circle on the table) and its
    bounding box contains the footprint's centre."""
    scene = _clean_scene(21, piece_sets=[piece_set])
    scene.k1 = scene.k2 = 0.0
    pos = {"board": {"c2": {"cards": ["3H"], "unit": {"side": "white", "kind": "rook"}},
                     "e4": {"cards": ["8S"], "unit": {"side": "black", "kind": "knight"}}}}
    r = render_scene(pos, scene, effects=False)
    occ = r.masks["occluder"]
    for cell in pos["board"]:
        p = r.truth["cells"][cell]["piece"]
        fp = np.round(np.array(p["footprint"])).astype(np.int32)
        m = np.zeros_like(occ)
        cv2.fillConvexPoly(m, fp, 255)
        covered = (occ[m > 0] > 0).mean()
        assert covered > 0.6, f"{piece_set} {cell}: footprint {covered:.2f} covered"
        if piece_set != "paper-token":
            x0, y0, x1, y1 = p["bbox"]
            cx, cy = p["base_centre"]
            assert x0 <= cx <= x1 and y0 <= cy <= y1 + 2
