"""Battle Cards Battle Mode: draft, draw deck and extra card, category card, placing and
revealing match-ups, clean-up and refill, the loser's choice, sudden-death deciders,
reshuffles and every open-point option."""

from __future__ import annotations

import pytest

from engines.battle_cards import (
    CardSet,
    ChooseCategory,
    Decide,
    GameState,
    Options,
    Pick,
    Place,
)
from engines.errors import IllegalActionError, InvalidPositionError

L = "ABCD"


def make_set(specs):
    cards = [{"code": code, "name": code.title(), "strength": s[0], "skill": s[1], "magic": s[2],
              "terror": s[3], "value": s[4], "size": s[5]} for code, s in specs.items()]
    return CardSet.from_dict({"name": "test", "cards": cards})


def battle_specs(players, deck, over=None):
    specs = {}
    for p in range(players):
        for i in range(1, 7):
            specs[f"{L[p]}{i}"] = [1, 1, 1, 1, 1, "M"]
    for i in range(1, deck + 1):
        specs[f"E{i}"] = [1, 1, 1, 1, 1, "M"]
    for code, changes in (over or {}).items():
        for k, v in changes.items():
            specs[code]["strength skill magic terror value size".split().index(k)] = v
    return specs


def drafted(players, deck, over=None, options=None):
    g = GameState(make_set(battle_specs(players, deck, over)), players, "battle", options)
    for i in range(1, 7):
        for p in range(players):
            g.apply(Pick(f"{L[p]}{i}"))
    return g


def run(g, actions):
    for a in actions:
        g.apply(a)


def place_all(g, players):
    for p in range(players):
        for i in range(1, 6):
            g.apply(Place(f"{L[p]}{i}"))


MAGIC_CARD = {"E3": {"magic": 10}}


def two_player_placing(over=None, options=None):
    """2 players; extra cards E1 (A), E2 (B); category card E3 (magic); E4 left shuffled."""
    g = drafted(2, 4, {**MAGIC_CARD, **(over or {})}, options)
    run(g, ["draw:E1", "draw:E2", "draw:E3"])
    return g


A_SWEEP = {"A1": {"magic": 9}, "A2": {"magic": 9}, "A3": {"magic": 9}}


# ----- draft ------------------------------------------------------------------------------------


def test_draft_alternates_from_the_youngest_and_squads_are_face_up():
    g = GameState(make_set(battle_specs(2, 4)), 2, "battle", first_player=1)
    assert g.phase == "draft" and g.current_player() == 1
    g.apply("pick:A1")
    assert g.current_player() == 0 and g.hands[1] == ["A1"] and g.public[1] == ["A1"]
    assert "A1" not in g.pool
    assert g.view(0)["others"][1]["public"] == ["A1"]
    with pytest.raises(IllegalActionError):
        g.apply("pick:A1")  # already taken


def test_three_and_four_players_draft_in_rotation():
    g = GameState(make_set(battle_specs(3, 5)), 3, "battle")
    seats = []
    for i in range(6):
        seats.append(g.current_player())
        g.apply(Pick(f"A{i + 1}") if i < 6 else None)
    assert seats == [0, 1, 2, 0, 1, 2]


def test_snake_draft_option():
    g = GameState(make_set(battle_specs(2, 4)), 2, "battle", Options(draft_order="snake"))
    seats = []
    for i in range(6):
        seats.append(g.current_player())
        g.apply(Pick(f"A{i + 1}"))
    assert seats == [0, 1, 1, 0, 0, 1]


def test_squad_value_limit_30():
    # E1 costs 25: 25 + five 1-cost cards = 30 fits; E2 costs 26 and can never fit.
    g = GameState(make_set(battle_specs(2, 4, {"E1": {"value": 25}, "E2": {"value": 26}})), 2,
                  "battle")
    legal = {a.card for a in g.legal_actions()}
    assert "E1" in legal and "E2" not in legal
    g.apply("pick:E1")
    g.apply("pick:A1")
    assert g.squad_value(0) == 25
    # Seat 0 must now keep every remaining pick at 1.
    assert all(g.card(a.card).value == 1 for a in g.legal_actions())


