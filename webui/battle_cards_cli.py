"""`royal-table bc ...`: the Battle Cards table helper on the command line.

    royal-table bc validate [FILE]                      check a card-set JSON file
    royal-table bc schema                               print the card-set JSON schema
    royal-table bc cards [--set FILE]                   list the cards of a set
    royal-table bc matchup CARD CARD... --category C    resolve one Battle Mode match-up
    royal-table bc round --category C A,B,C,D,E F,G,H,I,J   resolve a Battle Mode round
    royal-table bc trumps CARD CARD... --category C     resolve a basic-game (Trumps) round
    royal-table bc selfplay --players N --seed S        play seeded random games
    royal-table bc new / apply / show                   track a game as a JSON state file

Without --set the shipped SAMPLE set is used (invented cards, not the printed deck).
Bad input gives a one-line error on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from engines.battle_cards import (
    MODES,
    CardSet,
    GameState,
    Options,
    load_sample_set,
    new_game,
    parse_action,
    parse_category,
    play_random_game,
    resolve_matchup,
    resolve_round,
    resolve_trumps,
    schema_text,
)
from engines.errors import RulesError


class CliError(Exception):
    """Bad command-line input: reported on one line, exit code 2."""


def _read_text(path: str) -> str:
    try:
        if path == "-":
            return sys.stdin.read()
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise CliError(f"{path} is not UTF-8 text") from exc


def _read_json(path: str) -> Any:
    text = _read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{path}: malformed JSON: {exc.msg} at line {exc.lineno}") from exc


def _card_set(path: str | None) -> CardSet:
    if path is None:
        return load_sample_set()
    return CardSet.from_dict(_read_json(path))


def _options(pairs: list[str] | None) -> Options:
    data: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--option expects KEY=VALUE, got {pair!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        data[key.strip()] = value
    try:
        return Options.from_dict(data)
    except TypeError as exc:
        raise CliError(f"bad option: {exc}") from exc


def _emit(args: argparse.Namespace, data: Any, text: str) -> None:
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2))
    else:
        print(text)


# ----- handlers ------------------------------------------------------------------------------


def cmd_validate(args: argparse.Namespace) -> int:
    cs = _card_set(args.file)
    label = " (SAMPLE set: invented cards)" if cs.sample else ""
    print(f"OK: {cs.name!r}, {len(cs)} cards{label}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    print(schema_text().rstrip())
    return 0


def cmd_cards(args: argparse.Namespace) -> int:
    cs = _card_set(args.set)
    if args.json:
        print(json.dumps(cs.to_dict(), indent=2))
        return 0
    print(f"{cs.name}{' (SAMPLE)' if cs.sample else ''}: {len(cs)} cards")
    print(f"{'code':8} {'name':18} {'Str':>3} {'Ski':>3} {'Mag':>3} {'Ter':>3} {'Val':>3} Size")
    for c in sorted(cs.cards, key=lambda c: (c.value, c.code)):
        print(f"{c.code:8} {c.name[:18]:18} {c.strength:3} {c.skill:3} {c.magic:3} "
              f"{c.terror:3} {c.value:3} {c.size.value}")
    return 0


def cmd_matchup(args: argparse.Namespace) -> int:
    cs = _card_set(args.set)
    cards = [cs.card(c) for c in args.cards]
    res = resolve_matchup(cards, parse_category(args.category))
    lines = [f"  {c}  {args.category}={c.score(res.category)}" for c in cards]
    _emit(args, res.to_dict(), "\n".join([*lines, str(res)]))
    return 0


def _split(group: str) -> list[str]:
    return [x.strip() for x in group.split(",") if x.strip()]


def cmd_round(args: argparse.Namespace) -> int:
    cs = _card_set(args.set)
    placements = [[cs.card(c) for c in _split(g)] for g in args.placements]
    cat = parse_category(args.category)
    res = resolve_round(placements, cat, args.to_win)
    lines = [f"Round on {cat}:"]
    for i, m in enumerate(res.matchups, 1):
        lines.append(f"  match-up {i}: {m}")
    lines.append("  match-up wins: " + ", ".join(f"P{p + 1} {w}" for p, w in enumerate(res.wins)))
    if res.winner is not None:
        lines.append(f"  round won by P{res.winner + 1}")
        if len(res.last) == 1:
            lines.append(f"  P{res.last[0] + 1} lost and picks the next category")
        else:
            tied = ", ".join(f"P{p + 1}" for p in res.last)
            lines.append(f"  tied last: {tied} -> sudden-death decider for the next category")
    else:
        tied = ", ".join(f"P{p + 1}" for p in res.decider)
        lines.append(f"  no winner yet: sudden-death decider between {tied} on {cat}")
    unturned = len(placements[0]) - res.turned
    if unturned:
        lines.append(f"  {unturned} match-up(s) unturned: those cards go back to their squads")
    _emit(args, res.to_dict(), "\n".join(lines))
    return 0


def cmd_trumps(args: argparse.Namespace) -> int:
    cs = _card_set(args.set)
    res = resolve_trumps([cs.card(c) for c in args.cards], parse_category(args.category))
    _emit(args, res.to_dict(), str(res))
    return 0


def cmd_selfplay(args: argparse.Namespace) -> int:
    cs = _card_set(args.set)
    opts = _options(args.option)
    if args.games < 1:
        raise CliError("--games must be at least 1")
    t0 = time.perf_counter()
    results = []
    for k in range(args.games):
        g = play_random_game(args.seed + k, args.players, args.mode, cs, opts)
        results.append(g)
    dt = time.perf_counter() - t0
    if args.games == 1:
        g = results[0]
        out = g.outcome()
        if args.json:
            print(json.dumps({"outcome": out.to_dict(), "actions": len(g.history),
                              "history": g.history}, indent=2))
            return 0
        print(f"Battle Cards {args.mode}, {args.players} players, seed {args.seed}"
              f"{' (SAMPLE set)' if cs.sample else ''}")
        if args.mode == "battle":
            for r in g.log:
                who = "no winner" if r["winner"] is None else f"P{r['winner'] + 1} wins"
                if any(d["kind"] == "round" for d in r["deciders"]):
                    who += " after a sudden-death decider"
                wins = "-".join(map(str, r["wins"]))
                print(f"  round {r['round']} on {r['category']} ({r['category_from']}): "
                      f"match-ups {wins}, {who}")
        print(f"{out} ({len(g.history)} actions)")
        return 0
    wins = [0] * args.players
    for g in results:
        for w in g.outcome().winners:
            wins[w] += 1
    summary = {"games": args.games, "seconds": round(dt, 3),
               "games_per_second": round(args.games / dt, 1), "wins": wins}
    _emit(args, summary, f"{args.games} games in {dt:.2f}s ({args.games / dt:.1f} games/s); "
                         f"wins by seat {wins}")
    return 0


def _load_state(path: str) -> GameState:
    return GameState.from_json(_read_json(path))


def _describe(g: GameState) -> str:
    lines = [f"{g.mode}, {g.players} players, phase {g.phase}, round {g.round_no}"]
    if g.is_terminal():
        lines.append(str(g.outcome()))
        return "\n".join(lines)
    if g.is_chance_node():
        seat = g.whose_draw()
        to = f" for P{seat + 1}" if seat is not None else ""
        lines.append(f"chance: report the card drawn{to} (draw:CODE), "
                     f"{len(g.deck_shuffled)} possible")
    else:
        legal = " ".join(str(a) for a in g.legal_actions())
        lines.append(f"P{g.current_player() + 1} to act: {legal}")
    if g.mode == "battle":
        lines.append(f"round wins {g.round_wins}; category {g.category}")
        for p in range(g.players):
            lines.append(f"  P{p + 1} hand: {' '.join(g.hands[p])}")
    return "\n".join(lines)


def _write_state(args: argparse.Namespace, g: GameState) -> None:
    text = json.dumps(g.to_json(), indent=1)
    if getattr(args, "out", None):
        try:
            Path(args.out).write_text(text + "\n", encoding="utf-8")
        except OSError as exc:
            raise CliError(f"cannot write {args.out}: {exc.strerror or exc}") from exc
        print(_describe(g))
    else:
        print(text)


def cmd_new(args: argparse.Namespace) -> int:
    g = new_game(_card_set(args.set), args.players, args.mode, _options(args.option),
                 args.first)
    _write_state(args, g)
    return 0


def cmd_apply(args: argparse.Namespace) -> int:
    g = _load_state(args.state)
    for text in args.actions:
        g.apply(parse_action(text))
    if args.out is None and args.state != "-":
        args.out = args.state  # update the file in place
    _write_state(args, g)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    g = _load_state(args.state)
    if args.player is not None:
        if not 1 <= args.player <= g.players:
            raise CliError(f"--player must be 1..{g.players}")
        print(json.dumps(g.view(args.player - 1), indent=2))
        return 0
    print(_describe(g))
    return 0


def _guard(func):
    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except (RulesError, CliError) as exc:
            print(f"royal-table bc: error: {exc}", file=sys.stderr)
            return 2

    return run


# ----- parser ------------------------------------------------------------------------------------


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="bc_command", metavar="SUBCOMMAND")

    def add(name: str, func, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=_guard(func))
        return p

    def set_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("--set", metavar="FILE",
                       help="card-set JSON file (default: the shipped SAMPLE set)")

    def json_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", action="store_true", help="print JSON instead of text")

    p = add("validate", cmd_validate, "check a card-set JSON file against the schema")
    p.add_argument("file", nargs="?", help="card-set JSON file (default: the sample set)")

    add("schema", cmd_schema, "print the card-set JSON schema")

    p = add("cards", cmd_cards, "list the cards of a set, cheapest first")
    set_arg(p)
    json_arg(p)

    p = add("matchup", cmd_matchup, "resolve a Battle Mode match-up (score, Size, Value)")
    p.add_argument("cards", nargs="+", metavar="CARD", help="card codes or names (2 or more)")
    p.add_argument("--category", "-c", required=True,
                   help="strength, skill, magic, terror or value (prefixes allowed)")
    set_arg(p)
    json_arg(p)

    p = add("round", cmd_round, "resolve a Battle Mode round from each player's placed cards")
    p.add_argument("placements", nargs="+", metavar="CARDS",
                   help="one comma-separated list per player, in match-up order")
    p.add_argument("--category", "-c", required=True, help="the round's category")
    p.add_argument("--to-win", type=int, default=3, help="match-up wins that end the round")
    set_arg(p)
    json_arg(p)

    p = add("trumps", cmd_trumps, "resolve a basic-game (Trumps) round: highest score wins")
    p.add_argument("cards", nargs="+", metavar="CARD", help="each player's top card")
    p.add_argument("--category", "-c", required=True, help="the chosen category")
    set_arg(p)
    json_arg(p)

    def game_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--players", "-n", type=int, default=2, help="number of players")
        p.add_argument("--mode", choices=MODES, default="battle", help="game mode")
        p.add_argument("--option", "-o", action="append", metavar="KEY=VALUE",
                       help="rule option, e.g. draft_order=snake (repeatable)")
        set_arg(p)

    p = add("selfplay", cmd_selfplay, "play seeded random games and print the result")
    game_args(p)
    p.add_argument("--seed", "-s", type=int, default=0, help="random seed")
    p.add_argument("--games", type=int, default=1, help="play this many games (seed, seed+1..)")
    json_arg(p)

    p = add("new", cmd_new, "start a game and print (or --out) its JSON state")
    game_args(p)
    p.add_argument("--first", type=int, default=0, help="seat of the youngest player (0-based)")
    p.add_argument("--out", metavar="FILE", help="write the state here")

    p = add("apply", cmd_apply, "apply actions (pick:CODE, draw:CODE, place:CODE, "
                                "decide:CODE, category:NAME) to a state file")
    p.add_argument("state", help="state JSON file ('-' = stdin, printed to stdout)")
    p.add_argument("actions", nargs="+", metavar="ACTION")
    p.add_argument("--out", metavar="FILE", help="write here instead of updating STATE")

    p = add("show", cmd_show, "describe a state file: phase, who acts, legal actions")
    p.add_argument("state", help="state JSON file ('-' = stdin)")
    p.add_argument("--player", type=int, help="show only what this player (1-based) may see")
