"""War Lord Tourney: the Lady's rose, combat, slay or capture, the mixed-stack cases."""

from __future__ import annotations

from engines.war_lord_tourney import GameState, Options, Roll, Strike, Verdict
from tests.wlt_helpers import acts, pos, where


def test_fighter_captures_a_lone_lady_without_combat():
    state = pos({"wF": "d3", "bL": "d5"})
    state.apply("wF d5")
    assert not state.is_chance_node()
    assert state.dungeons["white"] == ["bL"]
    assert where(state, "wF") == "d5"
    assert state.to_move == "black"


def test_lady_captures_a_knight_or_warlord_by_her_rose():
    for victim in ("bK", "bW"):
        state = pos({"wL": "d3", victim: "d5"})
        state.apply("wL d5")
        assert victim in state.dungeons["white"]
        assert where(state, "wL") == "d5"


def test_lady_cannot_capture_a_footman_who_takes_her():
    state = pos({"wL": "d3", "bF": "d5"})
    state.apply("wL d5")
    assert state.dungeons["black"] == ["wL"]
    assert where(state, "bF") == "d5"


def test_two_ladies_capture_each_other():
    state = pos({"wL": "d3", "bL": "d5"})
    state.apply("wL d5")
    assert state.dungeons == {"white": ["bL"], "black": ["wL"]}


def test_lady_and_knight_attacked_by_a_lady_knight_surrenders_ladies_swap():
    state = pos({"wL": "d3", "bL": "d5", "bK": "d5"})
    state.apply("wL d5")
    assert sorted(state.dungeons["white"]) == ["bK", "bL"]
    assert state.dungeons["black"] == ["wL"]


def test_footman_never_surrenders_to_a_lady():
    state = pos({"wL": "d3", "bL": "d5", "bF": "d5"})
    state.apply("wL d5")
    assert state.dungeons == {"white": ["bL"], "black": ["wL"]}
    assert where(state, "bF") == "d5"


def test_lady_and_fighter_attacked_by_a_footman_fight_and_fall_together():
    state = pos({"wF": "d3", "bL": "d5", "bK": "d5"})
    state.apply("wF d5")
    assert state.is_chance_node() and state.current_player() is None
    assert acts(state) == ["white wins", "black wins"]
    state.apply("white wins")
    assert state.dungeons["white"] == ["bL"]  # the Lady is captured, never slain
    assert state.current_player() == "white"
    assert acts(state) == ["capture bK", "slay bK"]
    state.apply("slay bK")
    assert where(state, "bK") == "dead"
    assert state.to_move == "black"


def test_lady_with_fighter_survives_when_her_fighter_wins():
    state = pos({"wF": "d3", "bL": "d5", "bK": "d5"})
    state.apply("wF d5")
    state.apply("black wins")
    assert state.current_player() == "black"
    state.apply("capture wF")
    assert state.dungeons["black"] == ["wF"]
    assert where(state, "bL") == "d5" and where(state, "bK") == "d5"


def test_a_knight_surrenders_to_a_lady_on_the_square_it_attacks():
    state = pos({"wK": "d3", "bL": "d5", "bF": "d5"})
    state.apply("wK d5")
    assert state.dungeons["black"] == ["wK"]
    assert not state.is_chance_node()


def test_lady_attacking_two_fighters_captures_one_and_is_captured():
    state = pos({"wL": "d3", "bW": "d5", "bK": "d5"})
    state.apply("wL d5")
    assert state.dungeons["white"] == ["bW"]  # the Warlord is taken first
    assert state.dungeons["black"] == ["wL"]
    assert where(state, "bK") == "d5"


def test_two_to_one_all_fight_and_the_losing_pair_falls_together():
    state = pos({"wF": "d3", "bF": "d5", "bK": "d5"})
    state.apply("wF d5")
    state.apply("white wins")
    assert sorted(state.verdicts) == ["bF", "bK"]
    for unit in list(state.verdicts):
        state.apply(Verdict(unit, unit == "bK"))
    assert state.dungeons["white"] == ["bF"] and where(state, "bK") == "dead"


def test_dice_resolver_higher_roll_wins_and_each_extra_fighter_adds_one():
    opts = Options(combat="dice")
    state = pos({"wF": "d3", "bF": "d5"}, options=opts)
    state.apply("wF d5")
    assert len(state.legal_actions()) == 36
    state.apply(Roll(3, 3))  # a tie: both parry, combat goes on
    assert state.is_chance_node()
    state.apply(Roll(5, 2))
    assert state.verdict_side == "white"
    state = pos({"wF": "d3", "bF": "d5", "bK": "d5"}, options=opts)
    state.apply("wF d5")
    state.apply(Roll(4, 3))  # 4+1 against 3+2: a tie
    assert state.is_chance_node()
    state.apply(Roll(4, 4))  # 5 against 6: black strikes
    assert state.verdict_side == "black" and state.verdicts == ["wF"]


