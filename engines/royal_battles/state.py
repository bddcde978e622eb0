"""The Royal Battles game as a state machine (OpenSpiel style).

`GameState.new(armies)` starts at an empty table. Decisions (place a unit, move, attack, …) and
chance events (a set-up card, an initiative card, a card drawn) are both `Action`s passed to
`apply`; `is_chance_node()` says which kind is due. Chance outcomes come from a seeded shuffler in
self-play or from the table (a card the camera or a player reports). A hand may be hidden: then
only its size is known and its draws are `draw ?`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields, replace
from enum import StrEnum

from engines.errors import IllegalActionError

from .actions import Action, Verb
from .board import (
    ALL_CELLS,
    CELL_NAMES,
    NEIGHBOURS,
    Cell,
    DigitCorners,
    Orientation,
    default_digit_corners,
    is_melee,
    is_ranged,
    make_cell,
)
from .cards import CARD_ORDER, DECK, Card, Colour, movement_colour_ok
from .combat import AttackResult, attack_styles, resolve_attack
from .units import UNIT_KINDS, Side, parse_kind

ARMY_SIZE = 4
SETUP_FILES = (0, 2, 4, 6)  # a, c, e, g
POST_TURN_DRAWS = 2


@dataclass(frozen=True, slots=True)
class Options:
    """Rule options: every point the rulebook leaves open, with the default of the rules page."""

    allow_pass: bool = False  # may a player who can move decline to?
    allow_move_onto_unit: bool = False  # may a movement card cover a card another unit stands on?
    joker_declared_colour: bool = False  # a joker laid on the board takes a colour its player names
    critical_doubles_advantages: bool = True  # four trumps double advantages too

    def to_json(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


class Phase(StrEnum):
    SETUP = "setup"  # set-up cards being laid (chance)
    PLACE = "place"  # units being placed on them
    INITIATIVE = "initiative"  # initiative cards being turned up (chance)
    PRE_TURN_DRAW = "pre-turn-draw"
    MOVEMENT = "movement"
    ATTACK = "attack"
    POST_TURN = "post-turn"  # key-position draws, then keep or discard the hand
    OVER = "over"


@dataclass(frozen=True, slots=True)
class PlacedCard:
    """A card lying on the board, with how it lies and whose deck it came from (if known)."""

    card: Card
    owner: Side | None = None
    orientation: Orientation = Orientation.PORTRAIT
    corners: DigitCorners = DigitCorners.NW_SE
    declared: Colour | None = None  # a joker's named colour (joker_declared_colour option)

    @property
    def colour(self) -> Colour | None:
        return self.declared if self.card.is_joker else self.card.colour


@dataclass(frozen=True, slots=True)
class Unit:
    side: Side
    kind: str
    injury: int = 0

    @property
    def life_left(self) -> int:
        return UNIT_KINDS[self.kind].life - self.injury


@dataclass(slots=True)
class Player:
    """One player's cards away from the board. `unseen` is every card of their 54 whose place is
    not known: the deck and, when the hand is hidden, the hand."""

    unseen: Counter
    deck: int
    hand: list[Card] | None = field(default_factory=list)  # None: hidden hand
    hidden_hand_size: int = 0
    initiative_pile: list[Card] = field(default_factory=list)  # bottom to top
    discards: list[Card] = field(default_factory=list)
    hidden_discards: int = 0
    army: tuple[str, ...] = ()

    @property
    def hand_size(self) -> int:
        return len(self.hand) if self.hand is not None else self.hidden_hand_size

    def copy(self) -> Player:
        return Player(Counter(self.unseen), self.deck,
                      None if self.hand is None else list(self.hand), self.hidden_hand_size,
                      list(self.initiative_pile), list(self.discards), self.hidden_discards,
                      self.army)

    def take_unseen(self, card: Card) -> None:
        left = self.unseen[card] - 1
        if left:
            self.unseen[card] = left
        else:
            del self.unseen[card]


@dataclass(frozen=True, slots=True)
class Outcome:
    winner: Side | None  # None: a tie
    reason: str  # annihilation | no-initiative-card | more-units | playable-cards | tie
    units: tuple[int, int] = (0, 0)  # white, black units left

    def to_json(self) -> dict:
        return {"winner": self.winner.value if self.winner else None, "reason": self.reason,
                "units": {"white": self.units[0], "black": self.units[1]}}


@dataclass(frozen=True, slots=True)
class Pending:
    """A chance event due next: what is drawn, by whom, and where it goes."""

    verb: Verb  # SETUP, INITIATIVE or DRAW
    side: Side
    cell: Cell | None = None


class GameState:
    """A whole game of Royal Battles: position, whose decision or which chance event is due,
    and the history that `undo` walks back."""

    __slots__ = ("options", "phase", "round", "to_move", "first", "moved", "stacks", "units",
                 "players", "initiative", "pending", "to_place", "outcome", "last_attack",
                 "history", "actions")

    def __init__(self, options: Options | None = None) -> None:
        self.options = options or Options()
        self.phase = Phase.SETUP
        self.round = 0
        self.to_move = Side.WHITE
        self.first: Side | None = None  # the initiative winner of this round
        self.moved: Cell | None = None  # the unit that moved this turn (may attack)
        self.stacks: list[tuple[PlacedCard, ...]] = [() for _ in ALL_CELLS]  # bottom to top
        self.units: dict[Cell, Unit] = {}
        self.players: dict[Side, Player] = {}
        self.initiative: dict[Side, Card | None] = {Side.WHITE: None, Side.BLACK: None}
        self.pending: list[Pending] = []
        self.to_place: dict[Side, list[str]] = {Side.WHITE: [], Side.BLACK: []}
        self.outcome: Outcome | None = None
        self.last_attack: AttackResult | None = None
        self.history: list[GameState] = []
        self.actions: list[Action] = []

    # ----------------------------------------------------------------- construction

    @classmethod
    def new(cls, armies: dict[Side, list[str]] | None = None,
            options: Options | None = None) -> GameState:
        """An empty table: both decks full, the set-up cards about to be drawn."""
        state = cls(options)
        armies = armies or {s: ["pawn", "knight", "bishop", "king"] for s in Side}
        for side in Side:
            army = [parse_kind(k).name for k in armies[side]]
            if len(army) != ARMY_SIZE:
                raise IllegalActionError(f"{side.value} army must have exactly 4 units, "
                                         f"got {len(army)}")
            state.players[side] = Player(Counter(DECK), len(DECK), army=tuple(army))
            state.to_place[side] = list(army)
        for side in Side:
            for f in SETUP_FILES:
                state.pending.append(Pending(Verb.SETUP, side, make_cell(f, side.home_rank)))
        return state

    def copy(self) -> GameState:
        """An independent copy without history (cheap: cards and units are immutable)."""
        other = GameState.__new__(GameState)
        other.options = self.options
        other.phase = self.phase
        other.round = self.round
        other.to_move = self.to_move
        other.first = self.first
        other.moved = self.moved
        other.stacks = list(self.stacks)
        other.units = dict(self.units)
        other.players = {s: p.copy() for s, p in self.players.items()}
        other.initiative = dict(self.initiative)
        other.pending = list(self.pending)
        other.to_place = {s: list(v) for s, v in self.to_place.items()}
        other.outcome = self.outcome
        other.last_attack = self.last_attack
        other.history = []
        other.actions = []
        return other

    # ----------------------------------------------------------------- queries

    def top(self, cell: Cell) -> PlacedCard | None:
        stack = self.stacks[cell]
        return stack[-1] if stack else None

    def units_of(self, side: Side) -> dict[Cell, Unit]:
        return {c: u for c, u in self.units.items() if u.side is side}

    def is_chance_node(self) -> bool:
        return bool(self.pending) and self.outcome is None

    def is_terminal(self) -> bool:
        return self.outcome is not None

    def current_player(self) -> Side | None:
        """Who decides next; None at a chance node or when the game is over."""
        if self.outcome is not None or self.pending:
            return None
        return self.to_move

    def chance_outcomes(self) -> list[tuple[Action, float]]:
        """The possible outcomes of the chance event due now, with their probabilities."""
        if not self.is_chance_node():
            return []
        ev = self.pending[0]
        player = self.players[ev.side]
        if ev.verb is Verb.DRAW and player.hand is None:
            return [(Action(ev.side, Verb.DRAW, card=None), 1.0)]
        pool = player.unseen
        if ev.verb is Verb.SETUP:  # aces and jokers are shuffled back: never laid at set-up
            pool = Counter({c: n for c, n in pool.items() if not (c.is_ace or c.is_joker)})
        total = sum(pool.values())
        return [(Action(ev.side, ev.verb, card=c, to=ev.cell), pool[c] / total)
                for c in CARD_ORDER if pool[c] > 0]

    def sample_chance(self, rng) -> Action:
        """Draw the chance event due now from a seeded shuffler (`random.Random`)."""
        ev = self.pending[0]
        player = self.players[ev.side]
        if ev.verb is Verb.DRAW and player.hand is None:
            return Action(ev.side, Verb.DRAW, card=None)
        pool = player.unseen
        setup = ev.verb is Verb.SETUP
        cards = [c for c in CARD_ORDER if pool[c] > 0 and not (setup and c.rank >= 14)]
        pick = rng.random() * sum(pool[c] for c in cards)
        for card in cards:
            pick -= pool[card]
            if pick < 0:
                break
        return Action(ev.side, ev.verb, card=card, to=ev.cell)

    def legal_actions(self) -> list[Action]:
        if self.outcome is not None:
            return []
        if self.pending:
            return [a for a, _ in self.chance_outcomes()]
        side = self.to_move
        phase = self.phase
        if phase is Phase.PLACE:
            home = [make_cell(f, side.home_rank) for f in SETUP_FILES]
            free = [c for c in home if c not in self.units]
            return [Action(side, Verb.PLACE, kind=k, to=c)
                    for k in sorted(set(self.to_place[side])) for c in free]
        if phase is Phase.PRE_TURN_DRAW:
            return [Action(side, Verb.TAKE_DRAW), Action(side, Verb.SKIP_DRAW)]
        if phase is Phase.MOVEMENT:
            moves = self.movement_actions(side)
            hidden = self.players[side].hand is None
            if not moves or self.options.allow_pass or hidden:
                moves.append(Action(side, Verb.PASS))
            return moves
        if phase is Phase.ATTACK:
            return self.attack_actions() + [Action(side, Verb.NO_ATTACK)]
        if phase is Phase.POST_TURN:
            return [Action(side, Verb.KEEP), Action(side, Verb.DISCARD)]
        return []

    def movement_cards(self, side: Side) -> list[Card]:
        """The distinct cards `side` might play: its hand, or any unseen card if it is hidden."""
        player = self.players[side]
        if player.hand is None:
            if not player.hidden_hand_size:
                return []
            return [c for c in CARD_ORDER if player.unseen[c] > 0]
        return sorted(set(player.hand), key=lambda c: c.order)

    def movement_actions(self, side: Side, cards: list[Card] | None = None) -> list[Action]:
        """Every legal movement for `side` with the given cards (default: what it may hold)."""
        cards = self.movement_cards(side) if cards is None else cards
        if not cards:
            return []
        out: list[Action] = []
        declare = self.options.joker_declared_colour
        onto_unit = self.options.allow_move_onto_unit
        for frm, unit in sorted(self.units.items()):
            if unit.side is not side:
                continue
            standing = self.top(frm)
            for card in cards:
                if not movement_colour_ok(card, standing.card, standing.colour):
                    continue
                for to in (frm, *NEIGHBOURS[frm]):
                    if to != frm and to in self.units and not onto_unit:
                        continue
                    covered = self.top(to)
                    if covered is not None and not movement_colour_ok(
                        card, covered.card, covered.colour
                    ):
                        continue
                    if card.is_joker and declare:
                        out.append(Action(side, Verb.MOVE, card=card, frm=frm, to=to,
                                          declared=Colour.RED))
                        out.append(Action(side, Verb.MOVE, card=card, frm=frm, to=to,
                                          declared=Colour.BLACK))
                    else:
                        out.append(Action(side, Verb.MOVE, card=card, frm=frm, to=to))
        return out

    def attack_actions(self) -> list[Action]:
        """Every attack or advantage the unit that moved this turn may use."""
        if self.moved is None or self.moved not in self.units:
            return []
        attacker = self.units[self.moved]
        out = []
        for cell in NEIGHBOURS[self.moved]:
            target = self.units.get(cell)
            if target is None:
                continue
            styles = attack_styles(attacker.kind, is_melee(self.moved, cell),
                                   is_ranged(self.moved, cell), target.side is attacker.side)
            out += [Action(attacker.side, Verb.ATTACK, to=cell, style=s) for s in styles]
        return out

    def has_playable_card(self, side: Side) -> bool:
        """Could `side` move some unit with a card in hand? (A hidden hand of any size counts.)"""
        player = self.players[side]
        if player.hand is None:
            return player.hidden_hand_size > 0
        return bool(player.hand) and bool(self.movement_actions(side, sorted(set(player.hand),
                                                                              key=str)))

    # ----------------------------------------------------------------- transitions

    def apply(self, action: Action) -> None:
        """Play `action`; raises IllegalActionError (leaving the state unchanged) if illegal."""
        self._check_legal(action)
        self.history.append(self.copy())
        self.actions.append(action)
        try:
            self._perform(action)
            self._advance()
        except Exception:
            self.undo()  # never leave a half-applied action behind
            raise

    def undo(self) -> Action:
        """Take back the last action and return it."""
        if not self.history:
            raise IllegalActionError("nothing to undo")
        snapshot = self.history.pop()
        action = self.actions.pop()
        for name in GameState.__slots__:
            if name not in ("history", "actions"):
                setattr(self, name, getattr(snapshot, name))
        return action

    def _check_legal(self, action: Action) -> None:
        if self.outcome is not None:
            raise IllegalActionError(f"the game is over; {action} is not possible")
        if self.pending:
            ev = self.pending[0]
            if action.verb is not ev.verb or action.side is not ev.side:
                raise IllegalActionError(
                    f"{action} is not possible now: waiting for {ev.side.value} {ev.verb.value}"
                    + (f" on {CELL_NAMES[ev.cell]}" if ev.cell is not None else ""))
            if ev.verb is Verb.SETUP and action.to != ev.cell:
                raise IllegalActionError(f"the next set-up card goes on {CELL_NAMES[ev.cell]}")
            player = self.players[ev.side]
            if action.card is None:
                if not (ev.verb is Verb.DRAW and player.hand is None):
                    raise IllegalActionError(f"{action}: the card must be named "
                                             f"({ev.side.value}'s hand is known)")
                return
            if ev.verb is Verb.DRAW and player.hand is None:
                raise IllegalActionError(f"{action}: {ev.side.value}'s hand is hidden; a "
                                         "hidden draw is written 'draw ?'")
            if player.unseen[action.card] <= 0:
                raise IllegalActionError(f"{action}: no {action.card} is left in "
                                         f"{ev.side.value}'s deck")
            if ev.verb is Verb.SETUP and (action.card.is_ace or action.card.is_joker):
                raise IllegalActionError(f"{action}: aces and jokers are shuffled back at set-up")
            return
        if action.is_chance:
            raise IllegalActionError(f"{action}: no card is being drawn now "
                                     f"({self.to_move.value} to {self.phase.value})")
        if action.side is not self.to_move:
            raise IllegalActionError(f"{action}: it is {self.to_move.value}'s turn")
        key = action.rules_key()
        if action.verb is Verb.MOVE and self.phase is Phase.MOVEMENT and action.card is not None:
            # one card's movements, not every card's: a hidden hand may hold any of ~50 cards,
            # and the tracker asks this of every card a reading might name
            if (not self._may_hold(action.side, action.card)
                    or key not in self.movement_actions(action.side, [action.card])):
                raise IllegalActionError(self._why_illegal(action))
            return
        if key not in self.legal_actions():
            raise IllegalActionError(self._why_illegal(action))

    def _may_hold(self, side: Side, card: Card) -> bool:
        """Might `side` move with `card`: in its hand, or (hidden hand) one left unseen?"""
        player = self.players[side]
        if player.hand is None:
            return player.hidden_hand_size > 0 and player.unseen[card] > 0
        return card in player.hand

    def _why_illegal(self, action: Action) -> str:
        base = f"illegal action {action} in phase {self.phase.value}"
        if action.verb is Verb.MOVE and self.phase is Phase.MOVEMENT:
            unit = self.units.get(action.frm)
            player = self.players[action.side]
            if unit is None or unit.side is not action.side:
                return f"{base}: no {action.side.value} unit on {CELL_NAMES[action.frm]}"
            if player.hand is not None and action.card not in player.hand:
                return f"{base}: {action.card} is not in {action.side.value}'s hand"
            if action.to != action.frm and action.to not in NEIGHBOURS[action.frm]:
                return f"{base}: {CELL_NAMES[action.to]} is not next to {CELL_NAMES[action.frm]}"
            standing = self.top(action.frm)
            if not movement_colour_ok(action.card, standing.card, standing.colour):
                return f"{base}: {action.card} has the colour of the standing card {standing.card}"
            if action.to != action.frm and action.to in self.units \
                    and not self.options.allow_move_onto_unit:
                return f"{base}: another unit stands on {CELL_NAMES[action.to]}"
            covered = self.top(action.to)
            if covered and not movement_colour_ok(action.card, covered.card, covered.colour):
                return f"{base}: {action.card} cannot cover {covered.card} (same colour)"
            if action.declared and not self.options.joker_declared_colour:
                return f"{base}: declaring a joker's colour needs the joker_declared_colour option"
            # last: the board's own reasons first, as a player at the table checks them
            if player.hand is None and not self._may_hold(action.side, action.card):
                return (f"{base}: {action.side.value} cannot hold {action.card} (none unseen"
                        f"{'' if player.hidden_hand_size else ', and no cards in hand'})")
        if action.verb is Verb.PASS and self.phase is Phase.MOVEMENT:
            return f"{base}: {action.side.value} can move and must (option allow_pass is off)"
        actions = self.legal_actions()
        legal = ", ".join(str(a) for a in actions[:8])
        return f"{base}; legal now: {legal}{' …' if len(actions) > 8 else ''}"

    def _perform(self, action: Action) -> None:
        side = action.side
        player = self.players[side]
        verb = action.verb
        if verb is Verb.SETUP:
            self.pending.pop(0)
            player.take_unseen(action.card)
            player.deck -= 1
            self.stacks[action.to] = (PlacedCard(action.card, side),)
        elif verb is Verb.PLACE:
            self.to_place[side].remove(action.kind)
            self.units[action.to] = Unit(side, action.kind)
            self.to_move = side.other if self.to_place[side.other] else side
        elif verb is Verb.INITIATIVE:
            self.pending.pop(0)
            player.take_unseen(action.card)
            player.deck -= 1
            player.initiative_pile.append(action.card)
            self.initiative[side] = action.card
        elif verb is Verb.DRAW:
            self.pending.pop(0)
            player.deck -= 1
            if action.card is None:
                player.hidden_hand_size += 1
            else:
                player.take_unseen(action.card)
                player.hand.append(action.card)
        elif verb is Verb.TAKE_DRAW:
            self.pending.append(Pending(Verb.DRAW, side))
            self.phase = Phase.MOVEMENT
        elif verb is Verb.SKIP_DRAW:
            self.phase = Phase.MOVEMENT
        elif verb is Verb.MOVE:
            self._play_movement(action)
        elif verb is Verb.PASS:
            self.phase = Phase.POST_TURN
        elif verb is Verb.ATTACK:
            self._attack(action)
        elif verb is Verb.NO_ATTACK:
            self.phase = Phase.POST_TURN
        elif verb is Verb.DISCARD:
            if player.hand is None:
                player.hidden_discards += player.hidden_hand_size
                player.hidden_hand_size = 0
            else:
                player.discards += player.hand
                player.hand = []
            self._end_turn()
        elif verb is Verb.KEEP:
            self._end_turn()

    def _play_movement(self, action: Action) -> None:
        side = action.side
        player = self.players[side]
        if player.hand is None:
            player.take_unseen(action.card)
            player.hidden_hand_size -= 1
        else:
            player.hand.remove(action.card)
        corners = action.corners or default_digit_corners(action.orientation)
        declared = action.declared if action.card.is_joker else None
        placed = PlacedCard(action.card, side, action.orientation, corners, declared)
        self.stacks[action.to] = (*self.stacks[action.to], placed)
        if action.to != action.frm and action.to not in self.units:
            self.units[action.to] = self.units.pop(action.frm)
            self.moved = action.to
        else:  # covered its own card, or (option) slid the card under another unit: it stays
            self.moved = action.frm
        self.phase = Phase.ATTACK

    def _attack(self, action: Action) -> None:
        result = resolve_attack(self, self.moved, action.to, action.style)
        self.last_attack = result
        for eff in result.effects:
            unit = self.units[eff.cell]
            life = UNIT_KINDS[unit.kind].life
            injury = min(life, max(0, unit.injury + eff.damage - eff.healed))
            if injury >= life:
                del self.units[eff.cell]  # its standing card stays on the board
            else:
                self.units[eff.cell] = replace(unit, injury=injury)
        for _ in range(result.draws):
            self.pending.append(Pending(Verb.DRAW, action.side))
        self.phase = Phase.POST_TURN
        for side in Side:
            if not any(u.side is side for u in self.units.values()):
                self._finish(Outcome(side.other, "annihilation", self._unit_counts()))

    def _end_turn(self) -> None:
        if self.to_move is self.first:
            self._begin_turn(self.to_move.other)
        else:
            self._start_round()

    def _begin_turn(self, side: Side) -> None:
        self.to_move = side
        self.moved = None
        self.phase = Phase.PRE_TURN_DRAW

    def _start_round(self) -> None:
        if any(p.deck == 0 for p in self.players.values()):
            self._finish_by_exhaustion()
            return
        self.round += 1
        self.first = None
        self.moved = None
        self.last_attack = None
        self.phase = Phase.INITIATIVE
        self.pending += [Pending(Verb.INITIATIVE, Side.WHITE), Pending(Verb.INITIATIVE, Side.BLACK)]

    def _resolve_initiative(self) -> None:
        w, b = self.initiative[Side.WHITE], self.initiative[Side.BLACK]
        if w is b:  # both jokers, or the very same card: both draw again
            if any(p.deck == 0 for p in self.players.values()):
                self._finish_by_exhaustion()
                return
            self.pending += [Pending(Verb.INITIATIVE, Side.WHITE),
                             Pending(Verb.INITIATIVE, Side.BLACK)]
            return
        self.first = Side.WHITE if w.initiative_key() > b.initiative_key() else Side.BLACK
        self._begin_turn(self.first)

    def _advance(self) -> None:
        """Run the automatic steps until a decision or a chance event is due."""
        while self.outcome is None:
            # draws from an empty deck simply don't happen
            while self.pending and self.pending[0].verb is Verb.DRAW and \
                    self.players[self.pending[0].side].deck == 0:
                self.pending.pop(0)
            if self.pending:
                return
            phase = self.phase
            if phase is Phase.SETUP:
                self.phase = Phase.PLACE
                self.to_move = Side.WHITE
                return
            if phase is Phase.PLACE:
                if any(self.to_place.values()):
                    return
                self._start_round()
            elif phase is Phase.INITIATIVE:
                self._resolve_initiative()
            elif phase is Phase.PRE_TURN_DRAW:
                player = self.players[self.to_move]
                if player.hand_size or not player.deck:
                    self.phase = Phase.MOVEMENT
                else:
                    return
            elif phase is Phase.ATTACK:
                if self.attack_actions():
                    return
                self.phase = Phase.POST_TURN
            elif phase is Phase.POST_TURN:
                if self.players[self.to_move].hand_size:
                    return
                self._end_turn()
            else:
                return

    def _unit_counts(self) -> tuple[int, int]:
        units = list(self.units.values())
        return (sum(u.side is Side.WHITE for u in units), sum(u.side is Side.BLACK for u in units))

    def _finish(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.phase = Phase.OVER
        self.pending = []

    def _finish_by_exhaustion(self) -> None:
        """No initiative card can be drawn: more units wins, then playable cards, else a tie."""
        w, b = self._unit_counts()
        if w != b:
            self._finish(Outcome(Side.WHITE if w > b else Side.BLACK, "more-units", (w, b)))
            return
        playable = [s for s in Side if self.has_playable_card(s)]
        if len(playable) == 1:
            self._finish(Outcome(playable[0], "playable-cards", (w, b)))
        else:
            self._finish(Outcome(None, "tie", (w, b)))

    # ----------------------------------------------------------------- conveniences

    def apply_text(self, text: str) -> Action:
        from .actions import parse_action

        action = parse_action(text)
        self.apply(action)
        return action

    def __repr__(self) -> str:
        return (f"GameState(round={self.round}, phase={self.phase.value}, "
                f"to_move={self.to_move.value}, units={len(self.units)})")
