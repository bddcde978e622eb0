"""The table's game: hidden hands, journal replay, undo, corrections, export/import, views."""

from __future__ import annotations

import pytest

from engines.errors import IllegalActionError, InvalidPositionError, ParseError
from engines.royal_battles.position import to_json
from tests.web_helpers import SETUP, TO_ROUND_2_MOVE, WHITE_ATTACK, WHITE_MOVE
from webui.table.game import (
    GameSetup,
    InputError,
    Table,
    attack_options,
    key_cells,
    legal_moves,
    parse_hand,
    planner_options,
    tallies,
    view,
)
from webui.table.journal import Journal


@pytest.fixture
def table(tmp_path):
    t = Table(Journal(tmp_path / "journal.sqlite"))
    t.new_game(GameSetup.from_json(SETUP))
    return t


def at_round_2_move(table: Table) -> Table:
    for text in TO_ROUND_2_MOVE:
        table.act(text)
    return table


def test_hands_are_hidden_and_hidden_draws_are_journaled_automatically(table):
    at_round_2_move(table)
    state = table.state
    assert state.players[state.to_move].hand is None
    kinds = [(e.kind, e.text) for e in table.events]
    assert ("action", "white take-draw") in kinds and ("auto", "white draw ?") in kinds
    assert state.phase.value == "movement" and state.to_move.value == "white"
    with pytest.raises(IllegalActionError, match="recorded by the table"):
        table.act("white draw ?")


def test_the_journal_replays_to_the_same_state_after_a_restart(table, tmp_path):
    at_round_2_move(table)
    table.act(WHITE_MOVE)
    table.correct("set a1 injury 2")
    again = Table(Journal(tmp_path / "journal.sqlite"))
    assert again.resume()
    assert to_json(again.state) == to_json(table.state)
    assert [e.text for e in again.events] == [e.text for e in table.events]


def test_an_illegal_action_changes_nothing(table):
    at_round_2_move(table)
    before, events = to_json(table.state), list(table.events)
    with pytest.raises(IllegalActionError, match="colour of the standing card"):
        table.act("white move c2-c3 4H")  # red on the red 4D
    with pytest.raises(ParseError):
        table.act("white fly c2-c3")
    assert to_json(table.state) == before and table.events == events
    assert len(table.journal.events(table.game_id)) == len(events)


def test_undo_takes_back_an_action_with_the_draw_that_followed(table, tmp_path):
    at_round_2_move(table)
    table.act(WHITE_MOVE)
    table.act(WHITE_ATTACK)  # a key position: two hidden draws follow automatically
    assert [e.kind for e in table.events[-3:]] == ["action", "auto", "auto"]
    injured = to_json(table.state)["board"]["c4"]["unit"]["injury"]
    assert injured == 3
    gone = table.undo()
    assert [e.text for e in gone] == [WHITE_ATTACK, "white draw ?", "white draw ?"]
    assert table.state.phase.value == "attack"
    assert to_json(table.state)["board"]["c4"]["unit"]["injury"] == 0
    # undone events stay in the file, marked, and a restart agrees
    again = Table(Journal(tmp_path / "journal.sqlite"))
    again.resume()
    assert again.state.phase.value == "attack"


def test_attack_proposals_are_the_engines_results(table):
    at_round_2_move(table)
    assert attack_options(table.state) == []
    table.act(WHITE_MOVE)
    options = {o["style"]: o for o in attack_options(table.state)}
    assert set(options) == {"easy", "optimal", "risky", "advantage"}
    risky = options["risky"]
    assert risky["trumps"] == ["KH", "QC", "JC"] and risky["needed"] == 3 and risky["hit"]
    assert risky["effects"] == [{"cell": "c4", "damage": 3, "healed": 0, "removed": False}]
    assert risky["key"] and risky["position"] == "head-to-head"
    assert "c4" in key_cells(table.state)
    assert not options["easy"]["hit"]


