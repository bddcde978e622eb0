"""Royal Battles: the rules engine (pure Python, no I/O).

Vocabulary: `Card`, cells `a1`…`g5`, `Side`, unit kinds (`UNIT_KINDS`, the Army Record), `Action`
(decisions and chance events in text notation), `GameState` (legal_actions / apply / undo /
outcome), `Options` (the rules page's open points), `Position` (JSON in and out) and the planner.
"""

from .actions import Action, Verb, parse_action
from .board import CELL_NAMES, DigitCorners, Orientation, Symmetry, cell_name, parse_cell
from .cards import CARDS, DECK, JOKER, Card, Colour, Style, parse_card
from .combat import AttackResult, Effect, resolve_attack
from .state import GameState, Options, Outcome, Phase, PlacedCard, Unit
from .units import UNIT_KINDS, Side, UnitKind, parse_kind, parse_side, trumps_needed

__all__ = [
    "Action", "AttackResult", "CARDS", "CELL_NAMES", "Card", "Colour", "DECK", "DigitCorners",
    "Effect", "GameState", "JOKER", "Options", "Orientation", "Outcome", "Phase", "PlacedCard",
    "Side", "Style", "Symmetry", "UNIT_KINDS", "Unit", "UnitKind", "Verb", "cell_name",
    "parse_action", "parse_card", "parse_cell", "parse_kind", "parse_side", "resolve_attack",
    "trumps_needed",
]
