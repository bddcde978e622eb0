"""Royal Bastards rules, one behaviour per test, on scripted games (LINE_MAP, see rbs_helpers).

Map: goblin-warrens - orkland - treasured-valley - joda-city - twin-spires - giants-step, with
halfling-hills under treasured-valley, ancient-grove under joda-city, dark-hallows under
twin-spires. Da' Donny: Orc Warrior, might 3 magic 1 mastery 1 move 2, home orkland.
Barry: Human Noble, might 1 magic 2 mastery 3 move 2, home treasured-valley.
"""

from __future__ import annotations

import pytest

from engines.errors import IllegalActionError, InvalidPositionError
from engines.royal_bastards import CHANCE, GameState, Options, new_game
from engines.royal_bastards.actions import Move, Play
from tests.rbs_helpers import CARDS, Driver, add_bastard, edit, start


def donny_vs_barry(**kw) -> Driver:
    return start(["da-donny", "barry"], **kw)


def contest_at_tv(d: Driver, card: str = "chase-of-the-chaste") -> GameState:
    """Da' Donny walks to Treasured Valley (Barry's home): one contest there."""
    d.cards("contest", [card])
    return d.act("p0 move firstborn treasured-valley", "p0 done", "p1 done")


# ----------------------------------------------------------------- setup
def test_setup_deals_three_and_returns_the_unchosen():
    state = new_game(3, CARDS, seed=1)
    d = Driver(state).settle()
    assert state.phase == "setup"
    assert all(len(p.dealt) == 3 for p in state.players)
    assert len(state.decks["bastard"]) == len(CARDS.bastards) - 9
    keep = state.players[0].dealt[1]
    state.apply(f"p0 firstborn {keep}")
    assert len(state.decks["bastard"]) == len(CARDS.bastards) - 7
    assert state.players[0].bastards[0].card == keep
    assert state.players[0].bastards[0].location == CARDS.bastards[keep].hometown
    assert state.current_player() == 1
    del d


def test_setup_gives_each_firstborn_a_hidden_skeleton_and_a_fortune():
    d = donny_vs_barry(skeletons=["cowardice", "gout"], fortunes=["silver-tongue", "fast-horse"])
    s = d.state
    donny, barry = s.players[0].bastards[0], s.players[1].bastards[0]
    assert (donny.skeleton, donny.revealed, donny.fortune) == ("cowardice", False, "silver-tongue")
    assert barry.skeleton == "gout" and barry.fortune == "fast-horse"
    assert s.view(0)["players"][1]["bastards"][0]["skeleton"] == "hidden"
    assert s.view(1)["players"][1]["bastards"][0]["skeleton"] == "gout"
    assert s.view(0)["players"][1]["hand"] == 3


def test_first_player_must_be_a_seat_and_players_two_to_four():
    with pytest.raises(InvalidPositionError):
        new_game(5, CARDS)
    with pytest.raises(InvalidPositionError):
        new_game(2, CARDS, first_player=2)


# ------------------------------------------------------------------ draw
def test_draw_phase_fills_to_three_and_never_more():
    d = donny_vs_barry()
    s = d.state
    assert s.turn == 1 and [len(p.hand) for p in s.players] == [3, 3]
    d.act("p0 play bribe p0.firstborn", "p0 done", "p1 done")
    assert s.turn == 2 and [len(p.hand) for p in s.players] == [3, 3]


def test_fortune_raises_the_hand_limit():
    d = donny_vs_barry(fortunes=["deep-pockets", "plain-fortune-1"])
    d.act("p0 done", "p1 done")
    assert s_hands(d.state) == [4, 3]


def s_hands(s: GameState) -> list[int]:
    return [len(p.hand) for p in s.players]


def test_draw_count_and_hand_limit_options():
    d = donny_vs_barry(options=Options(draw_count=2, hand_limit=2))
    assert s_hands(d.state) == [2, 2]


def test_first_player_marker_passes_left_each_turn():
    d = start(["da-donny", "barry", "toad"], first=1)
    s = d.state
    assert s.first == 1 and s.current_player() == 1
    d.act("p1 done", "p2 done", "p0 done")
    assert s.turn == 2 and s.first == 2 and s.current_player() == 2


