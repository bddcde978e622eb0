"""Battle Cards basic game (Trumps): deal, category choice, ties into the centre, the round
winner choosing, the end when one player holds every card, the round-limit option."""

from __future__ import annotations

import pytest

from engines.battle_cards import (
    CardSet,
    Draw,
    GameState,
    Options,
    Pick,
    load_sample_set,
    play_random_game,
)
from engines.errors import IllegalActionError, InvalidPositionError


def make_set(specs):
    cards = []
    for code, (st, sk, mg, te, val, size) in specs.items():
        cards.append({"code": code, "name": code.title(), "strength": st, "skill": sk,
                      "magic": mg, "terror": te, "value": val, "size": size})
    return CardSet.from_dict({"name": "test", "cards": cards})


def deal(game, order):
    """Deal `order` one card at a time (seat first_player first, round robin)."""
    for code in order:
        game.apply(Draw(code))


SPECS = {
    "A1": (9, 1, 5, 1, 1, "M"), "B1": (1, 9, 5, 1, 1, "M"),
    "A2": (9, 1, 1, 1, 1, "M"), "B2": (1, 9, 1, 1, 1, "M"),
    "A3": (9, 1, 1, 1, 1, "M"), "B3": (1, 9, 1, 1, 1, "M"),
}


def two_player(options=None, first=0):
    g = GameState(make_set(SPECS), 2, "trumps", options, first)
    deal(g, ["A1", "B1", "A2", "B2", "A3", "B3"])
    return g


def test_deal_is_chance_round_robin_from_the_youngest():
    g = GameState(make_set(SPECS), 2, "trumps", first_player=1)
    assert g.is_chance_node() and g.current_player() is None
    assert len(g.chance_outcomes()) == 6
    assert abs(sum(p for _, p in g.chance_outcomes()) - 1) < 1e-9
    assert g.whose_draw() == 1
    deal(g, ["A1", "B1", "A2", "B2", "A3", "B3"])
    assert g.hands == [["B1", "B2", "B3"], ["A1", "A2", "A3"]]
    assert not g.is_chance_node()
    assert g.phase == "choose" and g.current_player() == 1  # youngest chooses first


def test_all_five_categories_may_be_chosen():
    g = two_player()
    cats = [a.category.value for a in g.legal_actions()]
    assert cats == ["strength", "skill", "magic", "terror", "value"]
    with pytest.raises(IllegalActionError):
        g.apply(Pick("A1"))


def test_round_winner_takes_the_cards_to_the_bottom_and_chooses():
    g = two_player()
    g.apply("category:skill")  # B1 (9) beats A1 (1)
    assert g.hands[1] == ["B2", "B3", "B1", "A1"]
    assert g.hands[0] == ["A2", "A3"]
    assert g.current_player() == 1  # the round winner chooses next
    assert g.round["winner_seat"] == 1


def test_tie_goes_to_the_centre_and_the_next_winner_takes_it():
    g = two_player()
    g.apply("category:magic")  # A1 and B1 both 5 -> centre
    assert g.centre == ["A1", "B1"]
    assert g.current_player() == 0  # same chooser again (default)
    g.apply("category:strength")  # A2 beats B2 and takes the centre too
    assert g.centre == []
    assert g.hands[0] == ["A3", "A2", "B2", "A1", "B1"]


def test_tie_chooser_option_first_tied():
    specs = dict(SPECS)
    specs["C1"] = (1, 1, 1, 1, 1, "M")
    g = GameState(make_set(specs), 3, "trumps", Options(trumps_tie_chooser="first_tied"))
    # seat 0 gets C1, seat 1 A1, seat 2 B1 (magic 5 each) ...
    deal(g, ["C1", "A1", "B1", "A2", "B2", "A3", "B3"])
    g.apply("category:magic")  # seats 1 and 2 tie on 5
    assert g.round["tied_seats"] == [1, 2]
    assert g.current_player() == 1


def test_tie_pot_option_tied_only():
    specs = dict(SPECS)
    specs["C1"] = (1, 1, 1, 1, 1, "M")
    g = GameState(make_set(specs), 3, "trumps", Options(trumps_tie_pot="tied"))
    deal(g, ["C1", "A1", "B1", "A2", "B2", "A3", "B3"])
    g.apply("category:magic")
    assert g.centre == ["A1", "B1"]
    assert g.hands[0][-1] == "C1"  # the non-tied card went back under its own pack
    g2 = GameState(make_set(specs), 3, "trumps")
    deal(g2, ["C1", "A1", "B1", "A2", "B2", "A3", "B3"])
    g2.apply("category:magic")
    assert g2.centre == ["C1", "A1", "B1"]  # default: every card of the round


