"""War Lord Tourney: a pure rules engine (no I/O). See README.md for the rules as implemented."""

from .actions import (
    Action,
    Decline,
    EndTurn,
    Free,
    Move,
    Pass,
    Roll,
    Strike,
    Succeed,
    Verdict,
    parse_action,
)
from .board import (
    CHESS_PIECE,
    DEFAULT_BOARD,
    DEFAULT_SERGEANTS,
    KINDS,
    SIDES,
    Board,
    cell_name,
    other,
    parse_cell,
)
from .game import (
    CombatResolver,
    DiceResolver,
    GameState,
    Options,
    Outcome,
    RandomReporter,
    Unit,
    move_pattern,
    play_random_game,
)

__all__ = [
    "Action", "Board", "CHESS_PIECE", "CombatResolver", "DEFAULT_BOARD", "DEFAULT_SERGEANTS",
    "Decline", "DiceResolver", "EndTurn", "Free", "GameState", "KINDS", "Move", "Options",
    "Outcome", "Pass", "RandomReporter", "Roll", "SIDES", "Strike", "Succeed", "Unit", "Verdict",
    "cell_name", "move_pattern", "other", "parse_action", "parse_cell", "play_random_game",
]
