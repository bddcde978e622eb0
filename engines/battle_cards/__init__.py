"""Battle Cards rules engine: the basic game (Trumps) and Battle Mode for 2-4 players.

Pure rules, no I/O: callers supply the card set, the cards drawn and every choice.
See README.md in this package for the rules interpretation, options and data schema.
"""

from .cards import (
    BATTLE_CATEGORIES,
    CATEGORIES,
    SCHEMA_ID,
    Card,
    CardSet,
    Category,
    Size,
    load_sample_set,
    parse_category,
    parse_size,
    schema_text,
)
from .game import (
    MODES,
    STATE_FORMAT,
    Action,
    ChooseCategory,
    Decide,
    Draw,
    GameState,
    Options,
    Outcome,
    Pick,
    Place,
    new_game,
    parse_action,
    play_random_game,
)
from .resolve import (
    MatchupResult,
    RoundResult,
    TrumpsResult,
    resolve_matchup,
    resolve_round,
    resolve_trumps,
)

__all__ = [
    "BATTLE_CATEGORIES", "CATEGORIES", "MODES", "SCHEMA_ID", "STATE_FORMAT", "Action", "Card",
    "CardSet", "Category", "ChooseCategory", "Decide", "Draw", "GameState", "MatchupResult",
    "Options", "Outcome", "Pick", "Place", "RoundResult", "Size", "TrumpsResult",
    "load_sample_set", "new_game", "parse_action", "parse_category", "parse_size",
    "play_random_game", "resolve_matchup", "resolve_round", "resolve_trumps", "schema_text",
]