def test_tallies_follow_the_attack_and_removed_units(table):
    at_round_2_move(table)
    table.act(WHITE_MOVE)
    table.act(WHITE_ATTACK)
    black = {r["kind"]: r for r in tallies(table.state, table.setup)["black"]}
    assert black["knight"]["injury"] == 3 and black["knight"]["life_left"] == 5
    assert black["knight"]["cell"] == "c4" and black["rook"]["injury"] == 0
    assert "6 + the number" in black["knight"]["advantage_text"]
    table.correct("set c4 piece none")
    black = {r["kind"]: r for r in tallies(table.state, table.setup)["black"]}
    assert black["knight"]["status"] == "removed" and black["knight"]["life_left"] == 0


def test_legal_moves_group_by_card_colour_for_a_hidden_hand(table):
    at_round_2_move(table)
    data = legal_moves(table.state)
    assert not data["exact"] and data["side"] == "white"
    groups = {(m["from"], m["to"], m["colour"]): m for m in data["moves"]}
    # the knight stands on the red 4D: only black cards and jokers may move it
    knight = [k for k in groups if k[0] == "c2"]
    assert knight and {k[2] for k in knight} == {"black", "joker"}
    assert all(c[-1] in "SC" for c in groups[("c2", "c3", "black")]["cards"])
    assert groups[("c2", "c3", "joker")]["cards"] == ["JK"]
    # the pawn on 2H: black cards; it may not step onto the king's cell
    assert ("a1", "b1", "black") in groups and ("g1", "g1", "red") in groups
    assert not any(k[1] in ("c2", "e1", "g1") and k[0] == "a1" for k in groups)


def test_tapped_cards_make_moves_and_plan_exact(table):
    at_round_2_move(table)
    hand = parse_hand("JC")
    data = legal_moves(table.state, hand)
    assert data["exact"] and {m["card"] for m in data["moves"]} == {"JC"}
    assert {"white move c2-c3 JC"} <= {m["action"] for m in data["moves"]}
    assert all(m["from"] != "c2" or m["colour"] == "black" for m in data["moves"])
    plan = planner_options(table.state, hand)
    hit = [o for o in plan["options"] if o["action"] == WHITE_MOVE and o["style"] == "risky"]
    assert plan["exact"] and hit and hit[0]["hit"] and hit[0]["effects"][0]["damage"] == 3
    hidden = planner_options(table.state)
    assert not hidden["exact"]
    row = [o for o in hidden["options"] if o["from"] == "c2" and o["to"] == "c3"
           and o["style"] == "risky"][0]
    assert row["known_trumps"] == ["KH", "QC"] and row["needed"] == 3
    assert row["hit_with_trump_card"] and not row["hit_without_card"]
    with pytest.raises(InputError, match="holds only 1"):
        legal_moves(table.state, parse_hand("JC,JD"))
    with pytest.raises(InputError):
        parse_hand("JC,ZZ")


def test_corrections_change_the_position_and_are_validated(table):
    at_round_2_move(table)
    decks = {s.value: p.deck for s, p in table.state.players.items()}
    table.correct("set c2 card 3S")  # white's 3S lies on c1: this one is black's
    board = to_json(table.state)["board"]
    assert board["c2"]["cards"] == ["3S"] and board["c2"]["owners"] == ["black"]
    after = {s.value: p.deck for s, p in table.state.players.items()}
    assert after == {"white": decks["white"] + 1, "black": decks["black"] - 1}
    table.correct("set c2 card 9C")  # the camera misread the knight's card
    assert to_json(table.state)["board"]["c2"]["cards"] == ["9C"]
    table.correct("set c2 injury 4")
    table.correct("set initiative black QD")
    assert table.state.initiative[table.state.to_move.other].code == "QD"
    decks = {s.value: p.deck for s, p in table.state.players.items()}
    table.correct("set d3 card 8D")  # a card the camera missed comes out of a deck
    after = {s.value: p.deck for s, p in table.state.players.items()}
    assert sum(after.values()) == sum(decks.values()) - 1
    with pytest.raises(IllegalActionError, match="no other pawn"):
        table.correct("set d3 piece black-pawn")  # black's one pawn stands on a5
    table.correct("set a5 piece none")
    table.correct("set d3 piece black-pawn")
    assert to_json(table.state)["board"]["d3"]["unit"]["kind"] == "pawn"
    with pytest.raises(IllegalActionError, match="injury must be 0 to 7"):
        table.correct("set c2 injury 8")
    with pytest.raises(IllegalActionError, match="no card for a unit"):
        table.correct("set d4 piece white-rook")
    with pytest.raises(ParseError):
        table.correct("set z9 card 8D")
    with pytest.raises((ParseError, InvalidPositionError)):
        table.correct("set c2 card 8X")
    assert [e.kind for e in table.events[-1:]] == ["correction"]


