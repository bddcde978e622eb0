"""Royal Conquest rules engine: a state machine over hands until the Gem pot is empty.

Flow of one hand: (first hand only) the Dragon draw picks the first player; the deal (Battlefield
first, redealt while it shows 3 cards of one coat of arms, then War hands and Action hands); then
turns. A turn is the BATTLE phase (play a hand card, draw the War Deck card, captures, one Action
card drawn per Special Instance), the ACTION phase (play at most one Action card; a Thief or
Sweep opens a window in which the affected players may answer with Defend, or Potion as Defend),
then the CALL phase (STOP or GO when eligible). Every random event is a chance node whose
outcome is an action (`DrawWar`, `DrawAction`, `PoisonPick`, `FirstPlayer`).
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from dataclasses import dataclass, field, fields
from math import comb
from operator import attrgetter
from typing import Any

from engines.errors import IllegalActionError, InvalidPositionError, ParseError, RulesError

from .cards import (
    ACTION_SUPPLY,
    ALL_WAR_CARDS,
    DEFAULT_DECK,
    SPECIAL_TOKENS,
    ActionKind,
    Deck,
    Token,
    WarCard,
    parse_action_kind,
    parse_war_card,
)
from .scoring import TRIPLE_GROUPINGS, Score, score_tokens

CHANCE = -1
_KEY = attrgetter("arms", "n")
TERMINAL = -2

MIN_POINTS = {2: 5, 3: 3, 4: 2}
# players -> (War cards per hand, Action cards per hand, Battlefield cards)
DEAL = {2: (10, 1, 8), 3: (7, 2, 6), 4: (6, 3, 4)}

GO_BONUSES = ("triangular", "linear")
PASSED_GO_CHIPS = ("count", "keep")
DEFEND_SWEEP = ("whole", "self")
AFTER_VOID = ("same", "next")

# Special Instances (each draws one Action card).
UNFREEZE = "unfreeze"
OWN_MATCH = "own_match"
CLEAR = "clear"
DRAW_SYMBOL = "draw_symbol"
INSTANCES = (UNFREEZE, OWN_MATCH, CLEAR, DRAW_SYMBOL)

PHASES = (
    "first", "deal", "play", "draw", "take", "bonus", "action", "respond", "poison", "dragon",
    "call", "over",
)  # fmt: skip
QUEUE_KINDS = ("bf", "hand", "ahand", "turn", "bonus", "dragon", "poison")


@dataclass(frozen=True)
class Options:
    """Rule options; every point the booklet leaves open is one of these (see README)."""

    gem_pot: int = 25
    # None: the booklet's 5 / 3 / 2 points for 2 / 3 / 4 players.
    minimum_points: int | None = None
    # GO-chip bonus on STOP: "triangular" = 1 for the 1st chip + 2 for the 2nd + ...; "linear"
    # = 1 per chip.
    go_bonus: str = "triangular"
    # GO chips other players give the winner: "count" = they join the winner's chips before the
    # bonus is worked out; "keep" = handed over but worth nothing.
    passed_go_chips: str = "count"
    # FAQ: a matched triple leaves the random Weapons/Armor ("always"); "best" = the better way.
    triple_grouping: str = "always"
    # A Defend against a Sweep stops the "whole" Sweep, or protects only its player ("self").
    defend_sweep: str = "whole"
    # Special Instance 1 also when the War Deck card (not the hand card) is the 4th card.
    drawn_card_unfreezes: bool = True
    # Redeal when the Battlefield is dealt (also by a Dragon) with 3 cards of one coat of arms.
    redeal_on_triple: bool = True
    # FAQ: a player whose points a Thief/Sweep takes below the minimum may call again once
    # they have the minimum again (True), instead of needing one more point than at their GO.
    go_reset_below_minimum: bool = True
    # Who starts the hand after a hand nobody STOPped: "same" first player or the "next" one.
    after_void_hand: str = "same"
    # Stop the match after this many hands even if Gems remain (None: play until pot is empty).
    max_hands: int | None = None
    deck: Deck = DEFAULT_DECK

    def __post_init__(self) -> None:
        checks = [
            ("gem_pot", isinstance(self.gem_pot, int) and self.gem_pot >= 1, "an int >= 1"),
            (
                "minimum_points",
                self.minimum_points is None
                or (isinstance(self.minimum_points, int) and self.minimum_points >= 1),
                "null or an int >= 1",
            ),
            ("go_bonus", self.go_bonus in GO_BONUSES, f"one of {GO_BONUSES}"),
            ("passed_go_chips", self.passed_go_chips in PASSED_GO_CHIPS, str(PASSED_GO_CHIPS)),
            ("triple_grouping", self.triple_grouping in TRIPLE_GROUPINGS, str(TRIPLE_GROUPINGS)),
            ("defend_sweep", self.defend_sweep in DEFEND_SWEEP, f"one of {DEFEND_SWEEP}"),
            ("drawn_card_unfreezes", isinstance(self.drawn_card_unfreezes, bool), "a bool"),
            ("redeal_on_triple", isinstance(self.redeal_on_triple, bool), "a bool"),
            ("go_reset_below_minimum", isinstance(self.go_reset_below_minimum, bool), "a bool"),
            ("after_void_hand", self.after_void_hand in AFTER_VOID, f"one of {AFTER_VOID}"),
            (
                "max_hands",
                self.max_hands is None or (isinstance(self.max_hands, int) and self.max_hands >= 1),
                "null or an int >= 1",
            ),
            ("deck", isinstance(self.deck, Deck), "a Deck"),
        ]
        for name, ok, want in checks:
            if not ok:
                raise InvalidPositionError(f"must be {want}", f"options.{name}")

    def minimum(self, players: int) -> int:
        return self.minimum_points if self.minimum_points is not None else MIN_POINTS[players]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = value.to_json() if isinstance(value, Deck) else value
        return out

    @classmethod
    def from_json(cls, data: Any) -> Options:
        if not isinstance(data, dict):
            raise InvalidPositionError("must be an object", "options")
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise InvalidPositionError(f"unknown option(s) {unknown}", "options")
        kwargs = dict(data)
        if "deck" in kwargs:
            kwargs["deck"] = Deck.from_json(kwargs["deck"])
        return cls(**kwargs)


# ---------------------------------------------------------------------------------------------
# Actions


@dataclass(frozen=True)
class FirstPlayer:
    """Chance: this player drew the first DRAGON and goes first."""

    player: int

    def __str__(self) -> str:
        return f"first p{self.player}"


@dataclass(frozen=True)
class DrawWar:
    """Chance: this War card comes off the War Deck (deal, turn draw or Dragon redeal)."""

    card: WarCard

    def __str__(self) -> str:
        return f"war {self.card}"


@dataclass(frozen=True)
class DrawAction:
    """Chance: an Action card of this kind comes off the Action Deck."""

    kind: ActionKind

    def __str__(self) -> str:
        return f"action {self.kind}"


@dataclass(frozen=True)
class PoisonPick:
    """Chance: the Action card the POISON picked at random from the target's hand."""

    kind: ActionKind

    def __str__(self) -> str:
        return f"poisoned {self.kind}"


