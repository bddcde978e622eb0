"""A unit's height over its set-up card (`scanner.piece_height`): the gauge on synthetic
crops, on a committed fixture video, and the king-above-queen weight the tracker uses."""

import math
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanner import piece_height as ph
from scanner.detections import PieceReading

FIXTURE = Path(__file__).parent / "fixtures" / "render" / "videos" / \
    "game-s64-heldout-simplistic-lathe"


def _card(seed=0):
    """A bare view: a card's busy face (pips, print) under the billboard."""
    rng = np.random.default_rng(seed)
    img = np.full((ph.GAUGE_H, ph.GAUGE_W, 3), 200, np.uint8)
    for _ in range(12):
        x, y = rng.integers(0, ph.GAUGE_W), rng.integers(0, ph.GAUGE_H)
        cv2.circle(img, (int(x), int(y)), 6, (30, 30, 180), -1)
    return img


def _with_unit(bare, height_cm, gap_cm=None):
    """`bare` with a dark unit standing on the cell's centre, its top `height_cm` up the
    billboard (and a band of `gap_cm` the colour of the card behind it, a collar)."""
    now = bare.copy()
    base, top = int(ph.BASE_ROW), int(ph.BASE_ROW - height_cm * ph.PX_PER_CM)
    mid = ph.GAUGE_W // 2
    cv2.rectangle(now, (mid - 10, top), (mid + 10, base + 8), (40, 40, 40), -1)
    if gap_cm:
        g0 = top + int(0.5 * ph.PX_PER_CM)
        now[g0:g0 + int(gap_cm * ph.PX_PER_CM)] = bare[g0:g0 + int(gap_cm * ph.PX_PER_CM)]
    return now


@pytest.mark.parametrize("height", [2.5, 4.0, 6.0])
def test_the_top_of_the_change_is_the_units_top(height):
    bare = _card()
    assert ph.unit_top_cm(bare, _with_unit(bare, height)) == pytest.approx(height, abs=0.2)


def test_a_collar_the_card_shows_through_is_bridged_a_change_far_above_is_not():
    bare = _card()
    assert ph.unit_top_cm(bare, _with_unit(bare, 6.0, gap_cm=1.0)) == pytest.approx(6.0, abs=0.2)
    now = _with_unit(bare, 3.0)
    mid = ph.GAUGE_W // 2  # something changed 4 cm above the unit's top: not the unit
    cv2.rectangle(now, (mid - 5, 2), (mid + 5, int(ph.BASE_ROW - 7.0 * ph.PX_PER_CM)),
                  (0, 255, 0), -1)
    assert ph.unit_top_cm(bare, now) == pytest.approx(3.0, abs=0.2)


def test_no_change_a_change_beside_the_cell_or_a_card_laid_gives_no_height():
    bare = _card()
    assert ph.unit_top_cm(bare, bare.copy()) is None
    beside = bare.copy()
    cv2.rectangle(beside, (2, 20), (20, int(ph.BASE_ROW)), (0, 0, 0), -1)
    assert ph.unit_top_cm(bare, beside) is None
    table = np.full_like(bare, 60)  # a card laid where the table showed: a change all across
    laid = table.copy()
    laid[int(ph.BASE_ROW - 3 * ph.PX_PER_CM):] = bare[int(ph.BASE_ROW - 3 * ph.PX_PER_CM):]
    assert ph.unit_top_cm(table, laid) is None


def test_height_undoes_the_foreshortening_and_leaves_out_high_views_and_flat_units():
    bare = _card()
    e = math.radians(40)
    shown = 7.0 * math.cos(e) + ph.TOP_REACH_CM * math.sin(e)
    h = ph.height_cm(bare, _with_unit(bare, shown), math.cos(e))
    assert h == pytest.approx(7.0, abs=0.3)
    assert ph.height_cm(bare, _with_unit(bare, 2.0), math.cos(math.radians(80))) is None
    assert ph.height_cm(bare, _with_unit(bare, 0.6), math.cos(e)) is None  # a paper token


