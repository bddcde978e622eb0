"""The token glyph reader (`models/pieces/token_glyph.onnx`): far tokens named by a small CNN
over the token reader's top views, and how its looks join the correlation's."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from models.pieces.token_glyph import KEYS, META_FILE, MODEL_FILE, NONE, pick_thresholds
from scanner.piece_crops import as_board_camera
from scanner.token_reader import GlyphLook, GlyphReader, TokenMatch, TokenReader

FIX = Path(__file__).parent / "fixtures" / "pieces"


def _match(piece: str, score: float, margin: float, glyph: GlyphLook | None) -> TokenMatch:
    side, kind = piece.split("-")
    return TokenMatch(side, kind, score, margin, {tuple(k.split("-")): 1 / 12 for k in KEYS},
                      glyph=glyph)


def _look(piece: str, p: float, p_none: float = 0.0) -> GlyphLook:
    return GlyphLook(piece, p, p_none, sure_at=0.9, certain_at=0.95)


def test_the_model_is_small_and_has_its_card():
    assert MODEL_FILE.stat().st_size < 2_000_000
    meta = json.loads(META_FILE.read_text())
    assert meta["classes"] == KEYS + ["none"] and meta["view"] == 52
    th = meta["thresholds"]
    assert 0.5 <= th["sure"] <= th["certain"] < 1.0
    assert meta["turns"][0] == 0 and len(meta["turns"]) == 3
    assert th["val_sure_wrong"] == 0 and th["val_tokens"] > 3000


def test_the_fixture_tokens_are_named_by_the_glyph_reader():
    img = cv2.imread(str(FIX / "tokens.jpg"))
    truth = json.loads((FIX / "tokens.json").read_text())
    cam = as_board_camera(truth["camera"], img.shape)
    reader = TokenReader()
    assert reader.glyphs is not None  # the committed reader is installed
    got = reader.read(img, cam, list(truth["labels"]))
    assert len(got) >= len(truth["labels"]) - 1
    for cell, m in got.items():
        assert m.glyph is not None and m.glyph.p_none < 0.5
        assert m.present and m.sure and m.piece == truth["labels"][cell], (cell, m.piece, m.glyph)
    # a bare card's top view is no token to it
    bare = [c for c in ("d3", "b3", "f3") if c not in truth["labels"]]
    views = reader.top_views(img, cam, bare)
    for p in reader.glyphs.probs(list(views.values())):
        assert p[NONE] > 0.5


def test_the_glyph_readers_look_decides_side_kind_and_sureness():
    # the glyph reader sure: its token, whatever the correlation found
    m = _match("white-knight", 0.85, 0.001, _look("white-pawn", 0.96))
    assert m.present and m.sure and m.certain
    # sure of its token, not certain: present (the classifier's sure bare card still stands
    # against it in the piece stage), but not certain
    m = _match("white-knight", 0.85, 0.001, _look("white-pawn", 0.92))
    assert m.present and m.sure and not m.certain
    glyph = GlyphReader.default()
    probs = np.full(13, 0.001)
    probs[KEYS.index("white-pawn")] = 0.95
    looked = glyph.looked(m, probs / probs.sum())
    assert looked.piece == "white-pawn" and looked.ncc_piece == "white-knight"
    assert looked.probs[("white", "pawn")] == pytest.approx(max(looked.probs.values()))
    # the correlation sure of another glyph than the reader's, the reader unsure: not sure
    assert not TokenMatch("black", "rook", 0.95, 0.05, {}, glyph=_look("black-rook", 0.6),
                          ncc_piece="black-king").sure
    # ... of the same glyph: sure
    assert TokenMatch("black", "rook", 0.95, 0.05, {}, glyph=_look("black-rook", 0.6),
                      ncc_piece="black-rook").sure
    # present by the reader alone where the correlation is low, only where it is sure
    assert _match("white-queen", 0.7, 0.0, _look("white-queen", 0.96)).present
    assert not _match("white-queen", 0.7, 0.0, _look("white-queen", 0.89, 0.01)).present
    assert _match("white-queen", 0.91, 0.0, _look("white-queen", 0.3, 0.6)).present
    # certain by either
    assert _match("white-queen", 0.7, 0.0, _look("white-queen", 0.96)).certain
    assert not _match("white-queen", 0.7, 0.0, _look("white-queen", 0.94)).certain
    # without the reader, the correlation's rules as before
    assert _match("white-queen", 0.91, 0.03, None).sure
    assert not _match("white-queen", 0.91, 0.01, None).sure


def test_the_correlation_alone_when_asked():
    img = cv2.imread(str(FIX / "tokens.jpg"))
    truth = json.loads((FIX / "tokens.json").read_text())
    cam = as_board_camera(truth["camera"], img.shape)
    got = TokenReader(glyphs=None).read(img, cam, list(truth["labels"]))
    assert got and all(m.glyph is None for m in got.values())


def test_thresholds_are_picked_where_no_validation_token_is_named_wrong():
    rng = np.random.default_rng(0)
    n = 400
    Y = np.concatenate([rng.integers(0, NONE, n), np.full(100, NONE)])
    P = np.full((len(Y), NONE + 1), 0.001)
    p = rng.uniform(0.5, 1.0, len(Y))
    P[np.arange(len(Y)), Y] = p
    wrong = np.where(Y < NONE)[0][:3]  # three tokens named as the next kind, at 0.8, 0.7, 0.6
    for i, q in zip(wrong, (0.8, 0.7, 0.6), strict=True):
        P[i] = 0.001
        P[i, (Y[i] + 1) % NONE] = q
    P[len(Y) - 1, 0] = 0.93  # one bare card the reader would call a token at 0.93
    th = pick_thresholds(P, Y)
    assert th["sure"] == pytest.approx(0.81)
    assert th["certain"] == pytest.approx(0.94)
    assert th["val_sure_wrong"] == 0 and th["val_tokens"] == n


def test_the_recipe_trains_and_exports_a_reader_the_scanner_loads(tmp_path):
    pytest.importorskip("torch", reason="the training extra: pip install torch==2.13.0")
    pytest.importorskip("onnx", reason="the training extra: pip install onnx")
    from models.pieces.token_glyph import TURNS, export, predict, train_net

    rng = np.random.default_rng(1)
    V = rng.integers(0, 255, (512, 52, 52)).astype(np.uint8)
    Y = rng.integers(0, NONE + 1, 512)
    net = train_net(V, Y, epochs=1, threads=1, log=lambda m: None)
    P = predict(net, V[:8])
    export(net, tmp_path, {"thresholds": pick_thresholds(predict(net, V), Y),
                           "turns": list(TURNS)})
    reader = GlyphReader(tmp_path / MODEL_FILE.name)
    got = reader.probs(list(V[:8].astype(np.float32)))
    assert got.shape == (8, NONE + 1)
    np.testing.assert_allclose(got.sum(1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(got, P, atol=1e-4)  # the ONNX reads as the trained net
    # each view read at the card's turns and the looks pooled: not the upright look alone
    upright = predict(net, V[:8], turns=(0.0,))
    assert not np.allclose(got, upright, atol=1e-4)
