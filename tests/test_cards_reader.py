"""Card reading on fixture stills with truth (held-out designs), the finder, and bad images."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.geometry import CELLS
from scanner.card_finder import find_cards
from scanner.card_reader import META_FILE, MODEL_FILE, CardReader
from scanner.cards_bench import REAL_DIR, truth_profile
from scanner.detections import TableReading
from scanner.pipeline import TableScanner
from scanner.rectify import CROP_H, CROP_W, corner_crops, portrait_order, rectify
from tests.card_helpers import card_face

REAL_CARDS = Path(REAL_DIR)

FIX = Path(__file__).parent / "fixtures" / "cards"


@pytest.fixture(scope="module")
def reader() -> CardReader:
    return CardReader()


def load(name: str) -> tuple[np.ndarray, dict]:
    img = cv2.imread(str(FIX / f"{name}.jpg"))
    assert img is not None
    return img, json.loads((FIX / f"{name}.json").read_text())


def test_model_is_small_and_complete():
    assert MODEL_FILE.stat().st_size < 5_000_000
    meta = json.loads(META_FILE.read_text())
    assert len(meta["classes"]) == 55 and meta["classes"][-2:] == ["back", "none"]
    assert 0.5 <= meta["threshold"] < 1.0 and meta["temperature"] > 0
    assert not set(meta["train_designs"]) & {"gnome-plastic", "gnome-simplistic", "gnome-tango"}


def test_whole_card_model_is_small_calibrated_and_never_saw_held_out_designs():
    from scanner.card_reader import FACE_META_FILE, FACE_MODEL_FILE

    assert MODEL_FILE.stat().st_size + FACE_MODEL_FILE.stat().st_size < 5_000_000
    meta = json.loads(FACE_META_FILE.read_text())
    assert meta["classes"] == json.loads(META_FILE.read_text())["classes"]
    assert 0.5 <= meta["fused_threshold"] < 1.0 and meta["val_fused_answered_precision"] >= 0.999
    assert 0 < meta["face_below_px"] < 200
    assert not set(meta["train_designs"]) & {"gnome-plastic", "gnome-simplistic", "gnome-tango"}
    reader = CardReader()
    assert reader.face_session is not None  # the committed reader fuses small cards
    assert CardReader(use_face=False).face_session is None


def test_rectify_and_crops_shape():
    img = np.zeros((200, 300, 3), np.uint8)
    quad = np.array([[50, 40], [250, 60], [240, 120], [60, 110]], np.float32)  # landscape
    q = portrait_order(quad)
    s = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    assert s[0] + s[2] < s[1] + s[3]  # first side short: read as portrait
    crops = corner_crops(rectify(img, q))
    assert crops.shape == (4, CROP_H, CROP_W, 3)
    # corners picked by index (a view OpenCV would refuse as it is) cut the same card
    turned = np.stack([q, q[[1, 2, 3, 0]]], axis=1)[:, 1]
    assert not turned.flags.c_contiguous
    assert np.array_equal(rectify(img, turned), rectify(img, q[[1, 2, 3, 0]].copy()))


# (fixture, share of visible cards that must be read right): the 1280x720 stills have 37-100 px
# cards, of which the current models read 8/28 and 15/28 (the rest 'unsure'; see
# models/cards/MODEL_CARD.md); the close 1080p still reads 21/22. Floors a little below.
# still-0 has two small held-out clubs (5C 46 px, 10C 37 px) the fine-tuned readers take for
# spades at 99.9 %: the models before the scene fine-tune read none wrong but 9/28 and 13/28.
@pytest.mark.parametrize("name,min_right", [("still-0", 0.25), ("still-1", 0.35),
                                            ("still-close", 0.9)])
def test_reads_fixture_stills(reader, name, min_right):
    img, truth = load(name)
    scanner = TableScanner(truth_profile(truth), reader)
    reading = scanner.scan(img)
    assert reading.board_found
    visible = right = wrong = orient = 0
    for cell in CELLS:
        t = truth["cells"][cell]
        got = reading.cells[cell]
        if t["card"] is None:
            # never a card on an empty cell (one cut off by the frame reads unsure)
            assert got.empty is not False or got.card.card is None, cell
            continue
        if t.get("in_frame", 0) < 1 or t.get("visible_fraction", 0) < 0.5:
            continue
        visible += 1
        assert not got.empty, cell  # every card on the board is found
        if got.card.card is not None:
            right += got.card.card == t["card"]
            wrong += got.card.card != t["card"]
        orient += got.card.orientation == t["orientation"]
    assert visible >= 20
    assert wrong <= 2  # answers are given only when sure; the rest say 'unsure'
    assert right >= min_right * visible
    assert orient >= 0.7 * visible
    assert set(reading.timings_ms) >= {"board", "cards", "total"}


def test_finder_on_fixture_still():
    img, truth = load("still-0")
    quads = find_cards(img)
    centres = [q.mean(0) for q in quads]
    found = 0
    n = 0
    for t in truth["cells"].values():
        if t["card"] is None or t.get("in_frame", 0) < 1:
            continue
        n += 1
        tc = np.array(t["corners"]).mean(0)
        found += any(np.linalg.norm(c - tc) < 15 for c in centres)
    # a crowded board: touching landscape cards merge and court cards split; the calibrated
    # TableScanner does not depend on this whole-frame search
    assert found >= 0.45 * n


def odd_images() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "black": np.zeros((720, 1280, 3), np.uint8),
        "white": np.full((720, 1280, 3), 255, np.uint8),
        "blank grey": np.full((720, 1280, 3), 128, np.uint8),
        "noise": rng.integers(0, 256, (720, 1280, 3), dtype=np.uint8),
        "tiny": np.full((5, 7, 3), 200, np.uint8),
        "overexposed": np.clip(load("still-0")[0].astype(np.int32) * 4, 0, 255).astype(np.uint8),
    }


@pytest.mark.parametrize("kind", list(odd_images()))
def test_odd_images_never_raise(reader, kind):
    from scanner.card_corners import cards_in_photo

    img = odd_images()[kind]
    quads = find_cards(img)
    for r in reader.read_quads(img, quads):
        assert r.card is None or r.confidence >= reader.threshold
    for r in cards_in_photo(img, reader):  # what `cards` prints
        assert r.card is None or r.confidence >= min(reader.threshold, reader.fused_threshold)
    _, truth = load("still-0")
    scanner = TableScanner(truth_profile(truth), reader)
    reading = scanner.scan(img)
    assert isinstance(reading, TableReading)
    if kind in ("black", "white", "blank grey", "tiny"):
        assert not reading.board_found and reading.message
    assert isinstance(json.dumps(reading.to_json()), str)


@pytest.mark.parametrize("share,empty", [(1.0, None), (0.3, True)])
def test_a_cardless_zone_in_glare_is_unsure_not_empty(reader, share, empty):
    """A glare spot as white as a card hides whether one lies there (v7-s281: four laid cards
    read empty for hundreds of frames): a zone whose patch is mostly glare-white reads unsure;
    a little glare leaves an empty cell empty."""
    from calibration.geometry import apply_h
    from engines.royal_battles import CELL_NAMES

    img, truth = load("still-0")
    scanner = TableScanner(truth_profile(truth), reader)
    empties = [c for c in CELL_NAMES if truth["cells"][c]["card"] is None
               and scanner.scan(img).cells[c].empty]
    cell = empties[0]
    pw, ph, _ = scanner._geom
    w = pw * share  # the glare covers this share of the zone's patch, from its left
    corners = apply_h(scanner._patches[cell], np.array([[0, 0], [w, 0], [w, ph], [0, ph]], float))
    glared = img.copy()
    cv2.fillConvexPoly(glared, np.round(corners).astype(np.int32), (255, 255, 255))
    reading = scanner.scan(glared)
    assert reading.cells[cell].empty is empty
    assert reading.cells[cell].unsure is (empty is None)
    assert (f"glare over {cell}:" in reading.message) is (empty is None)
    assert all(reading.cells[c].empty for c in empties[1:])  # the glare is on one cell


def cut_off_left(img: np.ndarray, profile, dx: int):
    """The same still and profile with the frame's left `dx` pixels cut away."""
    import dataclasses

    shift = np.array([[1, 0, -dx], [0, 1, 0], [0, 0, 1.0]])
    K = None if profile.K is None else profile.K - np.array([[0, 0, dx], [0, 0, 0], [0, 0, 0]])
    return np.ascontiguousarray(img[:, dx:]), dataclasses.replace(
        profile, H=shift @ profile.H, image_size=(img.shape[1] - dx, img.shape[0]), K=K)


