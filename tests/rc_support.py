"""Helpers for the Royal Conquest tests: build exact positions through from_json.

Default deck (engines/royal_conquest/cards.py, `_default_faces`):
  A: wand helmet crown castle+draw    B: wand helmet crown castle    C: wand helmet castle c+draw
  D: bow body castle castle            E: bow body castle castle+draw  F: bow body castle castle
  G: sword shield castle castle+draw   H: sword shield castle castle   I: sword shield castle c+draw
  J: axe crown castle castle           K: axe crown castle castle+draw L: axe crown castle castle
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from engines.royal_conquest import (
    ACTION_SUPPLY,
    ALL_WAR_CARDS,
    ActionKind,
    DrawWar,
    GameState,
    Options,
    parse_war_card,
)

CASTLES_NO_DRAW = ["B4", "C3", "D3", "D4", "E3", "F3", "F4", "G3", "H3", "H4", "I3", "J3", "J4"]


def make_state(
    players: int = 2,
    *,
    battlefield: list[str] | None = None,
    hands: list[list[str]] | None = None,
    stacks: list[list[str]] | None = None,
    action_hands: list[dict[str, int]] | None = None,
    action_discard: dict[str, int] | None = None,
    action_deck: dict[str, int] | None = None,
    war_deck: list[str] | None = None,
    phase: str = "play",
    current: int = 0,
    first_player: int = 0,
    options: Options | None = None,
    **extra: Any,
) -> GameState:
    """A position; War cards not placed go to the War Deck (or, when `war_deck` is given, to
    the last player's Stacks). Action cards not placed go to the Action Deck (or, when
    `action_deck` is given, to the discard pile)."""
    d = GameState(players, options).to_json()
    d["battlefield"] = list(battlefield or [])
    d["hands"] = [list(h) for h in (hands or [[] for _ in range(players)])]
    d["stacks"] = [list(s) for s in (stacks or [[] for _ in range(players)])]
    used = set(d["battlefield"]) | {c for h in d["hands"] for c in h}
    used |= {c for s in d["stacks"] for c in s}
    rest = [str(c) for c in ALL_WAR_CARDS if str(c) not in used]
    if war_deck is None:
        d["war_deck"] = rest
    else:
        d["war_deck"] = list(war_deck)
        d["stacks"][-1] += [c for c in rest if c not in war_deck]
    hands_a = [Counter(h) for h in (action_hands or [{} for _ in range(players)])]
    d["action_hands"] = [dict(h) for h in hands_a]
    held = sum(hands_a, Counter())
    discard = Counter(action_discard or {})
    left = Counter({str(k): v for k, v in ACTION_SUPPLY.items()}) - held - discard
    if action_deck is None:
        d["action_deck"] = dict(left)
    else:
        d["action_deck"] = dict(action_deck)
        discard += left - Counter(action_deck)
    d["action_discard"] = dict(discard)
    d["phase"] = phase
    d["current"] = current
    d["first_player"] = first_player
    d.update(extra)
    return GameState.from_json(d)


def draw(state: GameState, card: str) -> None:
    state.apply(DrawWar(parse_war_card(card)))


def cards(texts: list[str]) -> list:
    return [parse_war_card(t) for t in texts]


def names(seq: Any) -> list[str]:
    return sorted(str(c) for c in seq)


def conserved(state: GameState) -> None:
    """Every War card, Action card and Gem is in exactly one place."""
    places: Counter = Counter(state.war_deck)
    for seq in [state.battlefield, *state.hands, *state.stacks]:
        places.update(seq)
    assert sorted(places) == sorted(ALL_WAR_CARDS)
    assert all(v == 1 for v in places.values())
    total = state.action_deck + state.action_discard
    for h in state.action_hands:
        total += h
    assert dict(total) == {k: v for k, v in ACTION_SUPPLY.items()}
    assert all(v >= 0 for h in state.action_hands for v in h.values())
    assert state.pot + sum(state.gems) == state.options.gem_pot
    assert set(total) <= set(ActionKind)
