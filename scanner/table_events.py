"""The tracker's event type and the words of its journal: helpers every part of the tracker
reads journal entries and the engine's state with (`tracker.py` and its parts).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engines.royal_battles import GameState, Phase, Side


@dataclass
class TableEvent:
    """Something that visibly happened at the table, in order."""

    frame: int
    text: str  # engine notation ("white move c1-c2 3H") or "black knight removed d4"
    kind: str  # setup | place | initiative | move | removed
    flags: list[str] = field(default_factory=list)  # what a player should look at
    question: str | None = None  # while open: what is not yet sure (the text is the likeliest)

    def to_json(self) -> dict:
        out = {"frame": self.frame, "event": self.text, "kind": self.kind, "flags": self.flags}
        if self.question:
            out["question"] = self.question
        return out


# what the tracker fills in for the unseen parts of a turn (`_finish_turn`, `_make_room_for`)
FILLER_VERBS = ("pass", "no-attack", "keep", "skip-draw", "take-draw")


def is_filler(entry: str) -> bool:
    """A journal entry the camera did not see but the turn order implied."""
    words = entry.split()
    return len(words) >= 2 and (words[1] in FILLER_VERBS or words[1:] == ["draw", "?"])


def with_card(text: str, code: str) -> str:
    """An action laying a card ("white move c1-c2 3H"), with another card."""
    return " ".join(text.split()[:-1] + [code])


TWIN_SUIT = {"C": "S", "S": "C", "D": "H", "H": "D"}  # same colour, told apart by shape


def twin_of(code: str) -> str:
    """The card of the same rank and colour in the other suit: the reader's usual confusion."""
    return code[:-1] + TWIN_SUIT[code[-1]]


def taken_for(card: str) -> list[str]:
    """What the readers are known to take for `card`: its twin (same rank and colour), and
    for a jack the joker, whose big "J" over "oker" reads as a jack."""
    if card == "JK":
        return []
    return [twin_of(card)] + (["JK"] if card.startswith("J") else [])


def known_confusion(a: str, b: str) -> bool:
    """Are two card codes ones the readers are known to take for each other?"""
    return a in taken_for(b) or b in taken_for(a)


# what the engine is told of a phase the camera can't see, to close the turn in progress: no
# attack entered, hand kept, pre-turn draw declined, no move
UNSEEN_CLOSE = {Phase.ATTACK: "no-attack", Phase.POST_TURN: "keep",
                 Phase.PRE_TURN_DRAW: "skip-draw", Phase.MOVEMENT: "pass"}


def unseen_step(state: GameState, to_movement: bool) -> str | None:
    """The action that closes `state`'s phase the camera can't see (`UNSEEN_CLOSE`), or, with
    `to_movement`, that takes a side on to its movement (the pre-turn draw taken)."""
    phase = state.phase
    if to_movement and phase is Phase.PRE_TURN_DRAW:
        return f"{state.to_move.value} take-draw"
    verb = UNSEEN_CLOSE.get(phase)
    return f"{state.to_move.value} {verb}" if verb else None


def assume_unseen_draw(state: GameState, side: Side) -> bool:
    """A side seen laying a card with no card known in its hidden hand drew one the camera
    could not see (e.g. after an attack): the engine is told it holds one."""
    player = state.players[side]
    if player.hand is None and player.hidden_hand_size == 0:
        player.hidden_hand_size = 1
        return True
    return False


def lays_on(entry: str) -> str | None:
    """The cell a journal entry lays a card on ("white move c1-c2 3H": c2), if any."""
    w = entry.split()
    if len(w) == 4 and w[1] == "move":
        return w[2].split("-")[1]
    if len(w) == 4 and w[1] == "setup" or entry.startswith("correct lay "):
        return w[2]
    return None


def with_kind(text: str, kind_of: dict[str, str]) -> str:
    """A placement ("white place pawn a1") with the kind `kind_of` gives its cell."""
    w = text.split()
    return " ".join(w[:2] + [kind_of[w[3]]] + w[3:])