def test_a_card_cut_off_by_the_frame_is_unsure_not_empty(reader):
    """A card half out of the frame may go unfound (40 held-out stills: 18 of 71 such cards
    read empty): a zone a card would not lie wholly inside the frame on reads unsure when no
    card is found there, and the reading says which cells to bring into view; a card found
    there is still read, and the cells in view read as before."""
    img, truth = load("still-1")  # a1's AS spans x 124-261, b1's QD 175-321
    cut, profile = cut_off_left(img, truth_profile(truth), 190)
    scanner = TableScanner(profile, reader)
    assert scanner.out_of_view == {"a1", "b1", "init/white"}
    reading = scanner.scan(cut)
    assert reading.cells["a1"].empty is None and reading.cells["a1"].unsure
    assert reading.cells["b1"].card.card == truth["cells"]["b1"]["card"]
    assert reading.message.startswith("a1, b1 lie partly out of the frame: read as unsure")
    whole = TableScanner(truth_profile(truth), reader).scan(img)
    assert whole.message is None or "out of the frame" not in whole.message
    for c in CELLS:
        if c not in ("a1", "b1"):
            assert reading.cells[c].empty == whole.cells[c].empty, c
    scanner.out_of_view = set()  # without it the cut-off AS read as no card at all
    assert scanner.scan(cut).cells["a1"].empty is True


def test_scanner_rejects_wrong_sized_and_missing_frames(reader):
    _, truth = load("still-0")
    scanner = TableScanner(truth_profile(truth), reader)
    assert "640x480" in scanner.scan(np.zeros((480, 640, 3), np.uint8)).message
    assert scanner.scan(None).message.startswith("no image")
    assert find_cards(None) == [] and find_cards(np.zeros((0, 0), np.uint8)) == []


def test_piece_stage_is_called(reader):
    from scanner.detections import PieceReading

    img, truth = load("still-1")

    class Pieces:
        def read(self, image, profile, cells):
            return {c: PieceReading("white-knight", 0.9) for c in cells if not cells[c].empty}

    reading = TableScanner(truth_profile(truth), reader, pieces=Pieces()).scan(img)
    assert "pieces" in reading.timings_ms
    assert any(c.piece is not None and c.piece.kind == "knight" for c in reading.cells.values())


def test_recheck_says_ok_then_moved(reader):
    img, truth = load("still-0")
    scanner = TableScanner(truth_profile(truth), reader)
    assert scanner.recheck(img) == "ok"
    shifted = np.roll(img, (150, 260), axis=(0, 1))  # the camera turned
    assert scanner.recheck(shifted) in ("moved", "unknown")


# --- the index corners and the whole card as two witnesses ---------------------------------

def _probs(n_classes: int, k: int, p: float) -> np.ndarray:
    v = np.full(n_classes, (1 - p) / (n_classes - 1), np.float32)
    v[k] = p
    return v


def test_fuse_agreeing_witnesses_are_surer_than_either():
    from scanner.card_reader import fuse

    C, n_cards, back, none = 55, 53, 53, 54
    corners = np.stack([_probs(C, 7, 0.7), _probs(C, none, 0.99), _probs(C, 7, 0.6),
                        _probs(C, none, 0.99)])
    k, down, corner, conf = fuse(corners, _probs(C, 7, 0.7), n_cards, back)
    assert (k, down, corner) == (7, False, 0) and conf > 0.99
    k2, _, _, alone = fuse(corners, None, n_cards, back)
    assert k2 == 7 and alone < conf


def test_fuse_conflict_lowers_confidence_and_blank_corners_say_nothing():
    from scanner.card_reader import fuse

    C, n_cards, back, none = 55, 53, 53, 54
    corners = np.stack([_probs(C, 7, 0.9)] + [_probs(C, none, 0.99)] * 3)
    _, _, _, agree = fuse(corners, _probs(C, 7, 0.9), n_cards, back)
    _, _, _, clash = fuse(corners, _probs(C, 20, 0.9), n_cards, back)
    assert clash < 0.6 < agree
    blank = np.stack([_probs(C, none, 0.99)] * 4)
    k, down, corner, conf = fuse(blank, _probs(C, 20, 0.95), n_cards, back)
    assert (k, down, corner) == (20, False, -1) and conf > 0.9  # the whole card alone



def test_fuse_two_corners_of_the_blank_diagonal_do_not_outvote_the_index():
    """The s51 fixture's g5 (a tango 6C under a rook): the blank diagonal's corners, pips near
    them, read as the joker at 93 and 99 %; the index diagonal says 6C; the whole card says a
    black six or eight. As a plain product the joker won at 99.97 %, a card change nobody
    made; which diagonal carries the index is open, so it is no confident answer now."""
    from scanner.card_reader import fuse

    C, n_cards, back, none = 55, 53, 53, 54
    six, eight, joker = 5, 7, 52
    nw = _probs(C, six, 0.6)
    nw[eight] = 0.29
    se = _probs(C, six, 0.42)
    se[eight] = 0.15
    face = _probs(C, eight + 39, 0.5)  # 8S
    face[six + 39] = 0.13
    face[six] = 0.02
    corners = np.stack([nw, _probs(C, joker, 0.93), se, _probs(C, joker, 0.99)])
    k, _, _, conf = fuse(corners, face, n_cards, back)
    assert not (k == joker and conf > 0.9)
    # a deck that prints its index in all four corners: agreeing diagonals still add up
    four = np.stack([_probs(C, six, 0.8)] * 4)
    two = np.stack([_probs(C, six, 0.8), _probs(C, none, 0.99)] * 2)
    assert fuse(four, None, n_cards, back)[3] > fuse(two, None, n_cards, back)[3] > 0.99


def test_fuse_face_down_from_the_corners_or_the_whole_card():
    from scanner.card_reader import fuse

    C, n_cards, back, none = 55, 53, 53, 54
    backs = np.stack([_probs(C, back, 0.9)] * 4)
    assert fuse(backs, None, n_cards, back)[1]
    blank = np.stack([_probs(C, none, 0.99)] * 4)
    assert fuse(blank, _probs(C, back, 0.95), n_cards, back)[1]


def test_cards_known_face_up_are_never_read_face_down(reader, monkeypatch):
    """Where every card lies face up (a Royal Battles board and its initiative piles), a face
    the models take for a back is read as the face it most resembles: val-s47's orell joker
    read as a back at 48 % went unseen on the board."""
    img, truth = load(sorted(p.stem for p in FIX.glob("*.json"))[0])
    quad = find_cards(img)[0]
    C, back = len(reader.classes), reader.back
    joker = reader.classes.index("JK")

    def corners(crops):  # each index corner: mostly a back, a little the joker
        p = np.full((len(crops), C), 0.01 / C, np.float32)
        p[:, back], p[:, joker] = 0.6, 0.39
        return p

    monkeypatch.setattr(reader, "classify", corners)
    monkeypatch.setattr(reader, "classify_faces", corners)
    assert reader.read_quads(img, [quad])[0].face_down
    up = reader.read_quads(img, [quad], faces_up=True)[0]
    assert not up.face_down and up.candidates[0][0] == "JK"
    assert TableScanner(truth_profile(truth), reader=reader, presence=None).faces_up


