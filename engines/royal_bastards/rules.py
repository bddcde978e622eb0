"""Rule arithmetic shared by the game state machine and the stand-alone table helpers:
which effects are in force on a Bastard, its final attribute, its dice, ranking with the
tie rules, and the Score Tracker.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .cards import ATTRIBUTES, ROLE_DIE, CardSet, Condition, Effect


@dataclass
class Bastard:
    """A Bastard in play (mutable; owned by a player's state)."""

    card: str
    role: str  # firstborn, champion, herald
    location: str
    fortune: str | None = None
    skeleton: str | None = None
    revealed: bool = False  # Skeletons take effect only once revealed
    moved: bool = False  # this Movement phase

    def to_dict(self) -> dict:
        return {"card": self.card, "role": self.role, "location": self.location,
                "fortune": self.fortune, "skeleton": self.skeleton, "revealed": self.revealed,
                "moved": self.moved}


@dataclass(frozen=True)
class Options:
    """Rule options. Every point the rulebook leaves open is one named option.

    draw_count / hand_limit: Draw phase draws up to `draw_count` Chaos cards but never past the
        hand limit (3; Fortune/Skeleton `hand_limit` effects change it per player).
    support_tokens: chips of one colour (240 chips / 4 colours = 60); rewards past the supply
        are lost.
    uncontested_base / uncontested_extra: 2 tokens for the first Bastard, +1 per additional one.
    firstborn_reroll: a Firstborn's d10 showing 10 rolls again: "repeat" (every 10 again),
        "once" (one extra roll at most) or "never".
    extra_d10_explodes: whether an extra d10 granted by a card also rolls again on a 10.
    attribute_floor: a Bastard's final attribute never goes below this (None: no floor).
    reshuffle_discards: an empty deck is refilled from its discards; otherwise the draw is lost.
    reveal_skeletons_at_end: reveal every Skeleton when the End Game starts (house rule).
    crown_tie_firstborn_only: the crown tie-break contest uses only the Firstborns (the rule
        says only "resolve the tie using the Resolving Contest rules": all Bastards).
    end_game_territory_order: "board" awards territories in laying order; "rap" from the most
        valuable down (matters only for what a tie contest's Chaos cards can do).
    """

    draw_count: int = 3
    hand_limit: int = 3
    support_tokens: int = 60
    uncontested_base: int = 2
    uncontested_extra: int = 1
    firstborn_reroll: str = "repeat"
    extra_d10_explodes: bool = False
    attribute_floor: int | None = 0
    reshuffle_discards: bool = True
    reveal_skeletons_at_end: bool = False
    crown_tie_firstborn_only: bool = False
    end_game_territory_order: str = "board"

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}

    @staticmethod
    def from_dict(data: object) -> Options:
        from engines.errors import InvalidPositionError

        if data is None:
            return Options()
        if not isinstance(data, dict):
            raise InvalidPositionError("must be an object", "options")
        defaults = Options()
        unknown = set(data) - set(Options.__dataclass_fields__)
        if unknown:
            raise InvalidPositionError(f"unknown option(s) {sorted(unknown)}", "options")
        for key, value in data.items():
            want = getattr(defaults, key)
            if key == "attribute_floor":
                ok = value is None or (isinstance(value, int) and not isinstance(value, bool))
            elif isinstance(want, bool):
                ok = isinstance(value, bool)
            elif isinstance(want, int):
                ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            else:
                ok = isinstance(value, str)
            if not ok:
                raise InvalidPositionError(f"bad value {value!r}", f"options.{key}")
        opts = Options(**data)
        if opts.firstborn_reroll not in ("repeat", "once", "never"):
            raise InvalidPositionError("must be repeat, once or never",
                                       "options.firstborn_reroll")
        if opts.end_game_territory_order not in ("board", "rap"):
            raise InvalidPositionError("must be board or rap", "options.end_game_territory_order")
        if opts.hand_limit < 1 or opts.support_tokens < 1:
            raise InvalidPositionError("hand_limit and support_tokens must be >= 1", "options")
        return opts


@dataclass(frozen=True)
class Context:
    """Where and what a Bastard is being evaluated for."""

    contest_attribute: str | None = None
    extra: tuple[Effect, ...] = field(default=())  # contest card and Chaos effects on it


def card_effects(cards: CardSet, b: Bastard) -> list[Effect]:
    """Effects of the Fortune and (once revealed) the Skeleton attached to a Bastard."""
    out: list[Effect] = []
    if b.fortune:
        out += cards.fortunes[b.fortune].effects
    if b.skeleton and b.revealed:
        out += cards.skeletons[b.skeleton].effects
    return out


