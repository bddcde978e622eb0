"""Actions in text notation: every step of a game, decisions and chance events alike.

Notation is `<side> <verb> [arguments]`, e.g. `white move c1-c2 3H`, `black attack d3 optimal`,
`white initiative 5S`, `black draw ?` (a card drawn into a hidden hand).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from engines.errors import ParseError

from .board import CELL_NAMES, Cell, DigitCorners, Orientation, parse_cell
from .cards import Card, Colour, Style, parse_card
from .units import Side, parse_kind, parse_side


class Verb(StrEnum):
    SETUP = "setup"  # chance: a set-up card drawn and laid on a home cell
    PLACE = "place"  # a unit placed on a set-up card
    INITIATIVE = "initiative"  # chance: an initiative card turned up
    DRAW = "draw"  # chance: a card drawn into hand (`?` when the hand is hidden)
    TAKE_DRAW = "take-draw"  # pre-turn draw taken (hand empty)
    SKIP_DRAW = "skip-draw"  # pre-turn draw declined
    MOVE = "move"  # a movement card played and a unit moved onto it
    PASS = "pass"  # no movement (no legal move, or the allow_pass option)
    ATTACK = "attack"  # the moved unit attacks or uses its advantage
    NO_ATTACK = "no-attack"
    DISCARD = "discard"  # post-turn: discard the whole hand
    KEEP = "keep"  # post-turn: keep the hand

    @property
    def is_chance(self) -> bool:
        return self in (Verb.SETUP, Verb.INITIATIVE, Verb.DRAW)


@dataclass(frozen=True, slots=True)
class Action:
    side: Side
    verb: Verb
    card: Card | None = None
    frm: Cell | None = None
    to: Cell | None = None
    kind: str | None = None
    style: Style | None = None
    orientation: Orientation = Orientation.PORTRAIT
    corners: DigitCorners | None = None  # None: the orientation's usual index diagonal
    declared: Colour | None = None  # a joker's named colour (joker_declared_colour option)

    @property
    def is_chance(self) -> bool:
        return self.verb.is_chance

    def rules_key(self) -> Action:
        """The action without how the card happens to lie, which the rules don't care about."""
        if self.verb is Verb.MOVE and (
            self.orientation is not Orientation.PORTRAIT or self.corners is not None
        ):
            return replace(self, orientation=Orientation.PORTRAIT, corners=None)
        return self

    def __str__(self) -> str:
        parts = [self.side.value, self.verb.value]
        v = self.verb
        if v is Verb.SETUP:
            parts += [CELL_NAMES[self.to], str(self.card)]
        elif v is Verb.PLACE:
            parts += [self.kind or "?", CELL_NAMES[self.to]]
        elif v in (Verb.INITIATIVE, Verb.DRAW):
            parts.append(str(self.card) if self.card else "?")
        elif v is Verb.MOVE:
            parts += [f"{CELL_NAMES[self.frm]}-{CELL_NAMES[self.to]}", str(self.card)]
            if self.orientation is not Orientation.PORTRAIT:
                parts.append(self.orientation.value)
            if self.corners is not None:
                parts.append(self.corners.value)
            if self.declared is not None:
                parts.append(f"as-{self.declared.value}")
        elif v is Verb.ATTACK:
            parts += [CELL_NAMES[self.to], self.style.value]
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Action({self})"


def parse_action(text: str) -> Action:
    """Read an action in text notation (the inverse of str(action))."""
    words = str(text).split()
    if len(words) < 2:
        raise ParseError(f"not an action: {text!r} (expected '<side> <verb> …')")
    side = parse_side(words[0])
    try:
        verb = Verb(words[1].lower())
    except ValueError:
        raise ParseError(
            f"unknown verb {words[1]!r} in {text!r} (one of {', '.join(v.value for v in Verb)})"
        ) from None
    args = words[2:]

    def need(n: int) -> None:
        if len(args) < n:
            raise ParseError(f"{verb.value} needs {n} argument(s): {text!r}")

    if verb is Verb.SETUP:
        need(2)
        return Action(side, verb, card=parse_card(args[1]), to=parse_cell(args[0]))
    if verb is Verb.PLACE:
        need(2)
        return Action(side, verb, kind=parse_kind(args[0]).name, to=parse_cell(args[1]))
    if verb in (Verb.INITIATIVE, Verb.DRAW):
        need(1)
        card = None if args[0] == "?" and verb is Verb.DRAW else parse_card(args[0])
        return Action(side, verb, card=card)
    if verb is Verb.MOVE:
        need(2)
        cells = args[0].split("-")
        if len(cells) != 2:
            raise ParseError(f"move needs FROM-TO, got {args[0]!r}")
        orientation, corners, declared = Orientation.PORTRAIT, None, None
        for extra in args[2:]:
            if extra in ("portrait", "landscape"):
                orientation = Orientation(extra)
            elif extra in ("nw-se", "ne-sw"):
                corners = DigitCorners(extra)
            elif extra in ("as-red", "as-black"):
                declared = Colour(extra[3:])
            else:
                raise ParseError(f"unknown move detail {extra!r} in {text!r}")
        return Action(side, verb, card=parse_card(args[1]), frm=parse_cell(cells[0]),
                      to=parse_cell(cells[1]), orientation=orientation, corners=corners,
                      declared=declared)
    if verb is Verb.ATTACK:
        need(2)
        try:
            style = Style(args[1].lower())
        except ValueError:
            raise ParseError(f"unknown attack style {args[1]!r} (easy, optimal, risky, "
                             "advantage)") from None
        return Action(side, verb, to=parse_cell(args[0]), style=style)
    if args:
        raise ParseError(f"{verb.value} takes no arguments: {text!r}")
    return Action(side, verb)
