"""Battle Cards: cards, card-set schema and validation, notation, pure match-up resolution."""

from __future__ import annotations

import json

import pytest

from engines.battle_cards import (
    SCHEMA_ID,
    Card,
    CardSet,
    Category,
    Size,
    load_sample_set,
    parse_category,
    parse_size,
    resolve_matchup,
    resolve_round,
    resolve_trumps,
    schema_text,
)
from engines.errors import IllegalActionError, InvalidPositionError, ParseError


def card(code, st=1, sk=1, mg=1, te=1, val=1, size="M"):
    return Card(code, code.title(), st, sk, mg, te, val, Size(size))


def sample_doc():
    return load_sample_set().to_dict()


# ----- sample set and schema -----------------------------------------------------------------


def test_sample_set_is_labelled_and_big_enough_for_four_players():
    s = load_sample_set()
    assert s.sample is True
    assert "SAMPLE" in s.note
    assert len(s) >= 4 * 7 + 1
    assert len(set(s.codes)) == len(s)


def test_schema_is_json_and_matches_the_validator():
    schema = json.loads(schema_text())
    assert schema["$id"] == SCHEMA_ID
    card_schema = schema["$defs"]["card"]
    assert set(card_schema["required"]) == set(
        ["code", "name", "strength", "skill", "magic", "terror", "value", "size"]
    )
    assert card_schema["properties"]["size"]["enum"] == ["B", "M", "S"]
    # Every sample card satisfies the schema's simple constraints.
    import re

    pattern = re.compile(card_schema["properties"]["code"]["pattern"])
    for c in sample_doc()["cards"]:
        assert set(c) == set(card_schema["required"])
        assert pattern.match(c["code"])


def test_card_set_round_trips():
    s = load_sample_set()
    assert CardSet.from_dict(s.to_dict()) == s
    assert CardSet.from_json(json.dumps(s.to_dict())) == s


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["cards"][1].__setitem__("code", d["cards"][0]["code"]), "cards[1].code"),
        (lambda d: d["cards"][2].__setitem__("size", "X"), "cards[2].size"),
        (lambda d: d["cards"][3].__setitem__("strength", -1), "cards[3].strength"),
        (lambda d: d["cards"][3].__setitem__("magic", True), "cards[3].magic"),
        (lambda d: d["cards"][3].__setitem__("value", 2.5), "cards[3].value"),
        (lambda d: d["cards"][4].pop("terror"), "cards[4].terror"),
        (lambda d: d["cards"][4].__setitem__("colour", "red"), "cards[4]"),
        (lambda d: d["cards"][5].__setitem__("code", "bad code"), "cards[5].code"),
        (lambda d: d["cards"][5].__setitem__("name", " "), "cards[5].name"),
        (lambda d: d.__setitem__("schema", "other"), "schema"),
        (lambda d: d.__setitem__("sample", "yes"), "sample"),
        (lambda d: d.__setitem__("cards", d["cards"][:1]), "cards"),
        (lambda d: d.__setitem__("extra", 1), "card_set"),
        (lambda d: d.pop("name"), "name"),
    ],
)
def test_card_set_validation_names_the_field(mutate, field):
    doc = sample_doc()
    mutate(doc)
    with pytest.raises(InvalidPositionError) as exc:
        CardSet.from_dict(doc)
    assert exc.value.field == field


def test_card_set_rejects_non_json_and_non_object():
    with pytest.raises(ParseError):
        CardSet.from_json("{not json")
    with pytest.raises(InvalidPositionError):
        CardSet.from_dict([1, 2])


def test_lookup_by_code_or_name_and_unknown_card():
    s = load_sample_set()
    first = s.cards[0]
    assert s.card(first.code.lower()) is first
    assert s.card(first.name.upper()) is first
    with pytest.raises(ParseError, match="unknown card"):
        s.card("NOPE")


def test_notation():
    c = card("ORC", 5, 6, 7, 8, 3, "B")
    assert str(c) == "ORC(5/6/7/8 V3 B)"
    assert c.score(Category.MAGIC) == 7 and c.score(Category.VALUE) == 3
    assert parse_category("Str") is Category.STRENGTH
    assert parse_category("sk") is Category.SKILL
    assert parse_category("VALUE") is Category.VALUE
    with pytest.raises(ParseError, match="ambiguous"):
        parse_category("s")
    with pytest.raises(ParseError):
        parse_category("speed")
    assert parse_size("b") is Size.BIG and parse_size("small") is Size.SMALL
    with pytest.raises(ParseError):
        parse_size("XL")


# ----- match-ups -------------------------------------------------------------------------------


