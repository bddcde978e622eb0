"""Royal Conquest: the Battle phase (matching, captures, frozen triples, Special Instances)."""

from __future__ import annotations

import pytest

from engines.errors import IllegalActionError
from engines.royal_conquest import (
    DrawAction,
    GameState,
    Options,
    Pass,
    Play,
    Take,
    parse_action,
    parse_war_card,
)
from tests.rc_support import conserved, draw, make_state, names


def play(state: GameState, text: str) -> None:
    state.apply(parse_action(text))


def end_turn(state: GameState) -> None:
    """Draw no Action cards, play none; the state moves to the next player."""
    while state.phase == "bonus":
        state.apply(DrawAction(state.chance_outcomes()[0][0].kind))
    if state.phase == "action":
        state.apply(Pass())


def two(battlefield, hand0, hand1=("L1", "L2"), **kw) -> GameState:
    return make_state(2, battlefield=list(battlefield), hands=[list(hand0), list(hand1)], **kw)


def test_unmatched_cards_stay_on_the_battlefield():
    state = two(["B1"], ["D1", "D2"])
    play(state, "play D1")
    assert state.phase == "draw" and state.is_chance_node()
    draw(state, "H1")
    assert names(state.battlefield) == ["B1", "D1", "H1"]
    assert state.stacks[0] == [] and state.turn.instances == []
    assert state.phase == "action" and state.current_player() == 0
    state.apply(Pass())
    assert state.phase == "play" and state.current == 1
    conserved(state)


def test_faq_drawn_card_goes_to_the_battlefield_not_the_hand():
    state = two(["B1"], ["D1", "D2"])
    play(state, "play D1")
    draw(state, "H1")
    assert names(state.hands[0]) == ["D2"]
    assert parse_war_card("H1") in state.battlefield


def test_hand_card_match_is_captured():
    state = two(["B1", "H1"], ["B2", "D2"])
    play(state, "play B2")  # the only B on the Battlefield: target filled in
    assert state.turn.target == parse_war_card("B1")
    draw(state, "F1")
    assert names(state.stacks[0]) == ["B1", "B2"]
    assert names(state.battlefield) == ["F1", "H1"]


def test_matching_is_compulsory_and_a_choice_between_two():
    state = two(["B1", "B2", "H1"], ["B3", "D2"])
    legal = state.legal_actions()
    assert Play(parse_war_card("B3")) not in legal
    assert [str(a) for a in legal] == ["play B3 on B1", "play B3 on B2", "play D2"]
    with pytest.raises(IllegalActionError):
        play(state, "play B3")  # two targets: the player must say which
    play(state, "play B3 on B2")
    draw(state, "F1")
    assert names(state.stacks[0]) == ["B2", "B3"]
    assert names(state.battlefield) == ["B1", "F1", "H1"]


def test_drawn_card_match_is_captured():
    state = two(["B1", "H1"], ["D2", "F2"])
    play(state, "play D2")
    draw(state, "H2")
    assert names(state.stacks[0]) == ["H1", "H2"]


def test_drawn_card_with_two_matches_asks_which():
    state = two(["H1", "H2", "B1"], ["D2", "F2"])
    play(state, "play D2")
    draw(state, "H3")
    assert state.phase == "take" and state.current_player() == 0
    assert state.legal_actions() == [Take(parse_war_card("H1")), Take(parse_war_card("H2"))]
    state.apply(Take(parse_war_card("H2")))
    assert names(state.stacks[0]) == ["H2", "H3"]
    assert names(state.battlefield) == ["B1", "D2", "H1"]


def test_both_hand_and_drawn_match_captured_in_one_turn():
    state = two(["B1", "H1", "F1"], ["B2", "D2"])
    play(state, "play B2")
    draw(state, "H2")
    assert names(state.stacks[0]) == ["B1", "B2", "H1", "H2"]
    assert names(state.battlefield) == ["F1"]


def test_hand_and_drawn_card_matching_the_same_card_freeze():
    state = two(["B1", "H1"], ["B2", "D2"])
    play(state, "play B2")
    draw(state, "B3")
    assert names(state.battlefield) == ["B1", "B2", "B3", "H1"]
    assert state.frozen_arms() == [1]
    assert state.stacks[0] == [] and state.turn.instances == []


def test_fourth_card_from_hand_releases_a_frozen_triple_and_draws_an_action_card():
    state = two(["B1", "B2", "B3", "H1"], ["B4", "D2"])
    assert [str(a) for a in state.legal_actions()][0] == "play B4"  # no choice: takes all
    play(state, "play B4")
    draw(state, "F1")
    assert names(state.stacks[0]) == ["B1", "B2", "B3", "B4"]
    assert state.turn.instances == ["unfreeze"]
    assert state.phase == "bonus" and [k for k, _ in state.queue] == ["bonus"]
    kinds_before = sum(state.action_hands[0].values())
    state.apply(DrawAction(state.chance_outcomes()[0][0].kind))
    assert sum(state.action_hands[0].values()) == kinds_before + 1
    assert state.phase == "action"


