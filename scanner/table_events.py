"""The tracker's event type and the words of its journal: helpers every part of the tracker
reads journal entries and the engine's state with (`tracker.py` and its parts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from engines.royal_battles import GameState, Phase, Side
from engines.royal_battles.board import NEIGHBOURS, is_melee, offset, parse_cell
from engines.royal_battles.units import UNIT_KINDS


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


def reaches(kind: str, attacker: int, target: int) -> bool:
    """Can a unit of `kind` on cell `attacker` take off the unit on `target`? Melee units
    attack orthogonal neighbours, ranged ones diagonal neighbours, a pawn both (Extended
    Reach), and a queen's Mystic Blast reaches every enemy on a card of its target's colour."""
    return kind == "queen" or target in NEIGHBOURS[attacker] and (
        UNIT_KINDS[kind].ranged != is_melee(attacker, target) or kind == "pawn")


def with_history(state: GameState) -> GameState:
    """A copy of an engine state that keeps its action history (`copy` drops it)."""
    other = state.copy()
    other.actions, other.history = list(state.actions), list(state.history)
    return other


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


def assignment_scores(cells: list[str], table: dict[str, dict[str, float]],
                       options: list[tuple[str, ...]]) -> list[float]:
    """Log likelihood of each way of giving `cells` the kinds of an option, from the kind
    probabilities read per cell (a kind never read is not impossible: floor 1e-3)."""
    return [sum(math.log(max(table[c].get(k, 0.0), 1e-3)) for c, k in
                zip(cells, kinds, strict=True)) for kinds in options]


def nearest_pairs(gone: list[str], new: list[str]) -> list[tuple[str, str]]:
    """Pair cells a side's units left with cells they now stand on, fewest steps in all
    (at most 4 units a side: every assignment is tried)."""
    import itertools

    def steps(a: str, b: str) -> int:
        return max(map(abs, offset(parse_cell(a), parse_cell(b))))

    k = min(len(gone), len(new))
    if k == 0:
        return []
    best = min(((sum(steps(g, n) for g, n in zip(gs, ns, strict=True)), list(zip(gs, ns,
                                                                              strict=True)))
                for gs in itertools.permutations(gone, k)
                for ns in itertools.combinations(new, k)), key=lambda t: t[0])
    return best[1]


def placing_steps(state: GameState, plans: dict[Side, dict[str, str]]) -> list[Side]:
    """The engine's turns to place (the sides alternate while both have units to place) that
    can be taken now: in order, while the side to place has a decided plan, and only so far
    that each side places all of its plan or none of it (xv-s97, xv-s127: white's last unit,
    down and read surely while black was still to place its own, waited six settled frames
    for black's, since both sides were decided together)."""
    left = {s: len(state.to_place[s]) for s in Side}
    mover, order = state.to_move, []
    while left[mover] and mover in plans:
        order.append(mover)
        left[mover] -= 1
        mover = mover.other if left[mover.other] else mover
    while order:
        done = {s: order.count(s) for s in set(order)}
        if all(n == len(plans[s]) for s, n in done.items()):
            return order
        order.pop()
    return []
