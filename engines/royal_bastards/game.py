"""The Royal Bastards state machine: setup, nine turns of Draw / Movement / Contest with the
Festivals of turns 3, 6 and 9, and the End Game.

Every card draw and die roll is a chance node (`is_chance_node()`): its outcome is an action
(`Draw`, `Roll`) chosen by a seeded roller in self-play or reported by the table. Decks are
unordered pools, so "the table drew X" is always expressible. Support Tokens and cards are
conserved: each is in exactly one place (`check_invariants`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from engines.errors import IllegalActionError, InvalidPositionError, RulesError

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
from .board import Board, board_from_dict, random_board
from .cards import DECKS, DICE, STATIC_KINDS, CardSet, Effect, load_card_set
from .rules import (
    Bastard,
    Context,
    Options,
    attribute_value,
    base_sum,
    condition_holds,
    dice_for,
    explodes,
    majority,
    rank_groups,
    split_by_rolls,
    static_total,
    tracker,
)

STATE_SCHEMA = "royal-bastards-state/1"
CHANCE = -1
TERMINAL = -2
TURNS = 9
FESTIVAL_ROLE = {3: "champion", 6: "herald"}
# "resolve": automatic steps are pending behind a Global Support placement or a draw
PHASES = ("setup", "movement", "contest_order", "window", "dice", "rolloff", "resolve",
          "choose_bastard", "end_start", "end_score", "over")
WINDOW_PHASES = ("window", "end_start", "end_score")
CONTEST_KINDS = ("contest", "festival", "territory", "crown")
DEFAULT_COLOURS = ("red", "blue", "green", "yellow")


@dataclass
class Player:
    colour: str
    supply: int
    hand: list[str] = field(default_factory=list)
    dealt: list[str] = field(default_factory=list)  # setup: Bastards dealt, not yet chosen
    bastards: list[Bastard] = field(default_factory=list)
    markers: list[list] = field(default_factory=list)  # [attribute, amount] +1/-1 markers
    pending_global: int = 0  # Global Support Tokens won, not yet placed
    rap_adjust: int = 0  # Royal Approval from rewards and End Game cards

    def bastard(self, role: str) -> Bastard | None:
        return next((b for b in self.bastards if b.role == role), None)

    def to_dict(self) -> dict:
        return {"colour": self.colour, "supply": self.supply, "hand": list(self.hand),
                "dealt": list(self.dealt), "bastards": [b.to_dict() for b in self.bastards],
                "markers": [list(m) for m in self.markers], "pending_global": self.pending_global,
                "rap_adjust": self.rap_adjust}


@dataclass
class Contest:
    """A contest in progress (a contested Territory, a Festival, an End Game tie)."""

    kind: str
    territory: str | None
    participants: list[int]
    firstborn_only: bool = False
    card: str | None = None
    dice: list[dict] = field(default_factory=list)  # still to roll: player, role, die, own, n
    rolled: dict[int, list[list]] = field(default_factory=dict)  # player -> [[die, value]...]
    groups: list[list[int]] = field(default_factory=list)  # ranking, tied players together
    rolloff: list[int] = field(default_factory=list)  # players still to roll the tie d10
    rolloff_rolls: dict[int, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "territory": self.territory,
                "participants": list(self.participants), "firstborn_only": self.firstborn_only,
                "card": self.card, "dice": [dict(d) for d in self.dice],
                "rolled": {str(p): [list(r) for r in v] for p, v in self.rolled.items()},
                "groups": [list(g) for g in self.groups], "rolloff": list(self.rolloff),
                "rolloff_rolls": {str(p): v for p, v in self.rolloff_rolls.items()}}


@dataclass(frozen=True)
class Outcome:
    winner: int
    scores: tuple[int, ...]  # Royal Approval Points
    tracker: tuple[tuple[int, int], ...]  # (King Me tokens, square) per player
    territories: dict[str, int | None]  # who won each Territory
    reason: str

    def to_dict(self) -> dict:
        return {"winner": self.winner, "scores": list(self.scores),
                "tracker": [list(t) for t in self.tracker], "territories": dict(self.territories),
                "reason": self.reason}


class GameState:
    """A whole game. Build with `new_game(...)` or `GameState.from_json(...)`."""

    def __init__(self, cards: CardSet, board: Board, options: Options, colours: list[str],
                 first_player: int) -> None:
        n = len(colours)
        if not 2 <= n <= 4:
            raise InvalidPositionError(f"Royal Bastards is for 2-4 players, got {n}", "players")
        if not 0 <= first_player < n:
            raise InvalidPositionError(f"must be 0..{n - 1}", "first_player")
        self.cards = cards
        self.board = board
        self.options = options
        self.n = n
        self.players = [Player(c, options.support_tokens) for c in colours]
        self.turn = 0
        self.first = first_player
        self.phase = "setup"
        self.step: str | None = None
        self.decks = {d: cards.full_deck(d) for d in DECKS}
        self.discards: dict[str, list[str]] = {d: [] for d in DECKS}
        self.support: dict[str, list[int]] = {t: [0] * n for t in board.territories}
        self.queue: list[dict] = []  # pending draws: deck, player, purpose, role
        self.mover = 0
        self.contested: list[str] = []
        self.contest: Contest | None = None
        self.passed: list[int] = []
        self.effects: list[dict] = []  # Chaos cards in force: player, role, card, scope
        self.placing: list[int] = []  # order for Global Support placement
        self.choosing: list[int] = []  # Festival order for choosing Bastards
        self.festival_row: list[str] = []
        self.festival_site: str | None = None
        self.awards: dict[str, int | None] = {}
        self.award_queue: list[str] = []
        self.winner: int | None = None
        self.reason = ""
        self.log: list[str] = []
        self.history: list[dict] = []

    # ----------------------------------------------------------------- basics
    def seat_order(self) -> list[int]:
        return [(self.first + i) % self.n for i in range(self.n)]

    def is_terminal(self) -> bool:
        return self.phase == "over"

    def _pending_placer(self) -> int | None:
        order = self.placing + [p for p in self.seat_order() if p not in self.placing]
        return next((p for p in order if self.players[p].pending_global > 0), None)

    def is_chance_node(self) -> bool:
        if self.is_terminal() or self._pending_placer() is not None:
            return False
        return bool(self.queue) or self.phase in ("dice", "rolloff")

    def current_player(self) -> int:
        """Who acts: a player index, CHANCE (-1) or TERMINAL (-2)."""
        if self.is_terminal():
            return TERMINAL
        placer = self._pending_placer()
        if placer is not None:
            return placer
        if self.is_chance_node():
            return CHANCE
        if self.phase == "setup":
            return next(p for p in self.seat_order() if self.players[p].dealt)
        if self.phase == "movement":
            return self.seat_order()[self.mover]
        if self.phase == "contest_order":
            return self.first
        if self.phase in WINDOW_PHASES:
            return next(p for p in self.seat_order() if p not in self.passed)
        if self.phase == "choose_bastard":
            return self.choosing[0]
        raise RulesError(f"no one acts in phase {self.phase}")  # pragma: no cover

    def hand_limit(self, player: int) -> int:
        p = self.players[player]
        return self.options.hand_limit + static_total(self.cards, p.bastards, "hand_limit")

    # ------------------------------------------------------------ evaluation
    def contest_attribute(self) -> str | None:
        if self.contest is None or self.contest.card is None:
            return None
        return self.cards.contests[self.contest.card].attribute

    def _extra_effects(self, player: int, role: str) -> tuple[Effect, ...]:
        out: list[Effect] = []
        if self.contest is not None and self.contest.card is not None:
            out += self.cards.contests[self.contest.card].effects
        for active in self.effects:
            if active["player"] == player and active["role"] == role:
                out += [e for e in self.cards.chaos[active["card"]].effects
                        if e.kind in ("modify", "extra_die")]
        return tuple(out)

    def context(self, player: int, role: str) -> Context:
        return Context(self.contest_attribute(), self._extra_effects(player, role))

    def movement_of(self, player: int, b: Bastard) -> int:
        value = attribute_value(self.cards, b, "movement", self.context(player, b.role),
                                self.options.attribute_floor)
        value += sum(m[1] for m in self.players[player].markers if m[0] == "movement")
        return max(0, value)

    def contest_bastards(self, player: int) -> list[Bastard]:
        c = self.contest
        if c is None or player not in c.participants:
            return []
        p = self.players[player]
        if c.firstborn_only:
            return [b for b in p.bastards if b.role == "firstborn"]
        if c.territory is None:  # crown tie-break: every Bastard
            return list(p.bastards)
        return [b for b in p.bastards if b.location == c.territory]

    def contest_attribute_total(self, player: int) -> int:
        attribute = self.contest_attribute()
        if attribute is None:
            return 0
        total = sum(attribute_value(self.cards, b, attribute, self.context(player, b.role),
                                    self.options.attribute_floor)
                    for b in self.contest_bastards(player))
        return total + sum(m[1] for m in self.players[player].markers if m[0] == attribute)

    def contest_totals(self) -> dict[int, int]:
        assert self.contest is not None
        return {p: self.contest_attribute_total(p)
                + sum(v for _, v in self.contest.rolled.get(p, [])) for p in
                self.contest.participants}

    def scores(self) -> list[int]:
        out = []
        for i, p in enumerate(self.players):
            won = sum(self.cards.territories[t].rap for t, w in self.awards.items() if w == i)
            out.append(won + p.rap_adjust + static_total(self.cards, p.bastards, "rap"))
        return out

    def outcome(self) -> Outcome | None:
        if not self.is_terminal() or self.winner is None:
            return None
        scores = tuple(self.scores())
        return Outcome(self.winner, scores, tuple(tracker(s) for s in scores),
                       dict(self.awards), self.reason)

    # --------------------------------------------------------------- actions
    def chance_outcomes(self) -> list[tuple[Action, float]]:
        if not self.is_chance_node():
            return []
        if self.queue:
            deck = self.decks[self.queue[0]["deck"]]
            counts: dict[str, int] = {}
            for cid in deck:
                counts[cid] = counts.get(cid, 0) + 1
            return [(Draw(self.queue[0]["deck"], c), k / len(deck))
                    for c, k in sorted(counts.items())]
        faces = DICE[self._next_die()]
        return [(Roll(v), 1 / faces) for v in range(1, faces + 1)]

    def _next_die(self) -> str:
        assert self.contest is not None
        return "d10" if self.phase == "rolloff" else self.contest.dice[0]["die"]

    def legal_actions(self) -> list[Action]:
        if self.is_terminal():
            return []
        placer = self._pending_placer()
        if placer is not None:
            k = self.players[placer].pending_global
            return [Place(placer, t, c) for t in self.board.territories for c in range(1, k + 1)]
        if self.is_chance_node():
            return [a for a, _ in self.chance_outcomes()]
        me = self.current_player()
        if self.phase == "setup":
            return [ChooseFirstborn(me, c) for c in sorted(set(self.players[me].dealt))]
        if self.phase == "movement":
            acts: list[Action] = []
            for b in self.players[me].bastards:
                if not b.moved:
                    acts += [Move(me, b.role, t)
                             for t in self.board.within(b.location, self.movement_of(me, b))]
            return acts + [Done(me)] + self._plays(("movement", "anytime"))
        if self.phase == "contest_order":
            return [ChooseContest(me, t) for t in self.contested]
        if self.phase == "window":
            return [Pass(me)] + self._plays(("contest", "anytime"))
        if self.phase == "end_start":
            return [Pass(me)] + self._plays(("end_game", "anytime"))
        if self.phase == "end_score":
            return [Pass(me)] + self._plays(("end_game",))
        if self.phase == "choose_bastard":
            return [ChooseBastard(me, c) for c in sorted(set(self.festival_row))]
        return []  # pragma: no cover

    def _plays(self, timings: tuple[str, ...]) -> list[Action]:
        if self.phase == "window" and self.contest is not None and self.contest.kind in (
                "territory", "crown"):
            timings = ("end_game", "anytime")
        acts: list[Action] = []
        for player in range(self.n):
            for cid in sorted(set(self.players[player].hand)):
                card = self.cards.chaos[cid]
                if card.timing not in timings:
                    continue
                for target, b in self._targets(player, card.target):
                    if self._useful(card.effects, target, b):
                        acts.append(Play(player, cid, target, b.role))
        return acts

    def _targets(self, player: int, kind: str) -> list[tuple[int, Bastard]]:
        out = []
        for t in range(self.n):
            if (kind == "own" and t != player) or (kind == "rival" and t == player):
                continue
            out += [(t, b) for b in self.players[t].bastards]
        return out

    def _useful(self, effects: tuple[Effect, ...], target: int, b: Bastard) -> bool:
        """A card may target a Bastard if at least one of its effects can touch it: contest
        modifiers need a Bastard in the contest, a reveal needs a hidden Skeleton."""
        for e in effects:
            if e.kind in ("modify", "extra_die") and self.contest is not None:
                if b in self.contest_bastards(target):
                    return True
            elif e.kind in ("modify", "extra_die"):
                return True
            elif e.kind == "reveal_skeleton":
                if b.skeleton and not b.revealed:
                    return True
            else:
                return True
        return False

    def apply(self, action: Action | str) -> None:
        if isinstance(action, str):
            action = parse_action(action)
        if action not in self.legal_actions():
            raise IllegalActionError(self._why_illegal(action))
        snapshot = self._dump_core()
        try:
            self._apply(action)
            self._advance()
        except RulesError:
            self._load_core(snapshot)
            raise
        self.history.append(snapshot)

    def undo(self) -> None:
        if not self.history:
            raise IllegalActionError("nothing to undo")
        self._load_core(self.history.pop())

    def _why_illegal(self, action: Action) -> str:
        if self.is_terminal():
            return f"{action}: the game is over"
        who = self.current_player()
        if self.is_chance_node():
            return f"{action}: waiting for a chance outcome ({self.describe_chance()})"
        actor = getattr(action, "player", None)
        if actor is not None and actor != who and not isinstance(action, Play):
            return f"{action}: it is p{who}'s turn to act (phase {self.phase})"
        return f"{action} is not legal now (phase {self.phase}, p{who} to act)"

    def describe_chance(self) -> str:
        if self.queue:
            q = self.queue[0]
            who = f" for p{q['player']}" if q.get("player") is not None else ""
            return f"draw a {q['deck']} card{who} ({q['purpose']})"
        if self.phase == "rolloff":
            return f"tie roll-off: p{self.contest.rolloff[0]} rolls a d10"  # type: ignore[union-attr]
        if self.phase == "dice":
            d = self.contest.dice[0]  # type: ignore[union-attr]
            return f"p{d['player']} rolls a {d['die']} for the {d['role']}"
        return ""

    # --------------------------------------------------------------- effects
    def _support(self, player: int, territory: str, amount: int) -> None:
        p = self.players[player]
        if amount > 0:
            amount = min(amount, p.supply)
        else:
            amount = -min(-amount, self.support[territory][player])
        p.supply -= amount
        self.support[territory][player] += amount

    def _grant_global(self, player: int, amount: int) -> None:
        p = self.players[player]
        p.pending_global += max(0, min(amount, p.supply - p.pending_global))

    def _queue_draw(self, deck: str, purpose: str, player: int | None = None,
                    role: str | None = None, front: bool = False) -> None:
        entry = {"deck": deck, "purpose": purpose, "player": player, "role": role}
        if front:
            self.queue.insert(0, entry)
        else:
            self.queue.append(entry)

    def _immediate(self, effect: Effect, player: int, b: Bastard | None,
                   here: str | None) -> None:
        """Apply an effect that happens once (support, draws, moves, reveals, RAP)."""
        if b is not None and not self._holds(effect, b):
            return
        if effect.kind == "support":
            where = here
            if effect.where == "hometown" and b is not None:
                where = self.cards.bastards[b.card].hometown
            if where is not None:
                self._support(player, where, effect.amount)
        elif effect.kind == "global_support":
            self._grant_global(player, effect.amount)
        elif effect.kind == "draw_chaos":
            for _ in range(effect.amount):
                self._queue_draw("chaos", "hand", player, front=True)
        elif effect.kind == "rap":
            self.players[player].rap_adjust += effect.amount
        elif effect.kind == "move_to" and b is not None:
            to = effect.to
            if to == "hometown":
                to = self.cards.bastards[b.card].hometown
            elif to == "capital":
                to = self.cards.capital
            b.location = to  # type: ignore[assignment]
        elif effect.kind == "reveal_skeleton" and b is not None and b.skeleton and not b.revealed:
            b.revealed = True
            self.log.append(f"p{player}'s {b.role} skeleton revealed: {b.skeleton}")
            self._take_effect(player, b, self.cards.skeletons[b.skeleton].effects)

    def _take_effect(self, player: int, b: Bastard, effects: tuple[Effect, ...]) -> None:
        """A Fortune gained or a Skeleton revealed: its once-effects happen now (its static
        ones are read from the card whenever needed)."""
        for e in effects:
            if e.kind not in STATIC_KINDS:
                self._immediate(e, player, b, b.location)

    def _holds(self, effect: Effect, b: Bastard) -> bool:
        return condition_holds(self.cards, effect.cond, b, self.contest_attribute())

    def _gain_card(self, player: int, b: Bastard, deck: str, card: str) -> None:
        if deck == "fortune":
            b.fortune = card
            self._take_effect(player, b, self.cards.fortunes[card].effects)
        else:
            b.skeleton = card
            b.revealed = False

    # ----------------------------------------------------------------- apply
    def _apply(self, a: Action) -> None:
        if isinstance(a, Draw):
            self._apply_draw(a)
        elif isinstance(a, Roll):
            self._apply_roll(a.value)
        elif isinstance(a, ChooseFirstborn):
            p = self.players[a.player]
            p.dealt.remove(a.card)
            self.decks["bastard"] += p.dealt
            self.decks["bastard"].sort()
            p.dealt = []
            home = self.cards.bastards[a.card].hometown
            p.bastards.append(Bastard(a.card, "firstborn", home))
            if not any(q.dealt for q in self.players):
                for i in self.seat_order():
                    self._queue_draw("skeleton", "attach", i, "firstborn")
                    self._queue_draw("fortune", "attach", i, "firstborn")
                self.step = "begin"
        elif isinstance(a, Move):
            b = self.players[a.player].bastard(a.role)
            assert b is not None
            b.location = a.to
            b.moved = True
        elif isinstance(a, Done):
            self.mover += 1
            if self.mover == self.n:
                for p in self.players:
                    p.markers = [m for m in p.markers if m[0] != "movement"]
                self._contest_phase()
        elif isinstance(a, Play):
            self._apply_play(a)
        elif isinstance(a, Pass):
            self.passed.append(a.player)
            if len(self.passed) == self.n:
                self.passed = []
                self._window_closed()
        elif isinstance(a, ChooseContest):
            self.contested.remove(a.territory)
            self._start_contest("contest", a.territory, self._present(a.territory))
        elif isinstance(a, Place):
            self.players[a.player].pending_global -= a.count
            self._support(a.player, a.territory, a.count)
            if self._pending_placer() is None:
                self.placing = []
        elif isinstance(a, ChooseBastard):
            self.festival_row.remove(a.card)
            self.choosing.pop(0)
            role = FESTIVAL_ROLE[self.turn]
            home = self.cards.bastards[a.card].hometown
            self.players[a.player].bastards.append(Bastard(a.card, role, home))
            self._queue_draw("skeleton", "attach", a.player, role)
            self._queue_draw("fortune", "attach", a.player, role)
            if not self.choosing or not self.festival_row:
                self.choosing = []
                self.decks["bastard"] += self.festival_row
                self.decks["bastard"].sort()
                self.festival_row = []
                self.step = "turn_end"

    def _apply_draw(self, a: Draw) -> None:
        entry = self.queue.pop(0)
        deck = self.decks[a.deck]
        deck.remove(a.card)
        purpose, player = entry["purpose"], entry["player"]
        if purpose == "deal":
            self.players[player].dealt.append(a.card)
        elif purpose == "hand":
            self.players[player].hand.append(a.card)
        elif purpose == "attach":
            b = self.players[player].bastard(entry["role"])
            assert b is not None
            self._gain_card(player, b, a.deck, a.card)
        elif purpose == "contest":
            assert self.contest is not None
            self.contest.card = a.card
            self.log.append(f"contest card {a.card} ({self.cards.contests[a.card].attribute})")
        elif purpose == "festival_site":
            self.festival_row.append(a.card)
            self.festival_site = self.cards.bastards[a.card].hometown
            for p in self.players:
                for b in p.bastards:
                    b.location = self.festival_site
        elif purpose == "festival_row":
            self.festival_row.append(a.card)

    def _apply_play(self, a: Play) -> None:
        card = self.cards.chaos[a.card]
        self.log.append(str(a))
        self.players[a.player].hand.remove(a.card)
        self.discards["chaos"].append(a.card)
        b = self.players[a.target].bastard(a.role)
        assert b is not None
        if any(e.kind in ("modify", "extra_die") for e in card.effects):
            scope = "contest" if self.phase == "window" else (
                "turn" if self.phase == "movement" else "game")
            self.effects.append({"player": a.target, "role": a.role, "card": a.card,
                                 "scope": scope})
        for e in card.effects:
            if e.kind not in ("modify", "extra_die"):
                self._immediate(e, a.target, b, b.location)
        if self.phase in WINDOW_PHASES:
            self.passed = []  # everyone may answer a played card

    def _apply_roll(self, value: int) -> None:
        c = self.contest
        assert c is not None
        if self.phase == "rolloff":
            player = c.rolloff.pop(0)
            c.rolloff_rolls[player] = value
            self.log.append(f"p{player} tie roll {value}")
            if not c.rolloff:
                self._after_rolloff()
            return
        d = c.dice.pop(0)
        c.rolled.setdefault(d["player"], []).append([d["die"], value])
        if value == DICE[d["die"]] and explodes(d["die"], d["n"], self.options, d["own"]):
            c.dice.insert(0, {**d, "n": d["n"] + 1})
        if not c.dice:
            self._dice_done()

    # ------------------------------------------------------------- flow
    def _advance(self) -> None:
        """Run automatic steps until a decision or a chance event is due."""
        while not self.is_terminal():
            if self._pending_placer() is not None:
                return
            if self.queue:
                if self._skip_draw():
                    continue
                return
            if self.step is None:
                return
            step, self.step = self.step, None
            getattr(self, f"_step_{step}")()

    def _skip_draw(self) -> bool:
        """Drop a queued draw that cannot happen (hand full, or deck and discards empty)."""
        q = self.queue[0]
        if q["purpose"] == "hand" and len(self.players[q["player"]].hand) >= self.hand_limit(
                q["player"]):
            self.queue.pop(0)
            return True
        deck = q["deck"]
        refill = self.options.reshuffle_discards or deck == "contest"
        if not self.decks[deck] and refill and self.discards[deck]:
            self.decks[deck] = sorted(self.discards[deck])
            self.discards[deck] = []
            self.log.append(f"{deck} discards reshuffled into the deck")
        if not self.decks[deck]:
            self.queue.pop(0)
            return True
        return False

    def _step_begin(self) -> None:
        self._start_turn(1)

    def _start_turn(self, turn: int) -> None:
        self.turn = turn
        if turn > 1:
            self.first = (self.first + 1) % self.n
        self.log.append(f"turn {turn}: p{self.first} is First Player")
        for p in self.seat_order():
            for _ in range(self.options.draw_count):
                self._queue_draw("chaos", "hand", p)
        self.step = "after_draw"

    def _step_after_draw(self) -> None:
        if self.turn in FESTIVAL_ROLE:
            self._queue_draw("bastard", "festival_site")
            for _ in range(self.n - 1):
                self._queue_draw("bastard", "festival_row")
            self.step = "festival"
        elif self.turn == TURNS:
            self.festival_site = self.cards.capital
            for p in self.players:
                for b in p.bastards:
                    b.location = self.festival_site
            self.step = "festival"
        else:
            self.phase = "movement"
            self.mover = 0
            for p in self.players:
                for b in p.bastards:
                    b.moved = False

    def _step_festival(self) -> None:
        assert self.festival_site is not None
        self.log.append(f"festival {self.cards.festivals[self.turn].name} at "
                        f"{self.festival_site}")
        self._start_contest("festival", self.festival_site, self.seat_order())

    def _present(self, territory: str) -> list[int]:
        return [p for p in self.seat_order()
                if any(b.location == territory for b in self.players[p].bastards)]

    def _contest_phase(self) -> None:
        self.contested = []
        for t in self.board.territories:
            present = self._present(t)
            if len(present) == 1:
                k = sum(1 for b in self.players[present[0]].bastards if b.location == t)
                self._support(present[0], t, self.options.uncontested_base
                              + self.options.uncontested_extra * (k - 1))
            elif len(present) > 1:
                self.contested.append(t)
        self._next_contest()

    def _next_contest(self) -> None:
        if len(self.contested) > 1:
            self.phase = "contest_order"
        elif self.contested:
            t = self.contested.pop()
            self._start_contest("contest", t, self._present(t))
        else:
            self.step = "turn_end"

    def _start_contest(self, kind: str, territory: str | None, participants: list[int],
                       firstborn_only: bool = False) -> None:
        self.contest = Contest(kind, territory, participants, firstborn_only)
        self._queue_draw("contest", "contest")
        self.phase = "window"
        self.passed = []

    def _window_closed(self) -> None:
        if self.phase == "end_start":
            self._step_awards()
            return
        if self.phase == "end_score":
            self._crown()
            return
        c = self.contest
        assert c is not None
        for p in c.participants:
            for b in self.contest_bastards(p):
                for i, die in enumerate(dice_for(self.cards, b, self.context(p, b.role))):
                    c.dice.append({"player": p, "role": b.role, "die": die,
                                   "own": i == 0 and b.role == "firstborn", "n": 0})
        self.phase = "dice"
        if not c.dice:  # pragma: no cover - every Bastard has a die
            self._dice_done()

    def _dice_done(self) -> None:
        c = self.contest
        assert c is not None
        totals = self.contest_totals()
        attribute = self.contest_attribute()
        assert attribute is not None
        bases = {p: base_sum(self.cards, self.contest_bastards(p), attribute)
                 for p in c.participants}
        c.groups = rank_groups(totals, bases, c.participants)
        self.log.append("totals " + ", ".join(f"p{p}={totals[p]}" for p in c.participants))
        self._after_rolloff()

    def _after_rolloff(self) -> None:
        c = self.contest
        assert c is not None
        if c.rolloff_rolls:
            i = next(i for i, g in enumerate(c.groups) if set(g) == set(c.rolloff_rolls))
            c.groups[i:i + 1] = split_by_rolls(c.groups[i], c.rolloff_rolls)
            c.rolloff_rolls = {}
        need_all = c.kind == "festival"
        for g in c.groups if need_all else c.groups[:1]:
            if len(g) > 1:
                c.rolloff = list(g)
                self.phase = "rolloff"
                return
        self._finish_contest()

    def _finish_contest(self) -> None:
        c = self.contest
        assert c is not None and c.card is not None
        ranking = [p for g in c.groups for p in g]
        winner = ranking[0]
        self.phase = "resolve"
        card = self.cards.contests[c.card]
        self.log.append(f"{c.kind} at {c.territory or 'court'}: p{winner} wins")
        for p in c.participants:  # +1/-1 markers are spent once enforced
            self.players[p].markers = [m for m in self.players[p].markers
                                       if m[0] != card.attribute]
        if c.kind == "contest":
            for p in c.participants:
                for e in card.first if p == winner else card.loser:
                    self._reward(p, e, c)
        self.discards["contest"].append(c.card)
        self.effects = [e for e in self.effects if e["scope"] != "contest"]
        self.contest = None
        if c.kind == "contest":
            self._next_contest()
        elif c.kind == "festival":
            fest = self.cards.festivals[self.turn]
            for place, p in enumerate(ranking):
                self._grant_global(p, fest.reward(place))
            self.placing = list(ranking)
            if self.turn in FESTIVAL_ROLE and self.festival_row:
                self.choosing = list(ranking)
                self.phase = "choose_bastard"
            else:
                self.decks["bastard"] += self.festival_row
                self.decks["bastard"].sort()
                self.festival_row = []
                self.step = "turn_end"
        elif c.kind == "territory":
            assert c.territory is not None
            self.awards[c.territory] = winner
            self._step_awards()
        else:
            self._game_over(winner, "crown tie-break contest")

    def _reward(self, player: int, e: Effect, c: Contest) -> None:
        bastards = self.contest_bastards(player)
        if not e.cond.is_empty() and not any(self._holds(e, b) for b in bastards):
            return
        if e.kind == "modify":
            attribute = c.card and self.cards.contests[c.card].attribute
            name = attribute if e.attribute in ("contest", "all") else e.attribute
            self.players[player].markers.append([name, e.amount])
        else:
            self._immediate(e, player, None, c.territory)

    def _step_turn_end(self) -> None:
        self.effects = [e for e in self.effects if e["scope"] != "turn"]
        self.festival_site = None
        if self.turn < TURNS:
            self._start_turn(self.turn + 1)
            return
        self.log.append("end game")
        if self.options.reveal_skeletons_at_end:
            for i, p in enumerate(self.players):
                for b in p.bastards:
                    self._immediate(Effect("reveal_skeleton"), i, b, b.location)
        order = list(self.board.territories)
        if self.options.end_game_territory_order == "rap":
            order.sort(key=lambda t: -self.cards.territories[t].rap)
        self.award_queue = order
        self.phase = "end_start"
        self.passed = []

    def _step_awards(self) -> None:
        while self.award_queue:
            t = self.award_queue.pop(0)
            most = majority(self.support[t])
            holders = [p for p in self.seat_order() if p in most]
            if not holders:
                self.awards[t] = None
            elif len(holders) == 1:
                self.awards[t] = holders[0]
            else:
                self._start_contest("territory", t, holders, firstborn_only=True)
                return
        self.phase = "end_score"
        self.passed = []

    def _crown(self) -> None:
        scores = self.scores()
        best = max(scores)
        tied = [p for p in self.seat_order() if scores[p] == best]
        if len(tied) == 1:
            self._game_over(tied[0], "most Royal Approval Points")
        else:
            self._start_contest("crown", None, tied,
                                firstborn_only=self.options.crown_tie_firstborn_only)

    def _game_over(self, winner: int, reason: str) -> None:
        self.winner = winner
        self.reason = reason
        self.phase = "over"
        self.log.append(f"p{winner} is crowned ({reason})")

    # ------------------------------------------------------------ serialise
    def _dump_core(self) -> dict[str, Any]:
        return {
            "turn": self.turn, "first": self.first, "phase": self.phase, "step": self.step,
            "players": [p.to_dict() for p in self.players],
            "decks": {d: list(v) for d, v in self.decks.items()},
            "discards": {d: list(v) for d, v in self.discards.items()},
            "support": {t: list(v) for t, v in self.support.items()},
            "queue": [dict(q) for q in self.queue], "mover": self.mover,
            "contested": list(self.contested),
            "contest": self.contest.to_dict() if self.contest else None,
            "passed": list(self.passed), "effects": [dict(e) for e in self.effects],
            "placing": list(self.placing), "choosing": list(self.choosing),
            "festival_row": list(self.festival_row), "festival_site": self.festival_site,
            "awards": dict(self.awards), "award_queue": list(self.award_queue),
            "winner": self.winner, "reason": self.reason, "log": list(self.log),
        }

    def _load_core(self, d: dict[str, Any]) -> None:
        self.turn, self.first, self.phase, self.step = d["turn"], d["first"], d["phase"], d["step"]
        self.players = []
        for p in d["players"]:
            self.players.append(Player(
                p["colour"], p["supply"], list(p["hand"]), list(p["dealt"]),
                [Bastard(**b) for b in p["bastards"]], [list(m) for m in p["markers"]],
                p["pending_global"], p["rap_adjust"]))
        self.decks = {k: list(v) for k, v in d["decks"].items()}
        self.discards = {k: list(v) for k, v in d["discards"].items()}
        self.support = {k: list(v) for k, v in d["support"].items()}
        self.queue = [dict(q) for q in d["queue"]]
        self.mover = d["mover"]
        self.contested = list(d["contested"])
        c = d["contest"]
        self.contest = None if c is None else Contest(
            c["kind"], c["territory"], list(c["participants"]), c["firstborn_only"], c["card"],
            [dict(x) for x in c["dice"]],
            {int(p): [list(r) for r in v] for p, v in c["rolled"].items()},
            [list(g) for g in c["groups"]], list(c["rolloff"]),
            {int(p): v for p, v in c["rolloff_rolls"].items()})
        self.passed = list(d["passed"])
        self.effects = [dict(e) for e in d["effects"]]
        self.placing, self.choosing = list(d["placing"]), list(d["choosing"])
        self.festival_row, self.festival_site = list(d["festival_row"]), d["festival_site"]
        self.awards, self.award_queue = dict(d["awards"]), list(d["award_queue"])
        self.winner, self.reason, self.log = d["winner"], d["reason"], list(d["log"])

    def to_json(self) -> dict[str, Any]:
        return {"schema": STATE_SCHEMA, "cards": self.cards.to_dict(),
                "map": self.board.to_dict(), "options": self.options.to_dict(),
                **self._dump_core()}

    @classmethod
    def from_json(cls, data: Any) -> GameState:
        from .validate import validate_core

        if not isinstance(data, dict):
            raise InvalidPositionError("a state must be a JSON object", "state")
        if data.get("schema") != STATE_SCHEMA:
            raise InvalidPositionError(f"must be {STATE_SCHEMA!r}", "schema")
        cards = load_card_set(data.get("cards"))
        board = board_from_dict(data.get("map"), cards)
        options = Options.from_dict(data.get("options"))
        players = data.get("players")
        if not isinstance(players, list) or not 2 <= len(players) <= 4:
            raise InvalidPositionError("must be a list of 2-4 players", "players")
        colours = [p.get("colour", "?") if isinstance(p, dict) else "?" for p in players]
        first = data.get("first")
        if not isinstance(first, int) or isinstance(first, bool) or not 0 <= first < len(colours):
            raise InvalidPositionError(f"must be 0..{len(colours) - 1}", "first")
        state = cls(cards, board, options, colours, first)
        validate_core(state, data)
        try:
            state._load_core(data)
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidPositionError(f"malformed state: {exc!r}", "state") from None
        state.check_invariants()
        return state

    def check_invariants(self) -> None:
        from .validate import check_invariants

        check_invariants(self)

    def view(self, player: int) -> dict[str, Any]:
        """What `player` may see: other hands and hidden Skeletons are masked, decks counted."""
        data = self.to_json()
        data.pop("cards")
        for i, p in enumerate(data["players"]):
            if i == player:
                continue
            p["hand"] = len(p["hand"])
            p["dealt"] = len(p["dealt"])
            for b in p["bastards"]:
                if not b["revealed"] and b["skeleton"]:
                    b["skeleton"] = "hidden"
        data["decks"] = {d: len(v) for d, v in data["decks"].items()}
        return data


def new_game(players: int = 4, cards: CardSet | None = None, board: Board | None = None,
             options: Options | None = None, first_player: int = 0,
             colours: list[str] | None = None, seed: int = 0) -> GameState:
    """Setup: deal 3 Bastards to each player (chance nodes), then each keeps a Firstborn.
    `first_player` holds Joda City. Without a board, a random one is laid from `seed`."""
    from .cards import sample_card_set

    cards = cards or sample_card_set()
    board = board or random_board(cards, random.Random(seed))
    colours = list(colours or DEFAULT_COLOURS[:players])
    if len(colours) != players or len(set(colours)) != players:
        raise InvalidPositionError("need one distinct colour per player", "colours")
    state = GameState(cards, board, options or Options(), colours, first_player)
    if len(state.decks["bastard"]) < 3 * players:
        raise InvalidPositionError("not enough Bastard cards to deal 3 each", "cards.bastards")
    for p in state.seat_order():
        for _ in range(3):
            state._queue_draw("bastard", "deal", p)
    state._advance()
    return state


def random_action(state: GameState, rng: random.Random) -> Action:
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        return rng.choices([a for a, _ in outcomes], weights=[w for _, w in outcomes])[0]
    return rng.choice(state.legal_actions())


def play_random_game(seed: int, players: int = 4, cards: CardSet | None = None,
                     board: Board | None = None, options: Options | None = None,
                     max_actions: int = 50_000, keep_history: bool = False) -> GameState:
    """Self-play with uniformly random players and a seeded roller/shuffler."""
    rng = random.Random(seed)
    state = new_game(players, cards, board, options, first_player=rng.randrange(players),
                     seed=seed)
    for _ in range(max_actions):
        if state.is_terminal():
            return state
        state.apply(random_action(state, rng))
        if not keep_history:
            state.history.clear()
    raise RulesError(f"game {seed} did not end within {max_actions} actions")


__all__ = ["CHANCE", "TERMINAL", "Contest", "GameState", "Outcome",
           "Player", "new_game", "play_random_game", "random_action"]
