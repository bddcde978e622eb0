"""The table helper behind `royal-table rc score` and the /rc page: score one player's Stacks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from engines.errors import InvalidPositionError, ParseError, RulesError

from .cards import TOKEN_SUPPLY, Token, parse_token
from .game import MIN_POINTS
from .scoring import TRIPLE_GROUPINGS, check_supply, near_combinations, score_tokens


def parse_tokens(words: Iterable[Any]) -> list[Token]:
    """One word per card; raises ParseError naming the bad word."""
    out = []
    for i, word in enumerate(words):
        if not isinstance(word, str):
            raise ParseError(f"card {i + 1}: expected a token word, got {word!r}")
        out.append(parse_token(word))
    return out


def stack_report(
    tokens: Iterable[Token],
    players: int | None = None,
    go_score: int | None = None,
    triple_grouping: str = "always",
    minimum_points: int | None = None,
) -> dict[str, Any]:
    """Points, combinations, close combinations and whether the player must call.

    `players` (2..4) gives the minimum points to call (5/3/2) unless `minimum_points` is given;
    `go_score` is the score at which the player last called GO this hand (they then need one
    more point, and the minimum again).
    """
    held = list(tokens)
    check_supply(held)
    if triple_grouping not in TRIPLE_GROUPINGS:
        raise InvalidPositionError(f"must be one of {TRIPLE_GROUPINGS}", "grouping")
    if players is not None and players not in MIN_POINTS:
        raise InvalidPositionError("must be 2, 3 or 4", "players")
    if go_score is not None and (not isinstance(go_score, int) or go_score < 0):
        raise InvalidPositionError("must be an int >= 0", "go_score")
    score = score_tokens(held, triple_grouping)
    minimum = minimum_points if minimum_points is not None else MIN_POINTS.get(players or 0)
    threshold = None
    if minimum is not None:
        threshold = minimum if go_score is None else max(minimum, go_score + 1)
    out = score.to_json()
    out.update(
        {
            "cards": len(held),
            "minimum": minimum,
            "threshold": threshold,
            "must_call": score.must_stop or (threshold is not None and score.points >= threshold),
            "near": [n.to_json() for n in near_combinations(held, triple_grouping)],
            "left_in_deck": {str(t): TOKEN_SUPPLY[t] - score.counts.get(t, 0) for t in Token},
        }
    )
    return out


__all__ = ["RulesError", "parse_tokens", "stack_report"]