@dataclass(frozen=True)
class Play:
    """Play a hand card; `target` is the Battlefield card it matches when there is a choice."""

    card: WarCard
    target: WarCard | None = None

    def __str__(self) -> str:
        return f"play {self.card}" + (f" on {self.target}" if self.target else "")


@dataclass(frozen=True)
class Take:
    """The drawn War card matches two Battlefield cards: take this one."""

    card: WarCard

    def __str__(self) -> str:
        return f"take {self.card}"


@dataclass(frozen=True)
class UseAction:
    """Play an Action card in the ACTION phase. A POTION names the card it acts as."""

    kind: ActionKind
    as_kind: ActionKind | None = None
    target: int | None = None
    card: WarCard | None = None

    @property
    def effect(self) -> ActionKind:
        return self.as_kind or self.kind

    def __str__(self) -> str:
        text = f"use {self.kind}"
        if self.as_kind:
            text += f" as {self.as_kind}"
        if self.target is not None:
            text += f" p{self.target}"
        if self.card is not None:
            text += f" {self.card}"
        return text


@dataclass(frozen=True)
class Defend:
    """Answer a THIEF or SWEEP with DEFEND (or with POTION played as DEFEND)."""

    potion: bool = False

    def __str__(self) -> str:
        return "defend potion" if self.potion else "defend"


@dataclass(frozen=True)
class Pass:
    """Play no Action card (ACTION phase) or do not defend (answer window)."""

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True)
class Stop:
    def __str__(self) -> str:
        return "stop"


@dataclass(frozen=True)
class Go:
    def __str__(self) -> str:
        return "go"


Action = (
    FirstPlayer | DrawWar | DrawAction | PoisonPick | Play | Take | UseAction | Defend | Pass
    | Stop | Go
)  # fmt: skip


def _parse_player(word: str) -> int:
    if len(word) >= 2 and word[0] in "pP" and word[1:].isdigit():
        return int(word[1:])
    raise ParseError(f"expected a player like p0, got {word!r}")


def parse_action(text: str) -> Action:
    """Read the notation written by the actions' `__str__`."""
    words = text.strip().split()
    if not words:
        raise ParseError("empty action")
    head, rest = words[0].lower(), words[1:]
    try:
        if head in ("pass", "stop", "go") and not rest:
            return {"pass": Pass(), "stop": Stop(), "go": Go()}[head]
        if head == "first" and len(rest) == 1:
            return FirstPlayer(_parse_player(rest[0]))
        if head == "war" and len(rest) == 1:
            return DrawWar(parse_war_card(rest[0]))
        if head == "action" and len(rest) == 1:
            return DrawAction(parse_action_kind(rest[0]))
        if head == "poisoned" and len(rest) == 1:
            return PoisonPick(parse_action_kind(rest[0]))
        if head == "take" and len(rest) == 1:
            return Take(parse_war_card(rest[0]))
        if head == "play" and len(rest) == 1:
            return Play(parse_war_card(rest[0]))
        if head == "play" and len(rest) == 3 and rest[1].lower() == "on":
            return Play(parse_war_card(rest[0]), parse_war_card(rest[2]))
        if head == "defend" and not rest:
            return Defend()
        if head == "defend" and rest == ["potion"]:
            return Defend(potion=True)
        if head == "use" and rest:
            kind = parse_action_kind(rest[0])
            rest = rest[1:]
            as_kind = None
            if rest and rest[0].lower() == "as":
                if len(rest) < 2:
                    raise ParseError("'as' needs an Action card")
                as_kind = parse_action_kind(rest[1])
                rest = rest[2:]
            target = None
            if rest and rest[0][:1] in "pP":
                target = _parse_player(rest[0])
                rest = rest[1:]
            card = None
            if rest:
                card = parse_war_card(rest[0])
                rest = rest[1:]
            if not rest:
                return UseAction(kind, as_kind, target, card)
    except ParseError as exc:
        raise ParseError(f"{exc} in action {text!r}") from None
    raise ParseError(f"cannot read action {text!r}")


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class HandResult:
    hand: int
    winner: int | None  # None: nobody called STOP before the hands ran out
    points: int
    gems: int
    go_chips: int
    passed_chips: int
    five_crowns: bool

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Outcome:
    winners: tuple[int, ...]
    gems: tuple[int, ...]
    hands: int
    reason: str  # "pot_empty" or "max_hands"

    def to_json(self) -> dict[str, Any]:
        return {
            "winners": list(self.winners),
            "gems": list(self.gems),
            "hands": self.hands,
            "reason": self.reason,
        }


def first_player_odds(players: int) -> list[float]:
    """Chance each player draws the first DRAGON when they draw in turn from a fresh deck."""
    total = sum(ACTION_SUPPLY.values())
    dragons = ACTION_SUPPLY[ActionKind.DRAGON]
    odds = [0.0] * players
    for k in range(total - dragons + 1):
        odds[k % players] += comb(total - 1 - k, dragons - 1) / comb(total, dragons)
    return odds


