"""The move planner: every option of the side to move, and the exact outcome of each.

With a known hand, each legal movement is listed with every attack or advantage it makes possible
(and once with no attack). With a hidden hand, the planner says per destination and style how many
trumps the three known cards give and which movement cards would be playable there and add one.
"""

from __future__ import annotations

from dataclasses import dataclass

from .actions import Action, Verb
from .board import CELL_NAMES, NEIGHBOURS, Cell, is_melee, is_ranged
from .cards import CARDS, Card, Colour, Style, movement_colour_ok
from .combat import AttackResult, attack_styles, resolve_attack
from .state import GameState, Phase
from .units import UNIT_KINDS, trumps_needed

TRUMP_RANKS = {
    Style.EASY: "2 4 6 8 10",
    Style.OPTIMAL: "3 5 7 9",
    Style.RISKY: "J Q K",
    Style.ADVANTAGE: "A JK",
}


@dataclass(frozen=True)
class PlanOption:
    """One movement, optionally followed by one attack, and what it would do."""

    move: Action
    unit: str  # kind of the moving unit
    attack: AttackResult | None

    def score(self) -> float:
        return 0.0 if self.attack is None else attack_value(self.attack)

    def to_json(self) -> dict:
        a = self.attack
        return {
            "unit": f"{self.unit}@{CELL_NAMES[self.move.frm]}",
            "card": self.move.card.code,
            "from": CELL_NAMES[self.move.frm],
            "to": CELL_NAMES[self.move.to],
            "action": str(self.move),
            "target": CELL_NAMES[a.target] if a else None,
            "style": a.style.value if a else None,
            "trumps": [c.code for c in a.trumps] if a else [],
            "needed": a.needed if a else None,
            "hit": a.hit if a else None,
            "critical": a.critical if a else None,
            "effects": [e.to_json() for e in a.effects] if a else [],
            "key": a.key if a else False,
            "position": a.key_position.value if a and a.key_position else None,
            "draws": a.draws if a else 0,
        }


def attack_value(result: AttackResult) -> float:
    """A crude value for greedy self-play: damage dealt, removals, heals, cards drawn.
    (Damage only ever lands on enemies and healing on friends, so no sign is needed.)"""
    return (sum(e.damage + 20 * e.removed + e.healed for e in result.effects)
            + 1.5 * result.draws)


def plan(state: GameState) -> list[PlanOption]:
    """Every movement of the side to move with its possible attacks (known hand)."""
    if state.phase is not Phase.MOVEMENT or state.current_player() is None:
        return []
    options: list[PlanOption] = []
    for move in state.legal_actions():
        if move.verb is not Verb.MOVE:
            continue
        after = state.copy()
        after._perform(move)  # movement only: no chance event, no history needed
        unit = after.units[after.moved].kind
        options.append(PlanOption(move, unit, None))
        for attack in after.attack_actions():
            options.append(PlanOption(move, unit,
                                      resolve_attack(after, after.moved, attack.to, attack.style)))
    return options


@dataclass(frozen=True)
class HiddenHandOption:
    """For a hidden hand: a unit, a destination, a target and a style, with what is known."""

    unit_cell: Cell
    unit: str
    to: Cell
    target: Cell
    style: Style
    known_trumps: tuple[Card, ...]  # from both initiative cards and the target's standing card
    needed: int
    playable: tuple[Colour, ...]  # movement-card colours allowed there (a joker always is)
    trump_ranks: str  # ranks that, played as the movement card, add a trump

    def to_json(self) -> dict:
        return {
            "unit": f"{self.unit}@{CELL_NAMES[self.unit_cell]}",
            "from": CELL_NAMES[self.unit_cell],
            "to": CELL_NAMES[self.to],
            "target": CELL_NAMES[self.target],
            "style": self.style.value,
            "known_trumps": [c.code for c in self.known_trumps],
            "needed": self.needed,
            "playable_colours": [c.value for c in self.playable],
            "trump_ranks": self.trump_ranks,
            "hit_without_card": len(self.known_trumps) >= self.needed,
            "hit_with_trump_card": len(self.known_trumps) + 1 >= self.needed,
        }


def plan_hidden(state: GameState) -> list[HiddenHandOption]:
    """Options for a side whose hand the assistant can't see."""
    if state.phase is not Phase.MOVEMENT or state.current_player() is None:
        return []
    side = state.to_move
    out: list[HiddenHandOption] = []
    probes = {Colour.RED: CARDS["2H"], Colour.BLACK: CARDS["2S"]}
    for frm, unit in sorted(state.units.items()):
        if unit.side is not side:
            continue
        standing = state.top(frm)
        kind = UNIT_KINDS[unit.kind]
        for to in (frm, *NEIGHBOURS[frm]):
            if to != frm and to in state.units and not state.options.allow_move_onto_unit:
                continue
            covered = state.top(to)
            playable = tuple(
                colour for colour, probe in probes.items()
                if movement_colour_ok(probe, standing.card, standing.colour)
                and (covered is None or movement_colour_ok(probe, covered.card, covered.colour))
            )
            for target_cell in NEIGHBOURS[to]:
                target = state.units.get(target_cell)
                if target is None or target_cell == frm:
                    continue
                own = target.side is side
                for style in attack_styles(unit.kind, is_melee(to, target_cell),
                                           is_ranged(to, target_cell), own):
                    counted = (*state.initiative.values(), state.top(target_cell).card)
                    known = tuple(c for c in counted if c is not None and c.trump_style is style)
                    healing = own
                    needed = 0 if healing else trumps_needed(
                        kind.accuracy, UNIT_KINDS[target.kind].evasion)
                    out.append(HiddenHandOption(frm, unit.kind, to, target_cell, style, known,
                                                needed, playable, TRUMP_RANKS[style]))
    return out
