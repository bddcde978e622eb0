"""Royal Bastards card data, effect language, map and action notation."""

from __future__ import annotations

import copy
import json
import random

import pytest

from engines.errors import InvalidPositionError, ParseError
from engines.royal_bastards import (
    Board,
    Effect,
    board_from_dict,
    load_card_set,
    load_card_set_json,
    parse_action,
    random_board,
    sample_card_set,
)
from engines.royal_bastards.actions import (
    ChooseBastard,
    ChooseContest,
    ChooseFirstborn,
    Done,
    Draw,
    Move,
    Pass,
    Place,
    Play,
    Roll,
)
from engines.royal_bastards.cards import Condition
from engines.royal_bastards.rules import (
    Bastard,
    Context,
    attribute_value,
    condition_holds,
    dice_for,
    static_total,
)


def sample() -> dict:
    return copy.deepcopy(sample_card_set().to_dict())


def test_sample_is_labelled_and_complete():
    cards = sample_card_set()
    assert cards.label == "sample"
    assert "SAMPLE" in cards.description
    assert len(cards.territories) == 9
    assert len(cards.bastards) == 20
    for deck in ("skeleton", "fortune", "contest"):
        assert len(cards.full_deck(deck)) == 20
    assert len(cards.full_deck("chaos")) == 60
    assert cards.capital == "joda-city"
    assert cards.territories["joda-city"].race is None
    assert set(cards.festivals) == {3, 6, 9}
    timings = {c.timing for c in cards.chaos.values()}
    assert timings == {"anytime", "movement", "contest", "end_game"}


def test_every_bastard_hometown_is_a_territory():
    cards = sample_card_set()
    for b in cards.bastards.values():
        assert b.hometown in cards.territories


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.update(schema="other"), "schema"),
    (lambda d: d["bastards"][0].update(hometown="atlantis"), "bastards[0].hometown"),
    (lambda d: d["bastards"][1].update(id=d["bastards"][0]["id"]), "bastards[1].id"),
    (lambda d: d["bastards"][0]["attributes"].pop("magic"), "bastards[0].attributes"),
    (lambda d: d["fortunes"][0]["effects"].append({"kind": "teleport"}),
     "fortunes[0].effects[1].kind"),
    (lambda d: d["fortunes"][0]["effects"].append({"kind": "reveal_skeleton"}),
     "fortunes[0].effects[1].kind"),
    (lambda d: d["contests"][0].update(attribute="charm"), "contests[0].attribute"),
    (lambda d: d["chaos"][0].update(timing="whenever"), "chaos[0].timing"),
    (lambda d: d["chaos"][0].update(target="everyone"), "chaos[0].target"),
    (lambda d: d["chaos"][0].update(effects=[{"kind": "move_to", "to": "capital"}]),
     "chaos[0].effects[0]"),
    (lambda d: d["chaos"][0].update(effects=[{"kind": "rap", "amount": 2}]),
     "chaos[0].effects[0]"),
    (lambda d: d["chaos"][0].update(effects=[{"kind": "modify", "attribute": "luck",
                                              "amount": 1}]), "chaos[0].effects[0].attribute"),
    (lambda d: d["chaos"][0].update(effects=[{"kind": "modify", "attribute": "magic",
                                              "amount": 1, "if": {"colour": ["red"]}}]),
     "chaos[0].effects[0].if"),
    (lambda d: d["chaos"][0].update(effects=[{"kind": "modify", "attribute": "magic",
                                              "amount": 1, "if": {"role": ["king"]}}]),
     "chaos[0].effects[0].if.role"),
    (lambda d: d["festivals"].pop(), "festivals"),
    (lambda d: d["territories"][0].pop("capital"), "territories"),
    (lambda d: d["territories"][1].update(rap="six"), "territories[1].rap"),
])
def test_invalid_card_sets_name_the_field(mutate, field):
    data = sample()
    mutate(data)
    with pytest.raises(InvalidPositionError) as err:
        load_card_set(data)
    assert err.value.field == field


def test_card_set_json_errors():
    with pytest.raises(ParseError):
        load_card_set_json("{nope")
    assert load_card_set_json(json.dumps(sample())).label == "sample"


def test_effect_notation_and_round_trip():
    cards = sample_card_set()
    for deck in (cards.fortunes, cards.skeletons, cards.chaos):
        for card in deck.values():
            for e in card.effects:
                assert Effect.from_dict(e.to_dict(), "x") == e
                assert str(e)
    e = Effect.from_dict({"kind": "modify", "attribute": "might", "amount": 2,
                          "if": {"territory_colour": "green"}}, "x")
    assert str(e) == "might+2[territory_colour=green]"


def _b(card: str, role: str = "firstborn", where: str | None = None, **kw) -> Bastard:
    cards = sample_card_set()
    return Bastard(card, role, where or cards.bastards[card].hometown, **kw)


def test_conditions_on_race_class_role_colour_and_hometown():
    cards = sample_card_set()
    barry = _b("barry")  # Human Noble at home in treasured-valley (yellow, Human)
    assert condition_holds(cards, Condition(race=("Human",)), barry)
    assert not condition_holds(cards, Condition(race=("Orc",)), barry)
    assert condition_holds(cards, Condition(klass=("Noble",)), barry)
    assert not condition_holds(cards, Condition(role=("herald",)), barry)
    assert condition_holds(cards, Condition(territory_colour=("yellow",)), barry)
    assert condition_holds(cards, Condition(territory_race=("Human",)), barry)
    assert condition_holds(cards, Condition(own_race_territory=True), barry)
    assert condition_holds(cards, Condition(in_hometown=True), barry)
    away = _b("barry", where="orkland")
    assert not condition_holds(cards, Condition(in_hometown=True), away)
    assert not condition_holds(cards, Condition(own_race_territory=True), away)
    assert condition_holds(cards, Condition(attribute=("magic",)), barry, "magic")
    assert not condition_holds(cards, Condition(attribute=("magic",)), barry, "might")


