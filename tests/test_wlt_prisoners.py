"""War Lord Tourney: prisoners and freeing, the Lady's rose to her own units, the Castle queue,
the Warlord's succession, the move sequence and the victory conditions."""

from __future__ import annotations

import pytest

from engines.war_lord_tourney import Free, GameState, Options, Succeed
from tests.wlt_helpers import acts, pos, where


# ---- freeing ---------------------------------------------------------------------------------
def test_a_unit_on_the_opposing_green_frees_a_prisoner_into_its_castle():
    state = pos({"wK": "e6", "wF": "prison"})
    state.apply("wK e8")
    assert state.phase == "free" and state.current_player() == "white"
    assert acts(state) == ["wK frees wF"]
    state.apply("wK frees wF")
    assert where(state, "wF") == "e1" and state.dungeons["black"] == []
    assert state.to_move == "black"


def test_freeing_goes_on_each_turn_the_unit_stays():
    state = pos({"wK": "e6", "wF": "prison", "wS": "prison"}, options=Options(sergeants=True))
    state.apply("wK e8")
    state.apply("wK frees wF")
    state.apply("bW a8")
    state.apply("wF e2")
    assert acts(state) == ["wK frees wS"]  # the Knight is still on the Green
    state.apply("wK frees wS")
    assert where(state, "wS") == "e1"


def test_two_units_on_the_opposing_green_free_two():
    state = pos({"wK": "e8", "wF": "e6", "wS": "prison", "wW": "prison"},
                options=Options(sergeants=True))
    state.apply("wF e8")
    assert sorted(acts(state)) == ["wF frees wS", "wK frees wS"]  # not the Warlord
    state.apply("wF frees wS")
    assert state.to_move == "black"


def test_only_the_lady_frees_her_warlord():
    state = pos({"wK": "e6", "wW": "prison"})
    state.apply("wK e8")
    assert state.to_move == "black"  # nothing the Knight may free
    state = pos({"wL": "e6", "wW": "prison"})
    state.apply("wL e8")
    assert acts(state) == ["wL frees wW"]


def test_freeing_comes_before_the_combat_on_the_green():
    state = pos({"wK": "e6", "wF": "prison", "bF": "e8"})
    state.apply("wK e8")
    assert state.phase == "free"
    state.apply("wK frees wF")
    assert state.is_chance_node() and state.combat_cell == "e8"
    state.apply("black wins")
    state.apply("capture wK")
    assert where(state, "wF") == "e1"  # freed all the same


def test_freed_units_may_move_only_from_the_next_turn():
    opts = Options(moves_per_turn=2)
    state = pos({"wK": "e6", "wF": "prison"}, options=opts)
    state.apply("wK e8")
    state.apply("end")
    state.apply("wK frees wF")
    assert state.to_move == "black"
    state.apply("bW a8")
    state.apply("end")
    assert state.unit_moves("wF")


def test_freed_unit_waits_behind_the_castle_occupant_first_in_first_out():
    state = pos({"wK": "e1", "wF": "e8", "wS": "prison", "wW": "prison", "wL": "e7"},
                options=Options(sergeants=True))
    state.apply("wL e8")  # two on the Green: two prisoners freed
    state.apply(Free("wL", "wW"))
    state.apply(Free("wF", "wS"))
    assert state.keep["white"] == ["wW", "wS"]
    assert where(state, "wK") == "e1"
    state.apply("bW a8")
    assert state.unit_moves("wW") == []  # waiting in the Castle, not on the board
    state.apply("wK e3")
    assert where(state, "wW") == "e1" and state.keep["white"] == ["wS"]
    state.apply("bW a9")
    state.apply("wW e2")
    assert where(state, "wS") == "e1" and state.keep["white"] == []


# ---- the Lady's rose to her own units --------------------------------------------------------
def test_lady_sends_her_own_unit_back_to_the_castle():
    state = pos({"wL": "d3", "wF": "d5"})
    assert "wL d5 rose wF" in acts(state)
    state.apply("wL d5 rose wF")
    assert where(state, "wF") == "e1" and where(state, "wL") == "d5"


def test_castle_occupant_makes_way_onto_the_green():
    state = pos({"wL": "d3", "wF": "d5", "wK": "e1"})
    state.apply("wL d5 rose wF")
    assert where(state, "wK") == "e2" and where(state, "wF") == "e1"


def test_castle_occupant_fights_on_the_green_if_needed():
    state = pos({"wL": "d3", "wF": "d5", "wK": "e1", "bF": "e2"})
    state.apply("wL d5 rose wF")
    assert state.is_chance_node() and state.combat_cell == "e2"


def test_no_rose_when_the_green_has_no_room_or_enemies_share_the_square():
    state = pos({"wL": "d3", "wF": "d5", "wK": "e1", "wW": "e2", "wS": "e2"},
                options=Options(sergeants=True))
    assert "wL d5 rose wF" not in acts(state)
    state = pos({"wL": "d3", "wF": "d5", "bF": "d5"})
    assert "wL d5 rose wF" not in acts(state)


# ---- succession ------------------------------------------------------------------------------
def slay_white_warlord(placements: dict[str, str]) -> GameState:
    state = GameState.position({"wW": "d3", "bF": "d5", "bW": "a9", "bL": "i9", **placements},
                               to_move="black")
    state.apply("bF d3")
    state.apply("black wins")
    state.apply("slay wW")
    return state


def test_knight_may_become_warlord_first():
    state = slay_white_warlord({"wK": "c1", "wF": "g1", "wL": "i1"})
    assert state.phase == "succession" and state.current_player() == "white"
    assert acts(state) == ["promote wK", "decline"]
    state.apply("promote wK")
    assert state.units["wK"].kind == "W"
    assert state.to_move == "white"
    assert {m.to for m in state.unit_moves("wK")} == {"c2", "c3", "b1", "a1", "d1", "b2", "d2"}


