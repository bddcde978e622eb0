"""Royal Bastards rules engine (pure: no I/O). See README.md and SCHEMA.md beside this file."""

from .actions import (
    Action,
    ChooseBastard,
    ChooseContest,
    ChooseFirstborn,
    Done,
    Draw,
    Move,
    Pass,
    Place,
    Play,
    Roll,
    parse_action,
)
from .board import Board, board_from_dict, random_board, sample_board
from .cards import CardSet, Condition, Effect, load_card_set, load_card_set_json, sample_card_set
from .game import (
    CHANCE,
    TERMINAL,
    GameState,
    Outcome,
    new_game,
    play_random_game,
    random_action,
)
from .rules import Bastard, Options, tracker

__all__ = [
    "CHANCE", "TERMINAL", "Action", "Bastard", "Board", "CardSet", "ChooseBastard",
    "ChooseContest", "ChooseFirstborn", "Condition", "Done", "Draw", "Effect", "GameState",
    "Move", "Options", "Outcome", "Pass", "Place", "Play", "Roll", "board_from_dict",
    "load_card_set", "load_card_set_json", "new_game", "parse_action", "play_random_game",
    "random_action", "random_board", "sample_board", "sample_card_set", "tracker",
]
