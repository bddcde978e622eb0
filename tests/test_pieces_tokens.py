"""The token reader: paper tokens read by their print from the board's top view, at many camera
poses; never a token where a 3D piece or a bare card stands; how the piece stage takes it."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanner.piece_classifier import (
    BARE_PRINT_UNSURE,
    CLASSES,
    UNSURE_CLASS,
    PieceClassifier,
)
from scanner.piece_crops import as_board_camera
from scanner.token_reader import KINDS, SIDES, GlyphLook, TokenMatch, TokenReader

FIX = Path(__file__).parent / "fixtures" / "pieces"


@pytest.fixture(scope="module")
def reader() -> TokenReader:
    return TokenReader()


def _match(best: tuple[str, str], score: float, margin: float, p_best: float) -> TokenMatch:
    rest = (1 - p_best) / 11
    probs = {(s, k): rest for s in SIDES for k in KINDS}
    probs[best] = p_best
    return TokenMatch(best[0], best[1], score, margin, probs)


def test_the_fixture_still_of_tokens_is_read_by_its_print(reader):
    img = cv2.imread(str(FIX / "tokens.jpg"))
    truth = json.loads((FIX / "tokens.json").read_text())
    cam = as_board_camera(truth["camera"], img.shape)
    got = reader.read(img, cam, list(truth["labels"]))
    assert len(got) >= len(truth["labels"]) - 1  # a cell whose centre is out of frame is left
    for cell, m in got.items():
        assert m.sure and m.piece == truth["labels"][cell], (cell, m.piece, m.score, m.margin)


@pytest.mark.parametrize("name", ["setup-lathe", "topdown-lathe", "border-lathe", "hands-lathe"])
def test_3d_pieces_and_bare_cards_are_no_tokens(reader, name):
    img = cv2.imread(str(FIX / f"{name}.jpg"))
    truth = json.loads((FIX / f"{name}.json").read_text())
    cam = as_board_camera(truth["camera"], img.shape)
    got = reader.read(img, cam, list(truth["labels"]))
    assert got and not any(m.present for m in got.values())


@pytest.mark.parametrize("seed", [3, 11, 27])
def test_tokens_at_other_camera_poses(reader, seed):
    """Rendered tables of tokens (training split: the print is the same everywhere) at the
    renderer's random poses: the reader names no token wrongly, names most, and finds none on
    the bare cards."""
    from models.pieces.evaluate import board_frames
    from scanner.piece_classifier import CLASSES

    named = wrong = tokens = on_bare = 0
    for image, cam, labels, _ in board_frames(seed, "train", ["paper-token"], positions=2):
        for cell, m in reader.read(image, cam, list(labels)).items():
            truth = CLASSES[labels[cell]]
            if truth == "empty":
                on_bare += m.sure and m.certain
            elif truth != "unsure":
                tokens += 1
                named += m.sure and m.piece == truth
                wrong += m.sure and m.piece != truth
    assert tokens >= 8 and wrong == 0 and named >= 0.7 * tokens and on_bare == 0


@pytest.mark.parametrize("turn", [-40.0, -15.0, 25.0, 40.0])
def test_tokens_laid_turned_are_read(reader, turn):
    """A player lays a token facing them, not square to the board: the fixture's tokens, each
    turned in the top view (as a token turned on its card looks from above), are still named,
    and never wrongly."""
    from scanner.token_reader import PATCH

    img = cv2.imread(str(FIX / "tokens.jpg"))
    truth = json.loads((FIX / "tokens.json").read_text())
    cam = as_board_camera(truth["camera"], img.shape)
    from scanner.piece_crops import cell_centre

    named = 0
    cells = [c for c in truth["labels"] if c != "a1"]  # a1's centre is out of frame
    for cell in cells:
        view = reader.top_view(img, cam, *cell_centre(cell))
        M = cv2.getRotationMatrix2D((PATCH / 2, PATCH / 2), turn, 1.0)
        m = reader.match(cv2.warpAffine(view, M, (PATCH, PATCH), flags=cv2.INTER_LINEAR,
                                        borderMode=cv2.BORDER_REPLICATE))
        assert not (m.sure and m.piece != truth["labels"][cell]), (cell, m.piece)
        named += m.sure
        facing = 0.0 if m.side == "white" else 180.0
        assert abs((m.angle - facing - turn + 180) % 360 - 180) <= 15
    assert named >= len(cells) - 2


def test_tokens_printed_small_are_read_once_the_print_scale_is_fitted():
    """A printer that shrinks the sheet to fit its page: the fixture's tokens, their top views
    shrunk to 90 %, are rarely named at the sheet's size; fitted on the set-up units' views,
    the reader takes a smaller print and names them, and never wrongly."""
    from scanner.piece_crops import cell_centre
    from scanner.token_reader import PATCH

    img = cv2.imread(str(FIX / "tokens.jpg"))
    truth = json.loads((FIX / "tokens.json").read_text())
    cam = as_board_camera(truth["camera"], img.shape)
    cells = [c for c in truth["labels"] if c != "a1"]  # a1's centre is out of frame
    M = cv2.getRotationMatrix2D((PATCH / 2, PATCH / 2), 0, 0.9)
    views = {c: cv2.warpAffine(TokenReader.top_view(TokenReader(), img, cam, *cell_centre(c)),
                               M, (PATCH, PATCH), flags=cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE) for c in cells}
    reader = TokenReader()

    def named() -> int:
        found = {c: reader.match(v) for c, v in views.items()}
        assert not any(m.sure and m.piece != truth["labels"][c] for c, m in found.items())
        return sum(m.sure for m in found.values())

    at_sheet_size = named()
    setup = [views[c] for c in cells if c[1] in "15"]
    assert reader.fit_print_scale(setup) < 0.95
    assert named() >= len(cells) - 2 > at_sheet_size
    # a set of pieces is no print: the scale stays
    lathe = cv2.imread(str(FIX / "setup-lathe.jpg"))
    lt = json.loads((FIX / "setup-lathe.json").read_text())
    lcam = as_board_camera(lt["camera"], lathe.shape)
    other = TokenReader()
    assert other.fit_print_scale([other.top_view(lathe, lcam, *cell_centre(c))
                                  for c, u in lt["labels"].items() if u not in
                                  ("empty", "unsure", "any")]) == 1.0


def test_odd_images_give_no_token_and_no_error(reader):
    truth = json.loads((FIX / "tokens.json").read_text())
    for img in (np.zeros((720, 1280, 3), np.uint8), np.full((720, 1280, 3), 255, np.uint8),
                np.random.default_rng(0).integers(0, 256, (720, 1280, 3), dtype=np.uint8)):
        cam = as_board_camera(truth["camera"], img.shape)
        got = reader.read(img, cam, list(truth["labels"]))
        assert not any(m.present for m in got.values())


def _probs(n: int, p_empty: float, p_unsure: float = 0.0) -> np.ndarray:
    """The classifier's 14 probabilities for `n` cells: the rest spread over the 12 units."""
    p = np.full((n, len(CLASSES)), (1 - p_empty - p_unsure) / 12)
    p[:, 0], p[:, UNSURE_CLASS] = p_empty, p_unsure
    return p


