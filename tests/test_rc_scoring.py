"""Royal Conquest: the deck data and the Stacks scoring table, with the FAQ rulings."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engines.errors import InvalidPositionError, ParseError, RulesError
from engines.royal_conquest import (
    ACTION_SUPPLY,
    ALL_WAR_CARDS,
    DEFAULT_DECK,
    TOKEN_SUPPLY,
    ActionKind,
    Deck,
    Token,
    check_supply,
    near_combinations,
    parse_action_kind,
    parse_token,
    parse_war_card,
    score_tokens,
)


def toks(text: str) -> list[Token]:
    return [parse_token(w) for w in text.split()]


def points(text: str, grouping: str = "always") -> int:
    return score_tokens(toks(text), grouping).points


def names(text: str, grouping: str = "always") -> list[str]:
    return [c.name for c in score_tokens(toks(text), grouping).combinations]


# -- the decks ---------------------------------------------------------------------------------


def test_war_deck_is_48_cards_12_coats_of_arms_of_4():
    assert len(ALL_WAR_CARDS) == 48
    assert Counter(c.arms for c in ALL_WAR_CARDS) == {a: 4 for a in range(12)}


def test_default_deck_carries_the_booklet_tokens():
    counts = Counter(DEFAULT_DECK.token(c) for c in ALL_WAR_CARDS)
    assert counts == {
        Token.WAND: 3, Token.BOW: 3, Token.SWORD: 3, Token.AXE: 3, Token.HELMET: 3,
        Token.BODY: 3, Token.SHIELD: 3, Token.CROWN: 5, Token.CASTLE: 22,
    }  # fmt: skip
    assert sum(counts.values()) - counts[Token.CASTLE] == 26


def test_default_draw_symbols_are_documented_six_castles():
    drawn = [c for c in ALL_WAR_CARDS if DEFAULT_DECK.has_draw(c)]
    assert [str(c) for c in drawn] == ["A4", "C4", "E4", "G4", "I4", "K4"]
    assert all(DEFAULT_DECK.token(c) == Token.CASTLE for c in drawn)


def test_action_deck_is_24_cards():
    assert sum(ACTION_SUPPLY.values()) == 24
    assert ACTION_SUPPLY == {
        ActionKind.THIEF: 6, ActionKind.SWEEP: 4, ActionKind.DEFEND: 4, ActionKind.POISON: 4,
        ActionKind.REVEAL: 2, ActionKind.DRAGON: 2, ActionKind.POTION: 2,
    }  # fmt: skip


def test_deck_json_round_trip_and_table_replacement():
    data = DEFAULT_DECK.to_json()
    assert Deck.from_json(data) == DEFAULT_DECK
    # A table's own assignment: swap the tokens of A1 (wand) and L4 (castle).
    rows = data["cards"]
    rows[0]["token"], rows[47]["token"] = "castle", "wand"
    own = Deck.from_json(data)
    assert own.token(parse_war_card("A1")) == Token.CASTLE
    assert own.token(parse_war_card("L4")) == Token.WAND


def test_deck_with_wrong_token_counts_is_rejected():
    data = DEFAULT_DECK.to_json()
    data["cards"][0]["token"] = "castle"
    with pytest.raises(InvalidPositionError) as err:
        Deck.from_json(data)
    assert err.value.field == "deck.cards"
    data = DEFAULT_DECK.to_json()
    data["cards"].pop()
    with pytest.raises(InvalidPositionError, match="L4"):
        Deck.from_json(data)
    with pytest.raises(InvalidPositionError, match="arms"):
        Deck.from_json(dict(DEFAULT_DECK.to_json(), arms=["x"]))


def test_notation_round_trips():
    for card in ALL_WAR_CARDS:
        assert parse_war_card(str(card)) == card
    for token in Token:
        assert parse_token(str(token)) == token
    assert parse_token("Swords") == Token.SWORD
    for kind in ActionKind:
        assert parse_action_kind(str(kind)) == kind
    for bad in ("M1", "A5", "A", ""):
        with pytest.raises(ParseError):
            parse_war_card(bad)
    with pytest.raises(ParseError):
        parse_token("spear")
    with pytest.raises(ParseError):
        parse_action_kind("fireball")


# -- the Stacks table --------------------------------------------------------------------------


def test_three_wands_five_points():
    assert points("wand wand wand") == 5
    assert points("wand wand") == 0


def test_three_crowns_four_points():
    assert points("crown crown crown") == 4
    assert points("crown crown crown crown") == 4


def test_five_crowns_force_stop():
    score = score_tokens(toks("crown crown crown crown crown"))
    assert score.must_stop
    assert score.points == 4  # the 3 Crowns stack; the STOP is forced, the bonus is a Gem
    assert not score_tokens(toks("crown crown crown crown")).must_stop


@pytest.mark.parametrize("token", ["bow", "sword", "axe", "helmet", "body", "shield"])
def test_three_matching_weapons_or_armor_three_points(token):
    assert points(f"{token} {token} {token}") == 3
    assert points(f"{token} {token}") == 0


def test_five_random_weapons_two_points_plus_one_each():
    assert points("bow bow sword sword") == 0
    assert points("bow bow sword sword axe") == 2
    assert points("bow bow sword sword axe axe") == 3


def test_five_random_armor_two_points_plus_one_each():
    assert points("helmet helmet body body") == 0
    assert points("helmet helmet body body shield") == 2
    assert points("helmet helmet body body shield shield") == 3


def test_weapons_and_armor_do_not_mix():
    assert points("bow bow sword helmet body") == 0


def test_eight_castles_one_point_plus_one_each():
    assert points(" ".join(["castle"] * 7)) == 0
    assert points(" ".join(["castle"] * 8)) == 1
    assert points(" ".join(["castle"] * 10)) == 3
    assert points(" ".join(["castle"] * 22)) == 15


def test_faq_third_matching_weapon_makes_a_new_stack():
    # 5 random weapons (2 pts) + a bow matching the 2 bows: only the 3 Bows count (3 pts)...
    assert points("bow bow sword sword axe") == 2
    assert points("bow bow bow sword sword axe") == 3
    assert names("bow bow bow sword sword axe") == ["3 Bows"]
    # ...and 2 more random weapons give the 2 points again.
    assert points("bow bow bow sword sword axe axe sword") == 3 + 3
    assert points("bow bow bow sword sword axe axe") == 3 + 0


def test_faq_ruling_for_armor_too():
    assert points("helmet helmet helmet body body shield") == 3


def test_best_grouping_option_keeps_the_better_split():
    hand = "bow bow bow sword sword axe axe"
    assert points(hand, "always") == 3
    assert points(hand, "best") == 4  # 7 random weapons
    with pytest.raises(RulesError):
        score_tokens([], "sometimes")


def test_everything_adds_up():
    text = "wand wand wand crown crown crown bow bow bow helmet helmet helmet " + "castle " * 9
    assert points(text) == 5 + 4 + 3 + 3 + 2


def test_supply_check():
    check_supply(toks("wand wand wand"))
    with pytest.raises(RulesError, match="only 3 wand"):
        check_supply(toks("wand wand wand wand"))


def test_near_combinations():
    near = {n.token: n for n in near_combinations(toks("wand wand castle castle castle"))}
    assert near[Token.WAND].more == 1 and near[Token.WAND].gain == 5
    assert near[Token.WAND].makes == ("3 Wands",)
    assert Token.CASTLE not in near  # 5 more castles needed: beyond reach
    near = {n.token: n for n in near_combinations(toks("crown crown crown crown"))}
    assert near[Token.CROWN].must_stop and near[Token.CROWN].more == 1
    near = {n.token: n for n in near_combinations(toks("wand wand wand"))}
    assert Token.WAND not in near  # no wand left in the deck


# -- properties --------------------------------------------------------------------------------

token_lists = st.lists(st.sampled_from(list(Token)), max_size=30).filter(
    lambda ts: all(n <= TOKEN_SUPPLY[t] for t, n in Counter(ts).items())
)


@given(token_lists, st.sampled_from(list(Token)))
def test_one_more_card_never_costs_points(tokens, extra):
    if Counter(tokens)[extra] >= TOKEN_SUPPLY[extra]:
        return
    assert score_tokens(tokens + [extra]).points >= score_tokens(tokens).points


@given(token_lists)
def test_best_grouping_never_below_always_and_order_free(tokens):
    assert score_tokens(tokens, "best").points >= score_tokens(tokens).points
    assert score_tokens(list(reversed(tokens))).points == score_tokens(tokens).points
    assert score_tokens(tokens).points == sum(c.points for c in score_tokens(tokens).combinations)