def test_fighters_never_slay_a_lady_only_capture():
    state = pos({"wF": "d3", "bL": "d5", "bF": "d5"})
    state.apply("wF d5")
    state.apply("white wins")
    assert all(v != "bL" for v in state.verdicts)
    assert "bL" in state.dungeons["white"]


def test_occupied_castle_means_combat_and_winning_it_captures_the_castle():
    state = pos({"wK": "e8", "bF": "e9"})
    state.apply("wK e9")
    assert state.is_chance_node()
    state.apply("white wins")
    state.apply("capture bF")
    assert state.outcome().winner == "white"


def test_defender_of_a_castle_who_wins_keeps_it():
    state = pos({"wK": "e8", "bF": "e9"})
    state.apply("wK e9")
    state.apply("black wins")
    state.apply("slay wK")
    assert not state.is_terminal()
    assert where(state, "bF") == "e9"


def test_blows_to_slay_needs_several_blows():
    state = pos({"wF": "d3", "bF": "d5"}, options=Options(blows_to_slay=2))
    state.apply("wF d5")
    state.apply("white wins")
    assert state.is_chance_node() and state.units["bF"].wounds == 1
    state.apply("black wins")
    state.apply("white wins")
    assert state.verdicts == ["bF"]
    assert state.units["wF"].wounds == 0  # wounds heal after the fight without the option


def test_retained_wounds_stay_until_a_friendly_lady_shares_the_square():
    opts = Options(blows_to_slay=2, retained_wounds=True)
    state = pos({"wF": "d3", "bF": "d5", "wL": "d7"}, options=opts)
    state.apply("wF d5")
    state.apply("black wins")
    state.apply("white wins")
    state.apply("white wins")
    state.apply("slay bF")
    assert state.units["wF"].wounds == 1
    state.apply("bW a8")
    state.apply("wF d4")
    assert state.units["wF"].wounds == 1  # open ground does not heal
    state.apply("bW a9")
    state.apply("wL d4")
    assert state.units["wF"].wounds == 0


def test_retained_wounds_heal_in_the_own_castle():
    opts = Options(blows_to_slay=2, retained_wounds=True)
    state = pos({"wF": "e4", "bF": "e6"}, options=opts)
    data = state.to_json()
    data["units"]["wF"]["wounds"] = 1
    state = GameState.from_json(data)
    state.apply("wF e2")
    assert state.units["wF"].wounds == 1
    state.apply("bW a8")
    state.apply("wF e1")
    assert state.units["wF"].wounds == 0


def test_double_kill_needs_the_option():
    state = pos({"wF": "d3", "bF": "d5"})
    state.apply("wF d5")
    assert Strike(None) not in state.legal_actions()


def test_double_kill_heal_mode_lady_heals_and_the_healed_may_slay():
    state = pos({"wF": "d3", "bF": "d5", "wL": "d7"}, options=Options(double_kills="heal"))
    state.apply("wF d5")
    state.apply("both strike")
    assert state.units["wF"].downed and state.units["bF"].downed
    assert state.to_move == "black"
    assert state.unit_moves("bF") == []  # the fallen cannot move
    state.apply("bW a8")
    assert state.unit_moves("wF") == []
    state.apply("wL d5")
    assert not state.units["wF"].downed
    assert state.verdict_side == "white" and state.verdicts == ["bF"]
    state.apply(Verdict("bF", True))
    assert where(state, "bF") == "dead"


def test_double_kill_heal_mode_enemies_cannot_finish_the_fallen():
    state = pos({"wF": "d3", "bF": "d5", "bK": "d8"}, options=Options(double_kills="heal"))
    state.apply("wF d5")
    state.apply("both strike")
    state.apply("bK d5")
    assert not state.verdicts and state.units["wF"].downed


def test_double_kill_slay_mode_an_arriving_fighter_finishes_the_fallen():
    state = pos({"wF": "d3", "bF": "d5", "bK": "d8"}, options=Options(double_kills="slay"))
    state.apply("wF d5")
    state.apply("both strike")
    state.apply("bK d5")
    assert state.verdict_side == "black" and state.verdicts == ["wF"]
    state.apply("slay wF")
    assert where(state, "wF") == "dead"
    assert state.units["bF"].downed  # still waits for its own Lady


def test_dice_tie_is_a_double_kill_with_the_option():
    state = pos({"wF": "d3", "bF": "d5"}, options=Options(combat="dice", double_kills="slay"))
    state.apply("wF d5")
    state.apply(Roll(2, 2))
    assert state.units["wF"].downed and state.units["bF"].downed
