"""Scenario building for the Royal Bastards tests: a card set with neutral extra cards, a fixed
map, and a driver that answers chance nodes with the cards/dice a test asks for."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterable

from engines.royal_bastards import (
    CHANCE,
    GameState,
    Options,
    board_from_dict,
    load_card_set,
    new_game,
    sample_card_set,
)
from engines.royal_bastards.board import Board

# A line of hexes: joda-city in the middle.
#   goblin-warrens - orkland - treasured-valley - joda-city - twin-spires - giants-step
# plus halfling-hills below treasured-valley, ancient-grove below joda-city,
# dark-hallows below twin-spires.
LINE_MAP = {"hexes": {
    "joda-city": [0, 0], "treasured-valley": [-1, 0], "orkland": [-2, 0],
    "goblin-warrens": [-3, 0], "twin-spires": [1, 0], "giants-step": [2, 0],
    "halfling-hills": [-1, 1], "ancient-grove": [0, 1], "dark-hallows": [1, 1],
}}


def cards_dict() -> dict:
    data = copy.deepcopy(sample_card_set().to_dict())
    data["label"] = "sample+test"
    data["fortunes"] += [{"id": f"plain-fortune-{i}", "name": "Plain", "effects": []}
                         for i in range(12)]
    data["skeletons"] += [{"id": f"plain-skeleton-{i}", "name": "Plain", "effects": []}
                          for i in range(12)]
    return data


CARDS = load_card_set(cards_dict())


def board() -> Board:
    return board_from_dict(LINE_MAP, CARDS)


class Driver:
    """Answers chance nodes: a Draw takes the next card the test wants from that deck (if it is
    still in the deck) or else the first card of the deck; a Roll takes the next wanted value
    (without one, it stops at the die)."""

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.want: dict[str, list[str]] = {}
        self.rolls: list[int] = []

    def cards(self, deck: str, cards: Iterable[str]) -> Driver:
        self.want.setdefault(deck, []).extend(cards)
        return self

    def dice(self, values: Iterable[int]) -> Driver:
        self.rolls.extend(values)
        return self

    def settle(self) -> GameState:
        s = self.state
        while s.is_chance_node():
            if s.queue:
                deck = s.queue[0]["deck"]
                wanted = self.want.get(deck, [])
                card = None
                while wanted and card is None:
                    c = wanted.pop(0)
                    if c in s.decks[deck]:
                        card = c
                card = card or sorted(s.decks[deck])[0]
                s.apply(f"draw {deck} {card}")
            elif self.rolls:
                s.apply(f"roll {self.rolls.pop(0)}")
            else:  # dice wait until the test says what they show
                break
        return s

    def act(self, *actions: str) -> GameState:
        for a in actions:
            self.settle()
            self.state.apply(a)
        return self.settle()

    def pass_all(self) -> GameState:
        """Everyone passes the current Chaos window."""
        s = self.settle()
        phase = s.phase
        while s.phase == phase and phase in ("window", "end_start", "end_score") and (
                not s.is_chance_node()):
            s.apply(f"p{s.current_player()} pass")
            self.settle()
        return s


PLAIN_CHAOS = "bribe"


def start(firstborns: list[str], options: Options | None = None, first: int = 0,
          fortunes: list[str] | None = None, skeletons: list[str] | None = None,
          hands: list[list[str]] | None = None) -> Driver:
    """A game on LINE_MAP with the given Firstborns, stopped at the start of turn 1's
    Movement phase. Fortunes/Skeletons default to plain (no effect) cards; hands are
    filled with the wanted chaos cards first."""
    n = len(firstborns)
    state = new_game(n, CARDS, board(), options or Options(), first_player=first)
    d = Driver(state)
    order = state.seat_order()
    others = [b for b in sorted(CARDS.bastards) if b not in firstborns]
    for k, p in enumerate(order):
        d.cards("bastard", [firstborns[p], others[2 * k], others[2 * k + 1]])
    d.settle()
    for p in order:
        state.apply(f"p{p} firstborn {firstborns[p]}")
    fortunes = fortunes or [f"plain-fortune-{i}" for i in range(n)]
    skeletons = skeletons or [f"plain-skeleton-{i}" for i in range(n)]
    for p in order:
        d.cards("skeleton", [skeletons[p]])
        d.cards("fortune", [fortunes[p]])
    for p in order:
        d.cards("chaos", (hands[p] if hands else []) + [PLAIN_CHAOS] * 3)
    d.settle()
    return d


def edit(state: GameState, fn) -> GameState:  # noqa: ANN001
    """Round-trip a state through JSON with a modification (validated on load)."""
    data = json.loads(json.dumps(state.to_json()))
    fn(data)
    return GameState.from_json(data)


def add_bastard(data: dict, player: int, card: str, role: str, location: str,
                fortune: str | None = None, skeleton: str | None = None,
                revealed: bool = False) -> None:
    data["decks"]["bastard"].remove(card)
    if fortune:
        data["decks"]["fortune"].remove(fortune)
    if skeleton:
        data["decks"]["skeleton"].remove(skeleton)
    data["players"][player]["bastards"].append(
        {"card": card, "role": role, "location": location, "fortune": fortune,
         "skeleton": skeleton, "revealed": revealed, "moved": False})


def to_decision(state: GameState, rng: random.Random | None = None) -> GameState:
    rng = rng or random.Random(0)
    while state.current_player() == CHANCE:
        outcomes = state.chance_outcomes()
        state.apply(rng.choices([a for a, _ in outcomes], [w for _, w in outcomes])[0])
    return state