def test_squad_value_limit_option():
    g = GameState(make_set(battle_specs(2, 4, {"E2": {"value": 26}})), 2, "battle",
                  Options(squad_value_limit=31))
    assert Pick("E2") in g.legal_actions()


def test_stuck_draft_falls_back_to_the_cheapest_cards():
    specs = {"X1": [1, 1, 1, 1, 5, "M"], "X2": [1, 1, 1, 1, 5, "M"], "Y": [1, 1, 1, 1, 1, "M"],
             "Z": [1, 1, 1, 1, 9, "M"], "W": [1, 1, 1, 1, 8, "M"]}
    opts = Options(squad_size=2, hand_size=2, matchups=1, matchups_to_win=1,
                   squad_value_limit=10, draft_order="snake")
    g = GameState(make_set(specs), 2, "battle", opts)
    run(g, ["pick:X1", "pick:Y", "pick:X2"])
    assert g.current_player() == 0
    assert g.legal_actions() == [Pick("W")]  # 5 + 8 > 10, but a squad must be completed


def test_unsatisfiable_set_is_rejected():
    over = {f"{L[p]}{i}": {"value": 6} for p in range(2) for i in range(1, 7)}
    over.update({f"E{i}": {"value": 6} for i in range(1, 5)})
    with pytest.raises(InvalidPositionError, match="30 Value"):
        GameState(make_set(battle_specs(2, 4, over)), 2, "battle")


def test_player_counts():
    s = make_set(battle_specs(4, 5))
    for n in (1, 5):
        with pytest.raises(InvalidPositionError) as exc:
            GameState(s, n, "battle")
        assert exc.value.field == "players"


# ----- draw deck, extra card, category card ------------------------------------------------


def test_remaining_cards_form_the_draw_deck_and_each_takes_a_hidden_extra_card():
    g = drafted(2, 4)
    assert g.pool == [] and g.is_chance_node()
    assert sorted(g.deck_shuffled) == ["E1", "E2", "E3", "E4"]
    assert g.whose_draw() == 0
    g.apply("draw:E2")
    assert g.whose_draw() == 1
    g.apply("draw:E4")
    assert g.hands[0][-1] == "E2" and g.hands[1][-1] == "E4"
    assert g.view(1)["others"][0] == {"public": [f"A{i}" for i in range(1, 7)], "hidden": 1,
                                      "placed": 0}
    assert "E2" not in str(g.view(1))


def test_category_card_sets_the_first_category_and_goes_to_the_bottom():
    g = two_player_placing()
    assert g.category == "magic"
    assert g.deck_known == ["E3"] and g.deck_shuffled == ["E4"]
    assert g.phase == "place" and g.current_player() == 0
    assert g.log == [] and g.round["category_from"] == "card E3"


def test_category_card_tie_first_listed_by_default():
    g = drafted(2, 4, {"E3": {"skill": 7, "terror": 7}})
    run(g, ["draw:E1", "draw:E2", "draw:E3"])
    assert g.category == "skill"


def test_category_card_tie_chooser_option():
    g = drafted(2, 4, {"E3": {"skill": 7, "terror": 7}}, Options(category_card_tie="chooser"))
    run(g, ["draw:E1", "draw:E2", "draw:E3"])
    assert g.phase == "category_tie" and g.current_player() == 0
    assert g.legal_actions() == [ChooseCategory("skill"), ChooseCategory("terror")]
    with pytest.raises(IllegalActionError):
        g.apply("category:magic")
    g.apply("category:terror")
    assert g.category == "terror" and g.phase == "place"


