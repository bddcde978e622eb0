"""Unit kinds as data: the Army Record table of the rulebook."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from engines.errors import ParseError


class Side(StrEnum):
    WHITE = "white"
    BLACK = "black"

    @property
    def other(self) -> Side:
        return Side.BLACK if self is Side.WHITE else Side.WHITE

    @property
    def home_rank(self) -> int:
        return 0 if self is Side.WHITE else 4


def parse_side(text: str) -> Side:
    try:
        return Side(str(text).lower())
    except ValueError:
        raise ParseError(f"unknown side {text!r} (expected white or black)") from None


class AdvantageKind(StrEnum):
    EXTENDED_REACH = "extended-reach"
    DEADLY_AIM = "deadly-aim"
    SMITE = "smite"
    HEALING = "healing"
    MYSTIC_BLAST = "mystic-blast"
    STRATEGY = "strategy"


@dataclass(frozen=True, slots=True)
class UnitKind:
    name: str
    ranged: bool  # melee units attack orthogonally, ranged units diagonally
    life: int
    accuracy: int
    evasion: int
    weapon: str
    damage: tuple[int, int, int]  # easy / optimal / risky
    armor_name: str
    armor: int
    advantage: AdvantageKind
    advantage_text: str

    @property
    def type_name(self) -> str:
        return "ranged" if self.ranged else "melee"


UNIT_KINDS: dict[str, UnitKind] = {
    k.name: k
    for k in (
        UnitKind("pawn", False, 8, 3, 3, "Long Spear", (4, 6, 8), "Hard Leather", 3,
                 AdvantageKind.EXTENDED_REACH, "A ranged (diagonal) attack for 8 damage."),
        UnitKind("rook", True, 8, 4, 2, "Long Bow", (4, 5, 6), "Soft Leather", 2,
                 AdvantageKind.DEADLY_AIM,
                 "A ranged attack for 6 damage that armor does not reduce."),
        UnitKind("knight", False, 8, 2, 4, "Heavy Mace", (5, 6, 7), "Chain Armor", 4,
                 AdvantageKind.SMITE,
                 "A melee attack for 6 + the number of your units on the board "
                 "(this one included)."),
        UnitKind("bishop", True, 10, 3, 4, "Flail", (4, 5, 6), "Cloth", 1,
                 AdvantageKind.HEALING,
                 "Target an own unit in ranged position (always hits): it and every own unit on a "
                 "standing card of its colour regain 3 life per trump, up to starting life."),
        UnitKind("queen", True, 8, 4, 2, "Magic Bolt", (4, 6, 8), "Cloth", 1,
                 AdvantageKind.MYSTIC_BLAST,
                 "A ranged attack that must hit: the target and every enemy on a standing card of "
                 "its colour take 3 damage per trump, each less its own armor."),
        UnitKind("king", False, 10, 4, 4, "Scepter", (4, 5, 6), "Cloth", 1,
                 AdvantageKind.STRATEGY,
                 "A melee attack for 6 damage; on a hit, at once draw 2 cards into hand."),
    )
}


def parse_kind(text: str) -> UnitKind:
    kind = UNIT_KINDS.get(str(text).lower())
    if kind is None:
        raise ParseError(f"unknown unit kind {text!r} (expected one of {', '.join(UNIT_KINDS)})")
    return kind


def trumps_needed(accuracy: int, evasion: int) -> int:
    """Evasion below accuracy: 1; equal or one more: 2; two or more above: 3."""
    if evasion < accuracy:
        return 1
    if evasion <= accuracy + 1:
        return 2
    return 3