# -------------------------------------------------------------- movement
def test_movement_up_to_the_move_attribute():
    s = donny_vs_barry().state
    moves = {a.to for a in s.legal_actions() if isinstance(a, Move)}
    assert moves == {"treasured-valley", "goblin-warrens", "joda-city", "halfling-hills"}
    with pytest.raises(IllegalActionError):
        s.apply("p0 move firstborn twin-spires")  # three away
    with pytest.raises(IllegalActionError):
        s.apply("p1 move firstborn joda-city")  # not p1's turn to move


def test_each_bastard_moves_once_and_may_stay():
    d = donny_vs_barry()
    s = d.state
    s.apply("p0 move firstborn goblin-warrens")
    assert not [a for a in s.legal_actions() if isinstance(a, Move)]
    s.apply("p0 done")
    assert s.current_player() == 1
    s.apply("p1 done")
    assert s.players[1].bastards[0].location == "treasured-valley"


def test_movement_modifiers_from_fortune_and_chaos_cards():
    d = donny_vs_barry(fortunes=["fast-horse", "plain-fortune-1"],
                       hands=[["swift-boots"], ["detour"]])
    s = d.state
    assert s.movement_of(0, s.players[0].bastards[0]) == 3
    s.apply("p0 play swift-boots p0.firstborn")
    assert s.movement_of(0, s.players[0].bastards[0]) == 5
    s.apply("p1 play detour p0.firstborn")  # a rival may play a Movement card out of turn
    assert s.movement_of(0, s.players[0].bastards[0]) == 3
    d.act("p0 done", "p1 done")
    assert s.turn == 2 and s.movement_of(0, s.players[0].bastards[0]) == 3  # wore off


def test_move_to_chaos_cards():
    d = donny_vs_barry(hands=[["teleport-scroll"], ["homesick"]])
    s = d.state
    s.apply("p0 play teleport-scroll p0.firstborn")
    assert s.players[0].bastards[0].location == "joda-city"
    s.apply("p1 play homesick p0.firstborn")
    assert s.players[0].bastards[0].location == "orkland"


def test_contest_cards_cannot_be_played_in_movement():
    s = donny_vs_barry(hands=[["poisonous-gas"], []]).state
    assert not any(isinstance(a, Play) and a.card == "poisonous-gas" for a in s.legal_actions())


# ------------------------------------------------------- uncontested
def test_uncontested_territories_get_two_tokens():
    d = donny_vs_barry()
    d.act("p0 done", "p1 done")
    s = d.state
    assert s.support["orkland"] == [2, 0] and s.support["treasured-valley"] == [0, 2]
    assert s.players[0].supply == 58


def test_each_extra_bastard_adds_a_token():
    s = donny_vs_barry().state
    s = edit(s, lambda data: (
        add_bastard(data, 0, "toad", "champion", "orkland"),
        add_bastard(data, 0, "witch-whitney", "herald", "orkland")))
    d = Driver(s)
    d.act("p0 done", "p1 done")
    assert s.support["orkland"] == [4, 0]


def test_uncontested_options():
    d = donny_vs_barry(options=Options(uncontested_base=3, uncontested_extra=0))
    d.act("p0 done", "p1 done")
    assert d.state.support["orkland"] == [3, 0]


# ------------------------------------------------------------ contests
def test_contest_draws_a_card_then_rolls_role_dice_and_rewards():
    d = donny_vs_barry()
    s = contest_at_tv(d)
    assert s.contest.card == "chase-of-the-chaste" and s.phase == "window"
    # magic: Donny 1, Barry 2 + 1 (Noble, from the contest card)
    assert s.contest_attribute_total(0) == 1 and s.contest_attribute_total(1) == 3
    d.dice([8, 5])
    d.pass_all()
    # Donny 1 + 8 = 9 beats Barry 3 + 5 = 8: 1st +3 support, loser +1, on that Territory
    assert s.support["treasured-valley"] == [3, 1]
    assert s.turn == 2


def test_contest_phase_gives_uncontested_support_too():
    d = donny_vs_barry()
    s = edit(d.state, lambda data: add_bastard(data, 1, "toad", "champion", "goblin-warrens"))
    d = Driver(s)
    contest_at_tv(d)
    assert s.support["goblin-warrens"] == [0, 2]