def test_fortune_applies_and_skeleton_only_when_revealed():
    cards = sample_card_set()
    ctx = Context("might")
    donny = _b("da-donny", fortune="strong-arm", skeleton="cowardice")  # at orkland (green)
    assert attribute_value(cards, donny, "might", ctx) == 3 + 2
    donny.revealed = True
    assert attribute_value(cards, donny, "might", ctx) == 3 + 2 - 2
    elsewhere = _b("da-donny", where="joda-city", fortune="strong-arm")
    assert attribute_value(cards, elsewhere, "might", ctx) == 3


def test_contest_attribute_and_all_modifiers_and_floor():
    cards = sample_card_set()
    b = _b("da-donny", skeleton="sleepwalker", revealed=True)  # contest -1
    assert attribute_value(cards, b, "magic", Context("magic")) == 0
    assert attribute_value(cards, b, "might", Context("magic")) == 3
    gas = cards.chaos["poisonous-gas"].effects
    assert attribute_value(cards, b, "magic", Context("magic", gas)) == 0
    assert attribute_value(cards, b, "magic", Context("magic", gas), floor=None) == -2


def test_dice_by_role_and_extra_dice():
    cards = sample_card_set()
    assert dice_for(cards, _b("barry"), Context()) == ["d10"]
    assert dice_for(cards, _b("barry", "champion"), Context()) == ["d8"]
    assert dice_for(cards, _b("barry", "herald", fortune="lucky-charm"), Context()) == [
        "d6", "d6"]
    # Holy Relic: an extra d8 for Clerics only
    assert dice_for(cards, _b("nun-nancy", fortune="holy-relic"), Context()) == ["d10", "d8"]
    assert dice_for(cards, _b("barry", fortune="holy-relic"), Context()) == ["d10"]


def test_static_hand_limit_and_rap():
    cards = sample_card_set()
    assert static_total(cards, [_b("barry", fortune="deep-pockets")], "hand_limit") == 1
    assert static_total(cards, [_b("barry", fortune="royal-seal"),
                                _b("toad", "champion", skeleton="tax-fraud")], "rap") == 2
    assert static_total(cards, [_b("toad", skeleton="tax-fraud", revealed=True)], "rap") == -3


# ------------------------------------------------------------------ map
def test_board_from_hexes_and_adjacency_pairs():
    cards = sample_card_set()
    board = random_board(cards, random.Random(3))
    again = board_from_dict(board.to_dict(), cards)
    assert again.adjacent == board.adjacent
    pairs = {"adjacent": [sorted(e) for e in board.adjacent]}
    assert board_from_dict(pairs, cards).adjacent == board.adjacent
    assert len(board.distances(board.territories[0])) == 9


def _line() -> dict:
    ids = list(sample_card_set().territories)
    return {"territories": ids, "adjacent": [[a, b] for a, b in zip(ids, ids[1:], strict=False)]}


def test_board_distances_and_within():
    board = board_from_dict(_line(), sample_card_set())
    ids = board.territories
    assert board.within(ids[0], 2) == [ids[1], ids[2]]
    assert board.within(ids[4], 1) == [ids[3], ids[5]]
    assert board.within(ids[4], 0) == []


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d["adjacent"].pop(3), "map.adjacent"),  # cut in two
    (lambda d: (d["territories"].pop(), d["adjacent"].pop()), "map.territories"),
    (lambda d: d["adjacent"].append(["joda-city", "joda-city"]), "map.adjacent[8]"),
    (lambda d: d["adjacent"].append(["joda-city", "atlantis"]), "map.adjacent"),
    (lambda d: d.pop("adjacent"), "map"),
])
def test_bad_maps_name_the_field(mutate, field):
    data = _line()
    mutate(data)
    with pytest.raises(InvalidPositionError) as err:
        board_from_dict(data, sample_card_set())
    assert err.value.field == field


def test_a_hexagon_has_at_most_six_neighbours():
    ids = list(sample_card_set().territories)
    star = {"territories": ids, "adjacent": [[ids[0], t] for t in ids[1:]]}
    with pytest.raises(InvalidPositionError, match="six"):
        board_from_dict(star, sample_card_set())


def test_hexes_may_not_overlap():
    data = Board(("joda-city",), frozenset()).to_dict()
    data["hexes"] = {t: [0, 0] for t in sample_card_set().territories}
    with pytest.raises(InvalidPositionError, match="share a hex"):
        board_from_dict(data, sample_card_set())


# ------------------------------------------------------------- notation
@pytest.mark.parametrize("action", [
    Draw("chaos", "poisonous-gas"), Roll(7), ChooseFirstborn(0, "barry"),
    Move(1, "champion", "orkland"), Done(2), Play(2, "poisonous-gas", 0, "firstborn"),
    Pass(3), ChooseContest(0, "orkland"), Place(3, "joda-city", 2),
    ChooseBastard(1, "witch-whitney"),
])
def test_action_notation_round_trips(action):
    assert parse_action(str(action)) == action


@pytest.mark.parametrize("text", ["", "draw", "draw hand x", "roll x", "q0 done", "p0 fly",
                                  "p0 move king orkland", "p0 play gas p1", "p0 place x y"])
def test_bad_notation_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_action(text)
