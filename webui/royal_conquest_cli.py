"""`royal-table rc ...`: Royal Conquest table helper.

score TOKEN...        points and combinations of one player's Stacks (one word per card)
deck                  the War deck: which coat of arms carries which token (default or --deck)
new                   a new match as state JSON
legal STATE           the legal actions of a state (file, or - for stdin)
apply STATE ACTION..  apply actions (notation as printed by `legal`) and print the new state
selfplay              random self-play games, with a summary and games per second
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from engines.errors import RulesError
from engines.royal_conquest import (
    ALL_WAR_CARDS,
    DEFAULT_DECK,
    Deck,
    GameState,
    Options,
    parse_action,
    play_random_game,
)
from engines.royal_conquest.helper import parse_tokens, stack_report


class _UsageError(Exception):
    pass


def _fail(message: str) -> int:
    print(f"royal-table rc: error: {message}", file=sys.stderr)
    return 2


def _read_json(path: str, what: str) -> Any:
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
    except OSError as exc:
        raise _UsageError(f"cannot read {what} {path!r}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _UsageError(
            f"{what} {path!r} is not valid JSON: {exc.msg} (line {exc.lineno})"
        ) from None


def _options(args: argparse.Namespace) -> Options:
    data: dict[str, Any] = {}
    if getattr(args, "options", None):
        text = args.options
        if text.lstrip().startswith("{"):
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise _UsageError(f"--options is not valid JSON: {exc.msg}") from None
        else:
            data = _read_json(text, "options file")
    if getattr(args, "deck", None):
        data = dict(data, deck=_read_json(args.deck, "deck file"))
    return Options.from_json(data)


def _guard(func: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except _UsageError as exc:
            return _fail(str(exc))
        except RulesError as exc:
            return _fail(str(exc))

    return run


def _cmd_score(args: argparse.Namespace) -> int:
    tokens = parse_tokens(args.tokens)
    report = stack_report(tokens, args.players, args.go_score, args.grouping)
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{report['cards']} cards: {report['points']} points")
    for combo in report["combinations"]:
        print(f"  {combo['name']:<24} {combo['points']:>2}")
    if not report["combinations"]:
        print("  (no combination yet)")
    if report["must_stop"]:
        print("5 Crowns: you must call STOP (+1 Gem).")
    elif report["threshold"] is not None:
        verdict = "yes, call STOP or GO" if report["must_call"] else "not yet"
        print(f"Must call (needs {report['threshold']} points): {verdict}")
    close = [n for n in report["near"] if n["more"] <= 2]
    if close:
        print("Close:")
        for near in close:
            makes = ", ".join(near["makes"])
            extra = " (must STOP)" if near["must_stop"] else ""
            print(f"  {near['more']} more {near['token']}: {makes} (+{near['gain']}){extra}")
    return 0


def _cmd_deck(args: argparse.Namespace) -> int:
    deck: Deck = _options(args).deck if args.deck else DEFAULT_DECK
    if args.json:
        print(json.dumps(deck.to_json()))
        return 0
    for arms, name in enumerate(deck.arms_names):
        cards = [c for c in ALL_WAR_CARDS if c.arms == arms]
        row = "  ".join(f"{c}:{deck.face(c)}" for c in cards)
        print(f"{name:<10} {row}")
    return 0


def _cmd_new(args: argparse.Namespace) -> int:
    state = GameState(args.players, _options(args))
    print(json.dumps(state.to_json()))
    return 0


def _load_state(path: str) -> GameState:
    return GameState.from_json(_read_json(path, "state"))


def _cmd_legal(args: argparse.Namespace) -> int:
    state = _load_state(args.state)
    if args.json:
        out = {
            "phase": state.phase,
            "player": state.current_player(),
            "chance": state.is_chance_node(),
            "actions": [str(a) for a in state.legal_actions()],
        }
        print(json.dumps(out))
        return 0
    who = "chance" if state.is_chance_node() else f"p{state.current_player()}"
    if state.is_terminal():
        who = "nobody (match over)"
    print(f"phase {state.phase}, to act: {who}")
    for action in state.legal_actions():
        print(f"  {action}")
    return 0


def _cmd_apply(args: argparse.Namespace) -> int:
    state = _load_state(args.state)
    for text in args.actions:
        state.apply(parse_action(text))
    print(json.dumps(state.to_json()))
    return 0


def _cmd_selfplay(args: argparse.Namespace) -> int:
    if args.games < 1:
        raise _UsageError("--games must be at least 1")
    options = _options(args)
    start = time.perf_counter()
    summaries = []
    for i in range(args.games):
        state = play_random_game(args.players, args.seed + i, options)
        outcome = state.outcome()
        assert outcome is not None
        summaries.append({"seed": args.seed + i, **outcome.to_json()})
    elapsed = time.perf_counter() - start
    rate = args.games / elapsed if elapsed > 0 else float("inf")
    if args.json:
        print(json.dumps({"games": summaries, "games_per_second": rate}))
        return 0
    for s in summaries:
        winners = ",".join(f"p{w}" for w in s["winners"])
        print(f"seed {s['seed']}: {s['hands']} hands, gems {s['gems']}, winner {winners}")
    print(f"{args.games} games in {elapsed:.2f} s ({rate:.1f} games/s)")
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="rc_command", metavar="SUBCOMMAND")

    p = sub.add_parser(
        "score",
        help="points of one player's Stacks",
        description="Score the cards in one player's Stacks. One token word per card: "
        "wand bow sword axe helmet body shield crown castle.",
    )
    p.add_argument("tokens", nargs="*", metavar="TOKEN", help="one word per card in the Stacks")
    p.add_argument("--players", type=int, choices=(2, 3, 4), help="players (sets the minimum)")
    p.add_argument("--go-score", type=int, help="points at your last GO this hand")
    p.add_argument(
        "--grouping",
        choices=("always", "best"),
        default="always",
        help="FAQ: a matched triple leaves the random cards (always; default)",
    )
    p.add_argument("--json", action="store_true", help="print a JSON object")
    p.set_defaults(handler=_guard(_cmd_score))

    p = sub.add_parser("deck", help="which coat of arms carries which token")
    p.add_argument("--deck", help="a deck JSON file (default: the built-in assumption)")
    p.add_argument("--json", action="store_true", help="print the deck as JSON")
    p.set_defaults(handler=_guard(_cmd_deck))

    p = sub.add_parser("new", help="a new match as state JSON")
    p.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    p.add_argument("--options", help="options as JSON text or a JSON file")
    p.add_argument("--deck", help="a deck JSON file")
    p.set_defaults(handler=_guard(_cmd_new))

    p = sub.add_parser("legal", help="legal actions of a state")
    p.add_argument("state", help="state JSON file, or - for stdin")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_guard(_cmd_legal))

    p = sub.add_parser("apply", help="apply actions to a state, print the new state")
    p.add_argument("state", help="state JSON file, or - for stdin")
    p.add_argument("actions", nargs="+", metavar="ACTION", help="e.g. 'play A1 on A2', 'go'")
    p.set_defaults(handler=_guard(_cmd_apply))

    p = sub.add_parser("selfplay", help="random self-play games")
    p.add_argument("--players", type=int, choices=(2, 3, 4), default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--options", help="options as JSON text or a JSON file")
    p.add_argument("--deck", help="a deck JSON file")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_guard(_cmd_selfplay))

    parser.set_defaults(handler=lambda args: (parser.print_help(), 0)[1])
