"""Royal Conquest: first player by the Dragon draw, dealing for 2, 3, 4 players, the redeal."""

from __future__ import annotations

import random
from math import isclose

import pytest

from engines.errors import InvalidPositionError
from engines.royal_conquest import (
    CHANCE,
    DrawWar,
    FirstPlayer,
    GameState,
    Options,
    first_player_odds,
    parse_war_card,
)
from tests.rc_support import conserved, draw


def dealt(players: int, seed: int = 1, first: int = 0) -> GameState:
    rng = random.Random(seed)
    state = GameState(players)
    state.apply(FirstPlayer(first))
    while state.is_chance_node():
        state.apply(state.sample_chance(rng))
    return state


def test_players_two_to_four_only():
    for bad in (1, 5):
        with pytest.raises(InvalidPositionError):
            GameState(bad)


def test_match_starts_with_the_dragon_draw():
    state = GameState(3)
    assert state.phase == "first" and state.is_chance_node()
    assert state.current_player() == CHANCE
    assert state.legal_actions() == [FirstPlayer(0), FirstPlayer(1), FirstPlayer(2)]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_dragon_draw_odds(players):
    odds = first_player_odds(players)
    assert isclose(sum(odds), 1.0)
    assert odds == sorted(odds, reverse=True)  # drawing earlier is a (small) advantage


def test_dragon_draw_odds_exact_for_two():
    # First of 2 Dragons in 24 cards at draw k (0-based): (23 - k) / 276; p0 draws even k.
    assert isclose(first_player_odds(2)[0], sum(23 - k for k in range(0, 23, 2)) / 276)


@pytest.mark.parametrize(
    "players,war,act,field,deck", [(2, 10, 1, 8, 20), (3, 7, 2, 6, 21), (4, 6, 3, 4, 20)]
)
def test_deal(players, war, act, field, deck):
    state = dealt(players, first=players - 1)
    assert state.phase == "play"
    assert state.current == players - 1 == state.current_player()
    assert [len(h) for h in state.hands] == [war] * players
    assert [sum(h.values()) for h in state.action_hands] == [act] * players
    assert len(state.battlefield) == field
    assert len(state.war_deck) == deck
    assert sum(state.action_deck.values()) == 24 - act * players
    conserved(state)


def test_three_matching_cards_on_the_battlefield_redeal():
    state = GameState(2)
    state.apply(FirstPlayer(0))
    for card in ["B1", "B2", "D1", "D2", "F1", "F2", "H1"]:
        draw(state, card)
    draw(state, "B3")  # 8th Battlefield card makes three B: the deal starts again
    assert state.redeals == 1
    assert state.battlefield == []
    assert len(state.war_deck) == 48
    assert [k for k, _ in state.queue[:8]] == ["bf"] * 8
    conserved(state)


def test_two_matching_cards_do_not_redeal():
    state = GameState(2)
    state.apply(FirstPlayer(0))
    for card in ["B1", "B2", "D1", "D2", "F1", "F2", "H1", "H2"]:
        draw(state, card)
    assert state.redeals == 0 and len(state.battlefield) == 8


def test_redeal_option_off_keeps_the_triple_frozen():
    state = GameState(2, Options(redeal_on_triple=False))
    state.apply(FirstPlayer(0))
    for card in ["B1", "B2", "D1", "D2", "F1", "F2", "H1", "B3"]:
        draw(state, card)
    assert state.redeals == 0 and state.frozen_arms() == [1]


def test_chance_outcomes_are_distributions():
    state = GameState(2)
    state.apply(FirstPlayer(1))
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 48
    assert isclose(sum(p for _, p in outcomes), 1.0)
    assert all(isinstance(a, DrawWar) for a, _ in outcomes)
    # drawing a card already out of the deck is illegal
    draw(state, "A1")
    before = state.to_json()
    with pytest.raises(Exception, match="not legal"):
        state.apply(DrawWar(parse_war_card("A1")))
    assert state.to_json() == before