def test_a_token_match_as_the_stage_reads_it():
    clf = PieceClassifier()
    sure = clf.token_reading(_match(("black", "rook"), 0.95, 0.05, 0.97))
    assert sure.piece == "black-rook" and sure.confidence == pytest.approx(0.97)
    assert sure.kinds[0][0] == "rook"
    # present, but the glyphs tie: occupied, the side they agree on, no kind
    tie = _match(("white", "pawn"), 0.93, 0.0, 0.49)
    tie.probs[("white", "bishop")] = 0.49
    r = clf.token_reading(tie)
    assert r.piece is None and r.occupied is True and r.seen_side == "white"
    assert {k for k, _ in r.kinds[:2]} == {"pawn", "bishop"}


def test_the_stage_takes_the_print_over_the_classifier(monkeypatch):
    clf = PieceClassifier()
    img = cv2.imread(str(FIX / "tokens.jpg"))
    truth = json.loads((FIX / "tokens.json").read_text())
    cells = ["c1", "e1", "g1"]
    # a classifier that reads every cell as a bare card, sure
    monkeypatch.setattr(clf, "probabilities", lambda desc: _probs(len(desc), 0.99))
    from scanner.token_reader import CERTAIN_SCORE, MIN_MARGIN, MIN_SCORE

    between = (MIN_SCORE + CERTAIN_SCORE) / 2
    matches = {"c1": _match(("white", "queen"), CERTAIN_SCORE + 0.01, 0.1, 0.99),  # taken
               "e1": _match(("white", "knight"), between, MIN_MARGIN + 0.03, 0.99),  # not:
               # sure, but not certain against a bare card
               "g1": _match(("white", "pawn"), 0.5, 0.01, 0.4)}  # no token there
    monkeypatch.setattr(clf.tokens, "read", lambda image, cam, asked: {
        c: matches[c] for c in asked})
    got = clf.read(img, truth["camera"], cells)
    assert got["c1"].piece == "white-queen"
    assert got["e1"].piece == "empty" and got["g1"].piece == "empty"
    assert "tokens" in clf.last_timings_ms
    # a bare card read without conviction: a token present is taken
    from scanner.token_reader import DOUBTED_EMPTY

    monkeypatch.setattr(clf, "probabilities",
                        lambda desc: _probs(len(desc), DOUBTED_EMPTY - 0.1))
    got = clf.read(img, truth["camera"], cells)
    assert got["e1"].piece == "white-knight" and got["g1"].piece == "empty"
    # the classifier unsure: a token present is taken, even where its glyph is unsure
    monkeypatch.setattr(clf, "probabilities", lambda desc: _probs(len(desc), 0.5, 0.3))
    matches["e1"] = _match(("white", "knight"), between, 0.0, 0.5)
    got = clf.read(img, truth["camera"], cells)
    assert got["e1"].occupied is True and got["e1"].seen_side == "white"
    assert got["g1"].piece is None and got["g1"].occupied is None
    assert PieceClassifier(tokens=False).tokens is None


