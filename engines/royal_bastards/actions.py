"""Actions of Royal Bastards in the game's own words, with a compact text notation.

    draw chaos poisonous-gas      a card comes off a deck (chance: seeded or reported by the table)
    roll 7                        the next die shows 7 (chance)
    p0 firstborn barry            setup: keep a dealt Bastard as Firstborn
    p1 move champion orkland      Movement: move a Bastard (up to its Move in territories)
    p1 done                       Movement: finished moving
    p2 play poisonous-gas p0.firstborn   play a Chaos card at a target Bastard
    p0 pass                       let the Chaos window go by
    p0 contest orkland            First Player picks the next contested Territory
    p3 place 2 joda-city          place Global Support Tokens
    p1 choose witch-whitney       Festival: take a face-up Bastard as Champion/Herald
"""

from __future__ import annotations

from dataclasses import dataclass

from engines.errors import ParseError

from .cards import DECKS, ROLES


def _player(text: str) -> int:
    if len(text) < 2 or text[0] != "p" or not text[1:].isdigit():
        raise ParseError(f"expected a player like p0, got {text!r}")
    return int(text[1:])


@dataclass(frozen=True)
class Draw:
    deck: str
    card: str

    def __str__(self) -> str:
        return f"draw {self.deck} {self.card}"


@dataclass(frozen=True)
class Roll:
    value: int

    def __str__(self) -> str:
        return f"roll {self.value}"


@dataclass(frozen=True)
class ChooseFirstborn:
    player: int
    card: str

    def __str__(self) -> str:
        return f"p{self.player} firstborn {self.card}"


@dataclass(frozen=True)
class Move:
    player: int
    role: str
    to: str

    def __str__(self) -> str:
        return f"p{self.player} move {self.role} {self.to}"


@dataclass(frozen=True)
class Done:
    player: int

    def __str__(self) -> str:
        return f"p{self.player} done"


@dataclass(frozen=True)
class Play:
    player: int
    card: str
    target: int
    role: str

    def __str__(self) -> str:
        return f"p{self.player} play {self.card} p{self.target}.{self.role}"


@dataclass(frozen=True)
class Pass:
    player: int

    def __str__(self) -> str:
        return f"p{self.player} pass"


@dataclass(frozen=True)
class ChooseContest:
    player: int
    territory: str

    def __str__(self) -> str:
        return f"p{self.player} contest {self.territory}"


@dataclass(frozen=True)
class Place:
    player: int
    territory: str
    count: int

    def __str__(self) -> str:
        return f"p{self.player} place {self.count} {self.territory}"


@dataclass(frozen=True)
class ChooseBastard:
    player: int
    card: str

    def __str__(self) -> str:
        return f"p{self.player} choose {self.card}"


Action = Draw | Roll | ChooseFirstborn | Move | Done | Play | Pass | ChooseContest | Place | \
    ChooseBastard


def parse_action(text: str) -> Action:
    """Read the notation written by `str(action)`."""
    words = text.split()
    if not words:
        raise ParseError("empty action")
    try:
        if words[0] == "draw" and len(words) == 3:
            if words[1] not in DECKS:
                raise ParseError(f"unknown deck {words[1]!r} (decks: {', '.join(DECKS)})")
            return Draw(words[1], words[2])
        if words[0] == "roll" and len(words) == 2:
            return Roll(int(words[1]))
        player = _player(words[0])
        verb, rest = (words[1], words[2:]) if len(words) > 1 else ("", [])
        if verb == "firstborn" and len(rest) == 1:
            return ChooseFirstborn(player, rest[0])
        if verb == "move" and len(rest) == 2:
            if rest[0] not in ROLES:
                raise ParseError(f"unknown role {rest[0]!r}")
            return Move(player, rest[0], rest[1])
        if verb == "done" and not rest:
            return Done(player)
        if verb == "pass" and not rest:
            return Pass(player)
        if verb == "play" and len(rest) == 2:
            target, _, role = rest[1].partition(".")
            if role not in ROLES:
                raise ParseError(f"target must look like p1.firstborn, got {rest[1]!r}")
            return Play(player, rest[0], _player(target), role)
        if verb == "contest" and len(rest) == 1:
            return ChooseContest(player, rest[0])
        if verb == "place" and len(rest) == 2:
            return Place(player, rest[1], int(rest[0]))
        if verb == "choose" and len(rest) == 1:
            return ChooseBastard(player, rest[0])
    except ValueError as exc:
        if isinstance(exc, ParseError):
            raise
        raise ParseError(f"cannot read action {text!r}: {exc}") from None
    raise ParseError(f"cannot read action {text!r}")
