"""Battle Cards properties: conservation of cards, games end, undo and JSON round trips,
validation on load, seeded whole games for every player count."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.battle_cards import (
    GameState,
    Options,
    load_sample_set,
    new_game,
    play_random_game,
)
from engines.errors import IllegalActionError, InvalidPositionError

ALL = Counter(load_sample_set().codes)


def where(g: GameState) -> Counter:
    c = Counter()
    for h in g.hands:
        c.update(h)
    c.update(g.pool)
    c.update(g.deck_shuffled)
    c.update(g.deck_known)
    c.update(g.centre)
    return c


def check_invariants(g: GameState) -> None:
    assert where(g) == ALL, "every card is in exactly one place"
    for p in range(g.players):
        assert set(g.placed[p]) <= set(g.hands[p])
        assert len(set(g.placed[p])) == len(g.placed[p])
        assert set(g.public[p]) <= set(g.hands[p])
    if g.mode == "battle" and g.phase in ("place", "decider", "choose", "category_tie"):
        if g.options.short_deck == "reject":
            assert all(len(h) == g.options.hand_size for h in g.hands)
    if g.is_chance_node():
        assert g.current_player() is None and g.legal_actions()
    elif not g.is_terminal():
        assert g.current_player() is not None and g.legal_actions()


def random_walk(seed, players, mode, options=None, check_undo=False, limit=100_000):
    rng = random.Random(seed)
    g = new_game(None, players, mode, options)
    for _ in range(limit):
        check_invariants(g)
        if g.is_terminal():
            return g
        before = g.to_json() if check_undo else None
        a = rng.choice(g.legal_actions())
        g.apply(a)
        if check_undo:
            after = g.to_json()
            g.undo()
            assert g.to_json() == before
            g.apply(a)
            assert g.to_json() == after
    raise AssertionError("game did not end")


@pytest.mark.parametrize("players", [2, 3, 4])
def test_seeded_battle_games_end_with_three_round_wins(players):
    for seed in range(6):
        g = random_walk(seed, players, "battle")
        out = g.outcome()
        assert len(out.winners) == 1 and out.scores[out.winners[0]] == 3
        assert g.round_wins == list(out.scores)
        assert all(r["turned"] >= 3 for r in g.log)
        assert all(len(h) <= 7 for h in g.hands)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_seeded_battle_game_is_reproducible(players):
    a = play_random_game(42, players)
    b = play_random_game(42, players)
    assert a.history == b.history and a.to_json() == b.to_json()


@pytest.mark.parametrize("players,mode", [(2, "trumps"), (3, "trumps"), (2, "battle"),
                                          (3, "battle"), (4, "battle")])
def test_undo_restores_the_exact_previous_state(players, mode):
    opts = Options(trumps_round_limit=40)
    g = random_walk(7, players, mode, opts, check_undo=True)
    assert g.is_terminal()
    n = len(g.history)
    for _ in range(n):
        g.undo()
    assert g.to_json() == new_game(None, players, mode, opts).to_json()
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        g.undo()


OPTION_SPACE = st.fixed_dictionaries({
    "draft_order": st.sampled_from(["rotate", "snake"]),
    "category_card_tie": st.sampled_from(["first_listed", "chooser", "redraw"]),
    "value_category": st.booleans(),
    "matchup_full_tie": st.sampled_from(["void", "all_lose"]),
    "decider_losers": st.sampled_from(["deck", "hand"]),
    "reshuffle": st.sampled_from(["auto", "always", "never"]),
    "trumps_tie_pot": st.sampled_from(["all", "tied"]),
    "trumps_tie_chooser": st.sampled_from(["same", "first_tied"]),
    "trumps_round_limit": st.sampled_from([None, 50]),
})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), players=st.integers(2, 4),
       mode=st.sampled_from(["battle", "trumps"]), opts=OPTION_SPACE)
def test_any_options_conserve_cards_and_end(seed, players, mode, opts):
    g = random_walk(seed, players, mode, Options(**opts))
    assert g.is_terminal() and g.outcome() is not None
    assert json.loads(json.dumps(g.to_json())) == g.to_json()


@pytest.mark.parametrize("players,mode", [(2, "trumps"), (4, "battle")])
def test_json_round_trip_at_every_step(players, mode):
    rng = random.Random(3)
    g = new_game(None, players, mode, Options(trumps_round_limit=10))
    while not g.is_terminal():
        g.apply(rng.choice(g.legal_actions()))
        if rng.random() < 0.2:
            data = json.loads(json.dumps(g.to_json()))
            h = GameState.from_json(data)
            assert h.to_json() == g.to_json()
            assert h.legal_actions() == g.legal_actions()


def test_undo_after_loading_replays_the_history():
    g = play_random_game(5, 2)
    data = g.to_json()
    h = GameState.from_json(data, keep_undo=False)
    h.undo()
    g2 = new_game(None, 2)
    for a in data["history"][:-1]:
        g2.apply(a)
    assert h.to_json() == g2.to_json()


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d.__setitem__("format", "x"), "format"),
        (lambda d: d.pop("players"), "players"),
        (lambda d: d.__setitem__("players", 9), "players"),
        (lambda d: d.__setitem__("mode", "war"), "mode"),
        (lambda d: d.__setitem__("first_player", 5), "first_player"),
        (lambda d: d["options"].__setitem__("draft_order", "random"), "options.draft_order"),
        (lambda d: d["options"].__setitem__("hand_size", 0), "options.hand_size"),
        (lambda d: d["options"].__setitem__("colour", 1), "options"),
        (lambda d: d["card_set"]["cards"][0].__setitem__("size", "L"), "card_set"),
        (lambda d: d["history"].__setitem__(3, "pick:NOPE"), "history[3]"),
        (lambda d: d["history"].__setitem__(0, "fly:away"), "history[0]"),
        (lambda d: d.__setitem__("history", "pick"), "history"),
        (lambda d: d["state"]["hands"][0].append("X"), "state.hands"),
        (lambda d: d["state"].__setitem__("round_wins", [3, 3]), "state.round_wins"),
        (lambda d: d["state"].__setitem__("bogus", 1), "state"),
        (lambda d: d.__setitem__("state", []), "state"),
    ],
)
def test_from_json_validates_and_names_the_field(mutate, field):
    data = json.loads(json.dumps(play_random_game(1, 2).to_json()))
    mutate(data)
    with pytest.raises(InvalidPositionError) as exc:
        GameState.from_json(data)
    assert exc.value.field == field


def test_from_json_rejects_non_objects():
    with pytest.raises(InvalidPositionError):
        GameState.from_json([])


def test_chance_outcomes_are_uniform_over_the_shuffled_part():
    g = play_random_game(0, 2, max_actions=12)  # 12 picks: the draft is over
    assert g.is_chance_node()
    outs = g.chance_outcomes()
    assert len(outs) == len(g.deck_shuffled) == len(load_sample_set()) - 12
    assert abs(sum(p for _, p in outs) - 1) < 1e-9
    assert [a for a, _ in outs] == g.legal_actions()