def _random_witnesses(rng: np.random.Generator, n: int, C: int = 55, back: int = 53,
                      none: int = 54) -> tuple[np.ndarray, np.ndarray]:
    """N cards' corner and whole-card probabilities, with blank corners, face-down cards,
    whole cards that say back and close calls mixed in."""
    from scanner.card_reader import softmax

    corners = softmax(rng.normal(0, 3, (n, 4, C))).astype(np.float32)
    faces = softmax(rng.normal(0, 3, (n, C))).astype(np.float32)
    corners[: n // 4, [1, 3]] = 0.0
    corners[: n // 4, [1, 3], none] = 1.0  # the other diagonal blank
    corners[n // 4: n // 3] = 0.0
    corners[n // 4: n // 3, :, none] = 1.0  # no index anywhere
    corners[n // 3: n // 3 + 3, [0, 2], back] = 5.0  # a back at two corners
    faces[n // 3: n // 2, back] = 10.0
    return corners, faces


def test_fuse_many_gives_what_fuse_gives_card_by_card():
    from scanner.card_reader import fuse, fuse_many

    rng = np.random.default_rng(3)
    corners, faces = _random_witnesses(rng, 200)
    ks, downs, where, confs = fuse_many(corners, faces, 53, 53)
    for i in range(len(corners)):
        assert fuse(corners[i], faces[i], 53, 53) == \
            (int(ks[i]), bool(downs[i]), int(where[i]), float(confs[i])), i
    assert downs.any() and (where == -1).any() and (~downs).sum() > 100  # all cases met


def test_decide_many_gives_what_decide_gives(reader):
    rng = np.random.default_rng(4)
    corners, faces = _random_witnesses(rng, 120, C=len(reader.classes), back=reader.back,
                                       none=reader.none)
    face_list = [f if i % 3 else None for i, f in enumerate(faces)]  # some with no thumbnail
    got = reader.decide_many(corners, face_list)
    assert got == [reader.decide(p, f) for p, f in zip(corners, face_list, strict=True)]


def test_batched_crops_and_thumbnails_are_the_per_card_ones():
    from scanner.card_reader import _thumbnails
    from scanner.rectify import diagonal_crops, normalise

    rng = np.random.default_rng(5)
    cards = rng.integers(0, 256, (7, 140, 100, 3), np.uint8)
    each = np.stack([corner_crops(c) for c in cards])  # N x 4 corners
    assert np.array_equal(diagonal_crops(cards, "nw-se"), each[:, [0, 2]].reshape(14, CROP_H,
                                                                                   CROP_W, 3))
    assert np.array_equal(diagonal_crops(cards, "ne-sw"), each[:, [1, 3]].reshape(14, CROP_H,
                                                                                   CROP_W, 3))
    thumbs = _thumbnails(cards, (30, 42))
    assert np.array_equal(thumbs, np.stack([cv2.resize(c, (30, 42), interpolation=cv2.INTER_AREA)
                                            for c in cards]))
    x = normalise(each[:, 0])
    ref = each[:, 0].astype(np.float64)
    ref = (ref - ref.mean(axis=(1, 2, 3), keepdims=True)) / (ref.std(axis=(1, 2, 3),
                                                                     keepdims=True) + 8.0)
    assert x.shape == (7, 3, CROP_H, CROP_W) and x.dtype == np.float32
    assert np.allclose(x, ref.transpose(0, 3, 1, 2), atol=1e-5)
    assert normalise(np.zeros((0, CROP_H, CROP_W, 3), np.uint8)).shape == (0, 3, CROP_H, CROP_W)


def test_rectify_border_mode_does_not_change_the_card():
    """Inside the frame the cheaper border is used; at the edge the replicated one: both give
    what the replicated border gives."""
    from scanner.rectify import CANON_H, CANON_RECT, CANON_W, border_for

    rng = np.random.default_rng(6)
    img = rng.integers(0, 256, (300, 400, 3), np.uint8)
    for quad in (np.float32([[100, 50], [160, 55], [155, 140], [97, 136]]),
                 np.float32([[-5, 10], [50, 12], [48, 100], [-8, 96]])):  # over the left edge
        M = cv2.getPerspectiveTransform(quad, CANON_RECT)
        ref = cv2.warpPerspective(img, M, (CANON_W, CANON_H), flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE)
        assert np.array_equal(rectify(img, quad), ref)
    assert border_for(np.float32([[1, 1], [398, 298]]), img.shape) == cv2.BORDER_CONSTANT
    assert border_for(np.float32([[0.5, 1], [398, 298]]), img.shape) == cv2.BORDER_REPLICATE


def test_kept_rectification_maps_give_the_warped_card(reader, monkeypatch):
    """`rectify_mapped` samples as `rectify` does, to warpPerspective's 1/32-pixel grid (a
    level or a few at sharp edges, where a sample falls the other side of a grid step), and a
    board's readings are the same through the scanner's kept maps as without them."""
    import scanner.pipeline as pipeline
    from scanner.rectify import rectify_mapped, rectify_maps

    monkeypatch.setattr(pipeline, "SHARPER_LOOK", None)  # one plain read, as read_quads here

    rng = np.random.default_rng(7)
    img = cv2.GaussianBlur(rng.integers(0, 256, (300, 400, 3), np.uint8), (5, 5), 1.5)
    for quad in (np.float32([[100, 50], [160, 55], [155, 140], [97, 136]]),
                 np.float32([[-5, 10], [50, 12], [48, 100], [-8, 96]])):  # over the left edge
        d = np.abs(rectify(img, quad).astype(int) - rectify_mapped(img, quad, rectify_maps(quad)))
        assert d.max() <= 8 and d.mean() < 0.2
    still, truth = load("still-0")
    scanner = TableScanner(truth_profile(truth), reader)
    first = scanner.scan(still)  # makes the maps
    assert 20 <= len(scanner._rect_maps) <= 37
    again = scanner.scan(still)
    quads = [c.card.corners for c in first.cells.values() if c.card is not None]
    plain = reader.read_quads(still, quads, face_below_px=np.inf, in_portrait_order=True,
                              pips=True)
    mapped = [c.card for c in again.cells.values() if c.card is not None]
    assert [r.card for r in plain] == [r.card for r in mapped]
    assert len(scanner._rect_maps) <= 37  # the same quads: no new maps


def test_board_search_of_all_zones_at_once_matches_zone_by_zone(reader):
    img, truth = load("still-0")
    scanner = TableScanner(truth_profile(truth), reader)
    keys = scanner.zone_names()
    together = scanner._find_in_patches(img, keys)
    found = 0
    for key in keys:
        q1, s1 = scanner._find_in_patch(img, key)
        q2, s2 = together[key]
        assert s1 == pytest.approx(s2, abs=1e-4), key
        assert (q1 is None) == (q2 is None), key
        if q1 is not None:
            found += 1
            assert np.allclose(q1, q2), key
    assert found >= 20
    # each zone's map samples the frame as the zone's homography does
    pw, ph, _ = scanner._geom
    for key in keys:
        warped = cv2.warpPerspective(img, scanner._warps[key], (pw, ph),
                                     flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                     borderMode=cv2.BORDER_REPLICATE)
        mapped = cv2.remap(img, scanner._maps[key], None, cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REPLICATE)
        assert np.abs(warped.astype(int) - mapped).max() <= 1, key


def test_landscape_cards_read_both_ways_stay_landscape(reader):
    img, truth = load("still-1")
    scanner = TableScanner(truth_profile(truth), reader)
    upright: dict = {}
    scanner._find_in_patches(img, scanner.zone_names(), upright)
    assert {"c4", "e4", "f4"} <= set(upright)  # landscape cards narrowly ahead of portrait
    reading = scanner.scan(img)
    for cell in ("c4", "e4", "f4", "g1", "d2"):
        assert reading.cells[cell].card.orientation == "landscape", cell
    assert [reading.cells[c].card.card for c in ("c4", "f4")] == ["KS", "9C"]


def test_a_portrait_card_found_landscape_is_read_upright(reader, monkeypatch):
    """A court card's picture frame can outshine its thin margin sideways (val-s7's berlin
    courts): the landscape rectangle wins, and read through it the card is lost."""
    import scanner.pipeline as pipeline

    img, truth = load("still-0")
    scanner = TableScanner(truth_profile(truth), reader)
    at = scanner.zone_names().index("b3")
    scores = TableScanner._scores

    def landscape_ahead(g, idx, n_hyps):
        score, best = scores(g, idx, n_hyps)
        if idx.ndim == 1 and len(g) > at:  # the coarse search of every zone
            half = score.shape[1] // 2
            score[at, half:] += score[at, :half].max() - score[at, half:].max() + 5.0
            best = score.argmax(1)
        return score, best

    monkeypatch.setattr(TableScanner, "_scores", staticmethod(landscape_ahead))
    read = scanner.scan(img).cells["b3"].card
    assert (read.card, read.orientation) == ("KS", "portrait")
    monkeypatch.setattr(pipeline, "PORTRAIT_TOO_WITHIN", 0.0)  # the landscape one alone
    read = scanner.scan(img).cells["b3"].card
    assert (read.card, read.orientation) != ("KS", "portrait")


def _right_and_wrong(img: np.ndarray, truth: dict, reader: CardReader) -> tuple[int, int]:
    """A still's board cards read right, and answered wrong, by the board scanner."""
    reading = TableScanner(truth_profile(truth), reader).scan(img)
    said = {c: reading.cells[c].card.card for c, t in truth["cells"].items()
            if t["card"] and reading.cells.get(c) and reading.cells[c].card}
    right = sum(said[c] == truth["cells"][c]["card"] for c in said)
    return right, sum(card is not None for card in said.values()) - right


def test_cards_left_unsure_in_a_blurred_frame_are_read_again_sharpened(reader, monkeypatch):
    import scanner.pipeline as pipeline

    img, truth = load("still-0")
    blurred = cv2.GaussianBlur(img, (0, 0), 0.8)  # a camera slightly out of focus
    right, wrong = _right_and_wrong(blurred, truth, reader)
    monkeypatch.setattr(pipeline, "SHARPER_LOOK", None)
    right_before, wrong_before = _right_and_wrong(blurred, truth, reader)
    assert right >= right_before + 2 and wrong == wrong_before == 0


def test_cards_left_unsure_are_read_again_through_their_outline_grown_and_shrunk(
        reader, monkeypatch):
    """still-1: a card the first looks leave unsure is named through its outline grown 5 %
    (the index cut a little wider than the rim put it); such a look answers only at
    SCALED_LOOK_SURE, and nothing is answered wrong."""
    import scanner.pipeline as pipeline

    img, truth = load("still-1")
    right, wrong = _right_and_wrong(img, truth, reader)
    monkeypatch.setattr(pipeline, "SCALED_LOOK_SURE", 1.01)  # no look can answer
    assert _right_and_wrong(img, truth, reader) == (right - 1, 0)
    monkeypatch.setattr(pipeline, "SCALED_LOOKS", ())
    assert _right_and_wrong(img, truth, reader) == (right - 1, 0)
    assert wrong == 0


def test_sharpened_adds_back_the_detail_a_blur_took():
    from scanner.card_reader import sharpened

    card = np.full((140, 100, 3), 230, np.uint8)
    cv2.putText(card, "Q", (8, 30), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (20, 20, 20), 2)
    soft = cv2.GaussianBlur(card, (0, 0), 1.5)
    assert np.array_equal(sharpened(soft, 0.0, 1.5), soft)
    edges = cv2.Laplacian(cv2.cvtColor(sharpened(soft, 1.5, 1.5), cv2.COLOR_BGR2GRAY), cv2.CV_32F)
    assert edges.var() > 2 * cv2.Laplacian(cv2.cvtColor(soft, cv2.COLOR_BGR2GRAY),
                                           cv2.CV_32F).var()


def test_a_quad_short_of_the_card_snaps_to_its_edges():
    """A threshold blob that stops well inside the card (pips at the margin, uneven light) has
    no rim step; snapped, each side meets the card's edge again."""
    from scanner.card_finder import card_contrast, card_contrasts, snap_to_edges

    g = np.full((300, 400), 90, np.uint8)
    card = np.float32([[120, 60], [220, 70], [208, 210], [108, 200]])
    cv2.fillConvexPoly(g, card.astype(np.int32), 230)
    c = card.mean(0)
    short = (c + (card - c) * 0.85).astype(np.float32)
    assert card_contrast(g, short) < 8.0  # inner and outer rim both on the card
    snapped, ok = snap_to_edges(g, short[None])
    assert ok[0]
    assert np.abs(snapped[0] - card).max() < 3.5
    assert card_contrast(g, snapped[0]) > 60
    rng = np.random.default_rng(7)
    quads = rng.uniform(-20, 420, (50, 4, 2)).astype(np.float32)
    assert np.array_equal(card_contrasts(g, quads), [card_contrast(g, q) for q in quads])


def _white_table_photo() -> tuple[np.ndarray, list[np.ndarray]]:
    """Three cards on a cream table as white as they are: no rim step, only each card's thin
    grey outline (its edge and the shadow along it) and its dark pips."""
    rng = np.random.default_rng(3)
    img = np.full((480, 640, 3), (214, 222, 226), np.uint8)
    cards = [np.float32([[80, 120], [190, 110], [205, 270], [95, 282]]),
             np.float32([[270, 100], [380, 100], [380, 258], [270, 258]]),
             np.float32([[450, 140], [555, 160], [530, 310], [425, 290]])]
    for q in cards:
        cv2.fillConvexPoly(img, q.astype(np.int32), (216, 222, 224))
        cv2.polylines(img, [q.astype(np.int32)], True, (150, 156, 160), 2)
        c = q.mean(0)
        for _ in range(6):  # pips
            p = c + rng.uniform(-0.45, 0.45, 2) * (q.max(0) - q.min(0))
            cv2.circle(img, (int(p[0]), int(p[1])), 7, (40, 40, 40), -1)
    return img, cards


def test_cards_on_a_table_as_white_as_they_are_are_found_by_their_outline():
    """A card on a white table is no whiter than it (the rim test sees nothing), but its
    outline is traced all round: real-cards-dev found 44.5 -> 47.0 % of its cards."""
    from scanner.card_finder import card_contrasts, whiteness

    img, cards = _white_table_photo()
    assert (card_contrasts(whiteness(img), np.array(cards)) < 8.0).all()  # no rim step
    found = find_cards(img)
    for q in cards:
        d = [np.abs(portrait_order(f) - portrait_order(q)).max() for f in found]
        assert d and min(d) < 6.0, f"card at {q.mean(0)} not found"
    assert len(found) == len(cards)  # not the pips, not the table


def test_a_quad_pulled_off_a_rim_is_moved_back_onto_it():
    """`trace_sides`: an outline's quad cut inside the card (pips touching the rim bit into
    the edge map's hole) is moved side by side onto the straight rim the edges trace; where no
    rim runs near, the coverage stays low and the finder leaves the quad as it was."""
    from scanner.card_finder import outline_coverage, trace_sides

    near = np.zeros((240, 240), np.uint8)
    cv2.polylines(near, [np.int32([[60, 40], [170, 50], [160, 200], [50, 190]])], True, 255, 3)
    pulled = np.float32([[[68, 48], [166, 55], [153, 193], [57, 181]]])  # a side tilted in too
    assert outline_coverage(near, pulled)[0] < 0.5
    moved, coverage = trace_sides(near, pulled)
    assert coverage[0] >= 0.9
    assert np.abs(moved[0] - np.float32([[60, 40], [170, 50], [160, 200], [50, 190]])).max() < 3
    _, nothing = trace_sides(np.zeros_like(near), pulled)
    assert nothing[0] == 0.0


@pytest.mark.skipif(not (REAL_CARDS / "images").is_dir(),
                    reason="real-cards-dev not beside the repository")
def test_cards_heaped_on_a_white_table_are_found_by_their_rims():
    """IMG_20220316_171543 (the half of real-cards-dev choices are made on): four clubs
    overlapping on a white table. Their rims touch, pips and index marks touch the rims, so no
    outline's quad lay on the 6C's rim and only pips were found: with the quads' sides moved
    onto the rims, the 6C and 8C are found whole and read, and the other two by a corner."""
    from scanner.card_corners import cards_in_photo

    img = cv2.imread(str(next((REAL_CARDS / "images").glob("IMG_20220316_171543_jpg.rf.42*"))))
    named = {r.card for r in cards_in_photo(img, CardReader())}
    assert {"6C", "8C"} <= named <= {"5C", "6C", "7C", "8C"}


def test_cards_in_a_dim_photo_are_found_by_their_outline():
    """A photo taken in poor light: the cards' margins are grey (whiteness 82 on a table of
    76: no rim step worth the name), well under the margin a card needs in a bright photo, but
    still the whitest thing in the view, and each card's outline (its edge's shadow) is traced
    all round. Their margin is judged against the photo's whitest (real-cards-dev: found 70.5
    -> 72.6 % on the half never used for choices)."""
    import scanner.card_finder as finder

    rng = np.random.default_rng(3)
    img = np.full((480, 640, 3), 76, np.uint8)
    cards = [np.float32([[80, 120], [190, 110], [205, 270], [95, 282]]),
             np.float32([[270, 100], [380, 100], [380, 258], [270, 258]]),
             np.float32([[450, 140], [555, 160], [530, 310], [425, 290]])]
    for q in cards:
        cv2.fillConvexPoly(img, q.astype(np.int32), (82, 82, 82))
        cv2.polylines(img, [q.astype(np.int32)], True, (62, 62, 62), 1, cv2.LINE_AA)
        c = q.mean(0)
        for _ in range(6):  # pips
            p = c + rng.uniform(-0.4, 0.4, 2) * (q.max(0) - q.min(0))
            cv2.circle(img, (int(p[0]), int(p[1])), 7, (20, 20, 20), -1)
    img = cv2.GaussianBlur(img, (3, 3), 0)
    g = finder.whiteness(img)
    assert (finder.card_contrasts(g, np.array(cards)) < finder.MIN_CONTRAST).all()
    assert finder.margin_whiteness(g) < 60
    # in good light the margin stays what it was
    assert finder.margin_whiteness(np.full((40, 40), 250, np.uint8)) == finder.MIN_INNER_WHITE
    found = find_cards(img, rims=True)
    for q in cards:
        d = [np.abs(portrait_order(f) - portrait_order(q)).max() for f in found]
        assert d and min(d) < 6.0, f"card at {q.mean(0)} not found"
    assert len(found) == len(cards)


def _card_with_a_broken_rim(gap_px: int) -> tuple[np.ndarray, np.ndarray]:
    """A card as white as the table, traced only by its faint grey rim, with an index mark
    touching the rim inside its corner and a gap of `gap_px` in the rim (a glint, a neighbour
    laid against it): the edge map then has no hole for the card."""
    from calibration.geometry import order_quad

    img = np.full((640, 640, 3), 236, np.uint8)
    box = order_quad(cv2.boxPoints(((320, 300), (180, 260), 12.0)).astype(np.float32))
    cv2.fillPoly(img, [box.astype(np.int32)], (241, 241, 241))
    cv2.polylines(img, [np.rint(box).astype(np.int32)], True, (170, 170, 170), 1, cv2.LINE_AA)
    mark = box[0] + (box[1] - box[0]) * 0.08 + (box[3] - box[0]) * 0.04
    cv2.circle(img, tuple(int(v) for v in np.rint(mark)), 9, (20, 20, 20), -1)
    a = box[2] + (box[3] - box[2]) * 0.5
    d = (box[3] - box[2]) / np.linalg.norm(box[3] - box[2])
    cv2.line(img, tuple(int(v) for v in np.rint(a)), tuple(int(v) for v in np.rint(a + d * gap_px)),
             (241, 241, 241), 3)
    return cv2.GaussianBlur(img, (3, 3), 0), box


@pytest.mark.parametrize("gap_px", [2, 4])
def test_a_card_traced_only_by_a_broken_rim_is_found_in_photos(gap_px):
    """`rims=True` (what `cards` uses on photos) closes small gaps in the edge map and takes
    the holes that leaves, refitted to the rim: real-cards-dev's fit half found 72.0 -> 77.8 %.
    Registration goes without (`rims=False`), so it is unchanged."""
    from calibration.geometry import order_quad

    img, box = _card_with_a_broken_rim(gap_px)
    assert find_cards(img) == []  # the old finder's view: no hole, no rim step
    found = find_cards(img, rims=True)
    assert len(found) == 1
    assert np.abs(order_quad(found[0]) - box).max() < 2.5


def test_sides_refitted_to_the_rim_through_index_marks():
    """A quad cut short by index marks that touch the rim (its sides a few pixels inside,
    turned a little) is refitted side by side to the rim's edge pixels."""
    from scanner.card_finder import snap_sides_to

    edges = np.zeros((300, 300), np.uint8)
    card = np.float32([[60, 50], [200, 60], [190, 250], [50, 240]])
    cv2.polylines(edges, [card.astype(np.int32)], True, 255, 1)
    cv2.circle(edges, (72, 70), 8, 255, 1)  # an index mark beside the rim
    c = card.mean(0)
    inner = (c + (card - c) * 0.95).astype(np.float32)
    inner[0] += (3, 2)
    out = snap_sides_to(edges, inner[None])[0]
    assert np.abs(out - card).max() < 1.5
    # nothing to fit: the quad stays
    assert np.allclose(snap_sides_to(np.zeros_like(edges), inner[None])[0], inner, atol=1e-3)


def test_a_card_is_not_lost_to_the_pip_at_its_middle():
    """An ace on a table as white as it: its outline is faint (no rim step), its one big pip
    a sharp diamond at the middle. The pip's cleaner outline held the card's centre and took
    the card with it before going itself as too small (session 23; real-cards-dev's fit half:
    found 65.8 -> 66.7 %, unread cards where none lies 401 -> 220)."""
    img = np.full((480, 640, 3), (214, 222, 226), np.uint8)
    card = np.float32([[250, 110], [370, 110], [370, 278], [250, 278]])
    cv2.fillConvexPoly(img, card.astype(np.int32), (216, 222, 224))
    cv2.polylines(img, [card.astype(np.int32)], True, (150, 156, 160), 2)
    c = card.mean(0)
    pip = np.int32([[c[0], c[1] - 30], [c[0] + 20, c[1]], [c[0], c[1] + 30], [c[0] - 20, c[1]]])
    cv2.fillConvexPoly(img, pip, (40, 40, 200))
    found = find_cards(img)
    assert len(found) == 1
    assert np.abs(portrait_order(found[0]) - portrait_order(card)).max() < 6.0


def test_cards_on_a_tray_are_not_taken_for_its_pips():
    """Cards on a pale tray (a mattress, a patch of cloth) on a dark floor: the tray is a
    bright quad too, and beside it the cards looked like pips and were dropped as too small
    (session 23; real-cards-dev's fit half: found 66.7 -> 70.1 %)."""
    rng = np.random.default_rng(7)
    img = np.full((480, 640, 3), (30, 30, 35), np.uint8)
    cv2.fillConvexPoly(img, np.int32([[90, 80], [540, 90], [530, 380], [100, 370]]),
                       (150, 140, 160))  # the tray
    cards = [np.float32([[120 + 135 * i, 150], [230 + 135 * i, 150], [230 + 135 * i, 305],
                         [120 + 135 * i, 305]]) for i in range(3)]
    for q in cards:
        cv2.fillConvexPoly(img, q.astype(np.int32), (228, 232, 235))
        c = q.mean(0)
        for _ in range(5):  # pips
            p = c + rng.uniform(-0.35, 0.35, 2) * (q.max(0) - q.min(0))
            cv2.circle(img, (int(p[0]), int(p[1])), 7, (30, 30, 200), -1)
    found = find_cards(img)
    for q in cards:
        d = [np.abs(portrait_order(f) - portrait_order(q)).max() for f in found]
        assert d and min(d) < 6.0, f"card at {q.mean(0)} not found"
    assert len(found) == len(cards)  # not the tray


def _touching_cards_photo() -> tuple[np.ndarray, list[np.ndarray]]:
    """On a dark cloth: two cards laid edge to edge (their shared edge a thin grey line), and
    a third whose side lies along a pale patch of the cloth, as bright as a card's margin."""
    rng = np.random.default_rng(5)
    img = np.full((480, 640, 3), (40, 45, 60), np.uint8)
    cv2.fillConvexPoly(img, np.int32([[430, 60], [640, 60], [640, 420], [500, 420]]),
                       (200, 205, 210))  # the pale patch
    cards = [np.float32([[60, 120], [170, 120], [170, 275], [60, 275]]),
             np.float32([[172, 120], [282, 120], [282, 275], [172, 275]]),
             np.float32([[330, 100], [440, 100], [440, 255], [330, 255]])]
    for q in cards:
        cv2.fillConvexPoly(img, q.astype(np.int32), (228, 232, 235))
        cv2.polylines(img, [q.astype(np.int32)], True, (120, 124, 128), 1)
        c = q.mean(0)
        for _ in range(5):  # pips
            p = c + rng.uniform(-0.4, 0.4, 2) * (q.max(0) - q.min(0))
            cv2.circle(img, (int(p[0]), int(p[1])), 7, (30, 30, 30), -1)
    return img, cards


def test_cards_touching_each_other_or_a_pale_table_are_found_one_by_one():
    """Touching cards merge into one white blob, and a card beside a pale patch merges with
    it; the edges between them still cut them apart (session 22: real-cards-dev's measured
    half found 44.2 -> 53.1 %). The two cards traced as one outline are not a card."""
    img, cards = _touching_cards_photo()
    found = find_cards(img)
    for q in cards:
        d = [np.abs(portrait_order(f) - portrait_order(q)).max() for f in found]
        assert d and min(d) < 6.0, f"card at {q.mean(0)} not found"
    assert len(found) == len(cards)  # not the pair as one, not the patch


def test_portrait_order_by_the_true_sides_where_the_camera_foreshortens_them():
    """A portrait card pointing at a low camera looks landscape in the image: given its
    corners on the board plane, the short side is decided there."""
    plane = np.float64([[0, 0], [63, 0], [63, 88], [0, 88]])  # 0 -> 1 is the short side
    image = np.float32([[100, 100], [200, 100], [195, 160], [105, 160]])  # long side squashed
    assert np.array_equal(portrait_order(image, plane=plane), image)
    by_image = portrait_order(image)
    assert not np.array_equal(by_image, image)  # the image alone turns it a quarter


def test_cards_seen_from_a_low_camera_are_read_upright(reader):
    """At 38° elevation each portrait card's long side is shorter in the frame than its short
    side. Ordered by the image, all seven were read 'landscape' and four left unread (session
    21); ordered by the board they are portrait and read."""
    import dataclasses

    from models.renderer import Scene, render_scene

    scene = dataclasses.replace(
        Scene.random(11, split="train", designs=["gnome-berlin"], width=1280, height=720),
        elevation=38.0, azimuth=0.0, roll=0.0, defocus=0.0, motion=0.0, noise=1.0, jpeg=95,
        board_fraction=0.9, glare=0.0, shadow=0.0, k1=0.0, k2=0.0, target=(4.0, 0.0))
    cards = ["7C", "QH", "4S", "10D", "KC", "3H", "8S"]
    position = {"board": {f"{f}3": {"cards": [c], "orientation": "portrait"}
                          for f, c in zip("abcdefg", cards, strict=True)},
                "initiative": {"white": None, "black": None}}
    res = render_scene(position, scene)
    reading = TableScanner(truth_profile(res.truth), reader).scan(res.image)
    seen = [reading.cells[f"{f}3"].card for f in "abcdefg"]
    assert all(c is not None and c.orientation == "portrait" for c in seen)
    q = seen[0].corners
    assert np.linalg.norm(q[1] - q[0]) > np.linalg.norm(q[2] - q[1])  # looks landscape
    assert sum(c.card == want for c, want in zip(seen, cards, strict=True)) >= 6
    assert all(c.card in (None, want) for c, want in zip(seen, cards, strict=True))


def _fanned_hand(codes: list[str], design: str = "gnome-anglo") -> np.ndarray:
    """Cards laid as a hand is fanned on a green cloth: each covers all of the one before but
    a strip with its index (the last lies whole)."""
    img = np.full((480, 640, 3), (50, 90, 40), np.uint8)
    for i, code in enumerate(codes):
        face = card_face(design, code)
        h, w = face.shape[:2]
        x0, y0 = 40 + 70 * i, 100 + 8 * i
        dst = np.float32([[x0, y0], [x0 + 160, y0], [x0 + 160, y0 + 224], [x0, y0 + 224]])
        M = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]), dst)
        card = cv2.warpPerspective(np.full((h, w), 255, np.uint8), M, (640, 480)) > 0
        img[card] = cv2.warpPerspective(face, M, (640, 480))[card]
    return img


def test_cards_under_others_are_named_by_the_corner_that_shows(reader):
    """A fanned hand shows each covered card's index corner but no outline of it: the finder
    traces none of them; their corners do (session 23: real-cards-dev's measured half, recall
    38.4 -> 45.6 %). Nothing is named that is not in the hand."""
    from scanner.card_corners import cards_in_photo

    hand = ["7C", "QH", "4S", "10D", "KC"]
    img = _fanned_hand(hand)
    by_outline = {r.card for r in reader.read_quads(img, find_cards(img))}
    assert not by_outline & set(hand[:-1])
    readings = cards_in_photo(img, reader)
    named = [r.card for r in readings if r.card is not None]
    assert len(set(named) & set(hand[:-1])) >= 2
    assert set(named) <= set(hand) and len(named) == len(set(named))


def test_one_corner_is_cut_as_the_whole_card_reader_cuts_it(reader, monkeypatch):
    """`read_corners` warps only the index corner; the crop must be the one `rectify` and
    `diagonal_crops` give (the model was trained on those), for the nw and the ne corner."""
    from scanner.rectify import diagonal_crops

    rng = np.random.default_rng(3)
    img = rng.integers(0, 255, (300, 400, 3), np.uint8)
    img = cv2.GaussianBlur(img, (5, 5), 0)
    quad = np.float32([[120, 60], [230, 75], [215, 240], [100, 225]])
    seen = []
    monkeypatch.setattr(reader, "classify", lambda crops: (
        seen.append(crops.copy()), np.full((len(crops), len(reader.classes)),
                                           1 / len(reader.classes), np.float32))[1])
    reader.read_corners(img, [(quad, 0), (quad, 1)])
    card = rectify(img, quad)[None]
    nw = diagonal_crops(card, "nw-se")[0]
    ne = diagonal_crops(card, "ne-sw")[0]
    got = seen[0]
    assert np.abs(got[0].astype(int) - nw).max() <= 2
    assert np.abs(got[1].astype(int) - ne).max() <= 2


class _ReaderSureAwayFromTheFirstOutline:
    """A stand-in reader: unsure through the first outlines it is shown, and through any other
    outline names `answers[k]` for the k-th card at `conf`."""

    def __init__(self, first: list[np.ndarray], answers: list[str], conf: float):
        self.first, self.answers, self.conf = first, answers, conf

    def read_quads(self, image, quads, **kw):
        from scanner.detections import CardReading

        out = []
        for q in quads:
            k = int(np.argmin([np.abs(q.mean(0) - f.mean(0)).sum() for f in self.first]))
            again = np.abs(q - self.first[k]).max() > 1.0
            out.append(CardReading(corners=np.asarray(q, np.float32),
                                   card=self.answers[k] if again else None,
                                   confidence=self.conf if again else 0.5))
        return out


@pytest.mark.parametrize("conf,want", [(0.9995, ["7C", None]), (0.99, [None, None])])
def test_unsure_photo_cards_get_a_second_look_only_a_sure_one_answers(conf, want):
    """An unsure card is read again through its outline refitted to the edges and grown; that
    look answers only at SECOND_LOOK_SURE, and never names a card the photo already showed."""
    from scanner.card_corners import _second_look
    from scanner.card_finder import table_masks
    from scanner.detections import CardReading

    img, cards = _white_table_photo()
    seen = table_masks(img)
    quads = [c.mean(0) + (c - c.mean(0)) * 0.9 for c in cards[:2]]  # cut short of the rims
    reader = _ReaderSureAwayFromTheFirstOutline(quads, ["7C", "KH"], conf)
    readings = reader.read_quads(img, quads)
    readings.append(CardReading(corners=cards[2], card="KH", confidence=0.9999))
    _second_look(img, seen, quads, readings, reader)
    assert [r.card for r in readings[:2]] == want  # KH: already on the photo
    if want[0]:
        assert readings[0].confidence >= 0.999
        assert np.abs(readings[0].corners - quads[0]).max() > 1.0  # from the other outline


@pytest.mark.parametrize("code", ["7C", "4S", "KH"])
def test_a_card_stretched_across_is_read_through_its_outline_turned(reader, code):
    """A photo stretched to a square (real-cards-dev's are) can make a portrait card wider
    than tall: its outline is then cut with the long side across and the index read sideways,
    unsure. The second look reads it through the outline a quarter turned."""
    from scanner.card_corners import cards_in_photo

    face = card_face("gnome-anglo", code)
    h, w = face.shape[:2]
    img = np.full((480, 640, 3), (60, 90, 50), np.uint8)
    quad = np.float32([[200, 110], [432, 110], [432, 320], [200, 320]])  # 1.55 x its width
    M = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]), quad)
    on = cv2.warpPerspective(np.full((h, w), 255, np.uint8), M, (640, 480)) > 0
    img[on] = cv2.warpPerspective(face, M, (640, 480))[on]
    assert reader.read_quads(img, [quad])[0].card is None  # read sideways
    assert [r.card for r in cards_in_photo(img, reader)] == [code]


