"""Stand-alone table helpers: resolve one contest, and score the End Game, from a plain
description of what is on the table (no whole game state needed). Used by the CLI and the page.

Dice are either entered (the values the players rolled, in the order `plan` lists them; a
Firstborn's 10 is followed by its extra roll) or rolled by a seeded `random.Random`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from engines.errors import InvalidPositionError

from .cards import ATTRIBUTES, DICE, ROLES, CardSet, Effect
from .rules import (
    Bastard,
    Context,
    Options,
    attribute_value,
    base_sum,
    dice_for,
    explodes,
    majority,
    rank_groups,
    split_by_rolls,
    tracker,
)


@dataclass
class _Side:
    name: str
    bastards: list[Bastard]
    extra: dict[str, list[Effect]]  # role -> chaos effects on that Bastard
    modifier: int
    extra_dice: list[str]
    dice: list[int] | None
    rolloff: list[int] | None


def _list(value: Any, field: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InvalidPositionError("must be a list", field)
    return value


def _int(value: Any, field: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or (
            lo is not None and value < lo) or (hi is not None and value > hi):
        rng = f" in {lo}..{hi}" if lo is not None and hi is not None else ""
        raise InvalidPositionError(f"must be an integer{rng}, got {value!r}", field)
    return value


def _side(cards: CardSet, data: Any, i: int, territory: str, firstborn_only: bool) -> _Side:
    f = f"participants[{i}]"
    if not isinstance(data, dict):
        raise InvalidPositionError("must be an object", f)
    unknown = set(data) - {"player", "bastards", "chaos", "modifier", "extra_dice", "dice",
                           "rolloff"}
    if unknown:
        raise InvalidPositionError(f"unknown key(s) {sorted(unknown)}", f)
    name = data.get("player", f"p{i}")
    if not isinstance(name, str) or not name:
        raise InvalidPositionError("must be a name", f"{f}.player")
    bastards: list[Bastard] = []
    for j, b in enumerate(_list(data.get("bastards"), f"{f}.bastards")):
        g = f"{f}.bastards[{j}]"
        if isinstance(b, str):
            b = {"card": b}
        if not isinstance(b, dict):
            raise InvalidPositionError("must be a card id or an object", g)
        card = b.get("card")
        if card not in cards.bastards:
            raise InvalidPositionError(f"unknown bastard {card!r}", f"{g}.card")
        role = b.get("role", ROLES[j] if j < 3 else "")
        if role not in ROLES:
            raise InvalidPositionError(f"must be one of {ROLES}", f"{g}.role")
        fortune, skeleton = b.get("fortune"), b.get("skeleton")
        if fortune is not None and fortune not in cards.fortunes:
            raise InvalidPositionError(f"unknown fortune {fortune!r}", f"{g}.fortune")
        if skeleton is not None and skeleton not in cards.skeletons:
            raise InvalidPositionError(f"unknown skeleton {skeleton!r}", f"{g}.skeleton")
        revealed = b.get("revealed", False)
        if not isinstance(revealed, bool):
            raise InvalidPositionError("must be true or false", f"{g}.revealed")
        bastards.append(Bastard(card, role, territory, fortune, skeleton, revealed))
    if firstborn_only:
        bastards = [b for b in bastards if b.role == "firstborn"]
    if not bastards:
        raise InvalidPositionError("needs at least one Bastard (a Firstborn if firstborn_only)",
                                   f"{f}.bastards")
    if len({b.role for b in bastards}) != len(bastards):
        raise InvalidPositionError("a role appears twice", f"{f}.bastards")
    extra: dict[str, list[Effect]] = {}
    for j, c in enumerate(_list(data.get("chaos"), f"{f}.chaos")):
        g = f"{f}.chaos[{j}]"
        if isinstance(c, str):
            c = {"card": c}
        if not isinstance(c, dict) or c.get("card") not in cards.chaos:
            raise InvalidPositionError(f"unknown chaos card {c!r}", g)
        role = c.get("role", bastards[0].role)
        if role not in {b.role for b in bastards}:
            raise InvalidPositionError(f"no {role!r} of this player in the contest", f"{g}.role")
        extra.setdefault(role, []).extend(e for e in cards.chaos[c["card"]].effects
                                          if e.kind in ("modify", "extra_die"))
    extra_dice = _list(data.get("extra_dice"), f"{f}.extra_dice")
    for j, d in enumerate(extra_dice):
        if d not in DICE:
            raise InvalidPositionError(f"must be one of {tuple(DICE)}", f"{f}.extra_dice[{j}]")
    modifier = _int(data.get("modifier", 0), f"{f}.modifier", -50, 50)
    dice = data.get("dice")
    if dice is not None:
        dice = [_int(v, f"{f}.dice[{k}]", 1, 10) for k, v in enumerate(_list(dice, f"{f}.dice"))]
    rolloff = data.get("rolloff")
    if rolloff is not None:
        rolloff = [_int(v, f"{f}.rolloff[{k}]", 1, 10)
                   for k, v in enumerate(_list(rolloff, f"{f}.rolloff"))]
    return _Side(name, bastards, extra, modifier, extra_dice, dice, rolloff)


def resolve_contest(cards: CardSet, spec: Any, rng: random.Random | None = None,
                    options: Options | None = None) -> dict[str, Any]:
    """Resolve one contest as the rules' "Resolving Contests" and "Resolving Ties" describe.

    spec: {"contest": card id | "attribute": name, "territory": id, "firstborn_only": bool,
           "participants": [{"player", "bastards", "chaos", "modifier", "extra_dice",
                             "dice", "rolloff"}]}
    Missing dice (or roll-off d10s) are rolled with `rng`; without `rng` they are an error.
    """
    options = options or Options()
    if not isinstance(spec, dict):
        raise InvalidPositionError("a contest must be a JSON object", "contest")
    card = None
    if spec.get("contest") is not None:
        if spec["contest"] not in cards.contests:
            raise InvalidPositionError(f"unknown contest card {spec['contest']!r}", "contest")
        card = cards.contests[spec["contest"]]
        attribute = card.attribute
    else:
        attribute = spec.get("attribute")
        if attribute not in ATTRIBUTES:
            raise InvalidPositionError(f"must be one of {ATTRIBUTES} (or give 'contest')",
                                       "attribute")
    territory = spec.get("territory", cards.capital)
    if territory not in cards.territories:
        raise InvalidPositionError(f"unknown territory {territory!r}", "territory")
    firstborn_only = spec.get("firstborn_only", False)
    if not isinstance(firstborn_only, bool):
        raise InvalidPositionError("must be true or false", "firstborn_only")
    raw = _list(spec.get("participants"), "participants")
    if len(raw) < 2:
        raise InvalidPositionError("a contest needs at least two participants", "participants")
    sides = [_side(cards, p, i, territory, firstborn_only) for i, p in enumerate(raw)]
    if len({s.name for s in sides}) != len(sides):
        raise InvalidPositionError("player names must differ", "participants")

    card_effects = card.effects if card else ()
    results = []
    for i, s in enumerate(sides):
        attr_total = s.modifier
        plan: list[tuple[str, bool]] = []
        for b in s.bastards:
            ctx = Context(attribute, (*card_effects, *s.extra.get(b.role, [])))
            attr_total += attribute_value(cards, b, attribute, ctx, options.attribute_floor)
            plan += [(d, k == 0 and b.role == "firstborn")
                     for k, d in enumerate(dice_for(cards, b, ctx))]
        plan += [(d, False) for d in s.extra_dice]
        rolls: list[list] = []
        values = list(s.dice) if s.dice is not None else None
        for die, own in plan:
            n = 0
            while True:
                if values is not None:
                    if not values:
                        raise InvalidPositionError(
                            f"not enough dice entered: need a {die} (plan: "
                            f"{', '.join(d for d, _ in plan)}; a Firstborn's 10 needs one more)",
                            f"participants[{i}].dice")
                    value = values.pop(0)
                    if value > DICE[die]:
                        raise InvalidPositionError(f"{value} is not a {die} result",
                                                   f"participants[{i}].dice")
                elif rng is not None:
                    value = rng.randint(1, DICE[die])
                else:
                    raise InvalidPositionError("enter the dice or ask for a seeded roll",
                                               f"participants[{i}].dice")
                rolls.append([die, value])
                if not (value == DICE[die] and explodes(die, n, options, own)):
                    break
                n += 1
        if values:
            raise InvalidPositionError(f"{len(values)} dice value(s) too many",
                                       f"participants[{i}].dice")
        results.append({"player": s.name, "attribute": attr_total, "dice": rolls,
                        "plan": [d for d, _ in plan],
                        "total": attr_total + sum(v for _, v in rolls),
                        "base": base_sum(cards, s.bastards, attribute)})

    order = list(range(len(sides)))
    groups = rank_groups({i: r["total"] for i, r in enumerate(results)},
                         {i: r["base"] for i, r in enumerate(results)}, order)
    tie: dict[str, Any] | None = None
    rounds = 0
    while len(groups[0]) > 1:  # only the winner matters in a contest
        tie = tie or {"by": "roll-off", "rolls": []}
        rolls_now = {}
        for i in groups[0]:
            given = sides[i].rolloff
            if given is not None:
                if rounds >= len(given):
                    raise InvalidPositionError("tie: enter another roll-off d10",
                                               f"participants[{i}].rolloff")
                rolls_now[i] = given[rounds]
            elif rng is not None:
                rolls_now[i] = rng.randint(1, 10)
            else:
                raise InvalidPositionError("tie on total and base attribute: enter roll-off "
                                           "d10s or ask for a seeded roll",
                                           f"participants[{i}].rolloff")
        tie["rolls"].append({sides[i].name: v for i, v in rolls_now.items()})
        groups[0:1] = split_by_rolls(groups[0], rolls_now)
        rounds += 1
    if tie is None and len({r["total"] for r in results}) < len(results):
        top = max(r["total"] for r in results)
        if sum(r["total"] == top for r in results) > 1:
            tie = {"by": "base attribute"}
    winner = groups[0][0]
    out: dict[str, Any] = {"attribute": attribute, "territory": territory,
                           "participants": results, "winner": sides[winner].name,
                           "losers": [s.name for i, s in enumerate(sides) if i != winner],
                           "tie": tie}
    if card is not None:
        out["contest"] = card.id
        out["rewards"] = {"first": [str(e) for e in card.first],
                          "loser": [str(e) for e in card.loser]}
    return out


def score_end_game(cards: CardSet, spec: Any) -> dict[str, Any]:
    """End-game scoring: award each Territory to the most Support Tokens, total Royal Approval
    Points (plus adjustments), place them on the Score Tracker and find the crown.

    spec: {"players": [names], "support": {territory: [count per player]},
           "tie_winners": {territory: name}, "rap_adjust": {name: int},
           "crown_tie_winner": name}
    Ties that still need a contest are listed under "needs_contest".
    """
    if not isinstance(spec, dict):
        raise InvalidPositionError("a score sheet must be a JSON object", "score")
    players = _list(spec.get("players"), "players")
    if not 2 <= len(players) <= 4 or not all(isinstance(p, str) and p for p in players) or len(
            set(players)) != len(players):
        raise InvalidPositionError("must be 2-4 distinct player names", "players")
    support = spec.get("support")
    if not isinstance(support, dict):
        raise InvalidPositionError("must map territory -> counts per player", "support")
    tie_winners = spec.get("tie_winners") or {}
    adjust = spec.get("rap_adjust") or {}
    if not isinstance(tie_winners, dict) or not isinstance(adjust, dict):
        raise InvalidPositionError("must be objects", "tie_winners/rap_adjust")
    for name, value in adjust.items():
        if name not in players:
            raise InvalidPositionError(f"unknown player {name!r}", f"rap_adjust.{name}")
        _int(value, f"rap_adjust.{name}", -200, 200)
    territories: dict[str, Any] = {}
    needs: list[dict] = []
    scores = {p: int(adjust.get(p, 0)) for p in players}
    for t, counts in support.items():
        if t not in cards.territories:
            raise InvalidPositionError(f"unknown territory {t!r}", f"support.{t}")
        counts = _list(counts, f"support.{t}")
        if len(counts) != len(players):
            raise InvalidPositionError(f"needs {len(players)} counts", f"support.{t}")
        for k, c in enumerate(counts):
            _int(c, f"support.{t}[{k}]", 0, 240)
        holders = [players[i] for i in majority(counts)]
        winner = holders[0] if len(holders) == 1 else None
        if len(holders) > 1:
            chosen = tie_winners.get(t)
            if chosen is not None and chosen not in holders:
                raise InvalidPositionError(f"{chosen!r} is not tied there ({holders})",
                                           f"tie_winners.{t}")
            winner = chosen
            if chosen is None:
                needs.append({"territory": t, "players": holders, "firstborn_only": True})
        rap = cards.territories[t].rap
        territories[t] = {"rap": rap, "winner": winner, "tied": holders if len(holders) > 1
                          else None}
        if winner is not None:
            scores[winner] += rap
    for t in tie_winners:
        if t not in territories:
            raise InvalidPositionError(f"no support counts given for {t!r}", f"tie_winners.{t}")
    out: dict[str, Any] = {"territories": territories, "scores": scores,
                           "tracker": {p: list(tracker(s)) for p, s in scores.items()},
                           "unscored": sorted(set(cards.territories) - set(support)),
                           "needs_contest": needs, "winner": None}
    if needs:
        return out
    best = max(scores.values())
    tied = [p for p in players if scores[p] == best]
    if len(tied) == 1:
        out["winner"] = tied[0]
    else:
        chosen = spec.get("crown_tie_winner")
        if chosen is None:
            out["needs_contest"] = [{"territory": None, "players": tied, "crown": True,
                                     "firstborn_only": False}]
        elif chosen not in tied:
            raise InvalidPositionError(f"{chosen!r} is not tied for the crown ({tied})",
                                       "crown_tie_winner")
        else:
            out["winner"] = chosen
    return out