def test_category_card_tie_redraw_option():
    g = drafted(2, 4, {"E3": {"skill": 7, "terror": 7}, "E4": {"strength": 3}},
                Options(category_card_tie="redraw"))
    run(g, ["draw:E1", "draw:E2", "draw:E3"])
    assert g.is_chance_node() and g.phase == "category_card"
    g.apply("draw:E4")
    assert g.category == "strength"
    assert g.deck_known == ["E3", "E4"]
    assert g.round["category_cards"] == ["E3", "E4"]


def test_category_card_redraw_gives_up_after_a_full_pass():
    g = drafted(2, 4, {}, Options(category_card_tie="redraw"))  # every card is all 1s
    run(g, ["draw:E1", "draw:E2", "draw:E3", "draw:E4"])
    assert g.category == "strength" and "first listed" in g.round["category_from"]


def test_value_is_not_a_battle_category_unless_the_option_says_so():
    g = drafted(2, 4, {"E3": {"value": 9, "magic": 5}})
    run(g, ["draw:E1", "draw:E2", "draw:E3"])
    assert g.category == "magic"
    g = drafted(2, 4, {"E3": {"value": 9, "magic": 5}}, Options(value_category=True))
    run(g, ["draw:E1", "draw:E2", "draw:E3"])
    assert g.category == "value"


# ----- placing, revealing, clean-up -------------------------------------------------------------


def test_players_place_five_face_down_cards_in_turn():
    g = two_player_placing()
    assert len(g.legal_actions()) == 7
    for i in range(1, 5):
        g.apply(Place(f"A{i}"))
    assert g.view(1)["others"][0]["placed"] == 4
    assert g.view(1)["placed"] == [] and g.view(0)["placed"] == ["A1", "A2", "A3", "A4"]
    assert set(g.view(1)["others"][0]) == {"public", "hidden", "placed"}  # a count, no cards
    with pytest.raises(IllegalActionError):
        g.apply("place:A1")  # already placed
    with pytest.raises(IllegalActionError):
        g.apply("place:B1")  # not in this hand
    g.apply("place:A5")
    assert g.current_player() == 1


def test_round_ends_at_three_matchup_wins_and_cards_go_where_the_rules_say():
    g = two_player_placing(A_SWEEP)
    place_all(g, 2)
    r = g.log[-1]
    assert r["winner"] == 0 and r["turned"] == 3 and r["wins"] == [3, 0]
    assert [m["winner"] for m in r["matchups"]] == [0, 0, 0]
    assert g.round_wins == [1, 0]
    # winners back to the squad, unturned back, losers under the draw deck in order
    assert g.hands[0] == ["A1", "A2", "A3", "A4", "A5", "A6", "E1"]
    assert r["lost"] == ["B1", "B2", "B3"]
    # refill: B needs 3: E4 from the shuffled part (chance), then E3 and B1 from the bottom part
    assert g.is_chance_node() and g.whose_draw() == 1
    g.apply("draw:E4")
    assert g.hands[1] == ["B4", "B5", "B6", "E2", "E4", "E3", "B1"]
    assert g.deck_known == ["B2", "B3"]
    # the loser chooses the next category, from the four battle categories
    assert g.phase == "choose" and g.current_player() == 1
    assert [a.category.value for a in g.legal_actions()] == ["strength", "skill", "magic",
                                                            "terror"]
    g.apply("category:terror")
    assert g.category == "terror" and g.round_no == 2 and g.current_player() == 0


def test_revealed_cards_become_public_and_drawn_cards_stay_hidden():
    g = two_player_placing(A_SWEEP)
    place_all(g, 2)
    g.apply("draw:E4")
    seen = g.view(0)["others"][1]
    # E2 (extra card) and E4 (from the shuffled part) are hidden; E3 and B1 came from the
    # known bottom of the draw deck, so everybody knows B holds them.
    assert seen["hidden"] == 2
    assert {"B1", "E3"} <= set(seen["public"])


def test_loser_may_choose_value_with_the_option():
    g = two_player_placing(A_SWEEP, Options(value_category=True))
    place_all(g, 2)
    g.apply("draw:E4")
    assert ChooseCategory("value") in g.legal_actions()