def toad_joins_donny_at_tv() -> tuple[Driver, GameState]:
    """Donny's Champion Toad already waits in Treasured Valley; Donny walks in too."""
    s = edit(donny_vs_barry().state, lambda data: add_bastard(data, 0, "toad", "champion",
                                                               "treasured-valley"))
    d = Driver(s)
    contest_at_tv(d)
    return d, s


def test_champion_rolls_d8_and_adds_its_attribute():
    d, s = toad_joins_donny_at_tv()
    d.pass_all()
    assert [x["die"] for x in s.contest.dice] == ["d10", "d8", "d10"]
    assert s.contest_attribute_total(0) == 1 + 2  # Donny + Toad magic
    s.apply("roll 3")
    with pytest.raises(IllegalActionError):
        s.apply("roll 9")  # a d8 shows at most 8


def test_firstborn_ten_rolls_again_and_keeps_going():
    d = donny_vs_barry()
    s = contest_at_tv(d)
    d.pass_all()
    for v in (10, 10, 4):
        s.apply(f"roll {v}")
    assert s.contest.rolled[0] == [["d10", 10], ["d10", 10], ["d10", 4]]
    assert s.contest_totals()[0] == 1 + 24


@pytest.mark.parametrize("mode, rolls", [("once", 2), ("never", 1)])
def test_firstborn_reroll_option(mode, rolls):
    d = donny_vs_barry(options=Options(firstborn_reroll=mode))
    s = contest_at_tv(d)
    d.pass_all()
    s.apply("roll 10")
    if rolls == 2:
        s.apply("roll 10")
    assert len(s.contest.rolled[0]) == rolls
    assert s.contest.dice[0]["player"] == 1  # Barry's turn to roll now


def test_only_the_firstborn_d10_explodes():
    d, s = toad_joins_donny_at_tv()
    d.pass_all()
    s.apply("roll 1")
    s.apply("roll 8")  # the Champion's 8 does not roll again
    assert s.contest.dice[0]["player"] == 1


def test_first_player_orders_the_contests():
    d = start(["da-donny", "barry", "toad"])
    s = edit(d.state, lambda data: (
        add_bastard(data, 2, "witch-whitney", "champion", "joda-city"),
        add_bastard(data, 1, "princess-penny", "champion", "joda-city")))
    d = Driver(s)
    d.act("p0 move firstborn treasured-valley", "p0 done", "p1 done", "p2 done")
    assert s.phase == "contest_order" and s.current_player() == 0
    assert {str(a) for a in s.legal_actions()} == {"p0 contest joda-city",
                                                   "p0 contest treasured-valley"}
    d.cards("contest", ["tax-audit"])
    d.act("p0 contest joda-city")
    assert s.contest.territory == "joda-city" and s.contest.participants == [1, 2]
    assert s.contested == ["treasured-valley"]


def test_chaos_window_any_player_any_target_rules():
    d = start(["da-donny", "barry", "toad"],
              hands=[["help-from-an-enchanter"], ["poisonous-gas", "detour"], ["poisonous-gas"]])
    d.cards("contest", ["chase-of-the-chaste"])
    s = d.act("p0 move firstborn treasured-valley", "p0 done", "p1 done", "p2 done")
    plays = {str(a) for a in s.legal_actions() if isinstance(a, Play)}
    assert "p0 play help-from-an-enchanter p0.firstborn" in plays
    assert "p1 play poisonous-gas p0.firstborn" in plays
    assert "p1 play poisonous-gas p1.firstborn" not in plays  # rival only
    assert "p2 play poisonous-gas p1.firstborn" in plays  # an outsider may play too
    assert "p2 play poisonous-gas p2.firstborn" not in plays  # Toad is not in this contest
    assert not any("detour" in p for p in plays)  # Movement cards not in a contest
    s.apply("p2 play poisonous-gas p1.firstborn")
    assert s.contest_attribute_total(1) == 1  # 2 + 1 (Noble) - 2
    s.apply("p0 play help-from-an-enchanter p0.firstborn")
    d.pass_all()
    assert [x["die"] for x in s.contest.dice] == ["d10", "d8", "d10"]


def test_window_closes_only_when_everyone_passes_in_a_row():
    d = donny_vs_barry(hands=[["bribe"], ["bribe"]])
    s = contest_at_tv(d)
    s.apply("p0 pass")
    s.apply("p1 play bribe p1.firstborn")
    assert s.phase == "window" and s.current_player() == 0  # p0 may answer
    s.apply("p0 pass")
    s.apply("p1 pass")
    assert s.phase == "dice"


