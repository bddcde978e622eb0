"""`royal-table rb …`: the Royal Battles planner, legal moves, self-play and benchmark."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from engines.errors import RulesError
from engines.royal_battles import CELL_NAMES, GameState, Phase, Side
from engines.royal_battles.planner import plan, plan_hidden
from engines.royal_battles.position import loads
from engines.royal_battles.selfplay import PLAYERS, play_game


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="rb_command", metavar="SUBCOMMAND")

    p = sub.add_parser("plan", help="every option of the side to move, with exact outcomes")
    p.add_argument("position", help="position JSON file ('-' for standard input)")
    p.add_argument("--json", action="store_true", help="print a JSON list of options")
    p.set_defaults(handler=cmd_plan)

    p = sub.add_parser("legal", help="the legal actions in text notation")
    p.add_argument("position", help="position JSON file ('-' for standard input)")
    p.set_defaults(handler=cmd_legal)

    p = sub.add_parser("selfplay", help="play seeded games between simple players")
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--white", choices=sorted(PLAYERS), default="greedy")
    p.add_argument("--black", choices=sorted(PLAYERS), default="random")
    p.add_argument("--json", action="store_true", help="one JSON line per game")
    p.set_defaults(handler=cmd_selfplay)

    p = sub.add_parser("bench", help="complete random games per second, planner calls per second")
    p.add_argument("--seconds", type=float, default=3.0, help="time spent on each measurement")
    p.set_defaults(handler=cmd_bench)
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)


def _load(path: str) -> GameState:
    text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    return loads(text)


def _guard(func):
    """Bad input is a clear one-line message and exit code 2, never a traceback."""

    def wrapper(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except BrokenPipeError:
            raise  # the reader went away (`| head`): not a file problem
        except (OSError, UnicodeDecodeError) as exc:
            print(f"royal-table rb: cannot read {args.position}: {exc}", file=sys.stderr)
        except RulesError as exc:
            print(f"royal-table rb: {exc}", file=sys.stderr)
        return 2

    wrapper.__name__ = func.__name__
    return wrapper


@_guard
def cmd_plan(args: argparse.Namespace) -> int:
    state = _load(args.position)
    if state.phase is not Phase.MOVEMENT or state.current_player() is None:
        print(f"royal-table rb: nothing to plan: the position is in phase {state.phase.value}"
              + (" (a card is being drawn)" if state.is_chance_node() else ""), file=sys.stderr)
        return 2
    side = state.to_move
    if state.players[side].hand is None:
        options = plan_hidden(state)
        if args.json:
            print(json.dumps([o.to_json() for o in options], indent=1))
            return 0
        print(f"{side.value} to move; hand hidden ({state.players[side].hand_size} cards)")
        print(f"{'unit':<12} {'to':<3} {'target':<6} {'style':<9} {'known':<10} need  "
              "playable  trump ranks")
        for o in options:
            print(f"{o.unit + '@' + CELL_NAMES[o.unit_cell]:<12} {CELL_NAMES[o.to]:<3} "
                  f"{CELL_NAMES[o.target]:<6} {o.style.value:<9} "
                  f"{' '.join(c.code for c in o.known_trumps) or '-':<10} {o.needed:<5} "
                  f"{'/'.join(c.value for c in o.playable) or '-':<9} {o.trump_ranks}")
        return 0
    options = plan(state)
    if args.json:
        print(json.dumps([o.to_json() for o in options], indent=1))
        return 0
    if not options:
        print(f"{side.value} to move: no legal movement (skip to the post-turn draw)")
        return 0
    print(f"{side.value} to move, hand: {' '.join(c.code for c in state.players[side].hand)}")
    print(f"{'move':<22} {'target':<6} {'style':<9} {'trumps':<12} need hit  crit "
          "effects                      key draws")
    for o in options:
        j = o.to_json()
        move = f"{j['unit']} {j['card']}>{j['to']}"
        if o.attack is None:
            print(f"{move:<22} -")
            continue
        effects = ", ".join(_effect_text(e) for e in j["effects"]) or "-"
        print(f"{move:<22} {j['target']:<6} {j['style']:<9} {' '.join(j['trumps']) or '-':<12} "
              f"{j['needed']:<4} {'yes' if j['hit'] else 'no':<4} "
              f"{'yes' if j['critical'] else 'no':<4} {effects:<28} "
              f"{'yes' if j['key'] else 'no':<3} {j['draws']}")
    return 0


def _effect_text(e: dict) -> str:
    text = f"{e['cell']} heal {e['healed']}" if e["healed"] else f"{e['cell']} dmg {e['damage']}"
    return text + (" removed" if e["removed"] else "")


@_guard
def cmd_legal(args: argparse.Namespace) -> int:
    state = _load(args.position)
    for action in state.legal_actions():
        print(action)
    return 0


def cmd_selfplay(args: argparse.Namespace) -> int:
    results: Counter = Counter()
    for i in range(args.games):
        seed = args.seed + i
        record = play_game(seed, PLAYERS[args.white], PLAYERS[args.black])
        out = record.state.outcome
        winner = out.winner.value if out.winner else "tie"
        results[winner] += 1
        if args.json:
            print(json.dumps({"seed": seed, "winner": out.winner.value if out.winner else None,
                              "reason": out.reason, "rounds": record.state.round,
                              "actions": len(record.actions),
                              "armies": {s.value: list(record.state.players[s].army)
                                         for s in Side}}))
        else:
            print(f"game {seed}: {winner:<5} ({out.reason}) after {record.state.round} rounds, "
                  f"units left white {out.units[0]} black {out.units[1]}")
    if not args.json:
        print(f"white ({args.white}) {results['white']}, black ({args.black}) "
              f"{results['black']}, ties {results['tie']}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    games, actions, seed = 0, 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        record = play_game(seed)
        games += 1
        actions += len(record.actions)
        seed += 1
    elapsed = time.perf_counter() - start
    print(f"random games: {games / elapsed:.1f} complete games/s "
          f"({actions / elapsed:.0f} actions/s, {games} games in {elapsed:.2f} s, one core)")

    # planner on movement positions taken from greedy games
    positions = []
    s = 1000
    while len(positions) < 200:
        record = play_game(s, PLAYERS["greedy"], PLAYERS["random"])
        replay = GameState.new({side: list(record.state.players[side].army) for side in Side})
        for action in record.actions:
            if (replay.phase is Phase.MOVEMENT and replay.current_player() is not None
                    and replay.players[replay.to_move].hand):
                positions.append(replay.copy())
            replay.apply(action)
        s += 1
    calls, sizes = 0, []
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        sizes.append(len(plan(positions[calls % len(positions)])))
        calls += 1
    elapsed = time.perf_counter() - start
    print(f"planner: {calls / elapsed:.0f} plan calls/s "
          f"(median {statistics.median(sizes):.0f} options per position)")
    return 0