def _triangular(k: int) -> int:
    return k * (k + 1) // 2


# ---------------------------------------------------------------------------------------------
# State


@dataclass
class _Turn:
    played: WarCard | None = None
    target: WarCard | None = None  # hand card's match, captured at the end of the Battle phase
    mode: str = ""  # "placed", "pending", "done"
    drawn: WarCard | None = None
    instances: list[str] = field(default_factory=list)


@dataclass
class _Pending:
    """A THIEF or SWEEP waiting for answers."""

    effect: ActionKind
    actor: int
    target: int | None
    card: WarCard | None
    affected: list[int]
    responders: list[int]
    protected: list[int]


class GameState:
    """The whole match: hands are played until the Gem pot is empty."""

    def __init__(self, players: int = 2, options: Options | None = None) -> None:
        if players not in DEAL:
            raise InvalidPositionError("Royal Conquest is for 2, 3 or 4 players", "players")
        self.players = players
        self.options = options or Options()
        self.pot = self.options.gem_pot
        self.gems = [0] * players
        self.hand_no = 0
        self.first_player: int | None = None
        self.phase = "first"
        self.current = 0
        self.results: list[HandResult] = []
        self._history: list[dict[str, Any]] = []
        self._reset_cards()

    # -- setup ------------------------------------------------------------------------------

    def _reset_cards(self) -> None:
        n = self.players
        self.war_deck: set[WarCard] = set(ALL_WAR_CARDS)
        self.battlefield: list[WarCard] = []
        self.hands: list[list[WarCard]] = [[] for _ in range(n)]
        self.stacks: list[list[WarCard]] = [[] for _ in range(n)]
        self.action_deck: Counter[ActionKind] = Counter(ACTION_SUPPLY)
        self.action_discard: Counter[ActionKind] = Counter()
        self.action_hands: list[Counter[ActionKind]] = [Counter() for _ in range(n)]
        self.go_chips = [0] * n
        self.go_score: list[int | None] = [None] * n
        self.queue: list[tuple[str, int]] = []
        self.turn = _Turn()
        self.pending: _Pending | None = None
        self.revealed: list[dict[str, Any]] = []
        self.redeals = 0

    def _start_hand(self) -> None:
        assert self.first_player is not None
        self._reset_cards()
        war, act, field_cards = DEAL[self.players]
        order = [(self.first_player + i) % self.players for i in range(self.players)]
        self.queue = [("bf", -1)] * field_cards
        self.queue += [("hand", p) for _ in range(war) for p in order]
        self.queue += [("ahand", p) for _ in range(act) for p in order]
        self.current = self.first_player
        self.phase = "deal"

    # -- queries ----------------------------------------------------------------------------

    def minimum(self) -> int:
        return self.options.minimum(self.players)

    def score(self, player: int) -> Score:
        deck = self.options.deck
        return score_tokens((deck.token(c) for c in self.stacks[player]),
                            self.options.triple_grouping)  # fmt: skip

    def call_threshold(self, player: int) -> int:
        """Points the player needs to make a call (minimum, and one more than at their GO)."""
        last = self.go_score[player]
        return max(self.minimum(), last + 1) if last is not None else self.minimum()

    def is_terminal(self) -> bool:
        return self.phase == "over"

    def is_chance_node(self) -> bool:
        return self.phase == "first" or bool(self.queue)

    def current_player(self) -> int:
        if self.is_terminal():
            return TERMINAL
        if self.is_chance_node():
            return CHANCE
        if self.phase == "respond":
            assert self.pending is not None
            return self.pending.responders[0]
        return self.current

    def outcome(self) -> Outcome | None:
        if not self.is_terminal():
            return None
        best = max(self.gems)
        reason = "pot_empty" if self.pot == 0 else "max_hands"
        winners = tuple(p for p in range(self.players) if self.gems[p] == best)
        return Outcome(winners, tuple(self.gems), self.hand_no, reason)

    def frozen_arms(self) -> list[int]:
        counts = Counter(c.arms for c in self.battlefield)
        return sorted(a for a, k in counts.items() if k >= 3)

    def _can_defend(self, player: int) -> bool:
        hand = self.action_hands[player]
        return hand[ActionKind.DEFEND] > 0 or hand[ActionKind.POTION] > 0

    def chance_outcomes(self) -> list[tuple[Action, float]]:
        """The possible outcomes of the chance node and their probabilities."""
        if not self.is_chance_node():
            return []
        if self.phase == "first":
            odds = first_player_odds(self.players)
            return [(FirstPlayer(p), odds[p]) for p in range(self.players)]
        kind, player = self.queue[0]
        if kind in ("ahand", "bonus"):
            total = sum(self.action_deck.values())
            return [(DrawAction(k), n / total) for k, n in sorted(self.action_deck.items()) if n]
        if kind == "poison":
            hand = self.action_hands[player]
            total = sum(hand.values())
            return [(PoisonPick(k), n / total) for k, n in sorted(hand.items()) if n]
        cards = sorted(self.war_deck, key=_KEY)
        return [(DrawWar(c), 1 / len(cards)) for c in cards]

    def legal_actions(self) -> list[Action]:
        if self.is_terminal():
            return []
        if self.is_chance_node():
            return [a for a, _ in self.chance_outcomes()]
        me = self.current
        if self.phase == "play":
            out: list[Action] = []
            for card in sorted(self.hands[me], key=_KEY):
                group = [c for c in self.battlefield if c.arms == card.arms]
                if len(group) in (1, 2):
                    out.extend(Play(card, t) for t in sorted(group, key=_KEY))
                else:
                    out.append(Play(card))
            return out
        if self.phase == "take":
            drawn = self.turn.drawn
            assert drawn is not None
            return [Take(c) for c in sorted(self.battlefield, key=_KEY)
                    if c.arms == drawn.arms and c != drawn]  # fmt: skip
        if self.phase == "action":
            return [Pass(), *self._action_uses(me)]
        if self.phase == "respond":
            assert self.pending is not None
            who = self.pending.responders[0]
            hand = self.action_hands[who]
            out = [Pass()]
            if hand[ActionKind.DEFEND]:
                out.append(Defend())
            if hand[ActionKind.POTION]:
                out.append(Defend(potion=True))
            return out
        if self.phase == "call":
            if self.score(me).must_stop:
                return [Stop()]
            return [Stop(), Go()]
        raise AssertionError(f"no decision in phase {self.phase}")  # pragma: no cover

    def _action_uses(self, me: int) -> list[Action]:
        hand = self.action_hands[me]
        others = [p for p in range(self.players) if p != me]
        deck = self.options.deck
        out: list[Action] = []
        effects: list[tuple[ActionKind, ActionKind | None]] = []
        for kind in (ActionKind.THIEF, ActionKind.SWEEP, ActionKind.POISON, ActionKind.REVEAL,
                     ActionKind.DRAGON):  # fmt: skip
            if hand[kind]:
                effects.append((kind, None))
            if hand[ActionKind.POTION]:
                effects.append((ActionKind.POTION, kind))
        for kind, as_kind in effects:
            effect = as_kind or kind
            if effect == ActionKind.THIEF:
                for p in others:
                    for c in sorted(self.stacks[p], key=_KEY):
                        if deck.token(c) in SPECIAL_TOKENS:
                            out.append(UseAction(kind, as_kind, p, c))
            elif effect == ActionKind.SWEEP:
                if any(self._castles(p) for p in others):
                    out.append(UseAction(kind, as_kind))
            elif effect == ActionKind.POISON:
                out.extend(UseAction(kind, as_kind, p) for p in others
                           if sum(self.action_hands[p].values()))  # fmt: skip
            elif effect == ActionKind.REVEAL:
                out.extend(UseAction(kind, as_kind, p) for p in others)
            elif effect == ActionKind.DRAGON and self.battlefield:
                out.append(UseAction(kind, as_kind))
        return out

    def _castles(self, player: int) -> list[WarCard]:
        deck = self.options.deck
        return sorted((c for c in self.stacks[player] if deck.token(c) == Token.CASTLE), key=_KEY)

    # -- apply / undo -----------------------------------------------------------------------

    def normalize(self, action: Action) -> Action:
        """Fill in what the action leaves implicit: the only Battlefield card a hand card can
        match, the only card a drawn card can take."""
        if isinstance(action, Play) and action.target is None and self.phase == "play":
            group = [c for c in self.battlefield if c.arms == action.card.arms]
            if len(group) == 1:
                return Play(action.card, group[0])
        return action

    def apply(self, action: Action) -> None:
        action = self.normalize(action)
        if not self._is_legal(action):
            raise IllegalActionError(f"{action} is not legal in phase {self.phase!r}")
        snapshot = self._snapshot()
        try:
            self._apply(action)
        except Exception:
            self._restore(snapshot)
            raise
        self._history.append(snapshot)

    def apply_text(self, text: str) -> Action:
        action = parse_action(text)
        self.apply(action)
        return action

    def undo(self) -> None:
        if not self._history:
            raise IllegalActionError("nothing to undo")
        self._restore(self._history.pop())

    def _snapshot(self) -> tuple[Any, ...]:
        """Copies of every mutable field (cheaper than to_json; used by apply/undo)."""
        turn = self.turn
        pending = self.pending
        return (
            self.phase, self.current, self.first_player, self.hand_no, self.pot, list(self.gems),
            set(self.war_deck), list(self.battlefield), [list(h) for h in self.hands],
            [list(x) for x in self.stacks], Counter(self.action_deck),
            Counter(self.action_discard), [Counter(h) for h in self.action_hands],
            list(self.go_chips), list(self.go_score), list(self.queue),
            _Turn(turn.played, turn.target, turn.mode, turn.drawn, list(turn.instances)),
            None if pending is None else _Pending(
                pending.effect, pending.actor, pending.target, pending.card,
                list(pending.affected), list(pending.responders), list(pending.protected),
            ),
            list(self.revealed), self.redeals, list(self.results),
        )  # fmt: skip

    def _restore(self, snap: tuple[Any, ...]) -> None:
        (
            self.phase, self.current, self.first_player, self.hand_no, self.pot, self.gems,
            self.war_deck, self.battlefield, self.hands, self.stacks, self.action_deck,
            self.action_discard, self.action_hands, self.go_chips, self.go_score, self.queue,
            self.turn, self.pending, self.revealed, self.redeals, self.results,
        ) = snap  # fmt: skip
        # the snapshot may be restored only once, so its objects can be taken over as they are

    def _is_legal(self, action: Action) -> bool:
        if self.is_terminal():
            return False
        if self.is_chance_node():
            if self.phase == "first":
                return isinstance(action, FirstPlayer) and 0 <= action.player < self.players
            kind, player = self.queue[0]
            if kind in ("ahand", "bonus"):
                return isinstance(action, DrawAction) and self.action_deck[action.kind] > 0
            if kind == "poison":
                return isinstance(action, PoisonPick) and self.action_hands[player][action.kind] > 0
            return isinstance(action, DrawWar) and action.card in self.war_deck
        return action in self.legal_actions()

    def _apply(self, action: Action) -> None:
        if isinstance(action, FirstPlayer):
            self.first_player = action.player
            self._start_hand()
        elif isinstance(action, DrawWar):
            self._draw_war(action.card)
        elif isinstance(action, DrawAction):
            kind, player = self.queue.pop(0)
            self.action_deck[action.kind] -= 1
            self.action_hands[player][action.kind] += 1
        elif isinstance(action, PoisonPick):
            _, player = self.queue.pop(0)
            self.action_hands[player][action.kind] -= 1
            self.action_discard[action.kind] += 1
        elif isinstance(action, Play):
            self._play(action)
        elif isinstance(action, Take):
            self._capture([action.card, self._drawn()])
            self._finish_battle()
        elif isinstance(action, UseAction):
            self._use(action)
        elif isinstance(action, Defend):
            self._defend(action)
        elif isinstance(action, Pass):
            if self.phase == "respond":
                assert self.pending is not None
                self.pending.responders.pop(0)
            else:
                self.phase = "call"
        elif isinstance(action, Go):
            self.go_chips[self.current] += 1
            self.go_score[self.current] = self.score(self.current).points
            self._next_turn()
        elif isinstance(action, Stop):
            self._settle(self.current)
        self._advance()

    def _drawn(self) -> WarCard:
        assert self.turn.drawn is not None
        return self.turn.drawn

    # -- battle -----------------------------------------------------------------------------

    def _draw_war(self, card: WarCard) -> None:
        kind, player = self.queue.pop(0)
        self.war_deck.discard(card)
        if kind == "hand":
            self.hands[player].append(card)
            return
        self.battlefield.append(card)
        if kind in ("bf", "dragon"):
            if not self.queue or self.queue[0][0] != kind:
                self._check_triple(kind)
            return
        # kind == "turn": the War Deck card of the Battle phase
        turn = self.turn
        turn.drawn = card
        played = turn.played
        assert played is not None
        if card.arms == played.arms:
            if turn.mode == "placed":
                self._capture([played, card])
                turn.instances.append(OWN_MATCH)
            else:  # "pending": hand and deck card match the same card
                group = [c for c in self.battlefield if c.arms == card.arms]
                if len(group) == 4:
                    self._capture(group)
                # else: the three cards stay frozen until the 4th is played
            turn.target = None
            self._finish_battle()
            return
        if turn.mode == "pending":
            assert turn.target is not None
            self._capture([turn.target, played])
            turn.target = None
        group = [c for c in self.battlefield if c.arms == card.arms and c != card]
        if len(group) >= 3:
            self._capture([*group, card])
            if self.options.drawn_card_unfreezes:
                turn.instances.append(UNFREEZE)
        elif len(group) == 2:
            self.phase = "take"
            return
        elif len(group) == 1:
            self._capture([group[0], card])
        self._finish_battle()

    def _check_triple(self, kind: str) -> None:
        if not self.options.redeal_on_triple:
            return
        n = len(self.battlefield)
        if not any(k >= 3 for k in Counter(c.arms for c in self.battlefield).values()):
            return
        pool = Counter(c.arms for c in self.war_deck | set(self.battlefield))
        if sum(min(k, 2) for k in pool.values()) < n:
            return  # no deal without a triple exists: keep it (the triple is frozen)
        self.war_deck |= set(self.battlefield)
        self.battlefield = []
        self.queue[:0] = [(kind, -1)] * n
        self.redeals += 1

    def _play(self, action: Play) -> None:
        me = self.current
        card = action.card
        group = [c for c in self.battlefield if c.arms == card.arms]
        self.hands[me].remove(card)
        self.battlefield.append(card)
        self.turn = _Turn(played=card)
        if len(group) >= 3:
            self._capture([*group, card])
            self.turn.instances.append(UNFREEZE)
            self.turn.mode = "done"
        elif group:
            self.turn.target = action.target
            self.turn.mode = "pending"
        else:
            self.turn.mode = "placed"
        if self.war_deck:
            self.queue = [("turn", -1)]
            self.phase = "draw"
        else:
            self.turn.drawn = None
            if self.turn.mode == "pending":
                assert self.turn.target is not None
                self._capture([self.turn.target, card])
                self.turn.target = None
            self._finish_battle()

    def _capture(self, cards: list[WarCard]) -> None:
        deck = self.options.deck
        for c in cards:
            self.battlefield.remove(c)
        self.stacks[self.current].extend(cards)
        if any(deck.has_draw(c) for c in cards):
            self.turn.instances.append(DRAW_SYMBOL)

    def _finish_battle(self) -> None:
        if not self.battlefield:
            self.turn.instances.append(CLEAR)
        self.queue = [("bonus", self.current)] * len(self.turn.instances)
        self.phase = "bonus"

    # -- action phase -----------------------------------------------------------------------

    def _use(self, action: UseAction) -> None:
        me = self.current
        self.action_hands[me][action.kind] -= 1
        self.action_discard[action.kind] += 1
        effect = action.effect
        if effect == ActionKind.THIEF:
            assert action.target is not None
            target = action.target
            self.pending = _Pending(effect, me, target, action.card, [target], [], [])
        elif effect == ActionKind.SWEEP:
            order = [(me + i) % self.players for i in range(1, self.players)]
            affected = [p for p in order if self._castles(p)]
            self.pending = _Pending(effect, me, None, None, affected, [], [])
        elif effect == ActionKind.REVEAL:
            assert action.target is not None
            hand = self.action_hands[action.target]
            cards = sorted(str(k) for k in hand.elements())
            self.revealed.append({"viewer": me, "target": action.target, "cards": cards})
            self.phase = "call"
            return
        elif effect == ActionKind.POISON:
            assert action.target is not None
            self.queue = [("poison", action.target)]
            self.phase = "poison"
            return
        elif effect == ActionKind.DRAGON:
            n = len(self.battlefield)
            self.war_deck |= set(self.battlefield)
            self.battlefield = []
            self.queue = [("dragon", -1)] * n
            self.phase = "dragon"
            return
        assert self.pending is not None
        self.pending.responders = list(self.pending.affected)
        self.phase = "respond"

    def _defend(self, action: Defend) -> None:
        pending = self.pending
        assert pending is not None
        who = pending.responders.pop(0)
        kind = ActionKind.POTION if action.potion else ActionKind.DEFEND
        self.action_hands[who][kind] -= 1
        self.action_discard[kind] += 1
        if pending.effect == ActionKind.THIEF or self.options.defend_sweep == "whole":
            pending.protected = list(pending.affected)
            pending.responders = []
        else:
            pending.protected.append(who)

    def _resolve_pending(self) -> None:
        pending = self.pending
        assert pending is not None
        me = pending.actor
        for p in pending.affected:
            if p in pending.protected:
                continue
            if pending.effect == ActionKind.THIEF:
                assert pending.card is not None
                card = pending.card
            else:
                card = self._castles(p)[0]
            self.stacks[p].remove(card)
            self.stacks[me].append(card)
            last = self.go_score[p]
            if self.options.go_reset_below_minimum and last is not None:
                if self.score(p).points < self.minimum():
                    self.go_score[p] = self.minimum() - 1
        self.pending = None
        self.phase = "call"

    # -- call phase, hand end ---------------------------------------------------------------

    def _next_turn(self) -> None:
        self.turn = _Turn()
        self.current = (self.current + 1) % self.players
        if not self.hands[self.current]:
            self._settle(None)
        else:
            self.phase = "play"

    def _settle(self, winner: int | None) -> None:
        opts = self.options
        if winner is None:
            result = HandResult(self.hand_no, None, 0, 0, 0, 0, False)
            if opts.after_void_hand == "next":
                assert self.first_player is not None
                self.first_player = (self.first_player + 1) % self.players
        else:
            score = self.score(winner)
            own = self.go_chips[winner]
            passed = sum(self.go_chips) - own
            chips = own + passed if opts.passed_go_chips == "count" else own
            bonus = _triangular(chips) if opts.go_bonus == "triangular" else chips
            owed = self.players + bonus + (1 if score.must_stop else 0)
            gems = min(owed, self.pot)
            self.pot -= gems
            self.gems[winner] += gems
            result = HandResult(self.hand_no, winner, score.points, gems, own, passed,
                                score.must_stop)  # fmt: skip
            self.first_player = winner
        self.results.append(result)
        self.hand_no += 1
        if self.pot == 0 or (opts.max_hands is not None and self.hand_no >= opts.max_hands):
            self.phase = "over"
            self.queue = []
            self.turn = _Turn()
            return
        self._start_hand()

    def _advance(self) -> None:
        """Run the steps no one chooses, until a decision, a chance node or the end."""
        while True:
            if self.queue:
                kind, _ = self.queue[0]
                if kind in ("ahand", "bonus") and not self.action_deck:
                    if self.action_discard:  # ASSUMPTION: reshuffle the discard pile
                        self.action_deck = self.action_discard
                        self.action_discard = Counter()
                    else:
                        self.queue.pop(0)
                        continue
                return
            if self.phase == "deal":
                self.phase = "play"
            elif self.phase == "bonus":
                self.phase = "action"
            elif self.phase in ("poison", "dragon"):
                self.phase = "call"
                continue
            elif self.phase == "respond":
                assert self.pending is not None
                responders = self.pending.responders
                while responders and not self._can_defend(responders[0]):
                    responders.pop(0)
                if not responders:
                    self._resolve_pending()
                    continue
            elif self.phase == "call":
                score = self.score(self.current)
                if not score.must_stop and score.points < self.call_threshold(self.current):
                    self._next_turn()
                    continue
            return

    # -- serialisation ----------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        turn = self.turn
        pending = self.pending
        return {
            "game": "royal_conquest",
            "version": 1,
            "players": self.players,
            "options": self.options.to_json(),
            "phase": self.phase,
            "current": self.current,
            "first_player": self.first_player,
            "hand": self.hand_no,
            "pot": self.pot,
            "gems": list(self.gems),
            "war_deck": [str(c) for c in sorted(self.war_deck, key=_KEY)],
            "battlefield": [str(c) for c in self.battlefield],
            "hands": [[str(c) for c in h] for h in self.hands],
            "stacks": [[str(c) for c in s] for s in self.stacks],
            "action_deck": _counter_json(self.action_deck),
            "action_discard": _counter_json(self.action_discard),
            "action_hands": [_counter_json(h) for h in self.action_hands],
            "go_chips": list(self.go_chips),
            "go_score": list(self.go_score),
            "queue": [[k, p] for k, p in self.queue],
            "turn": {
                "played": _card_or_none(turn.played),
                "target": _card_or_none(turn.target),
                "mode": turn.mode,
                "drawn": _card_or_none(turn.drawn),
                "instances": list(turn.instances),
            },
            "pending": None
            if pending is None
            else {
                "effect": str(pending.effect),
                "actor": pending.actor,
                "target": pending.target,
                "card": _card_or_none(pending.card),
                "affected": list(pending.affected),
                "responders": list(pending.responders),
                "protected": list(pending.protected),
            },
            "revealed": [dict(r, cards=list(r["cards"])) for r in self.revealed],
            "redeals": self.redeals,
            "results": [r.to_json() for r in self.results],
        }

    @classmethod
    def from_json(cls, data: Any) -> GameState:
        if not isinstance(data, dict):
            raise InvalidPositionError("a state must be a JSON object", "state")
        if data.get("game") != "royal_conquest":
            raise InvalidPositionError("not a Royal Conquest state", "game")
        if data.get("version") != 1:
            raise InvalidPositionError("unsupported version (expected 1)", "version")
        players = data.get("players")
        if players not in DEAL or isinstance(players, bool):
            raise InvalidPositionError("must be 2, 3 or 4", "players")
        options = Options.from_json(data.get("options", {}))
        state = cls(players, options)
        state._load(data)
        state._history = []
        return state

    def _load(self, data: dict[str, Any]) -> None:
        try:
            self._load_unchecked(data)
        except InvalidPositionError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise InvalidPositionError(f"malformed state ({exc})", "state") from None
        self._validate()

    def _load_unchecked(self, d: dict[str, Any]) -> None:
        n = self.players
        self.phase = _choice(d["phase"], PHASES, "phase")
        self.current = _player(d["current"], n, "current")
        fp = d["first_player"]
        self.first_player = None if fp is None else _player(fp, n, "first_player")
        self.hand_no = _nonneg(d["hand"], "hand")
        self.pot = _nonneg(d["pot"], "pot")
        self.gems = _int_list(d["gems"], n, "gems")
        self.war_deck = set(_cards(d["war_deck"], "war_deck"))
        self.battlefield = _cards(d["battlefield"], "battlefield")
        self.hands = [_cards(h, f"hands[{i}]") for i, h in enumerate(_list(d["hands"], n, "hands"))]
        self.stacks = [
            _cards(s, f"stacks[{i}]") for i, s in enumerate(_list(d["stacks"], n, "stacks"))
        ]
        self.action_deck = _counter(d["action_deck"], "action_deck")
        self.action_discard = _counter(d["action_discard"], "action_discard")
        self.action_hands = [
            _counter(h, f"action_hands[{i}]")
            for i, h in enumerate(_list(d["action_hands"], n, "action_hands"))
        ]
        self.go_chips = _int_list(d["go_chips"], n, "go_chips")
        scores = _list(d["go_score"], n, "go_score")
        self.go_score = [None if s is None else _nonneg(s, "go_score") for s in scores]
        queue = []
        for i, item in enumerate(_list(d["queue"], None, "queue")):
            if not isinstance(item, list) or len(item) != 2:
                raise InvalidPositionError("must be [kind, player]", f"queue[{i}]")
            kind = _choice(item[0], QUEUE_KINDS, f"queue[{i}]")
            p = item[1]
            if not isinstance(p, int) or not -1 <= p < n:
                raise InvalidPositionError("bad player", f"queue[{i}]")
            queue.append((kind, p))
        self.queue = queue
        t = d["turn"]
        if not isinstance(t, dict):
            raise InvalidPositionError("must be an object", "turn")
        instances = _list(t["instances"], None, "turn.instances")
        for x in instances:
            _choice(x, INSTANCES, "turn.instances")
        self.turn = _Turn(
            played=_card_opt(t["played"], "turn.played"),
            target=_card_opt(t["target"], "turn.target"),
            mode=_choice(t["mode"], ("", "placed", "pending", "done"), "turn.mode"),
            drawn=_card_opt(t["drawn"], "turn.drawn"),
            instances=list(instances),
        )
        p = d["pending"]
        if p is None:
            self.pending = None
        else:
            if not isinstance(p, dict):
                raise InvalidPositionError("must be an object or null", "pending")
            effect = _choice(p["effect"], ("thief", "sweep"), "pending.effect")
            target = p["target"]
            self.pending = _Pending(
                ActionKind(effect),
                _player(p["actor"], n, "pending.actor"),
                None if target is None else _player(target, n, "pending.target"),
                _card_opt(p["card"], "pending.card"),
                [_player(x, n, "pending.affected") for x in p["affected"]],
                [_player(x, n, "pending.responders") for x in p["responders"]],
                [_player(x, n, "pending.protected") for x in p["protected"]],
            )
        revealed = []
        for i, r in enumerate(_list(d["revealed"], None, "revealed")):
            if not isinstance(r, dict):
                raise InvalidPositionError("must be an object", f"revealed[{i}]")
            revealed.append(
                {
                    "viewer": _player(r["viewer"], n, f"revealed[{i}].viewer"),
                    "target": _player(r["target"], n, f"revealed[{i}].target"),
                    "cards": [str(parse_action_kind(str(k))) for k in r["cards"]],
                }
            )
        self.revealed = revealed
        self.redeals = _nonneg(d["redeals"], "redeals")
        results = []
        for i, r in enumerate(_list(d["results"], None, "results")):
            if not isinstance(r, dict):
                raise InvalidPositionError("must be an object", f"results[{i}]")
            winner = r["winner"]
            results.append(
                HandResult(
                    hand=_nonneg(r["hand"], f"results[{i}].hand"),
                    winner=None if winner is None else _player(winner, n, f"results[{i}].winner"),
                    points=_nonneg(r["points"], f"results[{i}].points"),
                    gems=_nonneg(r["gems"], f"results[{i}].gems"),
                    go_chips=_nonneg(r["go_chips"], f"results[{i}].go_chips"),
                    passed_chips=_nonneg(r["passed_chips"], f"results[{i}].passed_chips"),
                    five_crowns=bool(r["five_crowns"]),
                )
            )
        self.results = results

    def _validate(self) -> None:
        """Conservation and phase consistency."""
        places = [self.war_deck, self.battlefield, *self.hands, *self.stacks]
        seen: Counter[WarCard] = Counter()
        for place in places:
            seen.update(place)
        doubles = sorted(str(c) for c, k in seen.items() if k > 1)
        if doubles:
            raise InvalidPositionError(f"cards in two places: {', '.join(doubles)}", "cards")
        missing = sorted(str(c) for c in ALL_WAR_CARDS if c not in seen)
        if missing:
            raise InvalidPositionError(f"cards missing: {', '.join(missing)}", "cards")
        total: Counter[ActionKind] = self.action_deck + self.action_discard
        for h in self.action_hands:
            total += h
        for kind, want in ACTION_SUPPLY.items():
            if total[kind] != want:
                raise InvalidPositionError(
                    f"{want} {kind} cards exist, the state holds {total[kind]}", "action_cards"
                )
        if self.pot + sum(self.gems) != self.options.gem_pot:
            raise InvalidPositionError(f"pot + gems must be {self.options.gem_pot}", "gems")
        chance_phases = ("deal", "draw", "bonus", "poison", "dragon")
        if self.queue and self.phase not in chance_phases:
            raise InvalidPositionError(f"no draws can wait in phase {self.phase}", "queue")
        if self.phase in ("deal", "draw", "poison", "dragon") and not self.queue:
            raise InvalidPositionError(f"phase {self.phase} needs a draw in the queue", "queue")
        if self.queue:
            kind, who = self.queue[0]
            if kind in ("ahand", "bonus") and not self.action_deck and not self.action_discard:
                raise InvalidPositionError("an Action card is due but none is left", "queue")
            if kind == "poison" and (who < 0 or not self.action_hands[who]):
                raise InvalidPositionError("the poisoned player holds no Action card", "queue")
            if kind in ("bf", "hand", "turn", "dragon") and not self.war_deck:
                raise InvalidPositionError("a War card is due but the deck is empty", "queue")
        if self.phase == "first" and self.first_player is not None:
            raise InvalidPositionError("first player already known", "first_player")
        if self.phase not in ("first", "over") and self.first_player is None:
            raise InvalidPositionError("must be set after the Dragon draw", "first_player")
        if self.phase == "respond":
            if self.pending is None or not self.pending.responders:
                raise InvalidPositionError("phase respond needs responders", "pending")
        elif self.pending is not None:
            raise InvalidPositionError(f"nothing is pending in phase {self.phase}", "pending")
        if self.phase in ("draw", "take") and self.turn.played is None:
            raise InvalidPositionError(f"phase {self.phase} needs a played card", "turn.played")
        if self.phase == "take":
            drawn = self.turn.drawn
            if drawn is None or drawn not in self.battlefield:
                raise InvalidPositionError("the drawn card must be on the Battlefield", "turn")
            if len([c for c in self.battlefield if c.arms == drawn.arms]) != 3:
                raise InvalidPositionError("take needs two cards to choose from", "turn")
        if self.turn.mode == "pending" and self.phase == "draw":
            t = self.turn.target
            if t is None or t not in self.battlefield or t.arms != self.turn.played.arms:
                raise InvalidPositionError("the hand card's match must be on the Battlefield",
                                           "turn.target")  # fmt: skip
        if self.phase == "respond":
            assert self.pending is not None
            if not self._can_defend(self.pending.responders[0]):
                raise InvalidPositionError("the player asked holds no Defend or Potion",
                                           "pending.responders")  # fmt: skip
        if self.phase == "call":
            score = self.score(self.current)
            if not score.must_stop and score.points < self.call_threshold(self.current):
                raise InvalidPositionError("the player has too few points to call", "phase")
        if self.phase == "play" and not self.hands[self.current]:
            raise InvalidPositionError("the player to play has no cards", "hands")

    def view(self, player: int) -> dict[str, Any]:
        """What `player` may see: own hands, everything face up, counts of the rest."""
        if not 0 <= player < self.players:
            raise InvalidPositionError(f"no player {player}", "player")
        data = self.to_json()
        data["viewer"] = player
        data["war_deck"] = len(self.war_deck)
        data["action_deck"] = sum(self.action_deck.values())
        data["hands"] = [h if p == player else len(h) for p, h in enumerate(data["hands"])]
        data["action_hands"] = [
            h if p == player else sum(self.action_hands[p].values())
            for p, h in enumerate(data["action_hands"])
        ]
        data["revealed"] = [r for r in data["revealed"] if r["viewer"] == player]
        return data

    def clone(self) -> GameState:
        other = GameState.from_json(self.to_json())
        other._history = copy.deepcopy(self._history)  # snapshots are taken over by undo
        return other

    def sample_chance(self, rng: random.Random) -> Action:
        outcomes = self.chance_outcomes()
        actions = [a for a, _ in outcomes]
        weights = [w for _, w in outcomes]
        return rng.choices(actions, weights)[0]