def test_game_ends_when_one_player_holds_every_card():
    g = two_player()
    for _ in range(3):
        g.apply("category:strength")
    assert g.is_terminal()
    out = g.outcome()
    assert out.winners == (0,) and out.scores == (6, 0) and "every card" in out.reason
    assert g.legal_actions() == [] and g.current_player() is None
    with pytest.raises(IllegalActionError, match="over"):
        g.apply("category:skill")


def test_round_limit_ends_on_most_cards():
    g = two_player(Options(trumps_round_limit=1))
    g.apply("category:strength")
    assert g.is_terminal()
    assert g.outcome().winners == (0,) and g.outcome().scores == (4, 2)
    assert "round limit" in g.outcome().reason


def test_round_limit_shared_win():
    g = two_player(Options(trumps_round_limit=1))
    g.apply("category:magic")  # tie: both keep 2, 2 in the centre
    assert g.outcome().winners == (0, 1)


def test_last_cards_tied_into_the_centre_is_a_draw():
    specs = {"A1": (5, 1, 1, 1, 1, "M"), "B1": (5, 1, 1, 1, 1, "M")}
    g = GameState(make_set(specs), 2, "trumps")
    deal(g, ["A1", "B1"])
    g.apply("category:strength")
    assert g.is_terminal()
    assert g.outcome().winners == (0, 1) and "drawn" in g.outcome().reason


def test_player_out_of_cards_is_skipped_and_a_lone_holder_takes_the_centre():
    specs = {"A1": (5, 1, 1, 1, 1, "M"), "B1": (5, 1, 1, 1, 1, "M"), "A2": (1, 1, 1, 1, 1, "M")}
    g = GameState(make_set(specs), 2, "trumps")
    deal(g, ["A1", "B1", "A2"])
    g.apply("category:strength")  # tie; seat 1 has no card left
    assert g.is_terminal()
    assert g.outcome().winners == (0,) and g.outcome().scores == (3, 0)


def test_chooser_without_cards_passes_to_next_player():
    specs = {"A1": (5, 1, 1, 1, 1, "M"), "B1": (5, 1, 1, 1, 1, "M"), "C1": (1, 1, 1, 1, 1, "M"),
             "B2": (1, 1, 1, 1, 1, "M"), "C2": (1, 1, 1, 1, 1, "M")}
    g = GameState(make_set(specs), 3, "trumps", Options(trumps_tie_pot="tied"))
    deal(g, ["A1", "B1", "C1", "B2", "C2"])
    g.hands = [["A1"], ["B1", "B2"], ["C1", "C2"]]  # a position where the chooser has one card
    g.apply("category:strength")  # A1 and B1 tie; seat 0 is out of cards
    assert g.hands[0] == [] and g.current_player() == 1


def test_view_shows_only_the_top_card():
    g = two_player()
    v = g.view(0)
    assert v["top_card"] == "A1" and v["cards_held"] == [3, 3]
    assert "B1" not in str(v)


def test_trumps_player_count_limits():
    with pytest.raises(InvalidPositionError):
        GameState(make_set(SPECS), 1, "trumps")
    with pytest.raises(InvalidPositionError):
        GameState(make_set(SPECS), 7, "trumps")
    with pytest.raises(InvalidPositionError):
        GameState(make_set(SPECS), 2, "chess")


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_seeded_trumps_games_end_with_all_cards_in_one_pack(players):
    for seed in range(3):
        g = play_random_game(seed, players, "trumps")
        assert g.is_terminal()
        out = g.outcome()
        n = len(load_sample_set())
        if "drawn" not in out.reason:
            assert len(out.winners) == 1 and out.scores[out.winners[0]] == n
        assert sum(len(h) for h in g.hands) + len(g.centre) == n


def test_seeded_trumps_game_is_reproducible():
    a = play_random_game(11, 3, "trumps")
    b = play_random_game(11, 3, "trumps")
    assert a.history == b.history and a.outcome() == b.outcome()