def test_contest_scoped_chaos_wears_off_after_the_contest():
    d = donny_vs_barry(hands=[["invisible-servant"], []])
    s = contest_at_tv(d)
    s.apply("p0 play invisible-servant p0.firstborn")
    assert s.contest_attribute_total(0) == 4
    d.pass_all()
    d.dice([1, 1]).settle()
    assert s.effects == []


def test_attribute_floor_option():
    for floor, expected in ((0, 0), (None, -1)):
        d = donny_vs_barry(hands=[[], ["poisonous-gas"]], options=Options(attribute_floor=floor))
        s = contest_at_tv(d)
        s.apply("p1 play poisonous-gas p0.firstborn")
        assert s.contest_attribute_total(0) == expected


def test_tie_goes_to_the_higher_base_attribute():
    d = donny_vs_barry()
    s = contest_at_tv(d)
    d.pass_all()
    d.dice([8, 6]).settle()  # 1 + 8 = 9 against 3 + 6 = 9; base magic 1 vs 2
    assert s.support["treasured-valley"] == [1, 3]


def test_equal_base_goes_to_a_d10_roll_off():
    d = start(["da-donny", "witch-whitney"])  # both mastery 1
    s = edit(d.state, lambda data: data["players"][1]["bastards"][0].update(location="orkland"))
    d = Driver(s).cards("contest", ["tax-audit"])
    d.act("p0 done", "p1 done")
    d.pass_all()
    d.dice([5, 5]).settle()
    assert s.phase == "rolloff"
    d.dice([4, 4, 2, 7]).settle()  # tied again, then p1 rolls higher
    assert s.support["orkland"] == [1, 3]


def test_loser_reward_can_be_a_marker_used_in_the_next_contest():
    d = donny_vs_barry()
    s = contest_at_tv(d, "jousting")  # loser: might -1 marker
    d.pass_all()
    d.dice([9, 1]).settle()
    assert s.players[1].markers == [["might", -1]]
    d.cards("contest", ["arm-wrestling"])
    d.act("p1 done", "p0 done")  # both still in treasured-valley: contest again
    assert s.contest_attribute_total(1) == 1 - 1
    d.pass_all()
    d.dice([1, 1]).settle()
    assert s.players[1].markers == []


def test_global_support_reward_is_placed_anywhere():
    d = donny_vs_barry()
    s = contest_at_tv(d, "tavern-brawl")  # 1st: 2 support + 1 global
    d.pass_all()
    d.dice([9, 1]).settle()
    assert s.current_player() == 0 and s.players[0].pending_global == 1
    s.apply("p0 place 1 giants-step")
    assert s.support["giants-step"] == [1, 0]
    assert s.turn == 2


def test_draw_chaos_reward_respects_the_hand_limit():
    d = donny_vs_barry(hands=[["bribe"], []])
    s = contest_at_tv(d, "great-race")  # 1st: 2 support + draw 1
    s.apply("p0 play bribe p0.firstborn")
    d.pass_all()
    d.dice([9, 1]).settle()
    assert len(s.players[0].hand) == 3


# ----------------------------------------------------------- skeletons
def test_skeleton_takes_effect_only_when_revealed():
    d = donny_vs_barry(skeletons=["plain-skeleton-0", "bad-breath"], hands=[["exposed"], []])
    s = contest_at_tv(d)
    assert s.contest_attribute_total(1) == 3
    s.apply("p0 play exposed p1.firstborn")
    assert s.players[1].bastards[0].revealed
    assert s.contest_attribute_total(1) == 2
    assert "p0 play exposed p1.firstborn" not in {str(a) for a in s.legal_actions()}


def test_revealed_skeleton_can_cost_support_at_once():
    d = donny_vs_barry(skeletons=["plain-skeleton-0", "secret-love-child"],
                       hands=[["exposed"], []])
    d.act("p0 done", "p1 done")  # Barry +2 in treasured-valley
    s = d.state
    assert s.support["treasured-valley"] == [0, 2]
    s.apply("p0 play exposed p1.firstborn")  # Anytime: in turn 2's Movement phase
    assert s.support["treasured-valley"] == [0, 0] and s.players[1].supply == 60


