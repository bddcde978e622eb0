"""Royal Conquest: the Call phase (STOP, GO, GO chips), Gems and the end of hands and match."""

from __future__ import annotations

import random

import pytest

from engines.royal_conquest import (
    Defend,
    GameState,
    Go,
    Options,
    Pass,
    Stop,
    parse_action,
)
from tests.rc_support import conserved, make_state, names

WANDS = ["A1", "B1", "C1"]  # 5 points
CROWNS5 = ["A3", "B3", "J2", "K2", "L2"]
HELMETS = ["A2", "B2", "C2"]  # 3 points
RANDOM5 = ["D1", "E1", "G1", "H1", "J1"]  # 5 random weapons: 2 points


def at_call(players=2, stacks0=(), **kw) -> GameState:
    stacks = [list(stacks0)] + [[] for _ in range(players - 1)]
    hands = [["F1"], ["F2"], ["F3"], ["F4"]][:players]
    state = make_state(players, phase="action", stacks=stacks, hands=hands, **kw)
    state.apply(Pass())
    return state


@pytest.mark.parametrize(
    "players,stacks,calls",
    [
        (2, WANDS, True), (2, HELMETS, False),
        (3, HELMETS, True), (3, ["D1", "E1"], False),
        (4, RANDOM5, True), (4, ["D1"], False),
    ],
)  # fmt: skip
def test_minimum_points_by_player_count(players, stacks, calls):
    state = at_call(players, stacks)
    if calls:
        assert state.phase == "call" and state.legal_actions() == [Stop(), Go()]
    else:
        assert state.phase == "play" and state.current == 1


def test_minimum_points_option():
    state = at_call(2, HELMETS, options=Options(minimum_points=3))
    assert state.phase == "call"


def test_stop_wins_the_hand_at_once():
    state = at_call(2, WANDS)
    state.apply(Stop())
    assert state.results[0].winner == 0 and state.results[0].points == 5
    assert state.gems == [2, 0] and state.pot == 23  # one Gem per player of the hand
    assert state.phase == "deal" and state.hand_no == 1  # nobody plays another turn
    assert state.first_player == 0 and len(state.war_deck) == 48
    conserved(state)


def test_stop_even_with_fewer_points_than_another_player():
    state = make_state(2, phase="action", stacks=[WANDS, HELMETS + CROWNS5[:3]],
                       hands=[["F1"], ["F2"]])  # fmt: skip
    state.apply(Pass())
    state.apply(Stop())
    assert state.results[0].winner == 0


def test_winner_of_a_hand_goes_first_next_hand():
    state = make_state(3, phase="action", current=2, stacks=[[], [], HELMETS],
                       hands=[["F1"], ["F2"], ["F3"]])  # fmt: skip
    state.apply(Pass())
    state.apply(Stop())
    assert state.first_player == 2
    rng = random.Random(3)
    while state.is_chance_node():
        state.apply(state.sample_chance(rng))
    assert state.current_player() == 2
    assert state.gems == [0, 0, 3]


def test_go_places_a_chip_and_play_continues():
    state = at_call(2, WANDS)
    state.apply(Go())
    assert state.go_chips == [1, 0] and state.go_score == [5, None]
    assert state.phase == "play" and state.current == 1


def test_after_go_one_more_point_is_needed():
    state = at_call(2, WANDS, go_chips=[1, 0], go_score=[5, None])
    assert state.phase == "play"  # still 5 points: no call
    state = at_call(2, WANDS + ["B4", "C3", "D3", "D4", "E3", "F3", "G3", "H3"],
                    go_chips=[1, 0], go_score=[5, None])  # fmt: skip
    assert state.phase == "call"  # 6 points
    state.apply(Go())
    assert state.go_chips == [2, 0] and state.go_score == [6, None]


def test_faq_below_the_minimum_after_a_theft_needs_the_minimum_again():
    # p0 called GO at 5 (3 Wands); p1 steals a Wand: p0 is below the minimum.
    state = make_state(2, phase="action", current=1, stacks=[WANDS + HELMETS[:2], []],
                       hands=[["F1"], ["F2"]], action_hands=[{}, {"thief": 1}],
                       go_chips=[1, 0], go_score=[5, None])  # fmt: skip
    state.apply(parse_action("use thief p0 A1"))
    assert state.score(0).points == 0
    assert state.call_threshold(0) == 5
    # gaining one point (1 < 5) is no call...
    state2 = make_state(2, phase="action", stacks=[["B1", "C1", *HELMETS[:2], "D1", "E1", "G1",
                                                    "H1", "J1"], []],
                        hands=[["F1"], ["F2"]], go_chips=[1, 0], go_score=[4, None])  # fmt: skip
    assert state2.score(0).points == 2
    state2.apply(Pass())
    assert state2.phase == "play"
    # ...the minimum again is (FAQ reading, the default)
    state.stacks[0] += ["A2"]  # 3 Helmets: 3 points < 5
    assert state.call_threshold(0) == 5