def test_a_king_taller_than_its_queen_backs_the_assignment_that_says_so():
    heights = {"a1": 7.5, "c1": 6.8, "e1": None}
    right = ph.stature_log_odds({"a1": "king", "c1": "queen", "e1": "pawn"}, heights)
    swapped = ph.stature_log_odds({"a1": "queen", "c1": "king", "e1": "pawn"}, heights)
    assert swapped < math.log(0.25) < math.log(0.75) < right <= 0.0
    # within STATURE_GAP: no word; far apart: no more than the cap's weight
    assert ph.stature_log_odds({"a1": "queen", "c1": "king"}, {"a1": 7.0, "c1": 6.9}) == 0.0
    capped = ph.stature_log_odds({"a1": "queen", "c1": "king"}, {"a1": 12.0, "c1": 3.0})
    assert capped == pytest.approx(
        -math.log1p(math.exp(ph.KING_QUEEN_SLOPE * ph.STATURE_CAP)))
    assert ph.stature_log_odds({"a1": "king", "c1": "king"}, heights) == 0.0  # no order


def test_kings_stand_above_queens_above_the_middle_kinds_above_pawns():
    heights = {"a1": 5.4, "c1": 6.9, "e1": 4.5}
    right = ph.stature_log_odds({"a1": "bishop", "c1": "queen", "e1": "pawn"}, heights)
    swapped = ph.stature_log_odds({"a1": "queen", "c1": "bishop", "e1": "pawn"}, heights)
    assert swapped < math.log(0.05) and right > math.log(0.9)
    # rooks, knights and bishops stand in no order common to all sets; a pawn below them
    assert ph.stature_log_odds({"a1": "rook", "c1": "bishop"}, heights) == 0.0
    assert ph.stature_log_odds({"a1": "bishop", "e1": "pawn"}, heights) > math.log(0.95)
    assert ph.stature_log_odds({"a1": "pawn", "e1": "bishop"}, heights) < math.log(0.05)
    # a queen-and-bishop swap outweighs a king-and-queen one: the first is surer
    assert ph.stature_log_odds({"a1": "queen", "c1": "bishop"}, heights) < \
        ph.stature_log_odds({"a1": "queen", "c1": "king"}, heights)


def _frames(n):
    cap = cv2.VideoCapture(str(FIXTURE / "game.mp4"))
    out = []
    while len(out) < n:
        ok, f = cap.read()
        if not ok:
            break
        out.append(f)
    return out


def test_the_gauge_on_a_filmed_set_up_reads_each_king_taller_than_its_queen():
    """game-s64 (held-out lathe set, 34-46 degrees): the classifier reads black's queen a
    bishop and the placement went on with the king and queen swapped; their heights say
    which is which."""
    from calibration.profile import Profile
    from scanner.evaluate import read_truth
    from scanner.piece_crops import as_board_camera

    rows = list(read_truth(FIXTURE / "truth.jsonl.gz"))[:200]
    frames = _frames(len(rows))
    cam = as_board_camera(Profile.load(FIXTURE / "profile.json"), frames[0].shape)
    gauge = ph.HeightGauge()
    last: dict[str, PieceReading] = {}
    for row, frame in zip(rows, frames, strict=True):
        if not row["settled"]:
            continue
        reads = {}
        for cell in ph.SETUP_CELLS:
            unit = row["cells"].get(cell, {}).get("unit")
            reads[cell] = PieceReading(f"{unit['side']}-{unit['kind']}", 0.99) if unit \
                else PieceReading("empty", 0.99)
        gauge.look(frame, cam, reads)
        last.update({c: r for c, r in reads.items() if r.height_cm is not None})
    h = {c: r.height_cm for c, r in last.items()}
    assert set(h) >= {"a1", "c1", "a5", "c5"}
    assert h["a1"] > h["c1"] * 1.05 and h["a5"] > h["c5"] * 1.05  # kings on a1, a5
    assert all(6.0 < h[c] < 8.5 for c in ("a1", "c1", "a5", "c5"))  # lathe: 7.5 and 6.9 cm


