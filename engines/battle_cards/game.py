"""Battle Cards state machine: the basic game (Trumps) and Battle Mode.

One `GameState` class drives both modes. Every random event is an explicit chance node: the
only randomness in the game is which card comes off the top of a shuffled pile, so a chance
node's outcomes are `Draw(card)` actions, one per card still in the shuffled part of the pile,
all equally likely. A seeded `random.Random` (self-play) or the table (a player reports the
card) supplies the outcome.

Piles are modelled as an unordered *shuffled part* on top and an ordered *known part* below
(cards put "on the bottom of the draw deck" are known and in order). Drawing takes from the
shuffled part while it lasts (a chance node), then from the known part (automatic).
"""

from __future__ import annotations

import copy
import json
import pickle
import random
from dataclasses import asdict, dataclass, fields
from typing import Any

from engines.errors import IllegalActionError, InvalidPositionError, ParseError

from .cards import BATTLE_CATEGORIES, CATEGORIES, Card, CardSet, Category, parse_category
from .resolve import last_place, resolve_matchup, resolve_round, resolve_trumps

STATE_FORMAT = "royal-table/battle-cards/state/v1"
MODES = ("trumps", "battle")

# ---------------------------------------------------------------------------------------------
# Actions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Draw:
    """Chance outcome: `card` is the card that comes off the top of the shuffled pile."""

    card: str

    def __str__(self) -> str:
        return f"draw:{self.card}"


@dataclass(frozen=True)
class Pick:
    """Battle Mode draft: take `card` from the table into the squad."""

    card: str

    def __str__(self) -> str:
        return f"pick:{self.card}"


@dataclass(frozen=True)
class Place:
    """Battle Mode: put `card` face down in the next match-up slot (slot 1 is revealed first)."""

    card: str

    def __str__(self) -> str:
        return f"place:{self.card}"


@dataclass(frozen=True)
class Decide:
    """Battle Mode sudden-death decider: play `card`, one of the unused cards in hand."""

    card: str

    def __str__(self) -> str:
        return f"decide:{self.card}"


@dataclass(frozen=True)
class ChooseCategory:
    """Choose the category of the round (Trumps) or of the next round (Battle Mode)."""

    category: Category

    def __str__(self) -> str:
        return f"category:{self.category.value}"


Action = Draw | Pick | Place | Decide | ChooseCategory
_ACTION_KINDS: dict[str, type] = {
    "draw": Draw,
    "pick": Pick,
    "place": Place,
    "decide": Decide,
    "category": ChooseCategory,
    "cat": ChooseCategory,
}


def parse_action(text: str) -> Action:
    """Read an action in the notation of `str(action)`: 'pick:GOBSCO', 'category:magic'.

    A space may replace the colon and case does not matter ('Place gobsco', 'cat mag').
    """
    if not isinstance(text, str):
        raise ParseError(f"an action must be a string, got {text!r}")
    raw = text.strip()
    sep = ":" if ":" in raw else " "
    kind, _, arg = raw.partition(sep)
    kind, arg = kind.strip().lower(), arg.strip()
    if kind not in _ACTION_KINDS:
        raise ParseError(
            f"unknown action {text!r} (expected draw:, pick:, place:, decide: or category:)"
        )
    if not arg:
        raise ParseError(f"action {text!r} is missing its argument")
    cls = _ACTION_KINDS[kind]
    if cls is ChooseCategory:
        return ChooseCategory(parse_category(arg))
    return cls(arg.upper())


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------

_CHOICES: dict[str, tuple[str, ...]] = {
    "trumps_tie_pot": ("all", "tied"),
    "trumps_tie_chooser": ("same", "first_tied"),
    "draft_order": ("rotate", "snake"),
    "category_card_tie": ("first_listed", "chooser", "redraw"),
    "matchup_full_tie": ("void", "all_lose"),
    "decider_losers": ("deck", "hand"),
    "reshuffle": ("auto", "always", "never"),
    "short_deck": ("reject", "play_on"),
}