def test_an_unread_outline_does_not_hide_the_corners_of_the_cards_it_traced(monkeypatch):
    """Two cards touching are traced as one outline the reader cannot read; each still shows
    its index corner. The corner's read is asked (only read cards hide corners) and the card it
    names takes the unread outline's place, rather than both being reported."""
    from scanner import card_corners
    from scanner.detections import CardReading

    img, _ = _white_table_photo()
    both = np.float32([[100, 100], [280, 100], [280, 240], [100, 240]])  # two cards as one
    left = np.float32([[100, 100], [200, 100], [200, 240], [100, 240]])
    monkeypatch.setattr(card_corners, "find_cards", lambda *a, **k: [both])
    monkeypatch.setattr(card_corners, "corner_hypotheses", lambda *a: [(left, 0)])
    monkeypatch.setattr(card_corners, "_second_look", lambda *a: None)

    class Reader:
        def read_quads(self, image, quads, **kw):
            return [CardReading(corners=np.asarray(q, np.float32), confidence=0.3)
                    for q in quads]

        def read_corners(self, image, hypotheses):
            return [CardReading(corners=q, card="7C", confidence=0.9999) for q, _ in hypotheses]

    readings = card_corners.cards_in_photo(img, Reader(), presence=None)
    assert [(r.card, r.corners.tolist()) for r in readings] == [("7C", left.tolist())]