def test_size_and_value_tie_breaks_inside_a_round():
    over = {"A1": {"size": "B"}, "A2": {"value": 3}, "B3": {"size": "S"}, "A3": {"size": "B"},
            "B4": {"magic": 4}, "B5": {"magic": 4}}
    g = two_player_placing(over)
    place_all(g, 2)
    r = g.log[-1]
    assert [(m["winner"], m["by"]) for m in r["matchups"][:3]] == [
        (0, "size"), (0, "value"), (1, "size")]
    assert r["winner"] == 1 and r["wins"] == [2, 3]


def test_full_tie_is_void_by_default_and_both_lose_with_the_option():
    over = {"A2": {"magic": 9}, "A3": {"magic": 9}, "A4": {"magic": 9}}
    g = two_player_placing(over)
    place_all(g, 2)
    r = g.log[-1]
    assert r["matchups"][0]["winner"] is None
    assert "A1" in g.hands[0] and "B1" not in r["lost"]
    g = two_player_placing(over, Options(matchup_full_tie="all_lose"))
    place_all(g, 2)
    assert g.log[-1]["lost"][:2] == ["A1", "B1"]
    assert "A1" not in g.hands[0]


def test_three_round_wins_win_the_battle():
    g = two_player_placing(A_SWEEP, Options(rounds_to_win=1))
    place_all(g, 2)
    assert g.is_terminal()
    assert g.outcome().winners == (0,) and g.outcome().scores == (1, 0)
    assert "won 1 rounds" in g.outcome().reason


def test_battle_round_limit_ends_on_most_round_wins():
    g = two_player_placing(A_SWEEP, Options(battle_round_limit=1))
    place_all(g, 2)
    assert g.is_terminal() and g.outcome().winners == (0,)
    assert "round limit" in g.outcome().reason


def test_two_player_two_two_with_a_void_goes_to_a_decider():
    over = {"A2": {"magic": 9}, "A3": {"magic": 9}, "B4": {"magic": 9}, "B5": {"magic": 9},
            "A6": {"strength": 5}}
    g = two_player_placing(over)
    place_all(g, 2)
    assert g.phase == "decider" and g.current_player() == 0
    assert {a.card for a in g.legal_actions()} == {"A6", "E1"}
    run(g, ["decide:A6", "decide:B6"])  # on magic: A6 (1) v B6 (1) full tie -> again
    assert g.phase == "decider"
    assert g.legal_actions() == [Decide("E1")]
    run(g, ["decide:E1", "decide:E2"])  # again a full tie, and nobody has a card left
    r = g.log[-1]
    assert r["winner"] is None and g.round_wins == [0, 0]
    # a round without a winner: refill, then the next category comes from the top card again
    assert g.hands[0] == ["A1", "A2", "A3", "A6", "E1"] and g.whose_draw() == 0
    g.apply("draw:E4")
    assert g.hands[1] == ["B1", "B4", "B5", "B6", "E2", "B2", "B3"]
    assert g.phase == "place" and g.round["category_cards"] == ["A4"]
    assert g.category == "strength" and g.round_no == 2


# ----- 3 and 4 players --------------------------------------------------------------------------


def three_player_placing(options=None, over=None):
    base = {"E3": {"magic": 10}, "A1": {"magic": 9}, "A2": {"magic": 9}, "B3": {"magic": 9},
            "B4": {"magic": 9}, "C5": {"magic": 9}, "A6": {"magic": 9}}
    g = drafted(3, 5, {**base, **(over or {})}, options)
    run(g, ["draw:E1", "draw:E2", "draw:E4", "draw:E3"])
    assert g.category == "magic"
    return g


