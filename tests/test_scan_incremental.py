"""The incremental frame loop: only changed zones are read, nothing while hands are over it."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from scanner.card_reader import CardReader
from scanner.cards_bench import truth_profile
from scanner.evaluate import reading_table
from scanner.incremental import IncrementalScanner
from scanner.occlusion import OcclusionDetector
from scanner.pipeline import TableScanner

FIX = Path(__file__).parent / "fixtures" / "cards"


@pytest.fixture(scope="module")
def still() -> tuple[np.ndarray, dict]:
    img = cv2.imread(str(FIX / "still-close.jpg"))
    return img, json.loads((FIX / "still-close.json").read_text())


@pytest.fixture(scope="module")
def reader() -> CardReader:
    return CardReader()


def make(still, reader, occlusion=None, refresh=2) -> IncrementalScanner:
    _, truth = still
    return IncrementalScanner(TableScanner(truth_profile(truth), reader), occlusion,
                              refresh_per_frame=refresh)


def test_first_frame_reads_everything_then_only_the_refresh(still, reader):
    img, truth = still
    inc = make(still, reader)
    first = inc.scan(img)
    full = TableScanner(truth_profile(truth), reader).scan(img)
    assert reading_table(first) == reading_table(full)
    again = inc.scan(img)
    assert again.timings_ms["zones_read"] == 2  # unchanged table: just the round-robin
    assert reading_table(again) == reading_table(full)


def test_a_changed_cell_is_read_again_and_the_rest_kept(still, reader):
    img, truth = still
    inc = make(still, reader, refresh=0)
    inc.scan(img)
    profile = truth_profile(truth)
    changed = img.copy()
    quad = profile.cell_card_quad("d3")
    quad = (quad - quad.mean(0)) * 1.2 + quad.mean(0)  # the card lies a little off its cell
    cv2.fillConvexPoly(changed, quad.astype(np.int32), (30, 90, 30))  # d3's card taken away
    reading = inc.scan(changed)
    assert 1 <= reading.timings_ms["zones_read"] <= 6  # d3 and neighbours it overlaps
    assert reading.cells["d3"].empty
    before = reading_table(TableScanner(profile, reader).scan(img))
    after = reading_table(reading)
    assert after["d3.card"] is None
    assert {k for k in before if before[k] != after[k]} <= {"d3.card", "d3.unit"}


def test_a_piece_sized_change_is_seen_and_reported_as_a_change(still, reader):
    """A piece taken off a card changes a small part of the zone only: the mean difference
    stays low, the spot difference does not."""
    img, truth = still
    inc = make(still, reader, refresh=0)
    inc.scan(img)
    assert inc.scan(img).changed == set()
    profile = truth_profile(truth)
    quad = profile.cell_card_quad("d3")
    centre, width = quad.mean(0), np.linalg.norm(quad[1] - quad[0])
    spot = img.copy()  # a dark piece a quarter of the card wide
    cv2.circle(spot, (int(centre[0]), int(centre[1])), int(width / 8), (20, 20, 20), -1)
    reading = inc.scan(spot)
    assert "d3" in reading.changed
    assert reading.timings_ms["zones_read"] <= 4


def test_no_zone_is_read_while_something_moves_over_the_board(still, reader):
    img, _ = still
    inc = make(still, reader, occlusion=OcclusionDetector())
    inc.scan(img)
    inc.scan(img)
    moved = img.copy()
    cv2.circle(moved, (img.shape[1] // 2, img.shape[0] // 2), 120, (120, 160, 220), -1)
    reading = inc.scan(moved)
    assert reading.occluded
    assert "zones_read" not in reading.timings_ms
    assert reading.cells  # the last reading is carried, marked occluded


def test_bad_frames_give_a_message_not_an_exception(still, reader):
    inc = make(still, reader)
    for bad in (None, np.zeros((10, 10, 3), np.uint8), np.zeros((5, 5), np.uint8)):
        reading = inc.scan(bad)
        assert reading.message and not reading.board_found


def test_zones_a_hand_passed_over_are_read_again_once_it_is_gone(still, reader):
    """A flat paper token taken off changes its zone's thumbnail too little to count as a
    change: the zones a hand reached while the board was occluded take the refresh reads
    first, before the round-robin goes on (xv-s83: a token's removal otherwise waited for the
    round-robin, 20 frames), and at the refresh's cost (2 zones a frame)."""
    img, truth = still
    inc = make(still, reader, occlusion=OcclusionDetector(), refresh=2)
    inc.scan(img)
    assert inc.scan(img).timings_ms["zones_read"] == 2
    quad = truth_profile(truth).cell_card_quad("d3")
    centre, width = quad.mean(0), np.linalg.norm(quad[1] - quad[0])
    hand = img.copy()  # a hand over d3, its arm reaching in from the bottom edge
    cx, cy, w = int(centre[0]), int(centre[1]), int(width)
    cv2.circle(hand, (cx, cy), w, (120, 160, 220), -1)
    cv2.rectangle(hand, (cx - w // 2, cy), (cx + w // 2, img.shape[0]), (120, 160, 220), -1)
    assert inc.scan(hand).occluded
    assert inc.scan(img).occluded  # the hand leaving moved
    touched = {z for z, t in zip(inc.zones, inc._touched, strict=True) if t}
    assert "d3" in touched and "a5" not in touched and 2 < len(touched) <= 15
    turn = inc._turn
    read = set()
    while inc._touched.any():
        reading = inc.scan(img)
        assert not reading.occluded and reading.changed == set()  # the table looks the same
        assert reading.timings_ms["zones_read"] == 2
        read |= touched - {z for z, t in zip(inc.zones, inc._touched, strict=True) if t}
    assert read == touched and inc._turn == turn  # the round-robin waited for them
    inc.scan(img)
    assert inc._turn == turn + 2
