"""Playing cards as Royal Battles sees them: rank, suit, colour and the trump class of each style.

Codes are the ones players write: `AS`, `2C` … `10H`, `JD`, `QS`, `KC`, and `JK` for a joker.
Cards are interned, so `parse_card("8D") is parse_card("8D")` and comparisons are cheap.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from engines.errors import ParseError

SUITS = ("C", "D", "H", "S")  # initiative order: clubs < diamonds < hearts < spades
RANK_CODES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
JOKER_RANK = 15
ACE_RANK = 14


class Colour(StrEnum):
    RED = "red"
    BLACK = "black"


class Style(StrEnum):
    """An attack style; each counts one class of card as trumps."""

    EASY = "easy"  # evens: 2 4 6 8 10
    OPTIMAL = "optimal"  # odds: 3 5 7 9
    RISKY = "risky"  # royals: J Q K
    ADVANTAGE = "advantage"  # aces and jokers


@dataclass(frozen=True, slots=True)
class Card:
    rank: int  # 2..10, J=11, Q=12, K=13, A=14, joker=15
    suit: str  # one of SUITS, or "" for a joker
    code: str = field(default="", compare=False)  # filled in once, by the interning table
    order: int = field(default=0, compare=False)  # position in a fixed card order

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return f"Card({self.code})"

    @property
    def is_joker(self) -> bool:
        return self.rank == JOKER_RANK

    @property
    def is_ace(self) -> bool:
        return self.rank == ACE_RANK

    @property
    def colour(self) -> Colour | None:
        """Hearts and diamonds are red, spades and clubs black; a joker has no colour."""
        if self.is_joker:
            return None
        return Colour.RED if self.suit in ("D", "H") else Colour.BLACK

    @property
    def trump_style(self) -> Style:
        """The one attack style for which this card counts as a trump."""
        if self.rank >= ACE_RANK:
            return Style.ADVANTAGE
        if self.rank >= 11:
            return Style.RISKY
        return Style.EASY if self.rank % 2 == 0 else Style.OPTIMAL

    def initiative_key(self) -> tuple[int, int]:
        """High card: joker > ace > king > … > 2; equal ranks by suit, clubs lowest."""
        return (self.rank, SUITS.index(self.suit) if self.suit else 4)


def _build() -> dict[str, Card]:
    codes = [RANK_CODES[r - 2] + s for r in range(2, 15) for s in SUITS] + ["JK"]
    ranks = [(r, s) for r in range(2, 15) for s in SUITS] + [(JOKER_RANK, "")]
    pairs = enumerate(zip(codes, ranks, strict=True))
    return {code: Card(r, s, code, i) for i, (code, (r, s)) in pairs}


CARDS: dict[str, Card] = _build()
JOKER = CARDS["JK"]

# One player's 54-card deck: 52 cards and two jokers.
CARD_ORDER: tuple[Card, ...] = tuple(CARDS.values())  # a fixed order, for reproducible draws
DECK: tuple[Card, ...] = tuple(c for c in CARDS.values() if not c.is_joker) + (JOKER, JOKER)


def parse_card(code: str) -> Card:
    """Read a card code such as `10H`, `qs` or `JK`; raises ParseError for anything else."""
    if not isinstance(code, str):
        raise ParseError(f"a card code must be a string, got {code!r}")
    key = code.strip().upper()
    card = CARDS.get(key)
    if card is None:
        raise ParseError(f"unknown card code {code!r} (expected e.g. AS, 10H, QD, JK)")
    return card


def movement_colour_ok(card: Card, other: Card | None, other_colour: Colour | None) -> bool:
    """Does `card`, played as a movement card, differ in colour from `other`?

    A joker played as a movement card counts as both colours, so it always differs; a card of
    no colour (a joker lying on the board, unless a colour was declared for it) matches nothing.
    """
    if card.is_joker or other is None or other_colour is None:
        return True
    return card.colour is not other_colour
