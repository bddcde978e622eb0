"""The pip reader: pips cut out of a rectified card, and the suit marks of its index corners,
their suit read, and the reader asking it only about cards it left unsure (number cards by
their pips, courts by their index marks)."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanner.card_reader import PIPS_CHECK_BELOW, CardReader
from scanner.pip_suits import (
    META_FILE,
    MODEL_FILE,
    PATCH,
    PIP_RANKS,
    PipReader,
    index_marks,
    pip_blobs,
    spelled_index,
)
from scanner.rectify import CANON_H, CANON_W, portrait_order, rectify
from tests.card_helpers import card_face

FIX = Path(__file__).parent / "fixtures" / "cards"


def blank_card() -> np.ndarray:
    return np.full((CANON_H, CANON_W, 3), 235, np.uint8)


def test_pips_are_cut_out_and_the_index_corners_left_alone():
    card = blank_card()
    for x, y in ((35, 40), (65, 40), (50, 70), (35, 100), (65, 100)):
        cv2.circle(card, (x, y), 7, (20, 20, 20), -1)
    cv2.putText(card, "5", (3, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (20, 20, 20), 2)  # index
    cv2.circle(card, (50, 125), 1, (20, 20, 20), -1)  # a speck
    blobs = pip_blobs(card)
    assert len(blobs) == 5
    for crop, share in blobs:
        assert crop.shape == (PATCH, PATCH) and crop.dtype == np.float32
        assert crop[PATCH // 2, PATCH // 2] > 0.8 and crop[0, 0] < 0.2  # ink 1, paper 0
        assert share == pytest.approx(15 / CANON_W, abs=0.03)


def test_no_pips_on_a_blank_a_black_or_a_red_card_face():
    assert pip_blobs(blank_card()) == []
    assert pip_blobs(np.zeros((CANON_H, CANON_W, 3), np.uint8)) == []
    red = blank_card()
    red[10:130, 10:90] = (40, 40, 200)  # one picture filling the card: no pip
    assert pip_blobs(red) == []


def test_the_model_is_small_and_knows_its_floor():
    from scanner.card_reader import FACE_MODEL_FILE
    from scanner.card_reader import MODEL_FILE as INDEX_MODEL_FILE

    assert MODEL_FILE.stat().st_size < 300_000
    # the card models together stay within the 5 MB
    assert sum(f.stat().st_size for f in (MODEL_FILE, INDEX_MODEL_FILE, FACE_MODEL_FILE)) \
        < 5_000_000
    meta = json.loads(META_FILE.read_text())
    assert meta["suits"] == "CDHS" and meta["min_px"] >= 5
    assert meta["validation_cards_suit_of_colour_right"] >= 0.97


@pytest.fixture(scope="module")
def pips() -> PipReader:
    reader = PipReader.installed()
    assert reader is not None
    return reader


def fixture_cards(courts: bool = False) -> list[tuple[np.ndarray, float, str]]:
    """Rectified cards of the held-out fixture stills (number cards, or courts), their width
    in frame pixels and their suit."""
    out = []
    for name in ("still-0", "still-1", "still-close"):
        img = cv2.imread(str(FIX / f"{name}.jpg"))
        truth = json.loads((FIX / f"{name}.json").read_text())
        for cell in truth["cells"].values():
            card = cell.get("card")
            if not card or card == "JK" or (card[:-1] in "JQK") != courts \
                    or cell.get("in_frame", 0) < 1 or cell.get("visible_fraction", 0) < 0.9:
                continue
            q = portrait_order(np.array(cell["corners"], np.float32))
            width = float(np.linalg.norm(q[1] - q[0]))
            out.append((rectify(img, q), width, card[-1]))
    return out


def test_pips_name_the_suit_of_held_out_number_cards(pips):
    cards = fixture_cards()
    assert len(cards) >= 30
    suits = pips.suit_log_probs([c for c, _, _ in cards], [w for _, w, _ in cards])
    said = [(s, truth) for s, (_, _, truth) in zip(suits, cards, strict=True) if s is not None]
    assert len(said) >= 0.6 * len(cards)
    twin = {"C": "S", "S": "C", "D": "H", "H": "D"}
    right = sum(s["CDHS".index(t)] > s["CDHS".index(twin[t])] for s, t in said)
    assert right >= 0.85 * len(said)  # of its colour's two suits (the colour is not its to say)
    for s, _ in said:  # each colour's two suits normalised between themselves
        assert np.exp(s[0]) + np.exp(s[3]) == pytest.approx(1.0)
        assert np.exp(s[1]) + np.exp(s[2]) == pytest.approx(1.0)


def test_tiny_pips_say_nothing(pips):
    card, width, _ = fixture_cards()[0]
    assert pips.suit_log_probs([card], [1.0]) == [None]  # the card 1 px wide: no shape


def test_pip_evidence_touches_only_number_cards(pips):
    classes = ["AC", "10S", "KC", "JK", "5H", "QD"]
    e = pips.card_evidence(np.log(np.array([0.9, 0.5, 0.5, 0.1])), classes)
    assert e[0] == pytest.approx(np.log(0.9)) and e[1] == pytest.approx(np.log(0.1))
    assert e[2] == 0 and e[3] == 0 and e[5] == 0  # courts and the joker: no pips
    assert e[4] == pytest.approx(np.log(0.5))


def test_reader_asks_the_pips_only_where_it_was_unsure():
    reader = CardReader()
    plain = CardReader(use_pips=False)
    assert reader.pips is not None and plain.pips is None
    asked = []
    original = reader.pips.evidence

    def spy(cards, widths, diagonals, courts, classes):
        asked.append(len(courts) - sum(courts))  # the number cards asked about
        return original(cards, widths, diagonals, courts, classes)

    reader.pips.evidence = spy
    img = cv2.imread(str(FIX / "still-0.jpg"))
    truth = json.loads((FIX / "still-0.json").read_text())
    cells = [c for c in truth["cells"].values() if c.get("card") and c.get("in_frame", 0) == 1]
    quads = [np.array(c["corners"], np.float32) for c in cells]
    with_pips = reader.read_quads(img, quads, face_below_px=1e9, faces_up=True, pips=True)
    without = plain.read_quads(img, quads, face_below_px=1e9, faces_up=True, pips=True)
    unsure = sum(r.card is None for r in without)
    # ... and number cards answered at under PIPS_CHECK_BELOW, which they may only take back
    checked = [b.card is not None and b.card[:-1] in PIP_RANKS
               and b.confidence < PIPS_CHECK_BELOW for b in without]
    assert 0 < sum(asked) <= unsure + sum(checked)
    gained = 0
    for a, b, cell, check in zip(with_pips, without, cells, checked, strict=True):
        if b.card is not None:  # an answer given without the pips stands, or is taken back
            assert a.card == b.card or (check and a.card is None)
        elif a.card is not None:  # held-out tango and plastic number cards the pips settled
            assert a.card == cell["card"]
            gained += 1
    assert gained >= 2
    # the photo path (cards overlapping each other) does not ask the pips
    asked.clear()
    reader.read_quads(img, quads, face_below_px=1e9, faces_up=True)
    assert asked == []


def test_fused_evidence_takes_a_further_witness():
    from scanner.card_reader import fuse_many

    rng = np.random.default_rng(3)
    corners = rng.dirichlet(np.ones(55) * 0.2, (4, 4)).astype(np.float32)
    faces = rng.dirichlet(np.ones(55) * 0.2, 4).astype(np.float32)
    plain = fuse_many(corners, faces, 53, 53)
    same = fuse_many(corners, faces, 53, 53, np.zeros((4, 53)))
    for a, b in zip(plain, same, strict=True):
        assert np.allclose(a, b)
    extra = np.zeros((4, 53))
    extra[:, 7] = 30.0  # a witness sure of one card outweighs two unsure ones
    ks, _, _, confs = fuse_many(corners, faces, 53, 53, extra)
    down = plain[1]
    assert all(k == 7 and c > 0.99 for k, c, d in zip(ks, confs, down, strict=True) if not d)


def court_card(rank: str = "Q", turned: bool = False) -> np.ndarray:
    """A drawn court card: its rank letter and a round suit mark under it in the nw and se
    index corners (or, `turned`, in the ne and sw ones), a picture in the middle."""
    card = blank_card()
    cv2.putText(card, rank, (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (20, 20, 20), 2)
    cv2.circle(card, (13, 32), 6, (20, 20, 20), -1)
    card[100:, 70:] = np.rot90(card[:40, :30], 2)  # the se corner: the nw one turned round
    card[30:110, 32:68] = (40, 40, 200)  # the picture
    return card[:, ::-1].copy() if turned else card


def test_index_marks_are_found_under_the_rank_of_the_index_diagonal():
    marks = index_marks(court_card())
    assert len(marks) == 2  # the nw corner, and the se one turned
    for crop, share in marks:
        assert crop.shape == (PATCH, PATCH) and crop[PATCH // 2, PATCH // 2] > 0.8
        assert share == pytest.approx(13 / CANON_W, abs=0.03)
    assert index_marks(court_card(), "ne-sw") == []  # nothing under a rank there
    assert len(index_marks(court_card(turned=True), "ne-sw")) == 2
    no_rank = court_card()
    no_rank[:22, :30] = 235  # no rank letter above the mark: no index, no mark
    no_rank[118:, 70:] = 235
    assert index_marks(no_rank) == []
    assert index_marks(blank_card()) == [] and index_marks(np.zeros_like(blank_card())) == []


def test_index_marks_name_the_suit_of_held_out_courts(pips):
    cards = fixture_cards(courts=True)
    assert len(cards) >= 15
    suits = pips.mark_log_probs([c for c, _, _ in cards], [w for _, w, _ in cards],
                                ["nw-se"] * len(cards))
    said = [(s, truth) for s, (_, _, truth) in zip(suits, cards, strict=True) if s is not None]
    assert len(said) >= 0.5 * len(cards)  # measured: 12 of 19 (the rest under 5 px)
    twin = {"C": "S", "S": "C", "D": "H", "H": "D"}
    assert all(s["CDHS".index(t)] > s["CDHS".index(twin[t])] for s, t in said)
    assert pips.mark_log_probs([cards[0][0]], [1.0], [None]) == [None]  # tiny: nothing


def test_mark_evidence_touches_only_courts_and_only_the_unlikelier_twin(pips):
    classes = ["KC", "KS", "QD", "QH", "JK", "5C", "JS"]
    e = pips.court_evidence(np.log(np.array([0.9, 0.5, 0.5, 0.1])), classes)
    assert e[0] == 0 and e[1] == pytest.approx(np.log(0.1 / 0.9))
    assert e[2] == 0 and e[3] == 0  # a mark read half and half moves nothing
    assert e[4] == 0 and e[5] == 0  # the joker (no suit) and number cards (their pips')
    assert e[6] == pytest.approx(np.log(0.1 / 0.9))


def test_reader_asks_the_marks_only_about_unsure_courts():
    reader, plain = CardReader(), CardReader(use_pips=False)
    assert reader.pips.mark_min_px is not None
    asked = []
    original = reader.pips.evidence

    def spy(cards, widths, diagonals, courts, classes):
        asked.extend(d for d, court in zip(diagonals, courts, strict=True) if court)
        return original(cards, widths, diagonals, courts, classes)

    reader.pips.evidence = spy
    for name in ("still-0", "still-1", "still-close"):
        img = cv2.imread(str(FIX / f"{name}.jpg"))
        truth = json.loads((FIX / f"{name}.json").read_text())
        quads = [np.array(c["corners"], np.float32) for c in truth["cells"].values()
                 if c.get("card") and c.get("in_frame", 0) == 1]
        asked.clear()
        got = reader.read_quads(img, quads, face_below_px=1e9, faces_up=True, pips=True)
        before = plain.read_quads(img, quads, face_below_px=1e9, faces_up=True, pips=True)
        unsure_courts = sum(r.card is None and bool(r.candidates)
                            and r.candidates[0][0][:-1] in ("J", "Q", "K")
                            and r.candidates[0][0] != "JK" for r in before)
        assert len(asked) <= unsure_courts
        assert all(d in ("nw-se", "ne-sw", None) for d in asked)
        for a, b in zip(got, before, strict=True):
            if b.card is not None:
                assert a.card == b.card


def joker_card(picture_beside: bool = False) -> np.ndarray:
    """A drawn joker: "J" and then o, k, e, r down its nw and se index corners (a small
    picture away from them), or, `picture_beside`, a court's picture right against them."""
    card = blank_card()
    cv2.putText(card, "J", (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (20, 20, 200), 2)
    for k, letter in enumerate("oker"):
        cv2.putText(card, letter, (7, 33 + 11 * k), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                    (20, 20, 200), 1)
    card[40:100, 40:60] = (40, 160, 40)  # the jester
    if picture_beside:
        card[22:75, 18:40] = (120, 60, 40)
    card[75:, 40:] = np.rot90(card[:65, :60], 2)  # the se corner: the nw one turned round
    return card


def test_a_word_down_the_index_is_spelled():
    assert spelled_index(joker_card())
    assert not spelled_index(joker_card(), "ne-sw")  # nothing on the other diagonal
    assert spelled_index(joker_card()[:, ::-1].copy(), "ne-sw")
    assert not spelled_index(court_card())  # a rank and one suit mark
    assert not spelled_index(joker_card(picture_beside=True))  # a picture's parts
    assert not spelled_index(blank_card()) and not spelled_index(np.zeros_like(blank_card()))


def _deck_face(design: str, code: str) -> np.ndarray:
    """A deck's card as the reader rectifies it (CANON_W x CANON_H)."""
    return cv2.resize(card_face(design, code), (CANON_W, CANON_H), interpolation=cv2.INTER_AREA)


def test_a_decks_joker_spells_its_name_and_its_courts_do_not():
    """Tango prints "Joker" down its index, and its J in the courts' font: the readers took
    its jokers for JD. No court of tango or of three ordinary decks spells a word."""
    assert spelled_index(_deck_face("gnome-tango", "JK"))
    for design in ("gnome-tango", "gnome-anglo", "kde-nicu-white", "kde-standard"):
        for rank in "JQK":
            for suit in "CDHS":
                assert not spelled_index(_deck_face(design, rank + suit)), (design, rank + suit)


def test_a_court_read_from_a_spelled_index_is_read_as_the_joker():
    from scanner.card_reader import SPELLED_JOKER

    cards = np.stack([joker_card(), court_card(), joker_card(), joker_card(), joker_card(),
                      court_card()])
    decided = [("JD", False, "nw-se", 0.9995, [("JD", 0.999), ("JH", 0.001)]),
               ("QS", False, "nw-se", 0.9999, [("QS", 1.0)]),
               (None, False, "nw-se", 0.6, [("KH", 0.6), ("JK", 0.3), ("KD", 0.1)]),
               ("5H", False, "nw-se", 0.9999, [("5H", 1.0)]),  # a number card: its own read
               ("JD", False, "ne-sw", 0.9995, [("JD", 1.0)]),  # read on the other diagonal
               (None, False, "nw-se", 0.6, [("KH", 0.6), ("JK", 0.3)])]  # no word: unsure
    before = list(decided)
    CardReader._spelled_look(cards, decided)
    rest = round(1 - SPELLED_JOKER, 4)
    assert decided[0] == ("JK", False, "nw-se", SPELLED_JOKER,
                          [("JK", SPELLED_JOKER), ("JD", round(0.999 * rest, 4)),
                           ("JH", round(0.001 * rest, 4))])
    assert decided[1] == before[1]  # a court's index: rank and mark
    assert decided[2][0] == "JK" and [c for c, _ in decided[2][4]] == ["JK", "KH", "KD"]
    assert decided[3] == before[3] and decided[4] == before[4] and decided[5] == before[5]


def test_the_recipe_cuts_court_marks_where_the_sampled_card_prints_its_index():
    from models.cards import dataset as D
    from models.cards import pips as recipe

    seen: dict = {}
    a = D.sample(np.random.default_rng(4), [D.PROCEDURAL], face_size=(100, 140), seen=seen)
    b = D.sample(np.random.default_rng(4), [D.PROCEDURAL], face_size=(100, 140))
    assert isinstance(seen["mirrored"], bool) and 30 <= seen["width"] <= 130
    assert all(np.array_equal(u, v) for u, v in zip(a, b, strict=True))  # told, not drawn
    x, y, px, cards = recipe._chunk((7, 80, ["gnome-berlin"], True))  # a validation deck
    assert len(x) >= 10 and x.shape[1:] == (PATCH, PATCH)  # measured: 15 marks of 10 courts
    assert set(y.tolist()) <= {0, 1, 2, 3} and (px > 0).all()
    _, counts = np.unique(cards, return_counts=True)
    assert counts.max() <= 2  # one mark in each index corner of the diagonal at most


def test_percentiles_from_the_histogram_are_numpys():
    """`uint8_percentiles` answers what `np.percentile` does (its linear method), for the
    paper and ink of every unsure card without sorting its pixels."""
    from scanner.pip_suits import uint8_percentiles

    rng = np.random.default_rng(5)
    arrays = [np.full((3, 4), 200, np.uint8), np.array([[0, 255]], np.uint8),
              np.array([[7]], np.uint8)]
    for i in range(300):
        h, w = rng.integers(1, 80, 2)
        a = rng.normal(rng.uniform(30, 220), rng.uniform(1, 60), (h, w))
        arrays.append(np.clip(a, 0, 255).astype(np.uint8)[::1 + i % 2, ::1 + i % 3])
    for a in arrays:
        for percents in ((90, 2), (50,), (0, 100), (99.9, 0.1)):
            want = np.percentile(a, percents)
            got = uint8_percentiles(a, percents)
            assert [float(x) for x in got] == [float(x) for x in want], (a.shape, percents)


class _SaysSuit:
    """A stand-in for the pip reader: every card's pips say the suit odds it is given."""

    def __init__(self, reader: CardReader, suit_p: list[float] | None):
        self.real, self.suit_p, self.asked = reader.pips, suit_p, 0

    def evidence(self, cards, widths, diagonals, courts, classes):
        self.asked += len(cards)
        if self.suit_p is None:
            return [None] * len(cards)
        e = self.real.card_evidence(np.log(np.array(self.suit_p)), classes)
        return [e] * len(cards)


def _answered(reader: CardReader, index_7s: float, face_7s: float):
    """A 7S answered by the index and whole-card readers at the given odds against 7C."""
    n = len(reader.classes)
    probs = np.full((1, 4, n), 1e-7, np.float32)
    probs[0, [1, 3], reader.none] = 1.0  # the other diagonal shows no index
    for corner in (0, 2):
        probs[0, corner, reader.classes.index("7S")] = index_7s
        probs[0, corner, reader.classes.index("7C")] = 1 - index_7s
    face = np.full(n, 1e-7, np.float32)
    face[reader.classes.index("7S")], face[reader.classes.index("7C")] = face_7s, 1 - face_7s
    faces = [face / face.sum()]
    return probs, faces, reader.decide_many(probs, faces)


@pytest.mark.parametrize("suit_p, kept", [
    ([0.99, 0.5, 0.5, 0.01], False),  # the pips say clubs, 99 to 1: the answer is taken back
    ([0.01, 0.5, 0.5, 0.99], True),  # they agree: it stands
    ([0.9, 0.5, 0.5, 0.1], True),  # clubs by 9 to 1 only (under PIPS_VETO): it stands
    (None, True),  # no pip big enough to read: it stands
])
def test_pips_take_back_only_an_answer_they_contradict(suit_p, kept):
    reader = CardReader()
    probs, faces, decided = _answered(reader, 0.95, 0.9)
    assert decided[0][0] == "7S" and decided[0][3] < PIPS_CHECK_BELOW
    reader.pips = _SaysSuit(reader, suit_p)
    cards = np.full((1, CANON_H, CANON_W, 3), 235, np.uint8)
    quad = [np.float32([[0, 0], [60, 0], [60, 84], [0, 84]])]
    before = dict(decided[0][4])
    reader._pips_look(cards, quad, probs, faces, decided)
    assert reader.pips.asked == 1
    assert (decided[0][0] == "7S") == kept
    if not kept:  # decided again with the pips: unsure, the twin likelier than it was
        assert decided[0][0] is None and dict(decided[0][4])["7C"] > 10 * before["7C"]


def test_pips_are_not_asked_about_a_sure_answer():
    reader = CardReader()
    probs, faces, decided = _answered(reader, 0.9999, 0.9999)
    assert decided[0][0] == "7S" and decided[0][3] >= PIPS_CHECK_BELOW
    reader.pips = _SaysSuit(reader, [0.99, 0.5, 0.5, 0.01])
    cards = np.full((1, CANON_H, CANON_W, 3), 235, np.uint8)
    reader._pips_look(cards, [np.float32([[0, 0], [60, 0], [60, 84], [0, 84]])], probs,
                       faces, decided)
    assert reader.pips.asked == 0 and decided[0][0] == "7S"