@dataclass(frozen=True)
class Options:
    """Rule options. The defaults are the printed rules plus the documented natural reading of
    every point they leave open (see README.md, "Open points")."""

    # --- basic game (Trumps) ---
    trumps_round_limit: int | None = None  # end after this many rounds; most cards wins
    trumps_tie_pot: str = "all"  # "all": every card of a tied round goes to the centre;
    #   "tied": only the tied players' cards, the others go back under their own packs
    trumps_tie_chooser: str = "same"  # who chooses after a tie: "same" player, or "first_tied"
    # --- Battle Mode ---
    squad_size: int = 6
    squad_value_limit: int = 30
    hand_size: int = 7  # squad + the hidden extra card; refill target after each round
    matchups: int = 5
    matchups_to_win: int = 3
    rounds_to_win: int = 3
    draft_order: str = "rotate"  # "rotate": 1,2,3,1,2,3...; "snake": 1,2,3,3,2,1...
    category_card_tie: str = "first_listed"  # equal highest categories on the category card
    value_category: bool = False  # may Value be a Battle Mode round category?
    matchup_full_tie: str = "void"  # tie after Size and Value: "void" (cards go home) / "all_lose"
    decider_losers: str = "deck"  # losing sudden-death cards: "deck" bottom, or back to "hand"
    reshuffle: str = "auto"  # reshuffle the draw deck each round: "auto" = with 3-4 players
    short_deck: str = "reject"  # too few cards for extra card + category card: "reject"/"play_on"
    battle_round_limit: int | None = None  # end after this many rounds; most round wins wins

    def validate(self) -> None:
        for name, allowed in _CHOICES.items():
            if getattr(self, name) not in allowed:
                raise InvalidPositionError(
                    f"must be one of {', '.join(allowed)}, got {getattr(self, name)!r}",
                    f"options.{name}",
                )
        ints = ("squad_size", "squad_value_limit", "hand_size", "matchups", "matchups_to_win",
                "rounds_to_win")
        for name in ints:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name ==
                                                                   "squad_value_limit" else 1):
                raise InvalidPositionError(f"must be a positive integer, got {v!r}",
                                           f"options.{name}")
        for name in ("trumps_round_limit", "battle_round_limit"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
                raise InvalidPositionError(f"must be null or a positive integer, got {v!r}",
                                           f"options.{name}")
        if not isinstance(self.value_category, bool):
            raise InvalidPositionError("must be true or false", "options.value_category")
        if self.matchups_to_win > self.matchups:
            raise InvalidPositionError("cannot exceed options.matchups", "options.matchups_to_win")
        if self.squad_size < self.matchups:
            raise InvalidPositionError("must be at least options.matchups", "options.squad_size")
        if self.hand_size < self.squad_size:
            raise InvalidPositionError("must be at least options.squad_size", "options.hand_size")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Options:
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise InvalidPositionError("must be an object", "options")
        names = {f.name for f in fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise InvalidPositionError(f"unknown option(s) {sorted(unknown)}", "options")
        opts = cls(**data)
        opts.validate()
        return opts

    @property
    def battle_categories(self) -> tuple[Category, ...]:
        return CATEGORIES if self.value_category else BATTLE_CATEGORIES


@dataclass(frozen=True)
class Outcome:
    """The end of a game. `winners` are seats (several = shared win, empty = nobody);
    `scores` are cards held (Trumps) or rounds won (Battle Mode)."""

    winners: tuple[int, ...]
    scores: tuple[int, ...]
    reason: str
    rounds: int

    def __str__(self) -> str:
        who = ", ".join(f"P{w + 1}" for w in self.winners) or "nobody"
        scores = list(self.scores)
        return f"winner: {who}; scores {scores}; {self.reason} after {self.rounds} rounds"

    def to_dict(self) -> dict[str, Any]:
        return {"winners": list(self.winners), "scores": list(self.scores),
                "reason": self.reason, "rounds": self.rounds}


# ---------------------------------------------------------------------------------------------
# State
# ---------------------------------------------------------------------------------------------

# Mutable fields, saved whole for undo and compared on load.
_FIELDS = (
    "phase", "to_act", "deck_shuffled", "deck_known", "hands", "centre", "pool", "public",
    "picks", "chooser", "category", "round_no", "round_wins", "placed", "draw_queue",
    "after_draw", "round", "log", "redraws", "result",
)


class GameState:
    """A Battle Cards game. Build with `new_game(...)`; seats are 0..players-1 and seat
    `first_player` is the youngest player (who starts)."""

    def __init__(self, card_set: CardSet, players: int, mode: str = "battle",
                 options: Options | None = None, first_player: int = 0,
                 keep_undo: bool = True) -> None:
        options = options or Options()
        options.validate()
        if mode not in MODES:
            raise InvalidPositionError(f"must be 'trumps' or 'battle', got {mode!r}", "mode")
        if isinstance(players, bool) or not isinstance(players, int):
            raise InvalidPositionError(f"must be an integer, got {players!r}", "players")
        if mode == "battle" and not 2 <= players <= 4:
            raise InvalidPositionError(f"Battle Mode is for 2-4 players, got {players}", "players")
        if mode == "trumps" and not 2 <= players <= len(card_set):
            raise InvalidPositionError(
                f"Trumps needs 2 to {len(card_set)} players (one card each), got {players}",
                "players")
        if isinstance(first_player, bool) or not isinstance(first_player, int) \
                or not 0 <= first_player < players:
            raise InvalidPositionError(f"must be a seat 0..{players - 1}, got {first_player!r}",
                                       "first_player")
        self.card_set = card_set
        self.players = players
        self.mode = mode
        self.options = options
        self.first = first_player
        self.keep_undo = keep_undo
        self._order = {c: i for i, c in enumerate(card_set.codes)}
        if mode == "battle":
            self._check_battle_set()
        self.history: list[str] = []
        self._stack: list[tuple[bytes, list[dict[str, Any]]]] = []
        # --- mutable fields (see _FIELDS) ---
        self.phase = "deal" if mode == "trumps" else "draft"
        self.to_act: int | None = None if mode == "trumps" else first_player
        self.deck_shuffled: list[str] = list(card_set.codes) if mode == "trumps" else []
        self.deck_known: list[str] = []
        self.hands: list[list[str]] = [[] for _ in range(players)]
        self.centre: list[str] = []
        self.pool: list[str] = [] if mode == "trumps" else list(card_set.codes)
        self.public: list[list[str]] = [[] for _ in range(players)]
        self.picks = 0  # cards dealt (Trumps) or picked (draft) so far
        self.chooser: int | None = first_player
        self.category: str | None = None
        self.round_no = 0
        self.round_wins: list[int] = [0] * players
        self.placed: list[list[str]] = [[] for _ in range(players)]
        self.draw_queue: list[int] = []
        self.after_draw: str | None = None
        self.round: dict[str, Any] | None = None
        self.log: list[dict[str, Any]] = []
        self.redraws = 0
        self.result: dict[str, Any] | None = None

    # ----- set checks ---------------------------------------------------------------------

    def _check_battle_set(self) -> None:
        o = self.options
        n = len(self.card_set)
        need_draft = o.squad_size * self.players
        if n < need_draft:
            raise InvalidPositionError(
                f"{n} cards cannot make {self.players} squads of {o.squad_size}", "card_set.cards")
        need_full = o.hand_size * self.players + 1
        if n < need_full and o.short_deck == "reject":
            raise InvalidPositionError(
                f"{n} cards are too few for {self.players} hands of {o.hand_size} plus a category"
                f" card (need {need_full}); set options.short_deck='play_on' to play anyway",
                "card_set.cards")
        cheapest = sorted(c.value for c in self.card_set.cards)[: o.squad_size]
        if sum(cheapest) > o.squad_value_limit:
            raise InvalidPositionError(
                f"no squad of {o.squad_size} fits within {o.squad_value_limit} Value",
                "card_set.cards")

    # ----- basic queries ------------------------------------------------------------------

    def card(self, code: str) -> Card:
        return self.card_set.card(code)

    def is_terminal(self) -> bool:
        return self.phase == "over"

    def outcome(self) -> Outcome | None:
        """None until the game is over; then winners, scores and the reason."""
        if self.result is None:
            return None
        o = self.result
        return Outcome(tuple(o["winners"]), tuple(o["scores"]), o["reason"], o["rounds"])

    def is_chance_node(self) -> bool:
        return self.phase in ("deal", "draw", "category_card") and bool(self.deck_shuffled)

    def current_player(self) -> int | None:
        """Seat that must act, or None at a chance node or when the game is over."""
        if self.is_terminal() or self.is_chance_node():
            return None
        return self.to_act

    def chance_outcomes(self) -> list[tuple[Draw, float]]:
        if not self.is_chance_node():
            return []
        p = 1.0 / len(self.deck_shuffled)
        return [(Draw(c), p) for c in self.deck_shuffled]

    def legal_actions(self) -> list[Action]:
        if self.is_terminal():
            return []
        if self.is_chance_node():
            return [Draw(c) for c in self.deck_shuffled]
        ph = self.phase
        if ph == "choose":
            cats = CATEGORIES if self.mode == "trumps" else self.options.battle_categories
            return [ChooseCategory(c) for c in cats]
        if ph == "category_tie":
            return [ChooseCategory(Category(c)) for c in self.round["tied_categories"]]
        if ph == "draft":
            return [Pick(c) for c in self._legal_picks(self.to_act)]
        if ph == "place":
            p = self.to_act
            return [Place(c) for c in self.hands[p] if c not in self.placed[p]]
        if ph == "decider":
            return [Decide(c) for c in self._unused(self.to_act)]
        return []

    # ----- draft ---------------------------------------------------------------------------

    def squad_value(self, player: int) -> int:
        return sum(self.card(c).value for c in self.hands[player])

    def _legal_picks(self, player: int) -> list[str]:
        """Cards that keep the squad completable within the Value limit from the cards still on
        the table; if none does (others took the cheap cards), the cheapest cards."""
        o = self.options
        total = self.squad_value(player)
        left = o.squad_size - len(self.hands[player]) - 1
        values = sorted((self.card(c).value, c) for c in self.pool)
        cheap = sum(v for v, _ in values[:left])  # the `left` cheapest cards
        spare = values[left][0] if left < len(values) else None  # the next cheapest
        legal = []
        for i, (v, c) in enumerate(values):
            if i < left:  # c is one of the cheapest: the next cheapest stands in for it
                if spare is None:
                    continue
                rest = cheap - v + spare
            else:
                rest = cheap
            if total + v + rest <= o.squad_value_limit:
                legal.append(c)
        if not legal and values:
            low = values[0][0]
            legal = [c for v, c in values if v == low]
        return sorted(legal, key=self._order.__getitem__)

    def _draft_seat(self, k: int) -> int:
        n = self.players
        r, pos = divmod(k, n)
        if self.options.draft_order == "snake" and r % 2 == 1:
            pos = n - 1 - pos
        return (self.first + pos) % n

    # ----- apply / undo --------------------------------------------------------------------

    def _snapshot(self) -> tuple[bytes, list[dict[str, Any]]]:
        # Plain data only, so pickle is an exact (and fast) deep copy. Finished rounds in `log`
        # are never changed once appended, so they are shared rather than copied.
        data = {k: getattr(self, k) for k in _FIELDS if k != "log"}
        return pickle.dumps(data, pickle.HIGHEST_PROTOCOL), list(self.log)

    def _restore(self, snap: tuple[bytes, list[dict[str, Any]]]) -> None:
        blob, log = snap
        for k, v in pickle.loads(blob).items():
            setattr(self, k, v)
        self.log = list(log)

    def apply(self, action: Action | str) -> None:
        """Apply a decision or chance outcome; IllegalActionError leaves the state unchanged."""
        if isinstance(action, str):
            action = parse_action(action)
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(self._why_illegal(action, legal))
        # Legality is checked above, before anything changes; the snapshot also guards the
        # state against a bug half-way through (keep_undo=False skips it for fast self-play).
        snap = self._snapshot() if self.keep_undo else None
        try:
            self._apply(action)
            self._advance()
        except Exception:
            if snap is not None:
                self._restore(snap)
            raise
        if snap is not None:
            self._stack.append(snap)
        self.history.append(str(action))

    def undo(self) -> None:
        """Revert the last apply (replaying the history when loaded from JSON)."""
        if not self.history:
            raise IllegalActionError("nothing to undo")
        if self._stack:
            self._restore(self._stack.pop())
            self.history.pop()
            return
        fresh = GameState(self.card_set, self.players, self.mode, self.options, self.first,
                          self.keep_undo)
        for a in self.history[:-1]:
            fresh.apply(a)
        self.__dict__.update(fresh.__dict__)

    def _why_illegal(self, action: Action, legal: list[Action]) -> str:
        if self.is_terminal():
            return f"{action}: the game is over"
        kinds = sorted({type(a).__name__ for a in legal})
        who = self.current_player()
        actor = "chance (report the card drawn)" if who is None else f"P{who + 1}"
        card = getattr(action, "card", None)
        if card is not None and card not in self.card_set:
            return f"{action}: unknown card {card!r}"
        if isinstance(action, Pick) and self.phase == "draft":
            if card not in self.pool:
                return f"{action}: {card} is no longer on the table"
            return (f"{action}: P{who + 1} could not complete a squad of "
                    f"{self.options.squad_size} within {self.options.squad_value_limit} Value")
        if isinstance(action, Place | Decide) and who is not None and \
                self.phase in ("place", "decider"):
            if card not in self.hands[who]:
                return f"{action}: {card} is not in P{who + 1}'s hand"
            return f"{action}: {card} is already placed or used this round"
        return (f"{action} is not legal in phase {self.phase!r}: {actor} to act with "
                f"{'/'.join(kinds) or 'nothing'}")

    def _apply(self, a: Action) -> None:
        if isinstance(a, Draw):
            self._apply_draw(a.card)
        elif isinstance(a, Pick):
            self._apply_pick(a.card)
        elif isinstance(a, Place):
            self._apply_place(a.card)
        elif isinstance(a, Decide):
            self._apply_decide(a.card)
        elif isinstance(a, ChooseCategory):
            self._apply_category(a.category)

    # ----- chance / drawing -----------------------------------------------------------------

    def _take_top(self, code: str | None = None) -> str:
        """Remove the top card of the pile: `code` from the shuffled part, else the known top."""
        if code is not None:
            self.deck_shuffled.remove(code)
            return code
        return self.deck_known.pop(0)

    def _apply_draw(self, code: str) -> None:
        if self.phase == "deal":
            seat = (self.first + self.picks) % self.players
            self._take_top(code)
            self.hands[seat].append(code)
            self.picks += 1
        elif self.phase == "draw":
            self._give(self._take_top(code))
        elif self.phase == "category_card":
            self._turn_category_card(self._take_top(code))

    def _give(self, code: str, public: bool = False) -> None:
        seat = self.draw_queue.pop(0)
        self.hands[seat].append(code)
        if public:  # drawn from the known bottom part: everybody knows where it went
            self.public[seat].append(code)

    def _advance(self) -> None:
        """Run automatic steps until a decision, a chance node or the end."""
        while True:
            ph = self.phase
            if ph == "deal":
                if self.deck_shuffled:
                    return
                self.phase, self.to_act, self.chooser = "choose", self.first, self.first
                return
            if ph == "draw":
                if not self.draw_queue:
                    self._after_draws()
                    continue
                if self.deck_shuffled:
                    return
                if self.deck_known:
                    self._give(self._take_top(), public=True)
                else:  # pile empty (only with short_deck='play_on'): go short
                    self.draw_queue.pop(0)
                continue
            if ph == "category_card":
                if self.deck_shuffled:
                    return
                if self.deck_known:
                    self._turn_category_card(self._take_top())
                else:  # empty pile: the chooser (the starting player) picks
                    self.phase, self.to_act = "choose", self.chooser
                    self.round["category_from"] = "choice (empty draw deck)"
                continue
            return

    def _after_draws(self) -> None:
        nxt = self.after_draw
        self.after_draw = None
        if nxt == "choose":
            self.phase, self.to_act = "choose", self.chooser
        else:
            self._start_category_card()

    # ----- Trumps ---------------------------------------------------------------------------

    def _active(self) -> list[int]:
        return [p for p in range(self.players) if self.hands[p]]

    def _next_active(self, seat: int) -> int | None:
        for k in range(self.players):
            p = (seat + k) % self.players
            if self.hands[p]:
                return p
        return None

    def _trumps_round(self, cat: Category) -> None:
        o = self.options
        chooser = self.to_act
        seats = [(chooser + k) % self.players for k in range(self.players)]
        seats = [p for p in seats if self.hands[p]]
        played = [self.hands[p].pop(0) for p in seats]
        res = resolve_trumps([self.card(c) for c in played], cat)
        self.round_no += 1
        record: dict[str, Any] = {"round": self.round_no, "chooser": chooser,
                                  "seats": seats, **res.to_dict()}
        if res.winner is not None:
            w = seats[res.winner]
            k = res.winner
            won = played[k:] + played[:k] + self.centre
            self.hands[w].extend(won)
            self.centre = []
            record["winner_seat"] = w
            record["won"] = len(won)
            nxt = w
        else:
            tied_seats = [seats[i] for i in res.tied]
            for i, (p, c) in enumerate(zip(seats, played, strict=True)):
                if o.trumps_tie_pot == "all" or i in res.tied:
                    self.centre.append(c)
                else:
                    self.hands[p].append(c)
            record["winner_seat"] = None
            record["tied_seats"] = tied_seats
            nxt = tied_seats[0] if o.trumps_tie_chooser == "first_tied" else chooser
        record["centre"] = len(self.centre)
        self.round = record
        # End conditions
        active = self._active()
        total = len(self.card_set)
        if len(active) == 1 and self.centre:  # nobody left to contest the centre
            self.hands[active[0]].extend(self.centre)
            self.centre = []
        if len(active) == 1:
            self._finish([active[0]], "collected every card")
            return
        if not active:
            self._finish(record.get("tied_seats", []), "drawn: the last cards tied into the centre")
            return
        if o.trumps_round_limit is not None and self.round_no >= o.trumps_round_limit:
            counts = [len(h) for h in self.hands]
            best = max(counts)
            self._finish([p for p in range(self.players) if counts[p] == best],
                         f"round limit {o.trumps_round_limit}: most cards")
            return
        assert sum(map(len, self.hands)) + len(self.centre) == total
        nxt_seat = self._next_active(nxt)
        self.chooser = nxt_seat
        self.to_act = nxt_seat

    def _finish(self, winners: list[int], reason: str) -> None:
        if self.mode == "trumps":
            scores = [len(h) for h in self.hands]
        else:
            scores = list(self.round_wins)
        self.result = {"winners": sorted(winners), "scores": scores, "reason": reason,
                        "rounds": self.round_no}
        self.phase, self.to_act = "over", None

    # ----- Battle Mode: draft ---------------------------------------------------------------

    def _apply_pick(self, code: str) -> None:
        p = self.to_act
        self.pool.remove(code)
        self.hands[p].append(code)
        self.public[p].append(code)
        self.picks += 1
        if self.picks < self.options.squad_size * self.players:
            self.to_act = self._draft_seat(self.picks)
            return
        # Squads complete: shuffle the rest into the draw deck; each takes a hidden extra card.
        self.deck_shuffled = sorted(self.pool, key=self._order.__getitem__)
        self.pool = []
        self.to_act = None
        self.round_no = 0
        self._queue_draws(lambda p: 1)
        self.after_draw = "category_card"
        self.phase = "draw"

    def _seats_from_first(self) -> list[int]:
        return [(self.first + k) % self.players for k in range(self.players)]

    def _queue_draws(self, need) -> None:
        self.draw_queue = [p for p in self._seats_from_first() for _ in range(need(p))]

    # ----- Battle Mode: round start ---------------------------------------------------------

    def _new_round_record(self) -> None:
        self.round_no += 1
        self.round = {"round": self.round_no, "category": None, "category_from": None,
                      "category_cards": [], "matchups": [], "wins": [0] * self.players,
                      "deciders": [], "used": [[] for _ in range(self.players)],
                      "winner": None, "chooser": None, "lost": []}

    def _start_category_card(self) -> None:
        self._new_round_record()
        self.redraws = 0
        self.chooser = self.first
        self.phase, self.to_act = "category_card", None

    def _turn_category_card(self, code: str) -> None:
        self.deck_known.append(code)  # the category card goes to the bottom of the draw deck
        self.round["category_cards"].append(code)
        card = self.card(code)
        cats = self.options.battle_categories
        best = max(card.score(c) for c in cats)
        tied = [c for c in cats if card.score(c) == best]
        rule = self.options.category_card_tie
        if len(tied) == 1 or rule == "first_listed":
            how = "" if len(tied) == 1 else " (equal highest: first listed)"
            self.round["category_from"] = f"card {code}{how}"
            self._start_placing(tied[0])
            return
        if rule == "chooser":
            self.round["tied_categories"] = [c.value for c in tied]
            self.round["category_from"] = f"card {code} (tie chosen by P{self.chooser + 1})"
            self.phase, self.to_act = "category_tie", self.chooser
            return
        # redraw: turn the next card; after a whole pass through the deck, first listed.
        self.redraws += 1
        if self.redraws >= len(self.deck_shuffled) + len(self.deck_known):
            self.round["category_from"] = f"card {code} (no untied card: first listed)"
            self._start_placing(tied[0])

    def _start_placing(self, cat: Category) -> None:
        self.category = cat.value
        self.round["category"] = cat.value
        self.round.pop("tied_categories", None)
        self.placed = [[] for _ in range(self.players)]
        self.phase, self.to_act = "place", self.first

    def _apply_category(self, cat: Category) -> None:
        if self.mode == "trumps":
            self._trumps_round(cat)
            return
        if self.round is None:  # the loser (or the decider's winner) picks
            self._new_round_record()
            self.round["category_from"] = f"chosen by P{self.to_act + 1}"
        self._start_placing(cat)

    # ----- Battle Mode: placing and revealing -------------------------------------------------

    def _apply_place(self, code: str) -> None:
        p = self.to_act
        self.placed[p].append(code)
        if len(self.placed[p]) < self.options.matchups:
            return
        seats = self._seats_from_first()
        i = seats.index(p)
        if i + 1 < len(seats):
            self.to_act = seats[i + 1]
            return
        self._reveal()

    def _reveal(self) -> None:
        cat = Category(self.category)
        placements = [[self.card(c) for c in self.placed[p]] for p in range(self.players)]
        res = resolve_round(placements, cat, self.options.matchups_to_win)
        self.round["matchups"] = [m.to_dict() for m in res.matchups]
        self.round["wins"] = list(res.wins)
        self.round["turned"] = res.turned
        if res.winner is None:
            self._start_decider("round", list(res.decider))
        else:
            self._round_won(res.winner)

    def _unused(self, p: int) -> list[str]:
        used = self.round["used"][p]
        return [c for c in self.hands[p] if c not in self.placed[p] and c not in used]

    def _start_decider(self, kind: str, seats: list[int]) -> None:
        if any(not self._unused(p) for p in seats):
            self._decider_unresolved(kind, seats)
            return
        self.round["decider"] = {"kind": kind, "seats": seats, "cards": []}
        self.phase, self.to_act = "decider", seats[0]

    def _apply_decide(self, code: str) -> None:
        d = self.round["decider"]
        d["cards"].append(code)
        self.round["used"][self.to_act].append(code)
        if len(d["cards"]) < len(d["seats"]):
            self.to_act = d["seats"][len(d["cards"])]
            return
        res = resolve_matchup([self.card(c) for c in d["cards"]], Category(self.category))
        seats, kind = d["seats"], d["kind"]
        self.round["deciders"].append({"kind": kind, "seats": seats, **res.to_dict()})
        del self.round["decider"]
        keep = {res.winner} if res.winner is not None else set(res.contenders)
        if self.options.decider_losers == "deck":
            self.round["lost"].extend(c for i, c in enumerate(d["cards"]) if i not in keep)
        if res.winner is not None:
            self._decider_won(kind, seats[res.winner])
        else:
            self._start_decider(kind, [seats[i] for i in res.contenders])

    def _decider_won(self, kind: str, seat: int) -> None:
        if kind == "round":
            self._round_won(seat)
        else:
            self.round["chooser"] = seat
            self._finish_round()

    def _decider_unresolved(self, kind: str, seats: list[int]) -> None:
        if kind == "round":  # nobody wins the round; next category from the top card
            self.round["winner"] = None
            self._finish_round()
        else:  # earliest of them in turn order picks
            order = self._seats_from_first()
            self.round["chooser"] = min(seats, key=order.index)
            self._finish_round()

    def _round_won(self, seat: int) -> None:
        self.round["winner"] = seat
        last = last_place(self.round["wins"], seat)
        if len(last) > 1:
            self._start_decider("last", list(last))
            return
        self.round["chooser"] = last[0]
        self._finish_round()

    def _finish_round(self) -> None:
        o = self.options
        r = self.round
        lost: list[str] = []
        revealed: list[str] = []
        for m in r["matchups"]:
            keep = {m["winner"]} if m["winner"] is not None else (
                set(m["contenders"]) if o.matchup_full_tie == "void" else set())
            lost.extend(c for i, c in enumerate(m["cards"]) if i not in keep)
            revealed.extend(m["cards"])
        lost.extend(r["lost"])
        for d in r["deciders"]:
            revealed.extend(d["cards"])
        r["lost"] = lost
        for p in range(self.players):
            self.hands[p] = [c for c in self.hands[p] if c not in lost]
            pub = set(self.public[p]) | {c for c in revealed if c in self.hands[p]}
            self.public[p] = [c for c in self.hands[p] if c in pub]
        self.deck_known.extend(lost)  # losers go under the draw deck
        self.placed = [[] for _ in range(self.players)]
        self.category = None
        self.log.append(r)
        self.round = None
        winner = r["winner"]
        if winner is not None:
            self.round_wins[winner] += 1
            if self.round_wins[winner] >= o.rounds_to_win:
                self._finish([winner], f"won {o.rounds_to_win} rounds")
                return
        if o.battle_round_limit is not None and self.round_no >= o.battle_round_limit:
            best = max(self.round_wins)
            self._finish([p for p in range(self.players) if self.round_wins[p] == best],
                         f"round limit {o.battle_round_limit}: most rounds won")
            return
        if o.reshuffle == "always" or (o.reshuffle == "auto" and self.players >= 3):
            self.deck_shuffled = sorted(self.deck_shuffled + self.deck_known,
                                        key=self._order.__getitem__)
            self.deck_known = []
        self._queue_draws(lambda p: max(0, o.hand_size - len(self.hands[p])))
        if winner is None:
            self.after_draw = "category_card"
        else:
            self.chooser = r["chooser"]
            self.after_draw = "choose"
        self.phase, self.to_act = "draw", None

    # ----- views and serialisation ------------------------------------------------------------

    def whose_draw(self) -> int | None:
        """At a drawing chance node, the seat receiving the card (None otherwise)."""
        if self.phase == "deal":
            return (self.first + self.picks) % self.players
        if self.phase == "draw" and self.draw_queue:
            return self.draw_queue[0]
        return None

    def view(self, player: int) -> dict[str, Any]:
        """What `player` may see: own cards (Trumps: only the top card), others' public cards."""
        if not 0 <= player < self.players:
            raise IllegalActionError(f"no seat {player}")
        v: dict[str, Any] = {"mode": self.mode, "player": player, "phase": self.phase,
                             "to_act": self.current_player(), "round": self.round_no,
                             "draw_deck": len(self.deck_shuffled) + len(self.deck_known)}
        if self.mode == "trumps":
            v["top_card"] = self.hands[player][0] if self.hands[player] and \
                self.phase == "choose" else None
            v["cards_held"] = [len(h) for h in self.hands]
            v["centre"] = len(self.centre)
        else:
            v["hand"] = list(self.hands[player])
            v["placed"] = list(self.placed[player])
            v["others"] = {
                p: {"public": list(self.public[p]),
                    "hidden": len(self.hands[p]) - len(self.public[p]),
                    "placed": len(self.placed[p])}
                for p in range(self.players) if p != player}
            v["pool"] = list(self.pool)
            v["category"] = self.category
            v["round_wins"] = list(self.round_wins)
        v["last_round"] = (self.log[-1] if self.log else None) if self.mode == "battle" \
            else self.round
        v["outcome"] = self.result
        return v

    def fields_dict(self) -> dict[str, Any]:
        return copy.deepcopy({k: getattr(self, k) for k in _FIELDS})

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "mode": self.mode,
            "players": self.players,
            "first_player": self.first,
            "options": self.options.to_dict(),
            "card_set": self.card_set.to_dict(),
            "history": list(self.history),
            "state": self.fields_dict(),
        }

    @classmethod
    def from_json(cls, data: Any, keep_undo: bool = True) -> GameState:
        """Load and validate a state: the setup is checked, the history replayed action by
        action, and the saved `state` (if present) must match the replay exactly."""
        if not isinstance(data, dict):
            raise InvalidPositionError("a game state must be a JSON object", "state")
        unknown = set(data) - {"format", "mode", "players", "first_player", "options",
                               "card_set", "history", "state"}
        if unknown:
            raise InvalidPositionError(f"unknown key(s) {sorted(unknown)}", "state")
        fmt = data.get("format", STATE_FORMAT)
        if fmt != STATE_FORMAT:
            raise InvalidPositionError(f"expected {STATE_FORMAT!r}, got {fmt!r}", "format")
        for key in ("mode", "players", "card_set"):
            if key not in data:
                raise InvalidPositionError("missing", key)
        try:
            card_set = CardSet.from_dict(data["card_set"])
        except InvalidPositionError as exc:
            raise InvalidPositionError(str(exc), "card_set") from exc
        options = _options_from(data.get("options"))
        game = cls(card_set, data["players"], data["mode"], options,
                   data.get("first_player", 0), keep_undo)
        history = data.get("history", [])
        if not isinstance(history, list):
            raise InvalidPositionError("must be a list of actions", "history")
        for i, text in enumerate(history):
            try:
                game.apply(parse_action(text))
            except (ParseError, IllegalActionError) as exc:
                raise InvalidPositionError(str(exc), f"history[{i}]") from exc
        saved = data.get("state")
        if saved is not None:
            if not isinstance(saved, dict):
                raise InvalidPositionError("must be an object", "state")
            mine = json_roundtrip(game.fields_dict())
            for key in _FIELDS:
                if key in saved and saved[key] != mine[key]:
                    raise InvalidPositionError(
                        f"does not match the history (expected {mine[key]!r})", f"state.{key}")
            extra = set(saved) - set(_FIELDS)
            if extra:
                raise InvalidPositionError(f"unknown key(s) {sorted(extra)}", "state")
        return game


def json_roundtrip(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


def _options_from(data: Any) -> Options:
    try:
        return Options.from_dict(data)
    except TypeError as exc:
        raise InvalidPositionError(str(exc), "options") from exc


def new_game(card_set: CardSet | None = None, players: int = 2, mode: str = "battle",
             options: Options | None = None, first_player: int = 0,
             keep_undo: bool = True) -> GameState:
    """Start a game (the sample set if no card set is given)."""
    from .cards import load_sample_set

    return GameState(card_set or load_sample_set(), players, mode, options, first_player,
                     keep_undo)


def play_random_game(seed: int, players: int = 2, mode: str = "battle",
                     card_set: CardSet | None = None, options: Options | None = None,
                     first_player: int = 0, max_actions: int = 1_000_000) -> GameState:
    """Self-play: chance outcomes and every decision drawn uniformly from `random.Random(seed)`.

    Stops after `max_actions` (the returned game is then not terminal); no undo stack is kept.
    """
    rng = random.Random(seed)
    game = new_game(card_set, players, mode, options, first_player, keep_undo=False)
    for _ in range(max_actions):
        if game.is_terminal():
            break
        game.apply(rng.choice(game.legal_actions()))
    return game
