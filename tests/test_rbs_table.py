"""Stand-alone contest and End Game helpers (what the CLI and the page call)."""

from __future__ import annotations

import copy
import random

import pytest

from engines.errors import InvalidPositionError
from engines.royal_bastards import Options, sample_card_set, tracker
from engines.royal_bastards.table import resolve_contest, score_end_game

CARDS = sample_card_set()


def rulebook_example() -> dict:
    """The rulebook's contest example: Blue (Da' Donny + Toad) against Red (Barry) on
    Treasured Valley, Chase of the Chaste (MAGIC, +1 for Nobles)."""
    return {"contest": "chase-of-the-chaste", "territory": "treasured-valley", "participants": [
        {"player": "blue", "bastards": [{"card": "da-donny", "role": "firstborn"},
                                        {"card": "toad", "role": "champion"}],
         "chaos": [{"card": "help-from-an-enchanter", "role": "champion"}], "dice": [8, 3, 5]},
        {"player": "red", "bastards": ["barry"],
         "chaos": ["invisible-servant", "poisonous-gas"], "dice": [10, 5]}]}


def test_rulebook_example_numbers():
    r = resolve_contest(CARDS, rulebook_example())
    blue, red = r["participants"]
    assert blue["attribute"] == 3 and blue["total"] == 19  # MAGIC of 3+8+3+5
    assert [d for d, _ in blue["dice"]] == ["d10", "d8", "d8"]
    assert red["attribute"] == 4  # 2 + 1 Noble + 3 Invisible Servant - 2 Poisonous Gas
    assert red["dice"] == [["d10", 10], ["d10", 5]]  # the 10 rolls again
    # The book then writes "5+10+5 = 20" and gives Red the win; with its own step 7 (MAGIC 4)
    # the totals tie at 19 and the tie rule (base MAGIC 3 against 2) gives it to Blue.
    assert red["total"] == 19 and r["tie"] == {"by": "base attribute"} and r["winner"] == "blue"
    assert r["rewards"] == {"first": ["support+3@here"], "loser": ["support+1@here"]}


def test_rulebook_example_with_red_at_five_wins():
    spec = rulebook_example()
    spec["participants"][1]["modifier"] = 1
    r = resolve_contest(CARDS, spec)
    assert r["participants"][1]["total"] == 20 and r["winner"] == "red" and r["tie"] is None


def test_attribute_without_a_card_and_firstborn_only():
    spec = rulebook_example()
    del spec["contest"]
    spec["attribute"] = "might"
    spec["firstborn_only"] = True
    spec["participants"][0]["chaos"] = []
    spec["participants"][0]["dice"] = [4]
    r = resolve_contest(CARDS, spec)
    assert r["participants"][0]["attribute"] == 3 and r["participants"][0]["plan"] == ["d10"]
    assert "rewards" not in r


def test_seeded_rolls_are_reproducible_and_in_range():
    spec = rulebook_example()
    for p in spec["participants"]:
        del p["dice"]
    a = resolve_contest(CARDS, spec, random.Random(7))
    b = resolve_contest(CARDS, spec, random.Random(7))
    assert a == b
    for p in a["participants"]:
        for die, value in p["dice"]:
            assert 1 <= value <= int(die[1:])
    with pytest.raises(InvalidPositionError, match="seeded"):
        resolve_contest(CARDS, spec)


@pytest.mark.parametrize("dice, message", [([8, 3], "not enough"), ([8, 3, 5, 1], "too many"),
                                           ([8, 9, 5], "not a d8")])
def test_entered_dice_are_checked(dice, message):
    spec = rulebook_example()
    spec["participants"][0]["dice"] = dice
    with pytest.raises(InvalidPositionError, match=message):
        resolve_contest(CARDS, spec)


def test_a_ten_needs_its_extra_roll_entered():
    spec = rulebook_example()
    spec["participants"][1]["dice"] = [10]
    with pytest.raises(InvalidPositionError, match="10 needs one more"):
        resolve_contest(CARDS, spec)


def test_roll_off_entered_and_repeated():
    spec = {"attribute": "mastery", "participants": [
        {"player": "a", "bastards": ["da-donny"], "dice": [5], "rolloff": [4, 9]},
        {"player": "b", "bastards": ["witch-whitney"], "dice": [5], "rolloff": [4, 2]}]}
    r = resolve_contest(CARDS, spec)
    assert r["winner"] == "a" and r["tie"]["rolls"] == [{"a": 4, "b": 4}, {"a": 9, "b": 2}]
    spec["participants"][0]["rolloff"] = [4]
    with pytest.raises(InvalidPositionError, match="another roll-off"):
        resolve_contest(CARDS, spec)