def test_the_set_up_of_tokens_is_not_adapted_to():
    from scanner.piece_adapt import printed_units, token_matches

    def tokens_in_view(clf, image, camera, units):
        return printed_units(token_matches(clf, image, camera, list(units)), units)

    clf = PieceClassifier()
    img = cv2.imread(str(FIX / "tokens.jpg"))
    truth = json.loads((FIX / "tokens.json").read_text())
    units = {c: u for c, u in truth["labels"].items() if c[1] in "15"}
    assert tokens_in_view(clf, img, truth["camera"], units) >= len(units) - 1
    lathe = cv2.imread(str(FIX / "setup-lathe.jpg"))
    lt = json.loads((FIX / "setup-lathe.json").read_text())
    assert tokens_in_view(clf, lathe, lt["camera"], {
        c: u for c, u in lt["labels"].items() if u not in ("empty", "unsure", "any")}) == 0


def test_a_doubted_cell_whose_print_shows_no_token_reads_bare_in_a_game_of_tokens(monkeypatch):
    """Held-out card designs' pips and court pictures leave bare cells doubted by the
    classifier, or taken for units; in a game whose set-up showed printed tokens, every unit
    is a token, and the glyph reader's sure "no token" reads them bare, unless the classifier
    leans to a hand (or a unit knocked over)."""
    clf = PieceClassifier()
    img = cv2.imread(str(FIX / "tokens.jpg"))
    truth = json.loads((FIX / "tokens.json").read_text())

    def none(p_none: float) -> TokenMatch:
        m = _match(("white", "pawn"), 0.5, 0.0, 0.2)
        m.glyph = GlyphLook("white-pawn", 0.02, p_none, sure_at=0.85, certain_at=0.9)
        return m

    matches = {"c3": none(0.85 + 0.05), "d3": none(0.85 - 0.05),  # about its sure_at
               "e3": _match(("white", "pawn"), 0.5, 0.0, 0.2)}  # no glyph reader installed
    monkeypatch.setattr(clf.tokens, "read", lambda image, cam, asked: {
        c: matches[c] for c in asked})
    # the classifier doubts every cell: bare 0.45, a hand 0.3, units 0.25 between them
    monkeypatch.setattr(clf, "probabilities", lambda desc: _probs(len(desc), 0.45, 0.3))
    cells = list(matches)
    assert all(r.piece is None for r in clf.read(img, truth["camera"], cells).values())
    clf.tokens.printed_set = True  # the set-up showed printed tokens
    got = clf.read(img, truth["camera"], cells)
    assert got["c3"].piece == "empty" and got["c3"].confidence == pytest.approx(0.9)
    assert got["d3"].piece is None and got["e3"].piece is None
    # leaning to a hand over the cell: still unsure
    monkeypatch.setattr(clf, "probabilities",
                        lambda desc: _probs(len(desc), 0.25, BARE_PRINT_UNSURE + 0.01))
    assert clf.read(img, truth["camera"], cells)["c3"].piece is None
    # a card's picture the classifier takes for a unit: bare by the print, where it is sure
    monkeypatch.setattr(clf, "probabilities", lambda desc: _probs(len(desc), 0.01, 0.0))
    got = clf.read(img, truth["camera"], cells)
    assert got["c3"].piece == "empty" and got["d3"].occupied is True
    # a token the print finds present is never read bare
    matches["c3"] = _match(("white", "pawn"), 0.95, 0.05, 0.9)
    matches["c3"].glyph = GlyphLook("white-pawn", 0.05, 0.9, sure_at=0.85, certain_at=0.9)
    monkeypatch.setattr(clf, "probabilities", lambda desc: _probs(len(desc), 0.45, 0.3))
    assert clf.read(img, truth["camera"], cells)["c3"].occupied is True
    clf.new_set()  # a new game forgets it
    assert not clf.tokens.printed_set