def test_the_gauge_forgets_its_bare_views_when_the_camera_moves():
    from scanner.piece_crops import BoardCamera

    def cam(tx):
        return BoardCamera(np.array([[900.0, 0, 480], [0, 900, 270], [0, 0, 1]]),
                           cv2.Rodrigues(np.array([2.3, 0.0, 0.0]))[0], np.array([tx, 0, 90.0]))

    image = np.full((540, 960, 3), 200, np.uint8)
    gauge = ph.HeightGauge()
    gauge.look(image, cam(0.0), {"a1": PieceReading("empty", 0.99)})
    assert "a1" in gauge._bare
    unit = PieceReading("white-king", 0.99)
    gauge.look(image, cam(5.0), {"a1": unit})
    assert "a1" not in gauge._bare and unit.height_cm is None


def test_the_bench_counts_pairs_of_one_side_ordered_right_wrong_or_not_at_all():
    from scanner.heights_bench import ordered_pairs

    units = [("white", "king", "a1", 7.4), ("white", "queen", "c1", 7.8),
             ("white", "pawn", "e1", 4.5), ("white", "bishop", "g1", None),
             ("black", "king", "a5", 7.5), ("black", "queen", "c5", 7.4),
             ("black", "rook", "e5", 5.0), ("black", "knight", "g5", 5.5)]
    assert ordered_pairs(units) == {
        "king-queen": [0, 1, 1],  # white's swapped; black's within the gap
        "tall-lower": [6, 0, 2],  # white's pawn and black's rook and knight below; a bishop
        "pawn-lower": [0, 0, 1],  # not measured; a rook and a knight have no order
    }


def test_the_heights_bench_needs_a_clip(capsys):
    from webui.cli import main

    assert main(["pieces", "heights", "--clips", "0"]) == 2
    assert "--clips" in capsys.readouterr().err


def test_a_change_of_light_since_the_bare_view_gives_no_height():
    """v4-s181: the table's light had changed between the bare view and the unit's, and
    the whole billboard's change read a pawn 8.2 cm tall."""
    bare = _card()
    now = _with_unit(bare, 4.0)
    now[: int(ph.BASE_ROW - 2 * ph.PX_PER_CM)] = cv2.add(
        now[: int(ph.BASE_ROW - 2 * ph.PX_PER_CM)], 40)  # brighter above the card
    assert ph.unit_top_cm(bare, now) is None
    assert ph.unit_top_cm(bare, _with_unit(bare, 4.0)) == pytest.approx(4.0, abs=0.2)


def test_the_first_height_measured_stands_while_the_unit_does():
    """val-s7: an initiative card laid beside g1 after its bishop stood there made the later
    looks' change reach 8.6 cm; the first look's 5.4 cm is the bishop's."""
    from scanner.piece_crops import BoardCamera

    cam = BoardCamera(np.array([[900.0, 0, 480], [0, 900, 270], [0, 0, 1]]),
                      cv2.Rodrigues(np.array([2.3, 0.0, 0.0]))[0], np.array([0.0, 0, 90.0]))
    gauge = ph.HeightGauge(cells=("d3",))
    calls = iter([5.4, 8.6])
    image = np.zeros((540, 960, 3), np.uint8)
    gauge.look(image, cam, {"d3": PieceReading("empty", 0.99)})
    real = ph.height_cm
    try:
        ph.height_cm = lambda *_a: next(calls)
        first, later = PieceReading("white-bishop", 0.9), PieceReading("white-bishop", 0.9)
        gauge.look(image, cam, {"d3": first})
        gauge.look(image, cam, {"d3": later})
    finally:
        ph.height_cm = real
    assert first.height_cm == later.height_cm == 5.4
    gauge.look(image, cam, {"d3": PieceReading("empty", 0.99)})  # the unit left: measured anew
    assert "d3" not in gauge._height