def test_extra_d10_explodes_option():
    spec = {"attribute": "might", "participants": [
        {"player": "a", "bastards": ["da-donny"], "extra_dice": ["d10"], "dice": [1, 10, 3]},
        {"player": "b", "bastards": ["barry"], "dice": [1]}]}
    with pytest.raises(InvalidPositionError, match="too many"):
        resolve_contest(CARDS, spec)
    r = resolve_contest(CARDS, spec, options=Options(extra_d10_explodes=True))
    assert r["participants"][0]["total"] == 3 + 14


@pytest.mark.parametrize("mutate, field", [
    (lambda s: s.update(contest="nope"), "contest"),
    (lambda s: s.update(territory="atlantis"), "territory"),
    (lambda s: s["participants"].pop(), "participants"),
    (lambda s: s["participants"][0]["bastards"].append({"card": "zed"}),
     "participants[0].bastards[2].card"),
    (lambda s: s["participants"][1].update(chaos=["pixie-dust"]), "participants[1].chaos[0]"),
    (lambda s: s["participants"][1].update(colour="red"), "participants[1]"),
    (lambda s: s["participants"][1].update(player="blue"), "participants"),
    (lambda s: s["participants"][0]["chaos"][0].update(role="herald"),
     "participants[0].chaos[0].role"),
])
def test_contest_spec_errors_name_the_field(mutate, field):
    spec = copy.deepcopy(rulebook_example())
    mutate(spec)
    with pytest.raises(InvalidPositionError) as err:
        resolve_contest(CARDS, spec)
    assert err.value.field == field


def test_score_majority_ties_and_tracker():
    spec = {"players": ["red", "blue"], "support": {
        "joda-city": [3, 3], "orkland": [2, 0], "dark-hallows": [0, 0]}}
    r = score_end_game(CARDS, spec)
    assert r["territories"]["orkland"]["winner"] == "red"
    assert r["territories"]["dark-hallows"]["winner"] is None
    assert r["needs_contest"] == [{"territory": "joda-city", "players": ["red", "blue"],
                                   "firstborn_only": True}]
    assert r["winner"] is None
    spec["tie_winners"] = {"joda-city": "blue"}
    r = score_end_game(CARDS, spec)
    assert r["scores"] == {"red": 5, "blue": 10} and r["winner"] == "blue"


def test_score_past_49_and_adjustments_and_crown_tie():
    spec = {"players": ["red", "blue"],
            "support": {t: [1, 0] for t in CARDS.territories}, "rap_adjust": {"red": 3}}
    r = score_end_game(CARDS, spec)
    assert r["scores"]["red"] == 53 and r["tracker"]["red"] == [1, 3]
    tie = {"players": ["a", "b"], "support": {"orkland": [1, 0], "twin-spires": [0, 1]}}
    r = score_end_game(CARDS, tie)
    assert r["needs_contest"][0]["crown"] and r["winner"] is None
    tie["crown_tie_winner"] = "b"
    assert score_end_game(CARDS, tie)["winner"] == "b"
    tie["crown_tie_winner"] = "c"
    with pytest.raises(InvalidPositionError):
        score_end_game(CARDS, tie)


def test_tracker():
    assert tracker(0) == (0, 0) and tracker(49) == (0, 49)
    assert tracker(50) == (1, 0) and tracker(101) == (2, 1) and tracker(-4) == (0, 0)


@pytest.mark.parametrize("spec, field", [
    ({"players": ["a"], "support": {}}, "players"),
    ({"players": ["a", "b"], "support": {"atlantis": [1, 0]}}, "support.atlantis"),
    ({"players": ["a", "b"], "support": {"orkland": [1]}}, "support.orkland"),
    ({"players": ["a", "b"], "support": {"orkland": [1, -1]}}, "support.orkland[1]"),
    ({"players": ["a", "b"], "support": {"orkland": [1, 1]}, "tie_winners": {"orkland": "c"}},
     "tie_winners.orkland"),
    ({"players": ["a", "b"], "support": {}, "rap_adjust": {"c": 1}}, "rap_adjust.c"),
])
def test_score_errors_name_the_field(spec, field):
    with pytest.raises(InvalidPositionError) as err:
        score_end_game(CARDS, spec)
    assert err.value.field == field
