"""Royal Conquest: whole seeded games, conservation, undo, JSON, view, notation."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from engines.errors import IllegalActionError, InvalidPositionError, ParseError
from engines.royal_conquest import (
    CHANCE,
    TERMINAL,
    GameState,
    Options,
    parse_action,
    play_random_game,
)
from tests.rc_support import conserved, make_state


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_seeded_whole_games_end_with_the_pot_empty(players, seed):
    state = play_random_game(players, seed)
    out = state.outcome()
    assert state.is_terminal() and out is not None
    assert out.reason == "pot_empty" and sum(out.gems) == 25 and state.pot == 0
    assert max(out.gems) == out.gems[out.winners[0]]
    assert state.current_player() == TERMINAL
    assert out.hands == len(state.results) >= 1
    assert sum(r.gems for r in state.results) == 25
    conserved(state)


def test_seeded_games_are_reproducible():
    a = play_random_game(3, 7)
    b = play_random_game(3, 7)
    assert a.to_json() == b.to_json()
    assert play_random_game(3, 8).to_json() != a.to_json()


def _walk(players: int, seed: int, check) -> GameState:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    state = GameState(players)
    while not state.is_terminal():
        check(state, rng)
        action = state.sample_chance(rng) if state.is_chance_node() else rng.choice(
            state.legal_actions()
        )
        state.apply(action)
    return state


@pytest.mark.parametrize("players", [2, 3, 4])
def test_conservation_at_every_step(players):
    for seed in range(3):
        _walk(players, 100 + seed, lambda s, _: conserved(s))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_undo_restores_the_exact_previous_state(players):
    def check(state: GameState, rng: random.Random) -> None:
        if rng.random() < 0.2:
            before = state.to_json()
            legal = state.legal_actions()
            state.apply(rng.choice(legal))
            state.undo()
            assert state.to_json() == before

    _walk(players, 200 + players, check)


def test_undo_walks_back_to_the_start():
    state = GameState(2)
    rng = random.Random(5)
    start = state.to_json()
    for _ in range(150):
        state.apply(state.sample_chance(rng) if state.is_chance_node()
                    else rng.choice(state.legal_actions()))  # fmt: skip
    for _ in range(150):
        state.undo()
    assert state.to_json() == start
    with pytest.raises(IllegalActionError):
        state.undo()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_json_round_trip_and_notation_round_trip(players):
    def check(state: GameState, rng: random.Random) -> None:
        if rng.random() > 0.25:
            return
        data = state.to_json()
        assert GameState.from_json(json.loads(json.dumps(data))).to_json() == data
        for action in state.legal_actions()[:20]:
            assert parse_action(str(action)) == action

    _walk(players, 300 + players, check)


def test_view_hides_other_hands_and_the_decks():
    rng = random.Random(1)
    state = GameState(3)
    while state.phase != "play":
        state.apply(state.sample_chance(rng))
    view = state.view(1)
    assert view["hands"][0] == 7 and isinstance(view["hands"][1], list)
    assert view["war_deck"] == 21 and view["action_deck"] == 24 - 6
    assert view["action_hands"][0] == 2 and isinstance(view["action_hands"][1], dict)
    with pytest.raises(InvalidPositionError):
        state.view(3)


def test_current_player_at_chance_nodes():
    state = GameState(2)
    assert state.current_player() == CHANCE and state.outcome() is None


def _base() -> dict:
    return make_state(2, battlefield=["B1"], hands=[["D1"], ["D2"]]).to_json()


@pytest.mark.parametrize(
    "mutate,field",
    [
        (lambda d: d["battlefield"].append("D1"), "cards"),
        (lambda d: d["battlefield"].clear(), "cards"),
        (lambda d: d["battlefield"].append("Z1"), "battlefield"),
        (lambda d: d["action_hands"][0].update(thief=9), "action_cards"),
        (lambda d: d["action_hands"][0].update(fireball=1), "action_hands[0]"),
        (lambda d: d.update(gems=[1, 0]), "gems"),
        (lambda d: d.update(phase="nap"), "phase"),
        (lambda d: d.update(current=5), "current"),
        (lambda d: d.update(players=7), "players"),
        (lambda d: d.update(game="chess"), "game"),
        (lambda d: d.update(version=2), "version"),
        (lambda d: d["options"].update(go_bonus="huge"), "options.go_bonus"),
        (lambda d: d["options"].update(colour="red"), "options"),
        (lambda d: d.update(queue=[["war", 0]]), "queue[0]"),
        (lambda d: d.update(phase="respond"), "pending"),
        (lambda d: d.update(hands="abc"), "hands"),
        (lambda d: d.pop("stacks"), "state"),
    ],
)
def test_from_json_rejects_bad_positions_naming_the_field(mutate, field):
    data = _base()
    mutate(data)
    with pytest.raises(InvalidPositionError) as err:
        GameState.from_json(data)
    assert err.value.field == field


def test_from_json_rejects_non_objects():
    with pytest.raises(InvalidPositionError):
        GameState.from_json([1, 2])


def test_parse_action_errors():
    for bad in ("", "dance", "play", "play A1 B2", "use", "use thief p1 A1 extra", "first x"):
        with pytest.raises(ParseError):
            parse_action(bad)


def test_options_round_trip_and_validation():
    opts = Options(go_bonus="linear", max_hands=3, minimum_points=4)
    assert Options.from_json(json.loads(json.dumps(opts.to_json()))) == opts
    for bad in ({"gem_pot": 0}, {"max_hands": 0}, {"defend_sweep": "x"},
                {"redeal_on_triple": "yes"}):  # fmt: skip
        with pytest.raises(InvalidPositionError):
            Options.from_json(bad)


def test_a_game_with_every_option_flipped_ends():
    opts = Options(go_bonus="linear", passed_go_chips="keep", triple_grouping="best",
                   defend_sweep="self", drawn_card_unfreezes=False, redeal_on_triple=False,
                   go_reset_below_minimum=False, after_void_hand="next")  # fmt: skip
    for players in (2, 3, 4):
        state = play_random_game(players, 11, opts)
        assert state.is_terminal()
        conserved(state)


def test_call_phase_without_enough_points_is_an_invalid_position():
    data = make_state(2, battlefield=["B1"], hands=[["D1"], ["D2"]]).to_json()
    data["phase"] = "call"
    with pytest.raises(InvalidPositionError) as err:
        GameState.from_json(data)
    assert err.value.field == "phase"


def test_a_tables_own_deck_drives_the_game():
    from engines.royal_conquest import DEFAULT_DECK, Deck

    own = DEFAULT_DECK.to_json()
    own["cards"][0]["token"], own["cards"][47]["token"] = "castle", "wand"  # A1 <-> L4
    opts = Options(deck=Deck.from_json(own))
    state = make_state(2, phase="action", stacks=[["B1", "C1", "L4"], []], hands=[["F1"], ["F2"]],
                       options=opts)  # fmt: skip
    assert state.score(0).points == 5  # L4 is a Wand at this table
    state.apply(parse_action("pass"))
    assert state.phase == "call"
    assert GameState.from_json(state.to_json()).options == opts


GOLDEN = Path(__file__).parent / "golden" / "royal_conquest" / "selfplay.json"


def test_seeded_games_match_the_golden_record():
    """Seeded self-play is a regression record of the rules: a rules change shows up here.
    Regenerate with play_random_game(n, seed) for n in 2..4, seed in 0..2 after a deliberate
    change."""
    golden = json.loads(GOLDEN.read_text())
    for key, want in golden.items():
        players, seed = int(key[0]), int(key.split("seed")[1])
        state = play_random_game(players, seed)
        assert state.outcome().to_json() == want["outcome"], key
        assert [r.to_json() for r in state.results] == want["results"], key


def test_a_draw_due_from_an_empty_action_deck_is_an_invalid_position():
    everything = {"thief": 6, "sweep": 4, "defend": 4, "poison": 4, "reveal": 2, "dragon": 2,
                  "potion": 2}  # fmt: skip
    state = make_state(2, battlefield=["B1"], hands=[["D1"], ["D2"]],
                       action_hands=[everything, {}])  # fmt: skip
    data = state.to_json()
    data.update(phase="bonus", queue=[["bonus", 0]])
    with pytest.raises(InvalidPositionError) as err:
        GameState.from_json(data)
    assert err.value.field == "queue"


def test_clone_has_its_own_undo_history():
    rng = random.Random(4)
    state = GameState(2)
    seen = []
    for _ in range(60):
        seen.append(state.to_json())
        state.apply(state.sample_chance(rng) if state.is_chance_node()
                    else rng.choice(state.legal_actions()))  # fmt: skip
    twin = state.clone()
    assert twin.to_json() == state.to_json()
    for _ in range(30):  # the twin goes back and plays on: its objects change
        twin.undo()
    for _ in range(30):
        twin.apply(twin.sample_chance(rng) if twin.is_chance_node()
                   else rng.choice(twin.legal_actions()))  # fmt: skip
    for want in reversed(seen):
        state.undo()
        assert state.to_json() == want
