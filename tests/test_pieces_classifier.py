"""The shipped piece model on fixture stills (held-out piece set and card designs, truth from
the renderer): right pieces, knocked-over pieces and hands reported unsure, never a guess."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanner.detections import PieceReading
from scanner.piece_classifier import CLASSES, DEFAULT_MODEL, PieceClassifier, to_input
from scanner.piece_crops import as_board_camera

FIX = Path(__file__).parent / "fixtures" / "pieces"


def load(name: str):
    img = cv2.imread(str(FIX / f"{name}.jpg"))
    assert img is not None
    return img, json.loads((FIX / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def clf() -> PieceClassifier:
    return PieceClassifier()


def errors(readings: dict, labels: dict) -> dict[str, list]:
    """The mistakes a scanner must never make, per kind: a piece read where there is none or
    none where there is one (occupancy), the wrong side, a guess where it should be unsure."""
    out: dict[str, list] = {"occupancy": [], "side": [], "guess": []}
    for cell, lab in labels.items():
        r = readings[cell]
        if lab == "any":
            continue
        if lab == "unsure":  # knocked over, under a hand: no piece, and never "empty"
            if r.piece is not None or r.occupied is False:
                out["guess"].append((cell, r.piece, r.occupied))
        elif r.occupied is not None and r.occupied != (lab != "empty"):
            out["occupancy"].append((cell, lab, r.piece, r.occupied))
        elif lab != "empty" and r.side is not None and r.side != lab.split("-")[0]:
            out["side"].append((cell, lab, r.piece, r.side))
    return out


def kinds_right(readings: dict, labels: dict) -> tuple[int, int]:
    pieces = [c for c, lab in labels.items() if lab not in ("any", "unsure", "empty")]
    return sum(readings[c].piece == labels[c] for c in pieces), len(pieces)


def test_model_is_small_and_has_its_outputs(clf):
    assert DEFAULT_MODEL.stat().st_size < 8e6
    assert clf.prototypes.shape == (len(CLASSES), 64)
    desc = clf.embed(np.zeros((2, 96, 64, 3), np.uint8))
    # the embedding first, then the pooled features the set head adapts on
    assert clf.has_features and desc.shape == (2, clf.descriptor_dim)
    assert clf.descriptor_dim == 64 + 320
    np.testing.assert_allclose(np.linalg.norm(desc[:, :64], axis=1), 1.0, rtol=1e-4)


# Floors for pieces read right (kind and side) with the shipped model, before adaptation. The
# held-out turned set is far from the training sets (see MODEL_CARD.md: the 99 % bar is missed);
# these catch a regression, the bench measures.
KIND_FLOOR = {"setup-lathe": 2, "border-lathe": 2, "topdown-lathe": 2, "tokens": 10}


@pytest.mark.parametrize("name", list(KIND_FLOOR))
def test_fixture_stills(clf, name):
    img, truth = load(name)
    readings = clf.read(img, truth["camera"], list(truth["labels"]))
    assert all(isinstance(r, PieceReading) for r in readings.values())
    assert errors(readings, truth["labels"]) == {"occupancy": [], "side": [], "guess": []}
    right, n = kinds_right(readings, truth["labels"])
    assert right >= KIND_FLOOR[name], {c: r.piece for c, r in readings.items()}


def test_pieces_at_cell_borders(clf):
    """Pieces pushed 1.5-2.5 cm off their cell's centre are still seen, on the right cell."""
    img, truth = load("border-lathe")
    moved = list(truth["offsets_cm"])
    readings = clf.read(img, truth["camera"], moved)
    assert all(readings[c].piece != "empty" for c in moved)
    assert all(readings[c].occupied for c in moved)  # occupancy is sure even if a kind is not
    assert errors(readings, {c: truth["labels"][c] for c in moved})["side"] == []
    assert sum(readings[c].piece is not None for c in moved) >= len(moved) // 2


def test_knocked_over_pieces_are_unsure(clf):
    img, truth = load("border-lathe")
    fallen = [c for c, lab in truth["labels"].items() if lab == "unsure"]
    assert fallen
    readings = clf.read(img, truth["camera"], fallen)
    assert all(readings[c].piece is None for c in fallen), readings
    assert not any(readings[c].occupied is False for c in fallen), readings


