"""Scoring of one player's Stacks (the booklet's "Stacks" table and its FAQ rulings).

- 3 Wands: 5 points.  3 Crowns: 4 points.  5 Crowns: the player must STOP (no extra points here;
  the hand's winner gets one more Gem for it).
- 3 matching Weapons (3 Bows, 3 Swords or 3 Axes): 3 points each; the same for Armor
  (3 Helmets, 3 Bodies, 3 Shields).
- 5 random Weapons: 2 points, +1 for each additional Weapon; the same for Armor.
- 8 Castles: 1 point, +1 for each additional Castle.

FAQ: "the three matched weapons becomes a new stack": cards in a matched stack no longer count as
random Weapons/Armor (`triple_grouping="always"`, the default). The option `"best"` instead lets
each triple stay among the random cards when that scores more.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import combinations as subsets
from typing import Any

from engines.errors import RulesError

from .cards import ARMOR, TOKEN_SUPPLY, WEAPONS, Token

TRIPLE_GROUPINGS = ("always", "best")

_PLURAL = {
    Token.WAND: "Wands",
    Token.BOW: "Bows",
    Token.SWORD: "Swords",
    Token.AXE: "Axes",
    Token.HELMET: "Helmets",
    Token.BODY: "Bodies",
    Token.SHIELD: "Shields",
    Token.CROWN: "Crowns",
    Token.CASTLE: "Castles",
}


@dataclass(frozen=True)
class Combination:
    name: str
    tokens: tuple[Token, ...]
    points: int

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "cards": [str(t) for t in self.tokens], "points": self.points}


@dataclass(frozen=True)
class Score:
    points: int
    combinations: tuple[Combination, ...]
    counts: dict[Token, int]
    must_stop: bool  # 5 Crowns

    def to_json(self) -> dict[str, Any]:
        return {
            "points": self.points,
            "combinations": [c.to_json() for c in self.combinations],
            "counts": {str(t): self.counts.get(t, 0) for t in Token},
            "must_stop": self.must_stop,
        }


def _group(
    counts: Counter[Token], kinds: tuple[Token, ...], label: str, grouping: str
) -> list[Combination]:
    eligible = [t for t in kinds if counts[t] >= 3]
    choices: list[tuple[Token, ...]]
    if grouping == "always":
        choices = [tuple(eligible)]
    else:
        choices = [c for r in range(len(eligible) + 1) for c in subsets(eligible, r)]
    best: list[Combination] = []
    best_points = -1
    for matched in choices:
        combos = [Combination(f"3 {_PLURAL[t]}", (t,) * 3, 3) for t in matched]
        rest: list[Token] = []
        for t in kinds:
            rest.extend([t] * (counts[t] - (3 if t in matched else 0)))
        if len(rest) >= 5:
            combos.append(Combination(f"{len(rest)} Random {label}", tuple(rest), len(rest) - 3))
        points = sum(c.points for c in combos)
        if points > best_points:
            best, best_points = combos, points
    return best


def score_tokens(tokens: Iterable[Token], triple_grouping: str = "always") -> Score:
    """Points and combinations of one player's Stacks, given the token of each card."""
    if triple_grouping not in TRIPLE_GROUPINGS:
        raise RulesError(f"triple_grouping must be one of {TRIPLE_GROUPINGS}")
    counts: Counter[Token] = Counter(Token(t) for t in tokens)
    combos: list[Combination] = []
    if counts[Token.WAND] >= 3:
        combos.append(Combination("3 Wands", (Token.WAND,) * 3, 5))
    if counts[Token.CROWN] >= 3:
        combos.append(Combination("3 Crowns", (Token.CROWN,) * 3, 4))
    if counts[Token.CROWN] >= 5:
        combos.append(Combination("5 Crowns (must STOP)", (Token.CROWN,) * 5, 0))
    combos.extend(_group(counts, WEAPONS, "Weapons", triple_grouping))
    combos.extend(_group(counts, ARMOR, "Armor", triple_grouping))
    castles = counts[Token.CASTLE]
    if castles >= 8:
        combos.append(Combination(f"{castles} Castles", (Token.CASTLE,) * castles, castles - 7))
    return Score(
        points=sum(c.points for c in combos),
        combinations=tuple(combos),
        counts=dict(counts),
        must_stop=counts[Token.CROWN] >= 5,
    )


def check_supply(tokens: Iterable[Token], supply: dict[Token, int] = TOKEN_SUPPLY) -> None:
    """Raise RulesError if more cards of a token are given than the deck holds."""
    counts = Counter(tokens)
    for token, n in counts.items():
        if n > supply[token]:
            raise RulesError(f"only {supply[token]} {token} cards exist, got {n}")


@dataclass(frozen=True)
class Near:
    """`more` more cards of `token` would add `gain` points (and make `makes`)."""

    token: Token
    more: int
    gain: int
    makes: tuple[str, ...]
    must_stop: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "token": str(self.token),
            "more": self.more,
            "gain": self.gain,
            "makes": list(self.makes),
            "must_stop": self.must_stop,
        }


def near_combinations(
    tokens: Iterable[Token],
    triple_grouping: str = "always",
    supply: dict[Token, int] = TOKEN_SUPPLY,
    reach: int = 3,
) -> list[Near]:
    """For each token: the fewest more cards of it (at most `reach`, within the deck's supply)
    that would score more points or force a STOP. Sorted by cards needed, then gain."""
    held = list(tokens)
    base = score_tokens(held, triple_grouping)
    base_names = {c.name for c in base.combinations}
    counts = Counter(held)
    out: list[Near] = []
    for token in Token:
        for more in range(1, min(reach, supply[token] - counts[token]) + 1):
            after = score_tokens(held + [token] * more, triple_grouping)
            gain = after.points - base.points
            forced = after.must_stop and not base.must_stop
            if gain > 0 or forced:
                makes = tuple(c.name for c in after.combinations if c.name not in base_names)
                out.append(Near(token, more, gain, makes, forced))
                break
    out.sort(key=lambda n: (n.more, -n.gain, list(Token).index(n.token)))
    return out
