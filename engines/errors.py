"""Typed errors shared by every rules engine.

Callers catch `RulesError` to treat any rules problem alike, or a subclass to tell an illegal
action (the position is fine, the request is not) from an invalid position (the data is wrong).
"""

from __future__ import annotations


class RulesError(ValueError):
    """Base class of every error an engine raises about the game itself."""


class IllegalActionError(RulesError):
    """The action is not legal in the current state; the state is unchanged."""


class InvalidPositionError(RulesError):
    """A position (JSON or object) breaks the rules; `field` names the offending part."""

    def __init__(self, message: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class ParseError(RulesError):
    """Notation (a card code, a cell, an action string) could not be read."""
