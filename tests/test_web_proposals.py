"""Camera readings become one-click proposals; unsure or occluded readings propose nothing."""

from __future__ import annotations

import pytest

from scanner.detections import CardReading, CellReading, PieceReading, TableReading
from tests.web_helpers import SETUP, TO_ROUND_2_MOVE
from webui.table.game import GameSetup, Table
from webui.table.journal import Journal
from webui.table.proposals import propose


@pytest.fixture
def table(tmp_path):
    t = Table(Journal(tmp_path / "journal.sqlite"))
    t.new_game(GameSetup.from_json(SETUP))
    return t


def cell(name, card=None, piece=None, conf=0.9, empty=False):
    return CellReading(name, empty=empty,
                       card=None if card is None else CardReading(card=card, confidence=conf,
                                                                  orientation="portrait"),
                       piece=None if piece is None else PieceReading(piece, conf))


def reading(*cells, initiative=None, **kw):
    return TableReading(board_found=True, cells={c.cell: c for c in cells},
                        initiative=initiative or {}, **kw)


def test_setup_and_initiative_cards_are_proposed_when_read(table):
    got = propose(table.state, reading(cell("a1", "7H")))
    assert [p["text"] for p in got] == ["white setup a1 7H"]
    assert propose(table.state, reading(cell("a1", "AH"))) == []  # aces go back: not proposed
    assert propose(table.state, reading(cell("a1", "7H", conf=0.2))) == []  # unsure
    assert propose(table.state, reading(cell("a1", "7H"), occluded=True)) == []
    assert propose(table.state, None) == []
    for text in TO_ROUND_2_MOVE[:16]:
        table.act(text)
    got = propose(table.state, reading(initiative={"white": CardReading(card="KS",
                                                                        confidence=0.95)}))
    assert [p["text"] for p in got] == ["white initiative KS"]


def test_placement_is_proposed_from_the_piece_seen(table):
    for text in TO_ROUND_2_MOVE[:8]:
        table.act(text)
    got = propose(table.state, reading(cell("c1", "3S", "white-knight")))
    assert [p["text"] for p in got] == ["white place knight c1"]


def test_the_movement_the_camera_saw_is_proposed(table):
    for text in TO_ROUND_2_MOVE:
        table.act(text)
    # the knight left c2 (now just its 4D) and stands on c3 on a new JC
    seen = reading(cell("c2", "4D", empty=False), cell("c3", "JC", "white-knight"))
    seen.cells["c2"].piece = PieceReading("empty", 0.9)
    got = propose(table.state, seen)
    assert [p["text"] for p in got] == ["white move c2-c3 JC"]
    # an illegal reading (red on the red 4D) proposes no move, but a correction
    seen.cells["c3"] = cell("c3", "4H", "white-knight")
    texts = [p["text"] for p in propose(table.state, seen)]
    assert "white move c2-c3 4H" not in texts
    assert "set c3 card 4H" in texts
    # still seen on c2 as well: no move is proposed from a doubled sighting
    seen.cells["c2"] = cell("c2", "4D", "white-knight")
    seen.cells["c3"] = cell("c3", "JC", "white-knight")
    assert not any(p["kind"] == "action" for p in propose(table.state, seen))


def test_disagreements_become_corrections(table):
    for text in TO_ROUND_2_MOVE:
        table.act(text)
    table.act("white move c2-c3 JC")  # attack phase: nothing to move
    got = propose(table.state, reading(cell("e5", "8D", "black-rook"), cell("a1", "2H", None)))
    assert [p["text"] for p in got] == ["set e5 card 8D"]
    got = propose(table.state, reading(cell("g5", "9S", "empty")))
    assert [p["text"] for p in got] == ["set g5 piece none"]
