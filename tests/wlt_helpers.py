"""Shared helpers of the War Lord Tourney tests (test_wlt_*.py)."""

from __future__ import annotations

from engines.war_lord_tourney import GameState

# Warlords and Ladies far away, so no game ends by itself
BASE = {"wW": "a1", "wL": "i1", "bW": "a9", "bL": "i9"}


def pos(placements: dict[str, str], **kw) -> GameState:
    """A position: BASE plus these placements (see GameState.position)."""
    return GameState.position({**BASE, **placements}, **kw)


def acts(state: GameState) -> list[str]:
    return [str(a) for a in state.legal_actions()]


def where(state: GameState, unit: str) -> str | None:
    """The unit's cell when on the board, else its status (keep, prison, dead)."""
    u = state.units[unit]
    return u.cell if u.status == "field" else u.status