# ---------------------------------------------------------------------------------------------
# JSON helpers


def _counter_json(c: Counter[ActionKind]) -> dict[str, int]:
    return {str(k): c[k] for k in ActionKind if c[k]}


def _card_or_none(card: WarCard | None) -> str | None:
    return None if card is None else str(card)


def _choice(value: Any, allowed: tuple[str, ...], name: str) -> str:
    if value not in allowed:
        raise InvalidPositionError(f"{value!r} is not one of {allowed}", name)
    return value


def _nonneg(value: Any, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise InvalidPositionError(f"must be an int >= 0, got {value!r}", name)
    return value


def _player(value: Any, n: int, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < n:
        raise InvalidPositionError(f"must be a player 0..{n - 1}, got {value!r}", name)
    return value


def _list(value: Any, n: int | None, name: str) -> list[Any]:
    if not isinstance(value, list) or (n is not None and len(value) != n):
        want = "a list" if n is None else f"a list of {n}"
        raise InvalidPositionError(f"must be {want}", name)
    return value


def _int_list(value: Any, n: int, name: str) -> list[int]:
    return [_nonneg(v, name) for v in _list(value, n, name)]


def _cards(value: Any, name: str) -> list[WarCard]:
    out = []
    for v in _list(value, None, name):
        try:
            out.append(parse_war_card(str(v)))
        except ParseError as exc:
            raise InvalidPositionError(str(exc), name) from None
    return out


def _card_opt(value: Any, name: str) -> WarCard | None:
    if value is None:
        return None
    return _cards([value], name)[0]


def _counter(value: Any, name: str) -> Counter[ActionKind]:
    if not isinstance(value, dict):
        raise InvalidPositionError("must be an object {kind: count}", name)
    out: Counter[ActionKind] = Counter()
    for k, v in value.items():
        try:
            kind = parse_action_kind(str(k))
        except ParseError as exc:
            raise InvalidPositionError(str(exc), name) from None
        out[kind] = _nonneg(v, name)
    return +out


# ---------------------------------------------------------------------------------------------
# Self-play


def random_policy(state: GameState, rng: random.Random) -> Action:
    return rng.choice(state.legal_actions())


def play_random_game(
    players: int = 2,
    seed: int | None = None,
    options: Options | None = None,
    max_steps: int = 200_000,
) -> GameState:
    """Self-play with uniformly random players and a seeded shuffler; returns the final state."""
    rng = random.Random(seed)
    state = GameState(players, options)
    steps = 0
    while not state.is_terminal():
        if steps >= max_steps:
            raise RulesError(f"game did not end in {max_steps} steps")
        if state.is_chance_node():
            action = state.sample_chance(rng)
        else:
            action = random_policy(state, rng)
        state.apply(action)
        steps += 1
    return state