@pytest.mark.parametrize("outline_read", [False, True])
def test_with_no_outline_read_corners_are_read_at_the_size_that_names_most_cards(
        monkeypatch, outline_read):
    """With no outline read, the photo's card size came from pips or from a heap traced as
    one: the corners are read at sizes over SIZE_LADDER too, and the size whose corners name
    the most cards surely is the photo's. Where an outline was read its size stands."""
    from scanner import card_corners
    from scanner.detections import CardReading

    img, _ = _white_table_photo()
    pip = np.float32([[300, 300], [330, 300], [330, 340], [300, 340]])
    monkeypatch.setattr(card_corners, "find_cards", lambda *a, **k: [pip])
    monkeypatch.setattr(card_corners, "_second_look", lambda *a: None)
    asked = []
    right = card_corners.SIZE_LADDER[2] * 480  # the cards' true short side (px)

    def corner_hyps(seen, short, long_, boxes, read_quads=()):
        asked.append(short)
        at = np.float32([[10, 10], [10 + short, 10], [10 + short, 10 + long_], [10, 10 + long_]])
        cards = ["5H", "6H"] if abs(short - right) < 1 else ["JK"] if short < 100 else []
        return [(at + 200 * i, c) for i, c in enumerate(cards)]  # (the card stands in for k)

    monkeypatch.setattr(card_corners, "_corner_hyps", corner_hyps)

    class Reader:
        def read_quads(self, image, quads, **kw):
            return [CardReading(corners=np.asarray(q, np.float32), card="9S" if outline_read
                                else None, confidence=0.999 if outline_read else 0.3)
                    for q in quads]

        def read_corners(self, image, hyps):
            return [CardReading(corners=q, card=c, confidence=0.999) for q, c in hyps]

    readings = card_corners.cards_in_photo(img, Reader(), presence=None)
    if outline_read:
        assert len(asked) == 1 and asked[0] == pytest.approx(30, abs=1)
        assert [r.card for r in readings] == ["9S", "JK"]
    else:
        assert len(asked) == 1 + len(card_corners.SIZE_LADDER)
        assert sorted(r.card for r in readings if r.card) == ["5H", "6H"]


