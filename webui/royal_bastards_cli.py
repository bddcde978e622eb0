"""`royal-table rbs ...`: the Royal Bastards table helper.

    royal-table rbs cards [--cards FILE]              check a card set, list it
    royal-table rbs map [--map FILE | --seed N]       check a laid map, show adjacencies
    royal-table rbs contest SPEC [--seed N]           resolve one contest (dice entered or rolled)
    royal-table rbs score SPEC                        End Game territory awards and totals
    royal-table rbs new --players N [...]             a new game state (JSON)
    royal-table rbs legal STATE                       who acts and the legal actions
    royal-table rbs apply STATE ACTION... [--roll N]  apply actions, print the new state
    royal-table rbs selfplay [--players N] [--games K] [--seed S]   random games, games/s

SPEC and STATE are JSON files, '-' for stdin, or inline JSON text starting with '{'.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from typing import Any

from engines.errors import RulesError
from engines.royal_bastards import (
    CHANCE,
    GameState,
    Options,
    board_from_dict,
    load_card_set_json,
    new_game,
    play_random_game,
    random_action,
    random_board,
    sample_card_set,
)
from engines.royal_bastards.cards import CardSet
from engines.royal_bastards.table import resolve_contest, score_end_game


class CliError(Exception):
    """Bad input: reported on one line, exit code 2."""


def _read(source: str) -> str:
    if source.lstrip().startswith("{"):
        return source
    if source == "-":
        return sys.stdin.read()
    try:
        with open(source, encoding="utf-8") as fh:
            return fh.read()
    except OSError as exc:
        raise CliError(f"cannot read {source}: {exc.strerror}") from None


def _json(source: str, what: str) -> Any:
    try:
        return json.loads(_read(source))
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} is not valid JSON: {exc.msg} (line {exc.lineno})") from None


def _cards(args: argparse.Namespace) -> CardSet:
    if getattr(args, "cards", None):
        return load_card_set_json(_read(args.cards))
    return sample_card_set()


def _out(data: Any, path: str | None = None) -> None:
    text = json.dumps(data, indent=1, ensure_ascii=False)
    if path:
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        except OSError as exc:
            raise CliError(f"cannot write {path}: {exc.strerror}") from None
    else:
        print(text)


def cmd_cards(args: argparse.Namespace) -> int:
    cards = _cards(args)
    if args.json:
        _out(cards.to_dict())
        return 0
    print(f"card set '{cards.label}': {cards.description}")
    for t in cards.territories.values():
        print(f"  territory {t.id:18} rap {t.rap:2} race {t.race or '-':10} colour {t.colour}"
              + (" (capital)" if t.capital else ""))
    for b in cards.bastards.values():
        attrs = " ".join(f"{a[:3]} {v}" for a, v in zip(
            ("might", "magic", "mastery", "movement"), b.attributes, strict=True))
        print(f"  bastard {b.id:20} {b.race}/{b.klass} {attrs} home {b.hometown}")
    for deck in ("fortunes", "skeletons"):
        for c in getattr(cards, deck).values():
            print(f"  {deck[:-1]} {c.id:22} {' '.join(str(e) for e in c.effects)}")
    for c in cards.contests.values():
        print(f"  contest {c.id:20} {c.attribute:8} {' '.join(str(e) for e in c.effects)} | "
              f"1st {' '.join(str(e) for e in c.first) or '-'} | "
              f"loser {' '.join(str(e) for e in c.loser) or '-'}")
    for c in cards.chaos.values():
        print(f"  chaos x{c.count} {c.id:24} {c.timing:8} {c.target:5} "
              f"{' '.join(str(e) for e in c.effects)}")
    for f in cards.festivals.values():
        print(f"  festival turn {f.turn} {f.name} ({f.colour}): global support "
              f"{list(f.global_support)}")
    return 0


def cmd_map(args: argparse.Namespace) -> int:
    cards = _cards(args)
    if args.map:
        board = board_from_dict(_json(args.map, "map"), cards)
    else:
        board = random_board(cards, random.Random(args.seed))
    if args.json:
        _out(board.to_dict())
        return 0
    for t in board.territories:
        print(f"{t}: {', '.join(board.neighbours(t))}")
    return 0


def cmd_contest(args: argparse.Namespace) -> int:
    cards = _cards(args)
    rng = random.Random(args.seed) if args.seed is not None else None
    result = resolve_contest(cards, _json(args.spec, "contest spec"), rng)
    if args.json:
        _out(result)
        return 0
    print(f"contest on {result['attribute'].upper()} at {result['territory']}")
    for r in result["participants"]:
        dice = " + ".join(f"{v}({d})" for d, v in r["dice"])
        print(f"  {r['player']}: {result['attribute']} {r['attribute']} + {dice} = {r['total']}")
    if result["tie"]:
        print(f"  tie broken by {result['tie']['by']}")
    print(f"winner: {result['winner']}")
    if "rewards" in result:
        print(f"  1st: {', '.join(result['rewards']['first']) or '-'}; "
              f"losers: {', '.join(result['rewards']['loser']) or '-'}")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    result = score_end_game(_cards(args), _json(args.spec, "score sheet"))
    if args.json:
        _out(result)
        return 0
    for t, r in result["territories"].items():
        who = r["winner"] or ("tie: " + ", ".join(r["tied"]) if r["tied"] else "nobody")
        print(f"  {t:18} {r['rap']:2} RAP -> {who}")
    for p, s in result["scores"].items():
        kings, square = result["tracker"][p]
        print(f"  {p}: {s} Royal Approval Points (tracker {square}" +
              (f", {kings} King Me token(s))" if kings else ")"))
    for need in result["needs_contest"]:
        kind = "crown" if need.get("crown") else f"territory {need['territory']}"
        print(f"  needs a contest for the {kind} between {', '.join(need['players'])}"
              + (" (Firstborn only)" if need["firstborn_only"] else ""))
    if result["winner"]:
        print(f"crowned: {result['winner']}")
    return 0


def _state(source: str) -> GameState:
    return GameState.from_json(_json(source, "state"))


def _options(args: argparse.Namespace) -> Options:
    return Options.from_dict(_json(args.options, "options")) if args.options else Options()


def cmd_new(args: argparse.Namespace) -> int:
    cards = _cards(args)
    board = board_from_dict(_json(args.map, "map"), cards) if args.map else None
    state = new_game(args.players, cards, board, _options(args), args.first, seed=args.seed)
    _out(state.to_json(), args.out)
    return 0


def _describe(state: GameState) -> None:
    if state.is_terminal():
        o = state.outcome()
        assert o is not None
        print(f"game over: p{o.winner} is crowned ({o.reason}); scores {list(o.scores)}")
        return
    who = state.current_player()
    actor = "chance: " + state.describe_chance() if who == CHANCE else f"p{who} to act"
    print(f"turn {state.turn}, phase {state.phase}, {actor}")
    for a in state.legal_actions():
        print(f"  {a}")


def cmd_legal(args: argparse.Namespace) -> int:
    _describe(_state(args.state))
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    state = _state(args.state)
    rng = random.Random(args.roll) if args.roll is not None else None
    for text in args.actions:
        if rng is not None:
            while state.is_chance_node():
                state.apply(random_action(state, rng))
        state.apply(text)
    if rng is not None:
        while state.is_chance_node():
            state.apply(random_action(state, rng))
    _out(state.to_json(), args.out)
    return 0


def cmd_selfplay(args: argparse.Namespace) -> int:
    cards = _cards(args)
    start = time.perf_counter()
    wins = [0] * args.players
    for k in range(args.games):
        state = play_random_game(args.seed + k, args.players, cards)
        o = state.outcome()
        assert o is not None
        wins[o.winner] += 1
        if args.verbose:
            print(f"game {args.seed + k}: p{o.winner} wins, scores {list(o.scores)} ({o.reason})")
    elapsed = time.perf_counter() - start
    print(f"{args.games} games, {args.players} players: wins {wins}; "
          f"{args.games / elapsed:.1f} games/s")
    return 0


def _guard(func):  # noqa: ANN001, ANN202 - wraps a handler
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except (CliError, RulesError) as exc:
            print(f"royal-table rbs: error: {exc}", file=sys.stderr)
            return 2

    return run


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="rbs_command", metavar="ACTION")

    def usage(args: argparse.Namespace) -> int:
        parser.print_help(sys.stderr)
        return 2

    parser.set_defaults(handler=usage)

    def add(name: str, func, help_text: str) -> argparse.ArgumentParser:  # noqa: ANN001
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--cards", help="card-set JSON (default: the bundled SAMPLE set)")
        p.set_defaults(handler=_guard(func))
        return p

    p = add("cards", cmd_cards, "check a card set and list its cards")
    p.add_argument("--json", action="store_true", help="print the card set as JSON")
    p = add("map", cmd_map, "check a laid map (or lay a random one) and show adjacencies")
    p.add_argument("--map", help="map JSON: {'hexes': {id: [q, r]}} or {'adjacent': [[a, b]]}")
    p.add_argument("--seed", type=int, default=0, help="seed of a random layout (no --map)")
    p.add_argument("--json", action="store_true", help="print the map as JSON")
    p = add("contest", cmd_contest, "resolve one contest: participants, attribute, modifiers, "
            "dice entered or rolled")
    p.add_argument("spec", help="contest JSON (file, '-' or inline); see README")
    p.add_argument("--seed", type=int, help="roll missing dice with this seed")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p = add("score", cmd_score, "End Game: territory awards, Royal Approval totals, crown")
    p.add_argument("spec", help="score-sheet JSON (file, '-' or inline); see README")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p = add("new", cmd_new, "start a game; prints the state JSON")
    p.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    p.add_argument("--first", type=int, default=0, help="the player holding Joda City")
    p.add_argument("--map", help="map JSON (default: a random layout from --seed)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--options", help="options JSON, e.g. '{\"firstborn_reroll\": \"once\"}'")
    p.add_argument("--out", help="write the state here instead of stdout")
    p = add("legal", cmd_legal, "show who acts and the legal actions of a state")
    p.add_argument("state", help="state JSON (file, '-' or inline)")
    p = add("apply", cmd_apply, "apply actions (e.g. 'p0 move firstborn orkland') to a state")
    p.add_argument("state", help="state JSON (file, '-' or inline)")
    p.add_argument("actions", nargs="*", help="actions in notation, applied in order")
    p.add_argument("--roll", type=int, help="resolve chance nodes (draws, dice) with this seed")
    p.add_argument("--out", help="write the state here instead of stdout")
    p = add("selfplay", cmd_selfplay, "play random games; report winners and games/s")
    p.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--verbose", action="store_true")