def test_footman_next_when_the_knight_declines_or_is_in_prison():
    state = slay_white_warlord({"wK": "c1", "wF": "g1", "wL": "i1"})
    state.apply("decline")
    assert acts(state) == ["promote wF", "decline"]
    state = slay_white_warlord({"wK": "prison", "wF": "g1", "wL": "i1"})
    assert acts(state) == ["promote wF", "decline"]


def test_lady_has_four_choices_when_knight_and_footman_are_in_prison():
    state = slay_white_warlord({"wK": "prison", "wF": "prison", "wL": "i1"})
    assert acts(state) == ["promote wL", "return wL", "surrender wL", "trade wL"]


@pytest.mark.parametrize("choice", ["promote", "return", "surrender", "trade"])
def test_the_ladys_choices(choice):
    state = slay_white_warlord({"wK": "prison", "wF": "prison", "wL": "i1"})
    state.apply(Succeed("wL", choice))
    lady, warlord = state.units["wL"], state.units["wW"]
    if choice == "promote":
        assert lady.kind == "W" and not state.is_terminal()
    elif choice == "return":
        assert where(state, "wL") == "e1" and not state.is_terminal()
    elif choice == "surrender":
        assert state.dungeons["black"][-1] == "wL"
        assert state.outcome().winner == "black"
    else:
        assert lady.status == "dead" and where(state, "wW") == "e1"
        assert warlord.kind == "W" and not state.is_terminal()


def test_declines_pass_the_offer_down_to_the_lady():
    state = slay_white_warlord({"wK": "c1", "wF": "g1", "wL": "i1"})
    state.apply("decline")
    state.apply("decline")
    assert acts(state)[0] == "promote wL"


def test_no_warlord_and_no_lady_loses_once_the_succession_is_declined():
    state = slay_white_warlord({"wL": "prison", "wK": "c1"})
    state.apply("decline")
    assert state.outcome().winner == "black"


def test_captured_warlord_has_no_successor():
    state = GameState.position({"wW": "d3", "wK": "c1", "bF": "d5", "bW": "a9", "bL": "i9",
                                "wL": "i1"}, to_move="black")
    state.apply("bF d3")
    state.apply("black wins")
    state.apply("capture wW")
    assert state.phase == "move" and state.units["wK"].kind == "K"


# ---- victory ---------------------------------------------------------------------------------
def test_win_by_taking_both_warlord_and_lady():
    state = GameState.position({"wW": "prison", "wL": "d3", "bF": "d5", "bW": "a9", "bL": "i9"},
                               to_move="black")
    state.apply("bF d3")
    assert state.outcome().winner == "black"
    assert "no Warlord and no Lady" in state.outcome().reason
    assert state.legal_actions() == [] and state.current_player() is None


def test_losing_only_the_warlord_is_not_the_end():
    state = GameState.position({"wW": "d3", "wL": "i1", "bF": "d5", "bW": "a9", "bL": "i9"},
                               to_move="black")
    state.apply("bF d3")
    state.apply("black wins")
    state.apply("capture wW")
    assert not state.is_terminal()


def test_turn_limit_draws():
    state = pos({}, options=Options(max_turns=2))
    state.apply("wW a2")
    state.apply("bW a8")
    assert state.outcome().winner is None and "turn limit" in state.outcome().reason


def test_several_moves_per_turn_option():
    state = pos({"wF": "d3", "wK": "c1"}, options=Options(moves_per_turn=2))
    assert "end" not in acts(state)
    state.apply("wF d4")
    assert state.to_move == "white" and "end" in acts(state)
    assert state.unit_moves("wF") == []  # a unit moves once a turn
    state.apply("wK c3")
    assert state.to_move == "black"


def test_unit_stepping_into_the_castle_mid_turn_waits_for_the_next_turn():
    state = pos({"wK": "e1", "wF": "keep"}, options=Options(moves_per_turn=2))
    assert state.unit_moves("wF") == []
    state.apply("wK e3")
    assert where(state, "wF") == "e1"
    assert state.unit_moves("wF") == []  # arrived this turn
    state.apply("end")
    state.apply("bW a8")
    state.apply("end")
    assert state.unit_moves("wF")


def test_several_combats_in_a_turn_resolve_in_move_order():
    state = pos({"wF": "d3", "wK": "g2", "bF": "d5", "bK": "g3"},
                options=Options(moves_per_turn=2))
    state.apply("wK g3")
    state.apply("wF d5")
    assert state.combat_cell == "g3" and state.pending == ["d5"]
    state.apply("white wins")
    state.apply("capture bK")
    assert state.combat_cell == "d5"
    state.apply("black wins")
    state.apply("slay wF")
    assert state.to_move == "black"
    assert state.dungeons["white"] == ["bK"] and where(state, "wF") == "dead"


def test_first_player_option():
    state = GameState.new(options=Options(first_player="black"))
    assert state.current_player() == "black"
    assert all(str(a).startswith("b") for a in state.legal_actions())


def test_rose_from_the_castle_counts_the_unit_that_steps_in_behind_her():
    opts = Options(sergeants=True)
    state = pos({"wL": "e1", "wW": "keep", "wF": "e2", "wK": "e2"}, options=opts)
    # leaving the Castle lets wW in; sending wF there would push wW onto a full Green
    assert "wL e2 rose wF" not in acts(state)
    state = pos({"wL": "e1", "wW": "keep", "wF": "e2"}, options=opts)
    state.apply("wL e2 rose wF")
    assert where(state, "wW") == "e2" and where(state, "wL") == "e2"
    assert where(state, "wF") == "e1"