@pytest.mark.skipif(not (REAL_CARDS / "images").is_dir(),
                    reason="real-cards-dev not beside the repository")
def test_cards_heaped_on_a_mattress_are_read_at_the_size_their_corners_name_most_cards():
    """IMG_20220316_160948 (the half of real-cards-dev choices are made on): four hearts fanned
    on a patterned mattress. The one outline traced is the heap, read as no card, and the
    card size it gave was the heap's: one card was named. At the size whose corners name the
    most cards, all four are."""
    from scanner.card_corners import cards_in_photo

    img = cv2.imread(str(next((REAL_CARDS / "images").glob("IMG_20220316_160948_jpg.rf.ba8*"))))
    assert sorted(r.card for r in cards_in_photo(img, CardReader()) if r.card) == \
        ["5H", "6H", "7H", "8H"]


@pytest.mark.parametrize("off,found", [(0.0, True), (30.0, True), (40.0, False)])
def test_a_corner_sheared_by_a_stretched_photo_still_counts_as_a_card_corner(off, found):
    """A turned card in a photo stretched to another aspect shows corners sheared off a right
    angle (real-cards-dev's 640 x 640 photos: by up to 30 degrees); they are still a card's
    corners. A corner much sharper is not."""
    from scanner.card_corners import _corners_of

    t = np.radians(90.0 - off)
    arm = 120.0
    p = np.array([100.0, 300.0])
    poly = np.array([p, p + arm * np.array([1.0, 0.0]),
                     p + arm * np.array([1.0, 0.0]) + arm * np.array([np.cos(t), -np.sin(t)]),
                     p + arm * np.array([np.cos(t), -np.sin(t)])], np.int32).reshape(-1, 1, 2)
    corners = _corners_of(poly, 60.0)
    seen = any(np.abs(c.point - p).max() < 2 for c in corners)
    assert seen == found