def test_go_reset_option_off_needs_one_more_than_the_go():
    state = make_state(2, phase="action", current=1, stacks=[WANDS, []], hands=[["F1"], ["F2"]],
                       action_hands=[{}, {"thief": 1}], go_chips=[1, 0], go_score=[5, None],
                       options=Options(go_reset_below_minimum=False))  # fmt: skip
    state.apply(parse_action("use thief p0 A1"))
    assert state.call_threshold(0) == 6


def test_five_crowns_force_stop_and_earn_a_gem():
    state = at_call(2, CROWNS5)  # 4 points, below the minimum of 5: still a forced STOP
    assert state.phase == "call" and state.legal_actions() == [Stop()]
    state.apply(Stop())
    assert state.gems == [3, 0] and state.results[0].five_crowns


def test_five_crowns_after_go_still_force_stop():
    state = at_call(2, CROWNS5, go_chips=[1, 0], go_score=[9, None])
    assert state.legal_actions() == [Stop()]


@pytest.mark.parametrize("bonus,chips,gems", [("triangular", 1, 3), ("triangular", 2, 5),
                                              ("triangular", 3, 8), ("linear", 3, 5)])  # fmt: skip
def test_go_chip_bonus(bonus, chips, gems):
    state = at_call(2, WANDS + ["B4", "C3", "D3", "D4", "E3", "F3", "G3", "H3", "H4"],
                    go_chips=[chips, 0], go_score=[5, None],
                    options=Options(go_bonus=bonus))  # fmt: skip
    state.apply(Stop())
    assert state.gems[0] == gems


@pytest.mark.parametrize("mode,gems", [("count", 3), ("keep", 2)])
def test_go_chips_of_others_pass_to_the_winner(mode, gems):
    state = at_call(2, WANDS, go_chips=[0, 1], go_score=[None, 5],
                    options=Options(passed_go_chips=mode))  # fmt: skip
    state.apply(Stop())
    assert state.results[0].passed_chips == 1
    assert state.gems == [gems, 0]
    assert state.go_chips == [0, 0]  # chips go back with the new hand


def test_gems_are_capped_by_the_pot_and_the_match_ends_when_it_is_empty():
    state = at_call(2, WANDS, gems=[12, 12], pot=1)
    state.apply(Stop())
    assert state.gems == [13, 12] and state.pot == 0
    assert state.is_terminal() and state.legal_actions() == []
    out = state.outcome()
    assert out is not None and out.winners == (0,) and out.reason == "pot_empty"
    conserved(state)


def test_tied_gems_share_the_win():
    state = at_call(2, WANDS, gems=[12, 13], pot=1, options=Options(gem_pot=26))
    state.apply(Stop())
    assert state.outcome().winners == (0, 1)


def test_max_hands_option():
    state = at_call(2, WANDS, options=Options(max_hands=1))
    state.apply(Stop())
    assert state.is_terminal() and state.outcome().reason == "max_hands"


@pytest.mark.parametrize("rule,first", [("same", 0), ("next", 1)])
def test_hand_nobody_stopped_is_void(rule, first):
    state = make_state(2, phase="action", current=1, hands=[[], []], first_player=0,
                       stacks=[HELMETS, []], options=Options(after_void_hand=rule))  # fmt: skip
    state.apply(Pass())
    assert state.results[0].winner is None and state.gems == [0, 0]
    assert state.phase == "deal" and state.first_player == first
    conserved(state)


def test_thief_can_bring_the_actor_to_a_call():
    state = make_state(2, phase="action", stacks=[["A1", "B1"], ["C1"]], hands=[["F1"], ["F2"]],
                       action_hands=[{"thief": 1}, {"defend": 1}])  # fmt: skip
    state.apply(parse_action("use thief p1 C1"))
    state.apply(Pass())  # p1 keeps the Defend
    assert state.phase == "call" and names(state.stacks[0]) == WANDS
    state.apply(Go())
    assert state.go_chips == [1, 0]


def test_defended_thief_leaves_no_call():
    state = make_state(2, phase="action", stacks=[["A1", "B1"], ["C1"]], hands=[["F1"], ["F2"]],
                       action_hands=[{"thief": 1}, {"defend": 1}])  # fmt: skip
    state.apply(parse_action("use thief p1 C1"))
    state.apply(Defend())
    assert state.phase == "play" and state.current == 1