def test_a_set_up_of_printed_tokens_marks_the_game_as_one_of_tokens():
    from scanner.piece_adapt import learn_set

    clf = PieceClassifier()
    img = cv2.imread(str(FIX / "tokens.jpg"))
    truth = json.loads((FIX / "tokens.json").read_text())
    units = {c: u for c, u in truth["labels"].items() if c[1] in "15"}
    note = learn_set(clf, img, truth["camera"], units, list(units), "at frame 5").note
    assert note.startswith("none: at frame 5") and "paper tokens" in note, note
    assert clf.tokens.printed_set
    assert note.endswith("a cell whose print shows no token reads bare"), note
    # a unit that is no token to the glyph reader (a 3D piece standing in for a lost one;
    # here a bare cell said to hold one): the game is not taken for one of tokens alone
    clf.new_set()
    bare = next(c for c in ("d3", "b3", "f3") if c not in truth["labels"])
    mixed = units | {bare: "white-rook"}
    note = learn_set(clf, img, truth["camera"], mixed, list(mixed), "at frame 5").note
    assert "paper tokens" in note and "reads bare" not in note, note
    assert not clf.tokens.printed_set
    lathe = cv2.imread(str(FIX / "setup-lathe.jpg"))
    lt = json.loads((FIX / "setup-lathe.json").read_text())
    clf.new_set()
    units = {c: u for c, u in lt["labels"].items() if u not in ("empty", "unsure", "any")}
    learn_set(clf, lathe, lt["camera"], units, list(units), "at frame 5")
    assert clf.tokens is None  # a game of 3D pieces rests the token reader