def test_a_unit_cut_off_by_the_frame_is_unsure(clf):
    """A cell whose centre lies out of the frame shows part of its unit at best (held-out
    stills: such units read right 8 times in 44, wrongly 18): it reads unsure; a cell in view
    beside it reads as in the whole frame."""
    from scanner.piece_crops import cell_crops

    img, truth = load("setup-lathe")  # a5's centre lies at x 406, a1's at 485
    cam = dict(truth["camera"])
    K = np.array(cam["K"], float)
    K[0, 2] -= 420
    cam["K"] = K.tolist()
    cut = np.ascontiguousarray(img[:, 420:])
    got = clf.read(cut, cam, ["a5", "a1"])
    assert got["a5"].piece is None and got["a5"].occupied is None
    # the classifier alone would still have answered something for the cut-off crop
    alone = clf.classify_crops(cell_crops(cut, as_board_camera(cam, cut.shape), ["a5"]))[0]
    assert alone.piece is not None or alone.occupied is not None
    whole = clf.read(img, truth["camera"], ["a1"])["a1"]
    assert (got["a1"].piece, got["a1"].occupied) == (whole.piece, whole.occupied)
    assert got["a1"].confidence == pytest.approx(whole.confidence, abs=0.01)


def test_decisions_are_read_apart():
    """Probability split between similar kinds leaves occupancy and side sure, the kind
    unsure; the "unsure" class or a close empty/piece call makes occupancy unsure."""
    from scanner.piece_classifier import decide

    def probs(**kw):
        p = np.full(len(CLASSES), 1e-4)
        for k, v in kw.items():
            p[CLASSES.index(k.replace("_", "-"))] = v
        return p / p.sum()

    rows = np.array([probs(white_bishop=0.45, white_queen=0.45, empty=0.1),
                     probs(white_rook=0.95),
                     probs(empty=0.9, black_pawn=0.1),
                     probs(unsure=0.5, white_pawn=0.3, empty=0.2),
                     probs(empty=0.5, black_pawn=0.5),
                     probs(white_king=0.35, black_king=0.35, empty=0.3)])
    d = decide(rows, 0.6)
    assert d["occupied"].tolist() == [1, 1, 0, -1, -1, 1]
    assert d["side"].tolist() == [0, 0, -1, -1, -1, -1]
    assert d["kind"].tolist() == [-1, 1, -1, -1, -1, 5]
    assert d["piece"].tolist() == [-1, CLASSES.index("white-rook"), 0, -1, -1, -1]
    r = PieceReading(None, 0.9, occupied=True, seen_side="white")
    assert (r.side, r.kind, r.to_json()["occupied"]) == ("white", None, True)
    assert PieceReading("black-king", 0.9).side == "black"
    assert PieceReading("empty", 0.9).occupied is False


def test_hands_over_the_board(clf):
    img, truth = load("hands-lathe")
    readings = clf.read(img, truth["camera"], list(truth["labels"]))
    assert errors(readings, truth["labels"]) == {"occupancy": [], "side": [], "guess": []}
    covered = [c for c, lab in truth["labels"].items() if lab == "unsure"]
    assert covered and all(readings[c].piece is None for c in covered)


def test_a_crop_and_its_mirror_image_read_alike(clf):
    """Each crop is read with its mirror image (a piece looks the same mirrored): the two give
    one descriptor; without it they differ, and the averaged embedding stays unit length."""
    from scanner.piece_crops import cell_crops

    img, truth = load("border-lathe")
    crops = cell_crops(img, as_board_camera(truth["camera"], img.shape), list(truth["labels"]))
    assert clf.mirror
    a, b = clf.embed(crops), clf.embed(crops[:, :, ::-1])
    np.testing.assert_allclose(a, b, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(a[:, :clf.embed_dim], axis=1), 1.0, atol=1e-5)
    plain = PieceClassifier(mirror=False)
    assert np.abs(plain.embed(crops) - plain.embed(crops[:, :, ::-1])).max() > 1e-3


def test_homography_instead_of_camera(clf):
    """No calibration profile yet: the board homography alone gives the same readings."""
    img, truth = load("border-lathe")  # rendered without lens distortion
    cam = as_board_camera(truth["camera"], img.shape)
    cells = list(truth["labels"])
    a = clf.read(img, truth["camera"], cells)
    b = clf.read(img, cam.homography(), cells)
    assert sum(a[c].piece == b[c].piece for c in cells) >= len(cells) - 1
    assert set(clf.last_timings_ms) == {"piece_crops", "piece_model", "tokens", "heights"}


def test_threshold_turns_low_confidence_into_unsure(clf):
    img, truth = load("setup-lathe")
    strict = PieceClassifier(threshold=1.0)
    readings = strict.read(img, truth["camera"], ["a1", "b3"])
    assert all(r.piece is None for r in readings.values())


def test_bad_input(clf, tmp_path):
    with pytest.raises(ValueError):
        clf.read(None, np.eye(3), ["a1"])
    with pytest.raises(ValueError):
        to_input(np.zeros((2, 10, 10, 3), np.uint8))
    from scanner.piece_classifier import ModelError

    with pytest.raises(ModelError):
        PieceClassifier(tmp_path / "missing.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(ModelError):
        PieceClassifier(bad)
    img, truth = load("setup-lathe")
    with pytest.raises(ValueError):
        clf.read(img, truth["camera"], ["z9"])