def test_an_unsure_corner_is_read_again_as_a_card_a_little_smaller_or_larger():
    """A corner found at the photo's median card size, read unsure, is read again as the corner
    of a card 0.85 and 1.15 times that size; only a look at SECOND_LOOK_SURE answers, and the
    answer keeps that look's outline. Corners read sure, or unsure with no candidate near,
    are not asked again."""
    from scanner.card_corners import CORNER_LOOK_SCALES, _second_look_at_corners
    from scanner.detections import CardReading

    card = np.float32([[100, 100], [160, 100], [160, 184], [100, 184]])
    hyps = [(card, 0), (card + 200, 0), (card + 400, 0)]

    class Reader:
        asked: list = []

        def read_corners(self, image, hypotheses):
            self.asked += hypotheses
            # a card 1.15 times the size is named surely; 0.85 times, nearly
            out = []
            for q, _ in hypotheses:
                f = np.linalg.norm(q[1] - q[0]) / 60
                conf = 0.9995 if f > 1.1 else 0.995
                out.append(CardReading(corners=q, card="9D", confidence=conf))
            return out

    reads = [CardReading(corners=card, confidence=0.6, candidates=[("9D", 0.6)]),
             CardReading(corners=card + 200, card="KS", confidence=0.999),
             CardReading(corners=card + 400, confidence=0.3, candidates=[("2C", 0.3)])]
    reader = Reader()
    _second_look_at_corners(np.zeros((600, 600, 3), np.uint8), hyps, reads, reader)
    assert len(reader.asked) == len(CORNER_LOOK_SCALES)  # the first corner's looks only
    assert np.allclose(reader.asked[0][0][0], card[0])  # about the corner seen
    assert reads[0].card == "9D" and np.linalg.norm(reads[0].corners[1] - card[0]) > 65
    assert [r.card for r in reads[1:]] == ["KS", None]


def test_unread_outlines_the_presence_check_rejects_are_not_reported():
    """`cards` reports an outline it cannot read as `card: null`; where the card-presence check
    says it is no card (a pip, a patch of table) it is left out. A card the reader named stays
    whatever the check says."""
    from scanner.card_corners import cards_in_photo
    from scanner.detections import CardReading

    img, cards = _white_table_photo()

    class Reader:
        def read_quads(self, image, quads, **kw):
            return [CardReading(corners=np.asarray(q, np.float32),
                                card="7C" if i == 0 else None,
                                confidence=0.9999 if i == 0 else 0.3)
                    for i, q in enumerate(quads)]

        def read_corners(self, image, hypotheses):
            return []

    class NoCards:
        def is_card(self, image, quads, keep_maps=False):
            return np.zeros(len(quads), bool)

    everything = cards_in_photo(img, Reader(), presence=None)
    assert len(everything) == 3 and sum(r.card is None for r in everything) == 2
    kept = cards_in_photo(img, Reader(), presence=NoCards())
    assert [r.card for r in kept] == ["7C"]


