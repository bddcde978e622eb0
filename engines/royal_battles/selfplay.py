"""Self-play: simple players, seeded whole games, and the recorded games the renderer films."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from .actions import Action, Verb
from .state import GameState, Options
from .units import UNIT_KINDS, Side

Player = Callable[[GameState, random.Random], Action]


def random_player(state: GameState, rng: random.Random) -> Action:
    return rng.choice(state.legal_actions())


def greedy_player(state: GameState, rng: random.Random) -> Action:
    """Moves to the attack that deals the most damage (ties: key position, then random);
    always takes the pre-turn draw; keeps its hand while it can move with it."""
    from .planner import plan

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
        side = state.to_move
        scored = []
        for a in legal:
            if a.verb is Verb.NO_ATTACK:
                scored.append((0.0, rng.random(), a))
                continue
            from .combat import resolve_attack

            r = resolve_attack(state, state.moved, a.to, a.style)
            scored.append((_attack_score(state, r, side), rng.random(), a))
        return max(scored, key=lambda t: (t[0], t[1]))[2]
    return rng.choice(legal)


def _attack_score(state: GameState, result, side: Side) -> float:
    score = 0.0
    for eff in result.effects:
        unit = state.units[eff.cell]
        sign = 1 if unit.side is not side else -1
        score += sign * (eff.damage + (20 if eff.removed else 0)) + eff.healed
    return score + (1.5 * result.draws if result.key or result.draws else 0)


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