# ------------------------------------------------------------ festivals
def skip_turn(d: Driver) -> None:
    s = d.state
    turn = s.turn
    while s.turn == turn and s.phase == "movement":
        d.act(f"p{s.current_player()} done")


def to_festival(d: Driver, site: str, row: list[str], contest: str) -> GameState:
    skip_turn(d)
    d.cards("bastard", [site, *row]).cards("contest", [contest])
    skip_turn(d)
    return d.settle()


def test_festival_moves_everyone_to_the_drawn_hometown_and_rewards_by_place():
    d = donny_vs_barry()
    s = to_festival(d, "toad", ["witch-whitney"], "arm-wrestling")
    assert s.turn == 3 and s.contest.kind == "festival"
    assert all(b.location == "goblin-warrens" for p in s.players for b in p.bastards)
    assert sorted(s.festival_row) == ["toad", "witch-whitney"]
    d.pass_all()
    d.dice([5, 5]).settle()  # Donny might 3+1 (Orc) +5 = 9 beats Barry 1 + 5
    # Holy Equinox: 5 global to 1st, 3 to 2nd; the winner places first, in any split
    assert s.current_player() == 0 and s.players[0].pending_global == 5
    s.apply("p0 place 2 joda-city")
    s.apply("p0 place 3 dark-hallows")
    assert s.current_player() == 1 and s.players[1].pending_global == 3
    s.apply("p1 place 3 joda-city")
    assert s.support["joda-city"] == [2, 3] and s.support["goblin-warrens"] == [0, 0]
    # then choose Bastards in the same order
    assert s.phase == "choose_bastard" and s.current_player() == 0
    d.cards("skeleton", ["gout"]).cards("fortune", ["fast-horse"])
    d.act("p0 choose witch-whitney")
    d.act("p1 choose toad")
    champ = s.players[0].bastard("champion")
    assert champ.card == "witch-whitney" and champ.location == "dark-hallows"
    assert champ.skeleton == "gout" and champ.fortune == "fast-horse" and not champ.revealed
    assert s.players[1].bastard("champion").card == "toad"
    assert s.turn == 4 and s.phase == "movement"


def test_festival_ranks_every_place_and_breaks_ties_for_each():
    d = start(["da-donny", "barry", "toad"])
    s = to_festival(d, "witch-whitney", ["nun-nancy", "cassandra"], "tax-audit")
    d.pass_all()
    # mastery: Donny 1, Barry 3, Toad 2; first player on turn 3 is p2
    assert s.contest.participants == [2, 0, 1]
    d.dice([4, 6, 2]).settle()  # Toad 6, Donny 7, Barry 5 -> Donny, Toad, Barry
    assert [s.players[p].pending_global for p in range(3)] == [5, 2, 3]
    assert s.placing == [0, 2, 1]


def test_final_festival_is_in_joda_city_without_new_bastards():
    d = donny_vs_barry()
    s = d.state
    while s.turn < 9:
        p = s.current_player()
        if s.phase == "movement":
            d.act(f"p{p} done")
        elif s.phase in ("window",):
            d.pass_all()
        elif s.phase == "choose_bastard":
            d.act(str(s.legal_actions()[0]))
        elif s.players[p].pending_global:
            d.act(f"p{p} place {s.players[p].pending_global} joda-city")
        else:
            d.act(str(s.legal_actions()[0]))
    d.settle()
    assert s.contest.kind == "festival" and s.contest.territory == "joda-city"
    assert s.festival_row == []
    assert all(b.location == "joda-city" for p in s.players for b in p.bastards)
    assert [len(p.bastards) for p in s.players] == [3, 3]


# ------------------------------------------------------------ end game
def to_end(d: Driver) -> GameState:
    s = d.state
    while s.phase != "end_start":
        p = s.current_player()
        if s.phase == "movement":
            d.act(f"p{p} done")
        elif s.phase == "window":
            d.pass_all()
        elif s.players[p].pending_global:
            d.act(f"p{p} place {s.players[p].pending_global} joda-city")
        else:
            d.act(str(s.legal_actions()[0]))
    return s


def set_support(state: GameState, counts: dict[str, list[int]]) -> GameState:
    def fn(data: dict) -> None:
        for t in data["support"]:
            data["support"][t] = list(counts.get(t, [0] * len(data["players"])))
        for i, p in enumerate(data["players"]):
            p["supply"] = 60 - sum(c[i] for c in data["support"].values())
    return edit(state, fn)