def condition_holds(cards: CardSet, cond: Condition, b: Bastard,
                    contest_attribute: str | None = None) -> bool:
    card = cards.bastards[b.card]
    here = cards.territories[b.location]
    checks = (
        (cond.race, card.race), (cond.klass, card.klass), (cond.role, b.role),
        (cond.territory, here.id), (cond.territory_colour, here.colour),
        (cond.territory_race, here.race), (cond.attribute, contest_attribute),
    )
    if any(allowed and value not in allowed for allowed, value in checks):
        return False
    if cond.own_race_territory is not None and (here.race == card.race) != cond.own_race_territory:
        return False
    return cond.in_hometown is None or (b.location == card.hometown) == cond.in_hometown


def _matches(effect: Effect, attribute: str, contest_attribute: str | None) -> bool:
    return effect.kind == "modify" and (
        effect.attribute in (attribute, "all")
        or (effect.attribute == "contest" and attribute == contest_attribute))


def attribute_value(cards: CardSet, b: Bastard, attribute: str, ctx: Context,
                    floor: int | None = 0) -> int:
    """Base attribute plus every modifier in force (Fortune, revealed Skeleton, contest card,
    Chaos cards targeting it), floored."""
    value = cards.bastards[b.card].attr(attribute)
    for effect in (*card_effects(cards, b), *ctx.extra):
        if _matches(effect, attribute, ctx.contest_attribute) and condition_holds(
                cards, effect.cond, b, ctx.contest_attribute):
            value += effect.amount
    return value if floor is None else max(floor, value)


def dice_for(cards: CardSet, b: Bastard, ctx: Context) -> list[str]:
    """The Bastard's own die (d10 Firstborn, d8 Champion, d6 Herald) then any extra dice."""
    dice = [ROLE_DIE[b.role]]
    for effect in (*card_effects(cards, b), *ctx.extra):
        if effect.kind == "extra_die" and condition_holds(cards, effect.cond, b,
                                                          ctx.contest_attribute):
            dice += [effect.die] * effect.count  # type: ignore[list-item]
    return dice


def static_total(cards: CardSet, bastards: Iterable[Bastard], kind: str) -> int:
    """Sum of a static per-player amount (hand_limit, rap) over a player's Bastards' cards."""
    return sum(e.amount for b in bastards for e in card_effects(cards, b)
               if e.kind == kind and condition_holds(cards, e.cond, b))


def base_sum(cards: CardSet, bastards: Iterable[Bastard], attribute: str) -> int:
    """First tie-break: the printed attribute, before any modifier."""
    return sum(cards.bastards[b.card].attr(attribute) for b in bastards)


def rank_groups(totals: dict[int, int], bases: dict[int, int],
                order: Sequence[int]) -> list[list[int]]:
    """Participants grouped by (total, base attribute) descending; players within a group are
    still tied and need a d10 roll-off. `order` is the seat order used inside a group."""
    keys = sorted({(totals[p], bases[p]) for p in order}, reverse=True)
    return [[p for p in order if (totals[p], bases[p]) == key] for key in keys]


def split_by_rolls(group: list[int], rolls: dict[int, int]) -> list[list[int]]:
    """A roll-off: the group split by d10 result, highest first (equal rolls stay together)."""
    values = sorted({rolls[p] for p in group}, reverse=True)
    return [[p for p in group if rolls[p] == v] for v in values]


def majority(counts: Sequence[int]) -> list[int]:
    """Indices holding the most Support Tokens on a Territory; empty when nobody has any."""
    best = max(counts, default=0)
    return [i for i, c in enumerate(counts) if c == best] if best > 0 else []


def tracker(points: int) -> tuple[int, int]:
    """Score Tracker position: (King Me tokens, square 0..49). Past 49 a second token goes on
    and counting restarts at 0, so 50 points is (1, 0). Negative totals sit on 0."""
    points = max(0, points)
    return points // 50, points % 50


def explodes(die: str, index: int, options: Options, own_die: bool) -> bool:
    """Whether a roll of 10 on this die rolls again (`index` counts earlier rerolls)."""
    if die != "d10" or not (own_die or options.extra_d10_explodes):
        return False
    if options.firstborn_reroll == "never":
        return False
    return options.firstborn_reroll == "repeat" or index == 0


__all__ = ["ATTRIBUTES", "Bastard", "Context", "Options", "attribute_value", "base_sum",
           "card_effects", "condition_holds", "dice_for", "explodes", "majority", "rank_groups",
           "split_by_rolls", "static_total", "tracker"]