def test_higher_score_wins():
    r = resolve_matchup([card("A", st=5), card("B", st=7)], Category.STRENGTH)
    assert (r.winner, r.by) == (1, "score")


@pytest.mark.parametrize(
    "a, b, winner",
    [("B", "M", 0), ("M", "B", 1), ("M", "S", 0), ("S", "M", 1), ("S", "B", 0), ("B", "S", 1)],
)
def test_size_breaks_ties_cyclically(a, b, winner):
    r = resolve_matchup([card("X", sk=4, size=a), card("Y", sk=4, size=b)], Category.SKILL)
    assert (r.winner, r.by) == (winner, "size")


def test_size_beats_relation():
    assert Size.BIG.beats(Size.MEDIUM) and Size.MEDIUM.beats(Size.SMALL)
    assert Size.SMALL.beats(Size.BIG) and not Size.BIG.beats(Size.SMALL)
    assert not Size.BIG.beats(Size.BIG)


def test_same_size_tie_goes_to_value():
    r = resolve_matchup([card("X", te=4, val=2), card("Y", te=4, val=5)], Category.TERROR)
    assert (r.winner, r.by) == (1, "value")


def test_score_beats_value_and_size():
    r = resolve_matchup(
        [card("X", mg=4, val=9, size="B"), card("Y", mg=5, val=1, size="S")], Category.MAGIC
    )
    assert (r.winner, r.by) == (1, "score")


def test_three_sizes_tied_is_a_cycle_resolved_by_value():
    cards = [card("X", val=3, size="B"), card("Y", val=4, size="M"), card("Z", val=2, size="S")]
    r = resolve_matchup(cards, Category.STRENGTH)
    assert (r.winner, r.by) == (1, "value")


def test_two_sizes_then_value_among_the_winning_size():
    cards = [card("X", val=3, size="B"), card("Y", val=4, size="B"), card("Z", val=9, size="M")]
    r = resolve_matchup(cards, Category.STRENGTH)
    assert (r.winner, r.by) == (1, "value")


def test_full_tie_is_unresolved():
    cards = [card("X", val=3), card("Y", val=3), card("Z", st=0, val=3)]
    r = resolve_matchup(cards, Category.STRENGTH)
    assert r.winner is None and r.by == "tie" and r.contenders == (0, 1)
    assert "unresolved" in str(r)


def test_matchup_input_errors():
    with pytest.raises(IllegalActionError):
        resolve_matchup([card("X")], Category.SKILL)
    with pytest.raises(IllegalActionError):
        resolve_matchup([card("X"), card("X")], Category.SKILL)


def test_trumps_comparison_has_no_tie_break():
    r = resolve_trumps([card("X", val=3, size="B"), card("Y", val=3, size="M")], Category.VALUE)
    assert r.winner is None and r.tied == (0, 1)
    r = resolve_trumps([card("X", val=3), card("Y", val=4), card("Z", val=1)], Category.VALUE)
    assert r.winner == 1 and "Y wins" in str(r)


# ----- whole rounds from placed cards ---------------------------------------------------------


def seq(prefix, scores, **kw):
    return [card(f"{prefix}{i}", st=s, **kw) for i, s in enumerate(scores)]


def test_round_stops_at_three_matchup_wins():
    r = resolve_round([seq("A", [5, 5, 1, 5, 1]), seq("B", [1, 1, 5, 1, 5])], Category.STRENGTH)
    assert r.winner == 0 and r.turned == 4 and r.wins == (3, 1) and r.last == (1,)


def test_round_most_wins_when_nobody_reaches_three():
    # 4 players, wins 2-1-1-1: the player with most match-ups wins the round.
    p = [seq("A", [9, 9, 0, 0, 0]), seq("B", [0, 0, 9, 0, 0]), seq("C", [0, 0, 0, 9, 0]),
         seq("D", [0, 0, 0, 0, 9])]
    r = resolve_round(p, Category.STRENGTH)
    assert r.winner == 0 and r.turned == 5 and r.last == (1, 2, 3)


def test_round_two_two_needs_a_decider():
    p = [seq("A", [9, 9, 0, 0, 0]), seq("B", [0, 0, 9, 9, 0]), seq("C", [0, 0, 0, 0, 9])]
    r = resolve_round(p, Category.STRENGTH)
    assert r.winner is None and r.decider == (0, 1)


def test_round_input_errors():
    with pytest.raises(IllegalActionError):
        resolve_round([seq("A", [1, 2])], Category.STRENGTH)
    with pytest.raises(IllegalActionError):
        resolve_round([seq("A", [1, 2]), seq("B", [1])], Category.STRENGTH)
    with pytest.raises(IllegalActionError):
        resolve_round([seq("A", [1, 2]), seq("A", [1, 2])], Category.STRENGTH)
