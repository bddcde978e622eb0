"""War Lord Tourney: movement, terrain, the Castle and its Green, stacking."""

from __future__ import annotations

import pytest

from engines.errors import InvalidPositionError
from engines.war_lord_tourney import GameState, Options
from tests.wlt_helpers import pos


def targets(state: GameState, unit: str) -> set[str]:
    return {m.to for m in state.unit_moves(unit) if m.rose is None}


def test_footman_two_straight_or_one_diagonal_never_combined():
    state = pos({"wF": "d3"})
    assert targets(state, "wF") == {"d4", "d5", "d2", "d1", "c3", "b3", "e3", "f3",
                                    "c4", "e4", "c2", "e2"}


def test_warlord_moves_like_a_footman():
    state = pos({"wW": "d3"})
    assert targets(state, "wW") == targets(pos({"wF": "d3"}), "wF")


def test_knight_up_to_four_straight_never_into_or_through_forest_or_rough():
    state = pos({"wK": "d4"})
    got = targets(state, "wK")
    assert {"d5", "d6", "d7", "d8", "e4", "f4", "a1"} - {"a1"} <= got
    assert "c4" not in got and "b4" not in got  # forest c4 and beyond
    assert "e5" not in got and "f6" not in got  # rough e5 and beyond
    assert "g4" not in got and "h4" not in got  # forest g4
    assert "d9" not in got  # five squares is too far
    assert {"c5", "b6", "a7", "c3", "b2"} <= got


def test_lady_moves_like_a_knight():
    assert targets(pos({"wL": "d4"}), "wL") == targets(pos({"wK": "d4"}), "wK")


def test_footman_may_enter_forest_and_rough():
    state = pos({"wF": "e3"})
    assert "e5" in targets(state, "wF")
    assert "c4" in targets(pos({"wF": "c3"}), "wF")


def test_sergeant_two_diagonal_or_one_orthogonal():
    state = pos({"wS": "d3"}, options=Options(sergeants=True))
    assert targets(state, "wS") == {"d4", "d2", "c3", "e3", "e4", "f5", "c4", "b5",
                                    "e2", "f1", "c2", "b1"}


def test_sergeant_needs_the_option():
    with pytest.raises(InvalidPositionError):
        pos({"wS": "d3"})
    state = GameState.new(options=Options(sergeants=True))
    assert state.units["wS"].cell == "g1" and state.units["bS"].cell == "g9"


def test_units_block_the_way_unless_the_option_allows_passing():
    state = pos({"wF": "d3", "wK": "d4"})
    assert "d5" not in targets(state, "wF")
    assert "d4" in targets(state, "wF")  # two friends may share a square
    state = pos({"wF": "d3", "wK": "d4"}, options=Options(pass_through_units=True))
    assert "d5" in targets(state, "wF")


def test_own_castle_entered_and_left_only_through_the_green():
    state = pos({"wF": "e3"})
    assert "e1" in targets(state, "wF")  # e3 -> e2 (Green) -> e1
    assert "e1" not in targets(pos({"wF": "d2"}), "wF")  # not diagonally
    assert "e1" not in targets(pos({"wF": "d1"}), "wF")  # not from the side
    assert targets(pos({"wF": "e1"}), "wF") == {"e2", "e3"}
    knight = targets(pos({"wK": "e1"}), "wK")
    assert knight == {"e2", "e3", "e4"}  # straight out; rough e5 stops it


def test_opposing_castle_needs_a_stop_on_its_green_first():
    state = pos({"wF": "e7"})
    assert "e9" not in targets(state, "wF") and "e8" in targets(state, "wF")
    assert "e9" in targets(pos({"wF": "e8"}), "wF")
    assert "e9" in targets(pos({"wK": "e8"}), "wK")


def test_capturing_the_vacant_opposing_castle_wins():
    state = pos({"wF": "e8"})
    state.apply("wF e9")
    assert state.is_terminal()
    assert state.outcome().winner == "white"
    assert "Castle" in state.outcome().reason


def test_stacking_two_a_square_one_in_forest_one_in_castle():
    state = pos({"wF": "d3", "wK": "d5", "wS": "d4"}, options=Options(sergeants=True))
    state2 = pos({"wF": "d3", "wK": "d4", "wS": "d4"}, options=Options(sergeants=True))
    assert "d4" in targets(state, "wF")
    assert "d4" not in targets(state2, "wF")  # two friends there already
    assert "c4" not in targets(pos({"wF": "c3", "wS": "c4"}, options=Options(sergeants=True)),
                               "wF")
    assert "e1" not in targets(pos({"wF": "e3", "wK": "e1"}), "wF")


def test_attack_allowed_whatever_the_enemy_count():
    state = pos({"wF": "d3", "bF": "d4", "bK": "d4"})
    assert "d4" in targets(state, "wF")


@pytest.mark.parametrize("placements, field", [
    ({"wK": "c4"}, "units.wK.cell"),  # a Knight in a forest
    ({"wL": "e5"}, "units.wL.cell"),  # a Lady on rough terrain
    ({"wF": "c4", "wK": "d4", "wS": "c4"}, "units.wS.cell"),  # two in a forest
    ({"wF": "z9"}, "units.wF.cell"),
])
def test_invalid_positions_name_the_field(placements, field):
    with pytest.raises(InvalidPositionError) as info:
        pos(placements, options=Options(sergeants=True))
    assert info.value.field == field


def test_only_the_side_to_move_moves_and_only_once_a_turn():
    state = pos({"wF": "d3", "bF": "d7"})
    assert state.unit_moves("bF") == []
    state.apply("wF d4")
    assert state.to_move == "black"
    assert state.unit_moves("wF") == []
    assert state.unit_moves("bF")


def test_pass_only_when_nothing_can_move():
    state = GameState.position({"wL": "e1", "wW": "e2", "wF": "e2", "bW": "a9", "bL": "i9"},
                               options=Options(double_kills="heal"))
    assert "pass" not in [str(a) for a in state.legal_actions()]
    data = state.to_json()
    data["units"]["wW"]["downed"] = data["units"]["wF"]["downed"] = True
    state = GameState.from_json(data)  # the Lady's only way out, the Green, is full
    assert [str(a) for a in state.legal_actions()] == ["pass"]
    state.apply("pass")
    assert state.to_move == "black" and state.turn == 2