def test_export_import_round_trip_and_bad_imports(table):
    at_round_2_move(table)
    table.act(WHITE_MOVE)
    data = table.export()
    assert data["format"] == "royal-table-game" and data["names"] == SETUP["names"]
    before = to_json(table.state)
    first_id = table.game_id
    table.import_game(data)
    assert table.game_id != first_id and to_json(table.state) == before
    broken = dict(data, events=data["events"] + [{"kind": "action", "text": "white pass"}])
    with pytest.raises(InputError, match="does not replay: event"):
        table.import_game(broken)
    with pytest.raises(InputError, match="not an exported game"):
        table.import_game({"events": []})
    with pytest.raises(InputError, match="events\\[0\\]"):
        table.import_game(dict(data, events=[{"kind": "magic", "text": "x"}]))


@pytest.mark.parametrize("bad, words", [
    ({"armies": {"white": ["pawn"] * 3, "black": ["pawn"] * 4}}, "armies.white: choose exactly 4"),
    ({"armies": {"white": ["pawn"] * 4, "black": ["dragon"] * 4}}, "unknown unit 'dragon'"),
    ({"armies": {"white": ["pawn"] * 4, "black": ["pawn"] * 4},
      "options": {"allow_flying": True}}, "unknown rule option"),
    ({"armies": {"white": ["pawn"] * 4, "black": ["pawn"] * 4},
      "options": {"allow_pass": "yes"}}, "true or false"),
    ({"armies": {"white": ["pawn"] * 4, "black": ["pawn"] * 4},
      "names": {"white": "x" * 41}}, "names.white"),
    ([], "JSON object"),
])
def test_new_game_form_is_validated(bad, words):
    with pytest.raises(InputError, match=words):
        GameSetup.from_json(bad)


def test_view_has_everything_the_page_draws(table):
    v = view(table)
    assert v["chance"]["cell"] == "a1" and v["chance"]["event"] == "setup"
    assert "AS" not in v["chance"]["cards"] and "2H" in v["chance"]["cards"]
    assert "Lay Ann (white)'s set-up card on a1" in v["prompt"]
    at_round_2_move(table)
    v = view(table)
    assert v["phase"] == "movement" and v["to_move"] == "white"
    assert v["initiative"] == {"white": "KH", "black": "QC"}
    assert v["board"]["c2"]["unit"] == {"side": "white", "kind": "knight", "injury": 0,
                                        "life": 8, "life_left": 8}
    assert v["board"]["c2"]["card"] == "4D" and v["board"]["c2"]["colour"] == "red"
    assert v["moves"]["moves"] and v["log"][-1]["text"] == "white draw ?"


def test_an_export_cut_before_a_hidden_draw_is_settled_on_import(table):
    at_round_2_move(table)
    data = table.export()
    assert data["events"][-1] == {"kind": "auto", "text": "white draw ?"}
    data["events"].pop()  # cut between the take-draw and its draw
    table.import_game(data)
    assert table.events[-1].text == "white draw ?" and table.state.phase.value == "movement"
    assert table.journal.events(table.game_id)[-1].text == "white draw ?"


def test_a_declared_joker_is_its_own_move_and_its_template_plays(tmp_path):
    table = Table(Journal(tmp_path / "journal.sqlite"))
    table.new_game(GameSetup.from_json(dict(SETUP, options={"joker_declared_colour": True})))
    at_round_2_move(table)
    groups = [m for m in legal_moves(table.state)["moves"]
              if m["from"] == "c2" and m["to"] == "c3" and m["colour"] == "joker"]
    assert sorted(g["declared"] for g in groups) == ["black", "red"]
    red = next(g for g in groups if g["declared"] == "red")
    table.act(red["template"].format(card="JK"))
    assert to_json(table.state)["board"]["c3"]["declared"] == "red"