def test_three_players_two_two_sudden_death_decider():
    g = three_player_placing()
    place_all(g, 3)
    assert g.phase == "decider" and g.round["decider"]["seats"] == [0, 1]
    assert g.current_player() == 0
    assert {a.card for a in g.legal_actions()} == {"A6", "E1"}
    g.apply("decide:A6")
    assert g.current_player() == 1
    g.apply("decide:B6")
    r = g.log[-1]
    assert r["winner"] == 0 and r["deciders"][0]["winner"] == 0
    assert r["chooser"] == 2  # C was last with 1 match-up
    assert "B6" in r["lost"] and "A6" in g.hands[0]
    assert g.round_wins == [1, 0, 0]


def test_three_players_reshuffle_after_each_round():
    g = three_player_placing()
    place_all(g, 3)
    run(g, ["decide:A6", "decide:B6"])
    assert g.deck_known == []
    assert "E3" in g.deck_shuffled and "B1" in g.deck_shuffled
    assert g.is_chance_node()


def test_reshuffle_option_never_and_always():
    g = three_player_placing(Options(reshuffle="never"))
    place_all(g, 3)
    run(g, ["decide:A6", "decide:B6"])
    assert g.deck_known[0] == "E3" and g.deck_known[-1] == "B6"
    g = two_player_placing(A_SWEEP, Options(reshuffle="always"))
    place_all(g, 2)
    assert g.deck_known == [] and sorted(g.deck_shuffled) == ["B1", "B2", "B3", "E3", "E4"]


def test_decider_losers_option_hand():
    g = three_player_placing(Options(decider_losers="hand"))
    place_all(g, 3)
    run(g, ["decide:A6", "decide:B6"])
    assert "B6" in g.hands[1] and "B6" not in g.log[-1]["lost"]


def test_four_players_last_place_decider_winner_picks():
    over = {"E3": {"magic": 10}, "A1": {"magic": 9}, "A2": {"magic": 9}, "A3": {"magic": 9},
            "C6": {"magic": 9}}
    g = drafted(4, 5, over)
    run(g, ["draw:E1", "draw:E2", "draw:E4", "draw:E5", "draw:E3"])
    place_all(g, 4)
    assert g.phase == "decider" and g.round["decider"] == {"kind": "last", "seats": [1, 2, 3],
                                                           "cards": []}
    run(g, ["decide:B6", "decide:C6", "decide:D6"])
    r = g.log[-1]
    assert r["winner"] == 0 and r["turned"] == 3 and r["chooser"] == 2
    assert "B6" in r["lost"] and "D6" in r["lost"] and "C6" in g.hands[2]
    assert "A4" in g.hands[0] and "B5" in g.hands[1]  # unturned cards go back


def test_four_players_most_wins_without_three():
    over = {"E3": {"magic": 10}, "A1": {"magic": 9}, "A2": {"magic": 9}, "B3": {"magic": 9},
            "C4": {"magic": 9}, "D5": {"magic": 9}}
    g = drafted(4, 5, over)
    run(g, ["draw:E1", "draw:E2", "draw:E4", "draw:E5", "draw:E3"])
    place_all(g, 4)
    assert g.phase == "decider" and g.round["decider"]["kind"] == "last"
    assert g.round["winner"] == 0


# ----- short deck --------------------------------------------------------------------------


def test_short_deck_rejected_by_default_and_playable_with_the_option():
    with pytest.raises(InvalidPositionError, match="short_deck"):
        drafted(2, 2)
    g = drafted(2, 2, {}, Options(short_deck="play_on"))
    run(g, ["draw:E1", "draw:E2"])
    # no card left to turn over: the starting player chooses the first category
    assert g.phase == "choose" and g.current_player() == 0
    g.apply("category:skill")
    assert g.category == "skill" and g.phase == "place"


# ----- illegal actions ------------------------------------------------------------------------


def test_illegal_action_leaves_the_state_unchanged():
    g = two_player_placing()
    before = g.to_json()
    for bad in ["place:ZZ", "pick:A1", "draw:E4", "category:magic", "decide:A1"]:
        with pytest.raises(IllegalActionError):
            g.apply(bad)
    assert g.to_json() == before
    with pytest.raises(IllegalActionError, match="unknown card"):
        g.apply("place:ZZ")