class _PilesMisfound:
    """The committed reader, except that a pile's card read through any outline but its
    zone's own comes out unsure (the rim search settled half off the card, val-s23); the
    zone's own outline reads at `zone_confidence` where given."""

    def __init__(self, reader: CardReader, zone_quads: list[np.ndarray],
                 zone_confidence: float | None = None):
        self.reader, self.zone_quads, self.zone_confidence = reader, zone_quads, zone_confidence
        self.face_session = reader.face_session

    def read_quads(self, image, quads, **kw):
        out = self.reader.read_quads(image, quads, **kw)
        for q, r in zip(quads, out, strict=True):
            zone = any(np.allclose(q, z) for z in self.zone_quads)
            near = any(np.linalg.norm(np.mean(q, 0) - np.mean(z, 0)) < 40 for z in self.zone_quads)
            if near and not zone:
                r.card, r.confidence = None, 0.6
            elif zone and self.zone_confidence is not None:
                r.confidence = self.zone_confidence
        return out


@pytest.mark.parametrize("sure", [True, False])
def test_an_unsure_pile_card_is_read_again_through_its_zone(reader, sure):
    from scanner.pipeline import PILE_SECOND_LOOK_SURE

    img, truth = load("still-1")
    scanner = TableScanner(truth_profile(truth), reader)
    zones = list(scanner._pile_quads.values())
    scanner.reader = _PilesMisfound(reader, zones, None if sure else PILE_SECOND_LOOK_SURE - 1e-4)
    reading = scanner.scan(img)
    for side in ("white", "black"):
        got = reading.initiative[side]
        if sure:  # read right, through the zone's outline, its orientation the board's
            assert got.card == truth["initiative"][side]["card"]
            assert got.confidence >= PILE_SECOND_LOOK_SURE and got.orientation == "portrait"
            assert any(np.allclose(got.corners, z) for z in zones)
        else:  # a second look under the bar says nothing: the first stays, unsure
            assert got.card is None


def test_the_bench_reads_stills_of_the_designs_named_and_refuses_unknown_ones(capsys):
    """`cards bench --designs`: the reader measured on decks no model saw (the spare ones)."""
    from scanner.cards_bench import bench_stills
    from webui.cli import main

    said: list[str] = []
    out = bench_stills(1, 5, log=said.append, size=(960, 540), designs=["kde-standard"])
    assert "kde-standard/kde-standard" in said[0]
    assert out["visible_cards"] > 10 and 0.5 < out["accuracy"] <= 1.0
    assert main(["cards", "bench", "--designs", "no-such-deck", "--setups", "0",
                 "--no-real"]) == 2
    assert "unknown card design" in capsys.readouterr().err


def test_sides_refitted_where_the_card_runs_out_of_the_image():
    """Each side looks only at its own band of edge pixels, clipped to the image: a card
    half out of the frame has its two sides inside refitted and the others kept."""
    from scanner.card_finder import snap_sides_to

    edges = np.zeros((200, 300), np.uint8)
    card = np.float32([[150, 40], [330, 40], [330, 170], [150, 170]])  # right side outside
    cv2.polylines(edges, [card.astype(np.int32)], True, 255, 1)
    guess = card + np.float32([[2, 3], [0, 3], [0, -2], [2, -2]])
    out = snap_sides_to(edges, guess[None])[0]
    assert np.abs(out[:, 1] - card[:, 1]).max() < 1.0  # top and bottom found again
    assert abs(out[0, 0] - 150) < 1.0 and abs(out[3, 0] - 150) < 1.0  # the left side too
    assert np.abs(out[1:3] - guess[1:3]).max() < 4  # the right side, unseen, stays near


def test_right_angled_corners_of_a_white_outline():
    """`_corners_of` keeps the convex corners near a right angle with both arms long
    enough: a rectangle's four, none of a triangle's sharp ones, a notch's inward corner
    not at all."""
    from scanner.card_corners import _corners_of

    rect = np.array([[[10, 10]], [[110, 10]], [[110, 150]], [[10, 150]]], np.int32)
    found = _corners_of(rect, short=100.0)
    assert sorted(map(tuple, (c.point for c in found))) == [(10, 10), (10, 150), (110, 10),
                                                            (110, 150)]
    for c in found:
        assert abs(c.arm_a @ c.arm_b) < 1e-9
        assert {round(c.length_a), round(c.length_b)} == {100, 140}
    assert _corners_of(np.array([[[0, 0]], [[200, 10]], [[0, 20]]], np.int32), 100.0) == []
    notch = np.array([[[0, 0]], [[100, 0]], [[100, 140]], [[60, 140]], [[60, 100]],
                      [[40, 100]], [[40, 140]], [[0, 140]]], np.int32)  # a bite out of one side
    points = {tuple(c.point) for c in _corners_of(notch, short=40.0)}
    assert (60, 100) not in points and (40, 100) not in points  # turned the other way
    assert {(0, 0), (100, 0)} <= points


def test_a_photo_reading_one_card_twice_keeps_the_surer():
    """A photo shows one deck: two outlines read as the same card leave the surer answering
    and the other unread, its candidates kept; jokers (two in a deck) are left alone."""
    from scanner.card_corners import _each_card_once
    from scanner.detections import CardReading

    quad = np.zeros((4, 2), np.float32)
    readings = [CardReading(quad, "QC", confidence=0.9989, candidates=[("QC", 0.99)]),
                CardReading(quad, "QC", confidence=0.9999), CardReading(quad, "8S", confidence=1.0),
                CardReading(quad, "JK", confidence=0.999), CardReading(quad, "JK", confidence=1.0),
                CardReading(quad, None, confidence=0.4)]
    kept = _each_card_once(readings)
    assert [r.card for r in kept] == [None, "QC", "8S", "JK", "JK", None]
    assert kept[0].candidates == [("QC", 0.99)] and kept[0].corners is quad


@pytest.mark.skipif(not (REAL_CARDS / "images").is_dir(),
                    reason="real-cards-dev not beside the repository")
def test_a_photo_names_each_card_once():
    """IMG_20220316_140330 (the half of real-cards-dev choices are made on): an 8S and a 6S on
    a patterned cloth both read QC, sure. The surer keeps the answer, the other is reported
    unread where before it was a second, wrong, QC."""
    from scanner.card_corners import cards_in_photo

    img = cv2.imread(str(next((REAL_CARDS / "images").glob("IMG_20220316_140330_jpg.rf.72*"))))
    readings = cards_in_photo(img, CardReader())
    named = [r.card for r in readings if r.card not in (None, "JK")]
    assert len(named) == len(set(named)) and "QC" in named
    # the card that gave way is still reported, unread, with the reader's own confidence
    assert any(r.card is None and r.confidence > 0.99 for r in readings)


def test_a_read_cards_own_corner_is_not_taken_for_another_card():
    """A corner of a card already read, taken with its arms along that card's sides (the
    other hypothesis of its corner, a card of the other turn) is that card again; a card
    abutting it, whose corner lies there too but whose arms run elsewhere, is another card."""
    from scanner.card_corners import _a_read_cards_corner

    read = np.array([[151, 100], [280, 116], [270, 350], [147, 339]], np.float64)  # a 2D
    # IMG_20220316_162806: its top-right corner as a landscape card's, reaching over the table
    phantom = (np.array([[277, 122], [271, 248], [49, 215], [55, 89]], np.float64), 0)
    assert _a_read_cards_corner(phantom, [read], near=10.0)
    assert not _a_read_cards_corner(phantom, [read], near=5.0)  # farther than a corner's slack
    # IMG_20220316_171640: an 8C's corner at a 7C's, one arm along the 7C's side, one away
    seven = np.array([[327, 233], [558, 278], [623, 478], [327, 430]], np.float64)
    eight = (np.array([[324, 228], [297, 420], [51, 352], [78, 160]], np.float64), 0)
    assert not _a_read_cards_corner(eight, [seven], near=10.0)


@pytest.mark.skipif(not (REAL_CARDS / "images").is_dir(),
                    reason="real-cards-dev not beside the repository")
def test_a_corner_of_a_card_read_whole_is_not_read_as_a_second_card():
    """IMG_20220316_162806 (the half of real-cards-dev choices are made on): five diamonds on
    a white table, each read whole; the 2D's top-right corner, with its long arm along the
    2D's top edge and on over the table, was read as the joker."""
    from scanner.card_corners import cards_in_photo

    img = cv2.imread(str(next((REAL_CARDS / "images").glob("IMG_20220316_162806_jpg.rf.0f*"))))
    named = sorted(r.card for r in cards_in_photo(img, CardReader()) if r.card)
    assert named == ["2D", "3D", "4D", "AD"]
