"""Attack resolution: trumps counted, trumps needed, hit, critical, damage or healing, key position.

Everything here is a pure function of the position; `GameState.apply` uses the result to change
the game, and the planner shows it to players before they choose.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .board import CELL_NAMES, KEY_BY_SUIT, Cell, Symmetry, symmetry
from .cards import Card, Colour, Style
from .units import UNIT_KINDS, AdvantageKind, Side, trumps_needed

STYLE_INDEX = {Style.EASY: 0, Style.OPTIMAL: 1, Style.RISKY: 2}
CRITICAL_TRUMPS = 4


@dataclass(frozen=True, slots=True)
class Effect:
    """What one attack or healing did to one unit."""

    cell: Cell
    damage: int = 0  # injury added, after armor
    healed: int = 0  # injury removed, capped at starting life
    removed: bool = False

    def to_json(self) -> dict:
        return {"cell": CELL_NAMES[self.cell], "damage": self.damage, "healed": self.healed,
                "removed": self.removed}


@dataclass(frozen=True, slots=True)
class AttackResult:
    attacker: Cell
    target: Cell
    style: Style
    trumps: tuple[Card, ...]  # the cards among the four counted that are trumps for the style
    needed: int
    hit: bool
    critical: bool
    effects: tuple[Effect, ...] = field(default=())
    key: bool = False
    key_position: Symmetry | None = None  # the target's position around the attacker's card
    draws: int = 0  # cards the attacker draws for it (key position, Strategy)

    def to_json(self) -> dict:
        return {
            "attacker": CELL_NAMES[self.attacker],
            "target": CELL_NAMES[self.target],
            "style": self.style.value,
            "trumps": [c.code for c in self.trumps],
            "needed": self.needed,
            "hit": self.hit,
            "critical": self.critical,
            "effects": [e.to_json() for e in self.effects],
            "key": self.key,
            "position": self.key_position.value if self.key_position else None,
            "draws": self.draws,
        }


def attack_styles(attacker_kind: str, melee: bool, ranged: bool, own_target: bool) -> list[Style]:
    """The styles a unit may use on a neighbour in that position (melee = orthogonal)."""
    kind = UNIT_KINDS[attacker_kind]
    styles: list[Style] = []
    if own_target:
        if kind.advantage is AdvantageKind.HEALING and ranged:
            styles.append(Style.ADVANTAGE)
        return styles
    if (kind.ranged and ranged) or (not kind.ranged and melee):
        styles += [Style.EASY, Style.OPTIMAL, Style.RISKY]
    adv = kind.advantage
    if adv in (AdvantageKind.EXTENDED_REACH, AdvantageKind.DEADLY_AIM, AdvantageKind.MYSTIC_BLAST):
        if ranged:
            styles.append(Style.ADVANTAGE)
    elif adv in (AdvantageKind.SMITE, AdvantageKind.STRATEGY):
        if melee:
            styles.append(Style.ADVANTAGE)
    return styles


def resolve_attack(state, attacker: Cell, target: Cell, style: Style) -> AttackResult:
    """Resolve `style` from the unit on `attacker` against the unit on `target` in `state`."""
    units = state.units
    att = units[attacker]
    tgt = units[target]
    akind = UNIT_KINDS[att.kind]
    tkind = UNIT_KINDS[tgt.kind]
    att_card = state.top(attacker)
    tgt_card = state.top(target)
    counted = (state.initiative[Side.WHITE], state.initiative[Side.BLACK], att_card.card,
               tgt_card.card)
    trumps = tuple(c for c in counted if c is not None and c.trump_style is style)
    n = len(trumps)
    advantage = akind.advantage if style is Style.ADVANTAGE else None
    healing = advantage is AdvantageKind.HEALING
    needed = 0 if healing else trumps_needed(akind.accuracy, tkind.evasion)
    hit = n >= needed
    critical = n >= CRITICAL_TRUMPS
    doubles = critical and (advantage is None or state.options.critical_doubles_advantages)
    factor = 2 if doubles else 1

    effects: list[Effect] = []
    if hit:
        if healing:
            amount = 3 * n * factor
            for cell in _same_colour_cells(state, tgt.side, target):
                u = units[cell]
                effects.append(Effect(cell, healed=min(amount, u.injury)))
        elif advantage is AdvantageKind.MYSTIC_BLAST:
            total = 3 * n * factor
            for cell in _same_colour_cells(state, tgt.side, target):
                effects.append(_damage(units[cell], cell, total, armored=True))
        else:
            if advantage is None:
                base = akind.damage[STYLE_INDEX[style]]
            elif advantage is AdvantageKind.EXTENDED_REACH:
                base = 8
            elif advantage is AdvantageKind.SMITE:
                base = 6 + sum(1 for u in units.values() if u.side is att.side)
            else:  # Deadly Aim, Strategy
                base = 6
            armored = advantage is not AdvantageKind.DEADLY_AIM
            effects.append(_damage(tgt, target, base * factor, armored=armored))

    position = symmetry(attacker, target, att_card.orientation, att_card.corners)
    own_init = state.initiative[att.side]
    key = own_init is not None and (own_init.is_joker or KEY_BY_SUIT[own_init.suit] is position)
    draws = (2 if key else 0) + (2 if hit and advantage is AdvantageKind.STRATEGY else 0)
    return AttackResult(attacker, target, style, trumps, needed, hit, critical, tuple(effects),
                        key, position, draws)


def _damage(unit, cell: Cell, amount: int, armored: bool) -> Effect:
    life = UNIT_KINDS[unit.kind].life
    dealt = max(0, amount - (UNIT_KINDS[unit.kind].armor if armored else 0))
    return Effect(cell, damage=dealt, removed=unit.injury + dealt >= life)


def _same_colour_cells(state, side: Side, target: Cell) -> list[Cell]:
    """The target first, then every other unit of `side` on a standing card of its colour.

    A joker lying on the board has no colour (unless one was declared), so it matches nothing.
    """
    colour: Colour | None = state.top(target).colour
    cells = [target]
    if colour is None:
        return cells
    for cell, unit in sorted(state.units.items()):
        if cell != target and unit.side is side and state.top(cell).colour is colour:
            cells.append(cell)
    return cells