@pytest.mark.parametrize("counts", [True, False])
def test_fourth_card_from_the_war_deck_releases_too(counts):
    state = two(["B1", "B2", "B3", "H1"], ["D2", "F2"],
                options=Options(drawn_card_unfreezes=counts))  # fmt: skip
    play(state, "play D2")
    draw(state, "B4")
    assert names(state.stacks[0]) == ["B1", "B2", "B3", "B4"]
    assert state.turn.instances == (["unfreeze"] if counts else [])


def test_pair_on_battlefield_plus_third_and_fourth_in_one_turn_takes_all_four():
    state = two(["B1", "B2", "H1"], ["B3", "D2"])
    play(state, "play B3 on B1")
    draw(state, "B4")
    assert names(state.stacks[0]) == ["B1", "B2", "B3", "B4"]
    assert state.turn.instances == []


def test_drawing_a_match_for_the_card_just_placed_is_a_special_instance():
    state = two(["H1", "F1"], ["B1", "D2"])
    play(state, "play B1")
    draw(state, "B2")
    assert names(state.stacks[0]) == ["B1", "B2"]
    assert state.turn.instances == ["own_match"]


def test_clearing_the_battlefield_is_a_special_instance():
    state = two(["H1"], ["B1", "D2"])
    play(state, "play B1")
    draw(state, "H2")
    assert names(state.stacks[0]) == ["H1", "H2"]
    assert state.battlefield != []  # B1 is left: no clear
    state = two(["H1", "B1"], ["B2", "D2"])
    play(state, "play B2")
    draw(state, "H2")
    assert state.battlefield == []
    assert state.turn.instances == ["clear"]


def test_faq_matching_the_last_card_with_the_hand_card_is_not_a_clear():
    state = two(["B1"], ["B2", "D2"])
    play(state, "play B2")
    draw(state, "H1")  # nothing to match: the Battlefield is not clear at the end
    assert names(state.stacks[0]) == ["B1", "B2"]
    assert names(state.battlefield) == ["H1"]
    assert state.turn.instances == []


def test_matching_a_draw_symbol_card_is_a_special_instance():
    state = two(["A4", "H1"], ["A1", "D2"])
    play(state, "play A1")
    draw(state, "F1")
    assert state.turn.instances == ["draw_symbol"]


def test_faq_one_action_card_per_special_instance():
    # Hand card takes A4 (draw symbol) and the drawn card takes the last card: 2 instances.
    state = two(["A4", "H1"], ["A1", "D2"])
    play(state, "play A1")
    draw(state, "H2")
    assert sorted(state.turn.instances) == ["clear", "draw_symbol"]
    assert [k for k, _ in state.queue] == ["bonus", "bonus"]
    end_turn(state)
    assert sum(state.action_hands[0].values()) == 2
    conserved(state)


def test_special_instances_with_an_empty_action_deck_reshuffle_the_discard():
    state = two(["H1", "F1"], ["B1", "D2"], action_deck={}, action_discard={"thief": 6})
    play(state, "play B1")
    draw(state, "B2")
    assert state.is_chance_node() and dict(state.action_deck) != {}
    assert sum(state.action_discard.values()) == 0
    state.apply(DrawAction(state.chance_outcomes()[0][0].kind))
    conserved(state)


def test_empty_war_deck_skips_the_draw():
    state = make_state(
        4, battlefield=["B1", "H1"], hands=[["B2"], ["D1"], ["D2"], ["F1"]], war_deck=[]
    )
    play(state, "play B2")
    assert not state.is_chance_node()
    assert names(state.stacks[0]) == ["B1", "B2"]
    assert state.phase == "action"


def test_wrong_player_or_card_is_illegal_and_changes_nothing():
    state = two(["B1"], ["D1", "D2"])
    before = state.to_json()
    for bad in ("play L1", "play H1", "stop", "go", "take B1", "war A1", "defend"):
        with pytest.raises(IllegalActionError):
            play(state, bad)
        assert state.to_json() == before


def test_drawn_card_matching_a_draw_symbol_card_is_an_instance():
    state = two(["C4", "H1"], ["D2", "F2"])
    play(state, "play D2")
    draw(state, "C3")
    assert names(state.stacks[0]) == ["C3", "C4"]
    assert state.turn.instances == ["draw_symbol"]


def test_own_match_on_an_empty_battlefield_is_also_a_clear():
    state = two([], ["B1", "D2"])
    play(state, "play B1")
    draw(state, "B2")
    assert state.battlefield == []
    assert state.turn.instances == ["own_match", "clear"]
    assert len(state.queue) == 2
