"""`royal-table wlt ...`: the War Lord Tourney table helper.

    royal-table wlt new [--options JSON] [--board FILE]     a new game's state as JSON
    royal-table wlt show STATE                              the board, prisoners, who acts
    royal-table wlt moves STATE [--unit wK]                 the legal actions, one a line
    royal-table wlt apply STATE ACTION...                   play actions, print the new state
    royal-table wlt play [--seed N] [--games K]             seeded self-play
    royal-table wlt pieces                                  which chess piece stands for what

STATE is a JSON file written by `new`/`apply`, or '-' for standard input.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from typing import Any

from engines.errors import RulesError
from engines.war_lord_tourney import (
    CHESS_PIECE,
    KINDS,
    SIDES,
    Board,
    GameState,
    Options,
    play_random_game,
)


class CliError(Exception):
    """Bad input from the command line: reported on one line, exit code 2."""


def _read_json(source: str, what: str) -> Any:
    try:
        text = sys.stdin.read() if source == "-" else open(source, encoding="utf-8").read()
    except OSError as exc:
        raise CliError(f"cannot read {what} {source!r}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} is not valid JSON: {exc.msg} (line {exc.lineno})") from None


def _options(text: str | None) -> Options:
    if text is None:
        return Options()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"--options is not valid JSON: {exc.msg}") from None
    return Options.from_json(data)


def _board(path: str | None) -> Board | None:
    return None if path is None else Board.from_json(_read_json(path, "board"))


def _state(source: str) -> GameState:
    return GameState.from_json(_read_json(source, "state"))


def render(state: GameState) -> str:
    occupants: dict[str, str] = {}
    for unit in state.units.values():
        if unit.status == "field" and unit.cell:
            tag = unit.id + ("*" if unit.downed else "")
            occupants[unit.cell] = (occupants[unit.cell] + "+" + tag
                                    if unit.cell in occupants else tag)
    lines = [state.board.render(occupants)]
    for side in SIDES:
        lines.append(f"{side} dungeon: {' '.join(state.dungeons[side]) or '-'}; "
                     f"waiting in {side} castle: {' '.join(state.keep[side]) or '-'}")
    outcome = state.outcome()
    if outcome:
        lines.append(f"game over: {outcome.winner or 'draw'} ({outcome.reason})")
    else:
        who = state.current_player() or "chance (report the combat round)"
        lines.append(f"turn {state.turn}, phase {state.phase}, to act: {who}")
    return "\n".join(lines)


def cmd_new(args: argparse.Namespace) -> int:
    state = GameState.new(_board(args.board), _options(args.options))
    print(json.dumps(state.to_json(include_history=True), indent=args.indent))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    print(render(_state(args.state)))
    return 0


def cmd_moves(args: argparse.Namespace) -> int:
    state = _state(args.state)
    if args.unit:
        if args.unit not in state.units:
            raise CliError(f"unknown unit {args.unit!r}; units: {' '.join(state.units)}")
        actions = state.unit_moves(args.unit)
    else:
        actions = state.legal_actions()
    for action in actions:
        print(action)
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    state = _state(args.state)
    for text in args.actions:
        state.apply(text)
    print(json.dumps(state.to_json(include_history=True), indent=args.indent))
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    options = _options(args.options)
    if args.games < 1:
        raise CliError("--games must be 1 or more")
    results: Counter[str] = Counter()
    actions = 0
    start = time.perf_counter()
    for i in range(args.games):
        state = play_random_game(args.seed + i, options)
        outcome = state.outcome()
        results[(outcome.winner or "draw") if outcome else "unfinished"] += 1
        actions += state.history_length
        if args.games == 1:
            print(render(state))
    elapsed = time.perf_counter() - start
    summary = ", ".join(f"{k} {v}" for k, v in sorted(results.items()))
    print(f"{args.games} game(s): {summary}; {actions} actions; "
          f"{args.games / elapsed:.1f} games/s")
    return 0


def cmd_pieces(args: argparse.Namespace) -> int:
    for letter, name in KINDS.items():
        print(f"{letter}  {name:<9} {CHESS_PIECE[letter]}")
    return 0


def _guard(func: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except (CliError, RulesError) as exc:
            print(f"royal-table wlt: error: {exc}", file=sys.stderr)
            return 2
    return run


def register(parser: argparse.ArgumentParser) -> None:
    def usage(args: argparse.Namespace) -> int:
        parser.print_help()
        return 0

    parser.set_defaults(handler=usage)
    sub = parser.add_subparsers(dest="wlt_command", metavar="SUBCOMMAND")

    def add(name: str, func: Any, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=_guard(func))
        return p

    p = add("new", cmd_new, "print a new game's state as JSON")
    p.add_argument("--options", help='rule options as JSON, e.g. \'{"combat": "dice"}\'')
    p.add_argument("--board", help="a board JSON file (default: the documented 9x9 board)")
    p.add_argument("--indent", type=int, default=None, help="pretty-print the JSON")
    p = add("show", cmd_show, "draw the board, prisoners and who acts")
    p.add_argument("state", help="state JSON file, or - for standard input")
    p = add("moves", cmd_moves, "list the legal actions (or one unit's moves)")
    p.add_argument("state", help="state JSON file, or - for standard input")
    p.add_argument("--unit", help="only this unit's moves, e.g. wK")
    p = add("apply", cmd_apply, "apply actions (e.g. 'wK c5', 'white wins') and print the state")
    p.add_argument("state", help="state JSON file, or - for standard input")
    p.add_argument("actions", nargs="+", metavar="ACTION")
    p.add_argument("--indent", type=int, default=None, help="pretty-print the JSON")
    p = add("play", cmd_play, "seeded self-play with random players")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--options", help="rule options as JSON")
    add("pieces", cmd_pieces, "which chess piece stands for which unit")
