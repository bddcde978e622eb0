"""Self-play: simple players, seeded whole games, and the recorded games the renderer films."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from .actions import Action, Verb
from .combat import resolve_attack
from .planner import attack_value, plan
from .state import GameState, Options
from .units import UNIT_KINDS, Side

Player = Callable[[GameState, random.Random], Action]


def random_player(state: GameState, rng: random.Random) -> Action:
    return rng.choice(state.legal_actions())


def greedy_player(state: GameState, rng: random.Random) -> Action:
    """Moves to the attack that deals the most damage (ties: key position, then random);
    always takes the pre-turn draw; keeps its hand while it can move with it."""
    legal = state.legal_actions()
    verbs = {a.verb for a in legal}
    if Verb.TAKE_DRAW in verbs:
        return next(a for a in legal if a.verb is Verb.TAKE_DRAW)
    if Verb.KEEP in verbs:  # a hand that can't move anything only blocks the pre-turn draw
        keep = state.has_playable_card(state.to_move)
        return next(a for a in legal if a.verb is (Verb.KEEP if keep else Verb.DISCARD))
    if state.phase.value == "movement" and any(a.verb is Verb.MOVE for a in legal):
        options = plan(state)
        best = max(options, key=lambda o: (o.score(), rng.random()))
        return best.move
    if state.phase.value == "attack":
        scored = [(0.0 if a.verb is Verb.NO_ATTACK
                   else attack_value(resolve_attack(state, state.moved, a.to, a.style)),
                   rng.random(), a) for a in legal]
        return max(scored, key=lambda t: (t[0], t[1]))[2]
    return rng.choice(legal)


PLAYERS: dict[str, Player] = {"random": random_player, "greedy": greedy_player}


def random_army(rng: random.Random) -> list[str]:
    return [rng.choice(list(UNIT_KINDS)) for _ in range(4)]


@dataclass
class GameRecord:
    seed: int
    actions: list[Action]
    state: GameState


def play_game(seed: int, white: Player = random_player, black: Player = random_player,
              options: Options | None = None, armies: dict[Side, list[str]] | None = None,
              max_actions: int = 100_000) -> GameRecord:
    """Play one whole seeded game; the same seed always gives the same game."""
    rng = random.Random(seed)
    if armies is None:
        armies = {Side.WHITE: random_army(rng), Side.BLACK: random_army(rng)}
    state = GameState.new(armies, options)
    players = {Side.WHITE: white, Side.BLACK: black}
    for _ in range(max_actions):
        if state.is_terminal():
            break
        if state.is_chance_node():
            action = state.sample_chance(rng)
        else:
            action = players[state.current_player()](state, rng)
        state.apply(action)
    else:  # pragma: no cover - the rules bound a game to 54 rounds
        raise RuntimeError(f"game {seed} did not end in {max_actions} actions")
    return GameRecord(seed, list(state.actions), state)


def record_game(seed: int, white: str = "greedy", black: str = "greedy",
                options: Options | None = None) -> list[tuple[str, dict]]:
    """A whole seeded game as (action text, position JSON after it), from the empty table."""
    from .position import to_json

    record = play_game(seed, PLAYERS[white], PLAYERS[black], options)
    replay = GameState.new({s: list(record.state.players[s].army) for s in Side}, options)
    out = []
    for action in record.actions:
        replay.apply(action)
        out.append((str(action), to_json(replay)))
    return out