def test_territories_go_to_the_most_support_and_points_add_up():
    s = to_end(donny_vs_barry())
    s = set_support(s, {"joda-city": [5, 2], "orkland": [1, 0], "dark-hallows": [0, 3]})
    Driver(s).pass_all()
    Driver(s).pass_all()
    o = s.outcome()
    assert o.territories["joda-city"] == 0 and o.territories["dark-hallows"] == 1
    assert o.territories["giants-step"] is None  # nobody has support there
    assert o.scores == (15, 7) and o.winner == 0 and o.reason == "most Royal Approval Points"


def test_territory_tie_is_a_firstborn_only_contest():
    s = to_end(donny_vs_barry())
    s = set_support(s, {"joda-city": [2, 2]})
    d = Driver(s).cards("contest", ["arm-wrestling"])
    d.pass_all()
    d.settle()
    assert s.contest.kind == "territory" and s.contest.firstborn_only
    assert s.contest_bastards(0) == [s.players[0].bastard("firstborn")]
    d.pass_all()
    d.dice([1, 9]).settle()
    assert s.awards["joda-city"] == 1


def test_end_game_cards_adjust_the_score():
    s = to_end(donny_vs_barry())
    s = set_support(s, {"joda-city": [1, 0]})

    def hands(data: dict) -> None:
        for i, card in ((0, "slander"), (1, "royal-pardon")):
            old = data["players"][i]["hand"].pop()
            data["decks"]["chaos"].append(old)
            data["decks"]["chaos"].remove(card)
            data["players"][i]["hand"].append(card)
    s = edit(s, hands)
    assert "p0 play slander p1.firstborn" in {str(a) for a in s.legal_actions()}
    d = Driver(s)
    d.pass_all()  # End Game window before the awards
    assert s.phase == "end_score"
    s.apply("p1 play royal-pardon p1.firstborn")
    s.apply("p0 play slander p1.firstborn")
    d.pass_all()
    assert s.outcome().scores == (10, 0)


def test_crown_tie_is_resolved_by_a_contest():
    s = to_end(donny_vs_barry())
    s = set_support(s, {"orkland": [1, 0], "twin-spires": [0, 1]})  # 5 RAP each
    d = Driver(s).cards("contest", ["tax-audit"])
    d.pass_all()
    d.pass_all()
    assert s.contest.kind == "crown" and not s.contest.firstborn_only
    assert len(s.contest_bastards(0)) == 3  # every Bastard
    d.pass_all()
    d.dice([1, 1, 1, 9, 1, 1]).settle()
    o = s.outcome()
    assert o.scores == (5, 5) and o.winner == 1 and o.reason == "crown tie-break contest"


def test_crown_tie_firstborn_only_option():
    d = donny_vs_barry(options=Options(crown_tie_firstborn_only=True))
    s = set_support(to_end(d), {"orkland": [1, 0], "twin-spires": [0, 1]})
    d = Driver(s)
    d.pass_all()
    d.pass_all()
    assert s.contest.kind == "crown" and s.contest.firstborn_only


def test_score_tracker_past_49():
    s = to_end(donny_vs_barry())
    s = set_support(s, {t: [1, 0] for t in CARDS.territories})
    Driver(s).pass_all()
    Driver(s).pass_all()
    o = s.outcome()
    assert o.scores[0] == 50 and o.tracker[0] == (1, 0)


def test_fortune_and_revealed_skeleton_rap():
    d = donny_vs_barry(fortunes=["royal-seal", "plain-fortune-1"],
                       skeletons=["plain-skeleton-0", "tax-fraud"])
    s = set_support(to_end(d), {})
    assert s.scores() == [2, 0]  # Barry's Tax Fraud is still hidden
    s.players[1].bastards[0].revealed = True
    assert s.scores() == [2, -3]


def test_reveal_skeletons_at_end_option():
    d = donny_vs_barry(options=Options(reveal_skeletons_at_end=True))
    s = to_end(d)
    assert all(b.revealed for p in s.players for b in p.bastards)


def test_end_game_territory_order_option():
    for order, first in (("board", "treasured-valley"), ("rap", "dark-hallows")):
        d = donny_vs_barry(options=Options(end_game_territory_order=order))
        s = set_support(to_end(d), {"treasured-valley": [1, 1], "dark-hallows": [1, 1]})
        Driver(s).pass_all()
        Driver(s).settle()
        assert s.contest.territory == first


