"""The cards of Royal Conquest: War cards (coats of arms carrying tokens) and Action cards.

The booklet lists what the 48 War cards carry (3 Wand, 3 Bow, 3 Sword, 3 Axe, 3 Helmet, 3 Body,
3 Shield, 5 Crown and 22 Castle tokens, some with the draw-a-card symbol) but not which coat of
arms carries which token. A `Deck` is therefore data: `DEFAULT_DECK` is our documented assumption
and a table can load its own (`Deck.from_json`), as long as the token counts are the booklet's.

Notation: the 12 coats of arms are the letters A..L and the four cards of one coat of arms are
numbered 1..4, so a War card is written `A1` .. `L4`. Action cards are written by kind (`thief`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engines.errors import InvalidPositionError, ParseError


class Token(StrEnum):
    WAND = "wand"
    BOW = "bow"
    SWORD = "sword"
    AXE = "axe"
    HELMET = "helmet"
    BODY = "body"
    SHIELD = "shield"
    CROWN = "crown"
    CASTLE = "castle"


WEAPONS: tuple[Token, ...] = (Token.BOW, Token.SWORD, Token.AXE)
ARMOR: tuple[Token, ...] = (Token.HELMET, Token.BODY, Token.SHIELD)
# Tokens a THIEF may take: "one Weapon, Armor, Magic, or Crown Token card".
SPECIAL_TOKENS: tuple[Token, ...] = (Token.WAND, *WEAPONS, *ARMOR, Token.CROWN)

# How many War cards carry each token (the booklet's list).
TOKEN_SUPPLY: dict[Token, int] = {
    Token.WAND: 3,
    Token.BOW: 3,
    Token.SWORD: 3,
    Token.AXE: 3,
    Token.HELMET: 3,
    Token.BODY: 3,
    Token.SHIELD: 3,
    Token.CROWN: 5,
    Token.CASTLE: 22,
}

_TOKEN_ALIASES = {
    "wands": Token.WAND,
    "magic": Token.WAND,
    "bows": Token.BOW,
    "arrow": Token.BOW,
    "bow&arrow": Token.BOW,
    "swords": Token.SWORD,
    "axes": Token.AXE,
    "helmets": Token.HELMET,
    "bodies": Token.BODY,
    "shields": Token.SHIELD,
    "crowns": Token.CROWN,
    "castles": Token.CASTLE,
}


def parse_token(text: str) -> Token:
    """Read one token word (`wand`, `bow`, ..., `castle`; a plural is accepted)."""
    word = text.strip().lower()
    try:
        return Token(word)
    except ValueError:
        pass
    if word in _TOKEN_ALIASES:
        return _TOKEN_ALIASES[word]
    known = ", ".join(t.value for t in Token)
    raise ParseError(f"unknown token {text!r} (expected one of: {known})")


class ActionKind(StrEnum):
    THIEF = "thief"
    SWEEP = "sweep"
    DEFEND = "defend"
    POISON = "poison"
    REVEAL = "reveal"
    DRAGON = "dragon"
    POTION = "potion"


ACTION_SUPPLY: dict[ActionKind, int] = {
    ActionKind.THIEF: 6,
    ActionKind.SWEEP: 4,
    ActionKind.DEFEND: 4,
    ActionKind.POISON: 4,
    ActionKind.REVEAL: 2,
    ActionKind.DRAGON: 2,
    ActionKind.POTION: 2,
}


def parse_action_kind(text: str) -> ActionKind:
    word = text.strip().lower()
    try:
        return ActionKind(word)
    except ValueError:
        known = ", ".join(k.value for k in ActionKind)
        raise ParseError(f"unknown Action card {text!r} (expected one of: {known})") from None


ARMS_LETTERS = "ABCDEFGHIJKL"
ARMS_COUNT = 12
CARDS_PER_ARMS = 4


@dataclass(frozen=True, order=True)
class WarCard:
    """One War card: coat of arms `arms` (0..11, written A..L) and copy `n` (1..4)."""

    arms: int
    n: int

    def __post_init__(self) -> None:
        if not 0 <= self.arms < ARMS_COUNT or not 1 <= self.n <= CARDS_PER_ARMS:
            raise ParseError(f"no War card with arms={self.arms} n={self.n}")

    def __str__(self) -> str:
        return f"{ARMS_LETTERS[self.arms]}{self.n}"

    @property
    def index(self) -> int:
        return self.arms * CARDS_PER_ARMS + self.n - 1


def parse_war_card(text: str) -> WarCard:
    """Read `A1` .. `L4` (case-insensitive)."""
    word = text.strip().upper()
    if len(word) != 2 or word[0] not in ARMS_LETTERS or word[1] not in "1234":
        raise ParseError(f"unknown War card {text!r} (expected A1 .. L4)")
    return WarCard(ARMS_LETTERS.index(word[0]), int(word[1]))


ALL_WAR_CARDS: tuple[WarCard, ...] = tuple(
    WarCard(a, n) for a in range(ARMS_COUNT) for n in range(1, CARDS_PER_ARMS + 1)
)


@dataclass(frozen=True)
class CardFace:
    """What a War card shows besides its coat of arms."""

    token: Token
    draw: bool = False  # the draw-a-card symbol

    def __str__(self) -> str:
        return f"{self.token}+draw" if self.draw else str(self.token)


_DECK_ROWS: dict[Deck, list[dict[str, Any]]] = {}


@dataclass(frozen=True)
class Deck:
    """Which token (and draw symbol) each of the 48 War cards carries.

    `faces[card.index]` is the face of `card`; `arms_names` are display names of A..L.
    """

    arms_names: tuple[str, ...]
    faces: tuple[CardFace, ...]

    def __post_init__(self) -> None:
        if len(self.arms_names) != ARMS_COUNT:
            raise InvalidPositionError(
                f"expected {ARMS_COUNT} coat-of-arms names, got {len(self.arms_names)}",
                "deck.arms",
            )
        if any(not isinstance(n, str) or not n.strip() for n in self.arms_names):
            raise InvalidPositionError("coat-of-arms names must be non-empty text", "deck.arms")
        if len(self.faces) != len(ALL_WAR_CARDS):
            raise InvalidPositionError(
                f"expected {len(ALL_WAR_CARDS)} cards, got {len(self.faces)}", "deck.cards"
            )
        counts = Counter(f.token for f in self.faces)
        for token, want in TOKEN_SUPPLY.items():
            if counts[token] != want:
                raise InvalidPositionError(
                    f"the booklet has {want} {token} cards, this deck has {counts[token]}",
                    "deck.cards",
                )

    def face(self, card: WarCard) -> CardFace:
        return self.faces[card.index]

    def token(self, card: WarCard) -> Token:
        return self.faces[card.index].token

    def has_draw(self, card: WarCard) -> bool:
        return self.faces[card.index].draw

    def describe(self, card: WarCard) -> str:
        return f"{card} ({self.arms_names[card.arms]}, {self.face(card)})"

    def to_json(self) -> dict[str, Any]:
        rows = _DECK_ROWS.get(self)
        if rows is None:
            rows = [
                {"card": str(c), "token": str(self.token(c)), "draw": self.has_draw(c)}
                for c in ALL_WAR_CARDS
            ]
            _DECK_ROWS[self] = rows
        return {"arms": list(self.arms_names), "cards": [dict(r) for r in rows]}

    @classmethod
    def from_json(cls, data: Any) -> Deck:
        if not isinstance(data, dict):
            raise InvalidPositionError("a deck must be an object", "deck")
        names = data.get("arms", list(DEFAULT_ARMS_NAMES))
        if not isinstance(names, list):
            raise InvalidPositionError("must be a list of 12 names", "deck.arms")
        rows = data.get("cards")
        if not isinstance(rows, list):
            raise InvalidPositionError("must be a list of 48 {card, token, draw}", "deck.cards")
        faces: dict[WarCard, CardFace] = {}
        for i, row in enumerate(rows):
            field = f"deck.cards[{i}]"
            if not isinstance(row, dict):
                raise InvalidPositionError("must be an object {card, token, draw}", field)
            try:
                card = parse_war_card(str(row.get("card", "")))
                token = parse_token(str(row.get("token", "")))
            except ParseError as exc:
                raise InvalidPositionError(str(exc), field) from None
            draw = row.get("draw", False)
            if not isinstance(draw, bool):
                raise InvalidPositionError("draw must be true or false", field)
            if card in faces:
                raise InvalidPositionError(f"card {card} listed twice", field)
            faces[card] = CardFace(token, draw)
        missing = [str(c) for c in ALL_WAR_CARDS if c not in faces]
        if missing:
            raise InvalidPositionError(f"cards missing: {', '.join(missing)}", "deck.cards")
        return cls(tuple(str(n) for n in names), tuple(faces[c] for c in ALL_WAR_CARDS))


# Placeholder names: the booklet shows the coats of arms only as pictures.
DEFAULT_ARMS_NAMES: tuple[str, ...] = (
    "Lion",
    "Eagle",
    "Unicorn",
    "Griffin",
    "Stag",
    "Boar",
    "Bear",
    "Wolf",
    "Tower",
    "Rose",
    "Lily",
    "Sun",
)


def _default_faces() -> tuple[CardFace, ...]:
    """ASSUMPTION: the 26 special tokens are dealt round-robin over the coats of arms.

    Special token k (in the order 3 wand, 3 bow, 3 sword, 3 axe, 3 helmet, 3 body, 3 shield,
    5 crown) goes to coat of arms k mod 12, filling its cards from 1 upwards; every other card
    is a Castle. So every coat of arms has 2 special tokens (A and B have 3) and card 4 of every
    coat of arms is a Castle. The draw-a-card symbol is on the Castle card 4 of A, C, E, G, I, K
    (6 cards).
    """
    specials: list[Token] = []
    for token in SPECIAL_TOKENS:
        specials.extend([token] * TOKEN_SUPPLY[token])
    per_arms: list[list[Token]] = [[] for _ in range(ARMS_COUNT)]
    for k, token in enumerate(specials):
        per_arms[k % ARMS_COUNT].append(token)
    faces: list[CardFace] = []
    for arms in range(ARMS_COUNT):
        tokens = per_arms[arms] + [Token.CASTLE] * (CARDS_PER_ARMS - len(per_arms[arms]))
        for n, token in enumerate(tokens, start=1):
            faces.append(CardFace(token, draw=(n == 4 and arms % 2 == 0)))
    return tuple(faces)


DEFAULT_DECK = Deck(DEFAULT_ARMS_NAMES, _default_faces())


def tokens_of(cards: Iterable[WarCard], deck: Deck = DEFAULT_DECK) -> list[Token]:
    return [deck.token(c) for c in cards]
