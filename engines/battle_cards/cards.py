"""Cards and card sets: the game's vocabulary (Category, Size, Card, CardSet).

The rulebook does not list the printed cards, so a card set is data: a JSON document following
`card_set.schema.json` (shipped beside this module) and validated by `CardSet.from_dict`.
`load_sample_set()` returns the small invented set shipped as `sample_set.json`, labelled as a
sample (`"sample": true`). Nothing here reads files except the two package-data loaders, which
use `importlib.resources` (package data, not user I/O).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from typing import Any

from engines.errors import InvalidPositionError, ParseError

SCHEMA_ID = "royal-table/battle-cards/card-set/v1"
STAT_MAX = 999
CODE_RE = re.compile(r"^[A-Z0-9][A-Z0-9_-]{0,15}$")


class Category(StrEnum):
    """A category printed on every card. Battle Mode normally uses only the first four."""

    STRENGTH = "strength"
    SKILL = "skill"
    MAGIC = "magic"
    TERROR = "terror"
    VALUE = "value"

    def __str__(self) -> str:
        return self.value


# Printed order on the card; used by the `first_listed` tie-break of the category card.
CATEGORIES: tuple[Category, ...] = tuple(Category)
BATTLE_CATEGORIES: tuple[Category, ...] = CATEGORIES[:4]


def parse_category(text: str) -> Category:
    """Read a category by name or any unambiguous prefix ('str', 'sk', 'm', 't', 'v')."""
    t = str(text).strip().lower()
    if not t:
        raise ParseError("empty category")
    matches = [c for c in CATEGORIES if c.value.startswith(t)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        raise ParseError(f"ambiguous category {text!r}")
    names = ", ".join(c.value for c in CATEGORIES)
    raise ParseError(f"unknown category {text!r} (expected one of {names})")


class Size(StrEnum):
    """Size letter: B beats M, M beats S, S beats B (used only to break score ties)."""

    BIG = "B"
    MEDIUM = "M"
    SMALL = "S"

    def __str__(self) -> str:
        return self.value

    def beats(self, other: Size) -> bool:
        return (self, other) in _SIZE_BEATS


_SIZE_BEATS = {(Size.BIG, Size.MEDIUM), (Size.MEDIUM, Size.SMALL), (Size.SMALL, Size.BIG)}


def parse_size(text: str) -> Size:
    t = str(text).strip().upper()
    for s in Size:
        if t in (s.value, s.name):
            return s
    raise ParseError(f"unknown size {text!r} (expected B, M or S)")


@dataclass(frozen=True)
class Card:
    """One printed card. `code` is the short identifier used in every notation."""

    code: str
    name: str
    strength: int
    skill: int
    magic: int
    terror: int
    value: int
    size: Size

    def score(self, category: Category) -> int:
        return int(getattr(self, category.value))

    def __str__(self) -> str:
        # Compact notation: CODE(Str/Ski/Mag/Ter V<value> <size>)
        return (
            f"{self.code}({self.strength}/{self.skill}/{self.magic}/{self.terror}"
            f" V{self.value} {self.size.value})"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "name": self.name,
            "strength": self.strength,
            "skill": self.skill,
            "magic": self.magic,
            "terror": self.terror,
            "value": self.value,
            "size": self.size.value,
        }


_CARD_KEYS = ("code", "name", "strength", "skill", "magic", "terror", "value", "size")
_SET_KEYS = {"schema", "name", "sample", "note", "cards"}


def _int_field(raw: Any, field: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise InvalidPositionError(f"must be an integer, got {raw!r}", field)
    if not 0 <= raw <= STAT_MAX:
        raise InvalidPositionError(f"must be between 0 and {STAT_MAX}, got {raw}", field)
    return raw


def card_from_dict(data: Any, field: str = "card") -> Card:
    if not isinstance(data, dict):
        raise InvalidPositionError("must be an object", field)
    unknown = set(data) - set(_CARD_KEYS)
    if unknown:
        raise InvalidPositionError(f"unknown key(s) {sorted(unknown)}", field)
    for key in _CARD_KEYS:
        if key not in data:
            raise InvalidPositionError("missing", f"{field}.{key}")
    code = data["code"]
    if not isinstance(code, str) or not CODE_RE.match(code):
        raise InvalidPositionError(
            f"must be 1-16 upper-case letters, digits, '_' or '-', got {code!r}", f"{field}.code"
        )
    name = data["name"]
    if not isinstance(name, str) or not name.strip():
        raise InvalidPositionError("must be a non-empty string", f"{field}.name")
    size_raw = data["size"]
    if not isinstance(size_raw, str) or size_raw not in ("B", "M", "S"):
        raise InvalidPositionError(f"must be 'B', 'M' or 'S', got {size_raw!r}", f"{field}.size")
    return Card(
        code=code,
        name=name.strip(),
        strength=_int_field(data["strength"], f"{field}.strength"),
        skill=_int_field(data["skill"], f"{field}.skill"),
        magic=_int_field(data["magic"], f"{field}.magic"),
        terror=_int_field(data["terror"], f"{field}.terror"),
        value=_int_field(data["value"], f"{field}.value"),
        size=Size(size_raw),
    )


@dataclass(frozen=True)
class CardSet:
    """A validated card set: unique codes, in the order given."""

    name: str
    cards: tuple[Card, ...]
    sample: bool = False
    note: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_code", {c.code: c for c in self.cards})

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(c.code for c in self.cards)

    def __len__(self) -> int:
        return len(self.cards)

    def __contains__(self, code: object) -> bool:
        return code in self._by_code  # type: ignore[attr-defined]

    def card(self, code: str) -> Card:
        """Look a card up by code (case-insensitive) or by exact name (case-insensitive)."""
        by_code: dict[str, Card] = self._by_code  # type: ignore[attr-defined]
        key = str(code).strip()
        if key.upper() in by_code:
            return by_code[key.upper()]
        for c in self.cards:
            if c.name.lower() == key.lower():
                return c
        raise ParseError(f"unknown card {code!r} in set {self.name!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA_ID,
            "name": self.name,
            "sample": self.sample,
            "note": self.note,
            "cards": [c.to_dict() for c in self.cards],
        }

    @classmethod
    def from_dict(cls, data: Any) -> CardSet:
        """Validate a card-set document (see card_set.schema.json) and build the set."""
        if not isinstance(data, dict):
            raise InvalidPositionError("a card set must be a JSON object", "card_set")
        unknown = set(data) - _SET_KEYS
        if unknown:
            raise InvalidPositionError(f"unknown key(s) {sorted(unknown)}", "card_set")
        schema = data.get("schema", SCHEMA_ID)
        if schema != SCHEMA_ID:
            raise InvalidPositionError(f"expected {SCHEMA_ID!r}, got {schema!r}", "schema")
        name = data.get("name")
        if not isinstance(name, str) or not name.strip():
            raise InvalidPositionError("must be a non-empty string", "name")
        sample = data.get("sample", False)
        if not isinstance(sample, bool):
            raise InvalidPositionError("must be true or false", "sample")
        note = data.get("note", "")
        if not isinstance(note, str):
            raise InvalidPositionError("must be a string", "note")
        raw_cards = data.get("cards")
        if not isinstance(raw_cards, list):
            raise InvalidPositionError("must be a list of cards", "cards")
        if len(raw_cards) < 2:
            raise InvalidPositionError("a set needs at least 2 cards", "cards")
        cards: list[Card] = []
        seen: dict[str, int] = {}
        for i, raw in enumerate(raw_cards):
            card = card_from_dict(raw, f"cards[{i}]")
            if card.code in seen:
                raise InvalidPositionError(
                    f"duplicate code {card.code!r} (also cards[{seen[card.code]}])",
                    f"cards[{i}].code",
                )
            seen[card.code] = i
            cards.append(card)
        return cls(name=name.strip(), cards=tuple(cards), sample=sample, note=note)

    @classmethod
    def from_json(cls, text: str) -> CardSet:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParseError(f"card set is not valid JSON: {exc.msg} at line {exc.lineno}") from exc
        return cls.from_dict(data)


def schema_text() -> str:
    """The JSON Schema (draft 2020-12) of a card-set document, as shipped."""
    return resources.files(__package__).joinpath("card_set.schema.json").read_text("utf-8")


_SAMPLE: CardSet | None = None


def load_sample_set() -> CardSet:
    """The invented sample set shipped with the engine (NOT the printed cards)."""
    global _SAMPLE
    if _SAMPLE is None:
        text = resources.files(__package__).joinpath("sample_set.json").read_text("utf-8")
        _SAMPLE = CardSet.from_json(text)
    return _SAMPLE