# ------------------------------------------------------- options, supply
def test_support_supply_caps_rewards():
    d = donny_vs_barry(options=Options(support_tokens=3))
    d.act("p0 done", "p1 done")  # +2 each
    d.act("p1 done", "p0 done")  # only 1 left
    assert d.state.support["orkland"] == [3, 0] and d.state.players[0].supply == 0


def test_reshuffle_discards_option():
    for reshuffle, hand in ((True, 3), (False, 0)):
        d = donny_vs_barry(options=Options(reshuffle_discards=reshuffle))

        def empty(data: dict) -> None:
            for p in data["players"]:
                data["discards"]["chaos"] += p["hand"]
                p["hand"] = []
            data["discards"]["chaos"] += data["decks"]["chaos"]
            data["decks"]["chaos"] = []
        d = Driver(edit(d.state, empty))
        d.act("p0 done", "p1 done")
        assert len(d.state.players[0].hand) == hand


# -------------------------------------------- state machine contract
def test_chance_nodes_list_outcomes_with_probabilities():
    s = new_game(2, CARDS, seed=0)
    assert s.is_chance_node() and s.current_player() == CHANCE
    outcomes = s.chance_outcomes()
    assert abs(sum(p for _, p in outcomes) - 1) < 1e-9
    assert len(outcomes) == len(CARDS.bastards)


def test_illegal_action_leaves_state_unchanged_and_undo_restores():
    d = donny_vs_barry()
    s = d.state
    before = s.to_json()
    with pytest.raises(IllegalActionError):
        s.apply("p0 move firstborn giants-step")
    assert s.to_json() == before
    s.apply("p0 move firstborn joda-city")
    s.undo()
    assert s.to_json() == before
    fresh = GameState.from_json(before)
    with pytest.raises(IllegalActionError):
        fresh.undo()


@pytest.mark.parametrize("mutate, field", [
    (lambda d: d.update(phase="lunch"), "phase"),
    (lambda d: d["players"][0]["hand"].append("ace-of-spades"), "players[0].hand[3]"),
    (lambda d: d["players"][0]["hand"].append(d["decks"]["chaos"][0]), "decks.chaos"),
    (lambda d: d["players"][0].update(supply=59), "players[0].supply"),
    (lambda d: d["players"][0]["bastards"][0].update(location="atlantis"),
     "players[0].bastards[0].location"),
    (lambda d: d["players"][0]["bastards"][0].update(role="king"),
     "players[0].bastards[0].role"),
    (lambda d: d["support"].pop("orkland"), "support"),
    (lambda d: d.update(schema="x"), "schema"),
    (lambda d: d["options"].update(firstborn_reroll="sometimes"), "options.firstborn_reroll"),
    (lambda d: d["options"].update(colour="red"), "options"),
    (lambda d: d.update(first=7), "first"),
])
def test_from_json_names_the_bad_field(mutate, field):
    data = donny_vs_barry().state.to_json()
    import copy

    data = copy.deepcopy(data)
    mutate(data)
    with pytest.raises(InvalidPositionError) as err:
        GameState.from_json(data)
    assert err.value.field == field


def test_fortune_once_effects_happen_when_gained():
    d = donny_vs_barry(fortunes=["old-friends", "war-chest"])
    s = d.state
    assert s.support["orkland"] == [2, 0]  # Old Friends: +2 in the Hometown
    # War Chest: 2 Global Support Tokens, placed before anything else happens
    assert s.current_player() == 1 and s.players[1].pending_global == 2
    d.act("p1 place 2 giants-step")
    assert s.support["giants-step"] == [0, 2]
    assert s.phase == "movement" and s.current_player() == 0


def test_global_support_from_a_chaos_card_interrupts_the_window():
    d = donny_vs_barry(hands=[[], ["town-crier"]])
    s = contest_at_tv(d)
    s.apply("p1 play town-crier p1.firstborn")
    assert s.current_player() == 1 and {str(a) for a in s.legal_actions()} == {
        f"p1 place 1 {t}" for t in s.board.territories}
    s.apply("p1 place 1 dark-hallows")
    assert s.phase == "window" and s.current_player() == 0
