"""Pure resolution of single contests: a Trumps round, a Battle Mode match-up and a whole
Battle Mode round from the cards entered. The state machine in `game.py` uses the same functions,
so the table helper and the engine can never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engines.errors import IllegalActionError

from .cards import Card, Category, Size


@dataclass(frozen=True)
class MatchupResult:
    """Who won one match-up (or a sudden-death decider).

    `winner` is the index into the cards compared, or None when even Value could not separate the
    leaders (`by == "tie"`; `contenders` then lists the still-tied indices).
    `by` is how it was settled: "score", "size", "value" or "tie".
    """

    category: Category
    cards: tuple[str, ...]
    winner: int | None
    by: str
    contenders: tuple[int, ...]

    def __str__(self) -> str:
        shown = " v ".join(self.cards)
        if self.winner is None:
            tied = ", ".join(self.cards[i] for i in self.contenders)
            return f"{shown} on {self.category}: unresolved tie between {tied}"
        return f"{shown} on {self.category}: {self.cards[self.winner]} wins by {self.by}"

    def to_dict(self) -> dict:
        return {
            "category": self.category.value,
            "cards": list(self.cards),
            "winner": self.winner,
            "by": self.by,
            "contenders": list(self.contenders),
        }


def resolve_matchup(cards: Sequence[Card], category: Category) -> MatchupResult:
    """Battle Mode match-up between two or more cards.

    Highest score in `category` wins. Tied leaders are compared by Size (B beats M, M beats S,
    S beats B): when exactly two sizes are among them, the cards of the beating size go on; with
    one size, or all three (a cycle), Size does not resolve. Ties not resolved by Size are
    resolved by Value, greater Value winning. A tie that survives Value is unresolved.
    """
    if len(cards) < 2:
        raise IllegalActionError(f"a match-up needs at least 2 cards, got {len(cards)}")
    codes = tuple(c.code for c in cards)
    if len(set(codes)) != len(codes):
        raise IllegalActionError(f"the same card cannot be on both sides of a match-up: {codes}")
    best = max(c.score(category) for c in cards)
    tied = [i for i, c in enumerate(cards) if c.score(category) == best]
    if len(tied) == 1:
        return MatchupResult(category, codes, tied[0], "score", (tied[0],))
    sizes = {cards[i].size for i in tied}
    if len(sizes) == 2:
        a, b = sorted(sizes, key=lambda s: s.value)
        winning: Size = a if a.beats(b) else b
        tied = [i for i in tied if cards[i].size == winning]
        if len(tied) == 1:
            return MatchupResult(category, codes, tied[0], "size", (tied[0],))
    best_value = max(cards[i].value for i in tied)
    tied = [i for i in tied if cards[i].value == best_value]
    if len(tied) == 1:
        return MatchupResult(category, codes, tied[0], "value", (tied[0],))
    return MatchupResult(category, codes, None, "tie", tuple(tied))


@dataclass(frozen=True)
class TrumpsResult:
    """A basic-game (Trumps) comparison: highest score wins; equal highest go to the centre."""

    category: Category
    cards: tuple[str, ...]
    scores: tuple[int, ...]
    winner: int | None
    tied: tuple[int, ...]

    def __str__(self) -> str:
        shown = ", ".join(f"{c}={s}" for c, s in zip(self.cards, self.scores, strict=True))
        if self.winner is None:
            names = ", ".join(self.cards[i] for i in self.tied)
            return f"{self.category}: {shown}; tie between {names} -> centre"
        return f"{self.category}: {shown}; {self.cards[self.winner]} wins"

    def to_dict(self) -> dict:
        return {
            "category": self.category.value,
            "cards": list(self.cards),
            "scores": list(self.scores),
            "winner": self.winner,
            "tied": list(self.tied),
        }


def resolve_trumps(cards: Sequence[Card], category: Category) -> TrumpsResult:
    """Basic game: the highest score wins; no Size or Value tie-break (the rules give none)."""
    if len(cards) < 1:
        raise IllegalActionError("a Trumps round needs at least 1 card")
    scores = tuple(c.score(category) for c in cards)
    best = max(scores)
    tied = tuple(i for i, s in enumerate(scores) if s == best)
    winner = tied[0] if len(tied) == 1 else None
    return TrumpsResult(category, tuple(c.code for c in cards), scores, winner, tied)


@dataclass(frozen=True)
class RoundResult:
    """A Battle Mode round resolved from the placed cards (before any sudden-death decider).

    `matchups` holds only the match-ups actually turned (the round stops at `to_win` wins).
    `winner` is the seat that won the round outright, or None when a decider is needed between
    `decider` (the seats tied on most match-up wins). `last` lists the seats tied for fewest
    match-up wins among the others (more than one means a category decider, 3-4 players).
    """

    category: Category
    matchups: tuple[MatchupResult, ...]
    wins: tuple[int, ...]
    winner: int | None
    decider: tuple[int, ...]
    last: tuple[int, ...]
    turned: int

    def to_dict(self) -> dict:
        return {
            "category": self.category.value,
            "matchups": [m.to_dict() for m in self.matchups],
            "wins": list(self.wins),
            "winner": self.winner,
            "decider": list(self.decider),
            "last": list(self.last),
            "turned": self.turned,
        }


def last_place(wins: Sequence[int], winner: int) -> tuple[int, ...]:
    """Seats other than `winner` tied on the fewest match-up wins."""
    others = [p for p in range(len(wins)) if p != winner]
    if not others:
        return ()
    low = min(wins[p] for p in others)
    return tuple(p for p in others if wins[p] == low)


def resolve_round(
    placements: Sequence[Sequence[Card]], category: Category, to_win: int = 3
) -> RoundResult:
    """Reveal the placed cards slot by slot until a player has `to_win` match-up wins."""
    players = len(placements)
    if players < 2:
        raise IllegalActionError("a round needs at least 2 players")
    slots = len(placements[0])
    if slots < 1 or any(len(p) != slots for p in placements):
        raise IllegalActionError(
            "every player must place the same number (at least 1) of cards, got "
            + ", ".join(str(len(p)) for p in placements)
        )
    all_codes = [c.code for p in placements for c in p]
    if len(set(all_codes)) != len(all_codes):
        raise IllegalActionError("a card was placed twice")
    wins = [0] * players
    results: list[MatchupResult] = []
    winner: int | None = None
    for i in range(slots):
        res = resolve_matchup([p[i] for p in placements], category)
        results.append(res)
        if res.winner is not None:
            wins[res.winner] += 1
            if wins[res.winner] >= to_win:
                winner = res.winner
                break
    decider: tuple[int, ...] = ()
    if winner is None:
        top = max(wins)
        leaders = tuple(p for p in range(players) if wins[p] == top)
        if len(leaders) == 1:
            winner = leaders[0]
        else:
            decider = leaders
    last = last_place(wins, winner) if winner is not None else ()
    return RoundResult(
        category, tuple(results), tuple(wins), winner, decider, last, len(results)
    )
