"""The War Lord Tourney vocabulary: one frozen dataclass per kind of action, with a compact
text notation (`str(action)`) and `parse_action` for the reverse.

    wK c5            move the white Knight to c5
    wL d4 rose wF    the white Lady moves to d4 and 'captures' her own Footman (sent to the Castle)
    pass             no unit can move
    end              end the turn early (only with Options.moves_per_turn > 1)
    wL frees wW      a unit on the opposing Green frees a prisoner
    white wins       a combat round reported by the table: white lands the blow
    both strike      both land a blow (only with Options.double_kills)
    roll 5 2         a combat round decided by dice: white rolled 5, black 2
    slay bK          the victor slays a defeated unit ...
    capture bK       ... or captures it
    promote wK       succession: this unit becomes the Warlord
    decline          succession: the offered units decline; the next in line is asked
    return wL        the Lady returns to her Castle ...
    surrender wL     ... surrenders ...
    trade wL         ... or trades her life for the Warlord's
"""

from __future__ import annotations

from dataclasses import dataclass

from engines.errors import ParseError

from .board import UNIT_ID_RE, parse_cell


@dataclass(frozen=True)
class Move:
    unit: str
    to: str
    rose: str | None = None  # the Lady's own unit she 'captures' (sends to the Castle)

    def __str__(self) -> str:
        return f"{self.unit} {self.to}" + (f" rose {self.rose}" if self.rose else "")


@dataclass(frozen=True)
class Pass:
    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True)
class EndTurn:
    def __str__(self) -> str:
        return "end"


@dataclass(frozen=True)
class Free:
    freer: str
    prisoner: str

    def __str__(self) -> str:
        return f"{self.freer} frees {self.prisoner}"


@dataclass(frozen=True)
class Strike:
    """A reported combat round: `side` lands the blow; None: both do (a double kill)."""

    side: str | None

    def __str__(self) -> str:
        return f"{self.side} wins" if self.side else "both strike"


@dataclass(frozen=True)
class Roll:
    white: int
    black: int

    def __str__(self) -> str:
        return f"roll {self.white} {self.black}"


@dataclass(frozen=True)
class Verdict:
    unit: str
    slay: bool

    def __str__(self) -> str:
        return f"{'slay' if self.slay else 'capture'} {self.unit}"


SUCCESSION_CHOICES = ("promote", "return", "surrender", "trade")


@dataclass(frozen=True)
class Succeed:
    unit: str
    choice: str = "promote"

    def __str__(self) -> str:
        return f"{self.choice} {self.unit}"


@dataclass(frozen=True)
class Decline:
    def __str__(self) -> str:
        return "decline"


Action = Move | Pass | EndTurn | Free | Strike | Roll | Verdict | Succeed | Decline


def _unit(token: str, text: str) -> str:
    if not UNIT_ID_RE.match(token):
        raise ParseError(f"bad unit id {token!r} in action {text!r}")
    return token


def parse_action(text: str) -> Action:
    """The reverse of `str(action)`. Raises ParseError naming the bad part."""
    if not isinstance(text, str):
        raise ParseError(f"action must be text, got {type(text).__name__}")
    words = text.strip().split()
    if not words:
        raise ParseError("empty action")
    head = words[0].lower()
    if words == ["pass"]:
        return Pass()
    if words == ["end"]:
        return EndTurn()
    if words == ["decline"]:
        return Decline()
    if words == ["both", "strike"]:
        return Strike(None)
    if len(words) == 2 and words[1] == "wins" and head in ("white", "black"):
        return Strike(head)
    if head == "roll" and len(words) == 3:
        try:
            white, black = int(words[1]), int(words[2])
        except ValueError:
            raise ParseError(f"bad dice in {text!r}") from None
        if not (1 <= white <= 6 and 1 <= black <= 6):
            raise ParseError(f"dice must be 1..6 in {text!r}")
        return Roll(white, black)
    if head in ("slay", "capture") and len(words) == 2:
        return Verdict(_unit(words[1], text), head == "slay")
    if head in SUCCESSION_CHOICES and len(words) == 2:
        return Succeed(_unit(words[1], text), head)
    if len(words) == 3 and words[1] == "frees":
        return Free(_unit(words[0], text), _unit(words[2], text))
    if len(words) in (2, 4) and UNIT_ID_RE.match(words[0]):
        parse_cell(words[1])
        if len(words) == 4:
            if words[2] != "rose":
                raise ParseError(f"expected 'rose' in {text!r}")
            return Move(words[0], words[1], _unit(words[3], text))
        return Move(words[0], words[1])
    raise ParseError(f"unknown action {text!r}")
