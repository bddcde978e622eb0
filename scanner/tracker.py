"""From frames to the game: turn a stream of `TableReading`s into Royal Battles events.

Two ideas carry it (norfair's hysteresis and LiveChess2FEN's use of the previous position):
- a reading is believed only once it has been seen on several consecutive settled frames; frames
  with hands over the board (or no board) never become state;
- a settled change is interpreted against the engine: only a legal reading of what the camera saw
  becomes an event; what is still unclear is held for a player to confirm, with the reason.

A card or a placement the rules leave standing but the camera can't settle to ACCEPT does not stop
the game: the likeliest reading stands in the engine as an *open question* (its events are marked,
never counted as seen), and later looks settle it: a card read again once the unit on it has left,
a unit's kind seen again from every cell it moves to. A settled answer that differs from the one
standing is written back into the journal and the engine is rebuilt from it. The rebuild replays
what was seen and fills in anew what was not (passes, hidden draws, hands kept): a rewritten card
can change whose turn it was, or make a round a tie to be drawn again. A card taken on the rules'
word (ACCEPT sure, flagged) is kept watched: when the same card is later seen elsewhere, the two
places are weighed together as for an open question.

Attacks are invisible: the tracker leaves them to the players (`resolve_attack`), and where a
unit vanishes from the table without enough recorded damage it says so.

When the engine and the table part ways for good (a missed move, a misread card the rules took),
every later change is unexplained and the rest of the game would be lost. After RE_READ_AFTER
distinct changes in a row that nothing explains, the tracker takes the units' cells and the top
cards from the table as it is believed (a "re-read" event, flagged for the players to check),
and reads the game on from there.

What one frame says and how reads add up (`Belief`, `CardEvidence`, the levels of belief such
as ACCEPT) is in `observations.py`; the open questions (`CardQuestion`, `PlacementQuestion`)
in `open_questions.py`; this module interprets settled changes against the engine.

Changes to the tracker are chosen on the validation games (`royal-table scan validation`: decks
and piece sets the fixtures do not use); the committed fixtures, three of them held out, only
report (session 20: fixes made one fixture failure at a time had fitted the tracker to them).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass, field

from engines.errors import RulesError
from engines.royal_battles import CELL_NAMES, GameState, Phase, Side, Verb, parse_action
from engines.royal_battles.board import NEIGHBOURS, is_melee, offset, parse_cell
from engines.royal_battles.cards import CARDS, parse_card
from engines.royal_battles.position import from_json, to_json
from engines.royal_battles.units import UNIT_KINDS

from .detections import TableReading
from .observations import (
    ACCEPT,
    CODES,
    CONSISTENT,
    FIRM,
    FOLLOW,
    GO_ON,
    LEAD,
    LEAN,
    NO_READING,
    ONCE_IN_A_DECK,
    SWITCH,
    UNKNOWN_KIND,
    UNREAD,
    Belief,
    CardEvidence,
    backs,
    card_key_of,
    card_readings,
    may_be_same,
    normalised,
    reading_values,
    rest_per_card,
    surely_empty,
    visible_table,
    zone_of,
)
from .open_questions import (
    CardQuestion,
    PlacementQuestion,
    Snapshot,
    against_rivals,
    entries_of,
    of_the_rank_read,
    owner_of,
    set_entries,
    speaks_of,
)

SETTLE_FRAMES = 3  # consecutive settled frames before a change is believed
RE_READ_AFTER = 4  # distinct unexplained table changes in a row before a re-read
TOGETHER = 2  # frames: a card laid and a unit gone beside it, believed this close, are one move
GONE_UNSURE = 12  # unclouded frames a unit's cell read unsure before a later move: it was gone


@dataclass
class TableEvent:
    """Something that visibly happened at the table, in order."""

    frame: int
    text: str  # engine notation ("white move c1-c2 3H") or "black knight removed d4"
    kind: str  # setup | place | initiative | move | removed
    flags: list[str] = field(default_factory=list)  # what a player should look at
    question: str | None = None  # while open: what is not yet sure (the text is the likeliest)

    def to_json(self) -> dict:
        out = {"frame": self.frame, "event": self.text, "kind": self.kind, "flags": self.flags}
        if self.question:
            out["question"] = self.question
        return out


def _reaches(kind: str, attacker: int, target: int) -> bool:
    """Can a unit of `kind` on cell `attacker` take off the unit on `target`? Melee units
    attack orthogonal neighbours, ranged ones diagonal neighbours, a pawn both (Extended
    Reach), and a queen's Mystic Blast reaches every enemy on a card of its target's colour."""
    return kind == "queen" or target in NEIGHBOURS[attacker] and (
        UNIT_KINDS[kind].ranged != is_melee(attacker, target) or kind == "pawn")


def _with_history(state: GameState) -> GameState:
    """A copy of an engine state that keeps its action history (`copy` drops it)."""
    other = state.copy()
    other.actions, other.history = list(state.actions), list(state.history)
    return other


# what the tracker fills in for the unseen parts of a turn (`_finish_turn`, `_make_room_for`)
_FILLER_VERBS = ("pass", "no-attack", "keep", "skip-draw", "take-draw")


def _is_filler(entry: str) -> bool:
    """A journal entry the camera did not see but the turn order implied."""
    words = entry.split()
    return len(words) >= 2 and (words[1] in _FILLER_VERBS or words[1:] == ["draw", "?"])


def _with_card(text: str, code: str) -> str:
    """An action laying a card ("white move c1-c2 3H"), with another card."""
    return " ".join(text.split()[:-1] + [code])


_TWIN_SUIT = {"C": "S", "S": "C", "D": "H", "H": "D"}  # same colour, told apart by shape


def _twin(code: str) -> str:
    """The card of the same rank and colour in the other suit: the reader's usual confusion."""
    return code[:-1] + _TWIN_SUIT[code[-1]]

# what the engine is told of a phase the camera can't see, to close the turn in progress: no
# attack entered, hand kept, pre-turn draw declined, no move
_UNSEEN_CLOSE = {Phase.ATTACK: "no-attack", Phase.POST_TURN: "keep",
                 Phase.PRE_TURN_DRAW: "skip-draw", Phase.MOVEMENT: "pass"}


def _unseen_step(state: GameState, to_movement: bool) -> str | None:
    """The action that closes `state`'s phase the camera can't see (`_UNSEEN_CLOSE`), or, with
    `to_movement`, that takes a side on to its movement (the pre-turn draw taken)."""
    phase = state.phase
    if to_movement and phase is Phase.PRE_TURN_DRAW:
        return f"{state.to_move.value} take-draw"
    verb = _UNSEEN_CLOSE.get(phase)
    return f"{state.to_move.value} {verb}" if verb else None


def _assume_unseen_draw(state: GameState, side: Side) -> bool:
    """A side seen laying a card with no card known in its hidden hand drew one the camera
    could not see (e.g. after an attack): the engine is told it holds one."""
    player = state.players[side]
    if player.hand is None and player.hidden_hand_size == 0:
        player.hidden_hand_size = 1
        return True
    return False


def _lays_on(entry: str) -> str | None:
    """The cell a journal entry lays a card on ("white move c1-c2 3H": c2), if any."""
    w = entry.split()
    if len(w) == 4 and w[1] == "move":
        return w[2].split("-")[1]
    if len(w) == 4 and w[1] == "setup" or entry.startswith("correct lay "):
        return w[2]
    return None


def _with_kind(text: str, kind_of: dict[str, str]) -> str:
    """A placement ("white place pawn a1") with the kind `kind_of` gives its cell."""
    w = text.split()
    return " ".join(w[:2] + [kind_of[w[3]]] + w[3:])


def _assignment_scores(cells: list[str], table: dict[str, dict[str, float]],
                       options: list[tuple[str, ...]]) -> list[float]:
    """Log likelihood of each way of giving `cells` the kinds of an option, from the kind
    probabilities read per cell (a kind never read is not impossible: floor 1e-3)."""
    return [sum(math.log(max(table[c].get(k, 0.0), 1e-3)) for c, k in
                zip(cells, kinds, strict=True)) for kinds in options]


def _nearest_pairs(gone: list[str], new: list[str]) -> list[tuple[str, str]]:
    """Pair cells a side's units left with cells they now stand on, fewest steps in all
    (at most 4 units a side: every assignment is tried)."""
    import itertools

    def steps(a: str, b: str) -> int:
        return max(map(abs, offset(parse_cell(a), parse_cell(b))))

    k = min(len(gone), len(new))
    if k == 0:
        return []
    best = min(((sum(steps(g, n) for g, n in zip(gs, ns, strict=True)), list(zip(gs, ns,
                                                                              strict=True)))
                for gs in itertools.permutations(gone, k)
                for ns in itertools.combinations(new, k)), key=lambda t: t[0])
    return best[1]


def _placing_steps(state: GameState, plans: dict[Side, dict[str, str]]) -> list[Side]:
    """The engine's turns to place (the sides alternate while both have units to place) that
    can be taken now: in order, while the side to place has a decided plan, and only so far
    that each side places all of its plan or none of it (xv-s97, xv-s127: white's last unit,
    down and read surely while black was still to place its own, waited six settled frames
    for black's, since both sides were decided together)."""
    left = {s: len(state.to_place[s]) for s in Side}
    mover, order = state.to_move, []
    while left[mover] and mover in plans:
        order.append(mover)
        left[mover] -= 1
        mover = mover.other if left[mover.other] else mover
    while order:
        done = {s: order.count(s) for s in set(order)}
        if all(n == len(plans[s]) for s, n in done.items()):
            return order
        order.pop()
    return []


class GameTracker:
    """Feeds on `TableReading`s, keeps a Royal Battles `GameState` in step with the table."""

    def __init__(self, armies: dict[Side, list[str]] | None = None,
                 state: GameState | None = None, settle_frames: int = SETTLE_FRAMES) -> None:
        # without armies, the units the players place tell them (`_place`)
        self.infer_armies = armies is None and state is None
        self.state = state or GameState.new(armies)
        for player in self.state.players.values():  # the camera never sees a hand
            if player.hand is not None:
                player.unseen.update(player.hand)
                player.hidden_hand_size = len(player.hand)
                player.hand = None
        self.settle_frames = settle_frames
        self.beliefs = {k: Belief(v) for k, v in visible_table(self.state).items()}
        self.events: list[TableEvent] = []
        self.holding: str | None = None  # why the tracker waits for a player
        self.attacks_to_resolve: list[str] = []  # moves whose attack the players must enter
        self.frames = 0
        self.settled_frames = 0
        self.evidence: dict[str, CardEvidence] = {}  # per card key, while it reads unsure
        self._last_read: dict[str, object] = {}
        # per card key: how often its zone's pixels changed; that count when the engine last
        # agreed with what was seen there (`_misreads_of_agreed`)
        self._changes: dict[str, int] = {}
        # initiative piles whose pixels changed while their side's card is due: the engine's
        # card there then (`_news_on_awaited_piles`)
        self._pile_changed: dict[str, str | None] = {}
        self._agreed_at: dict[str, int] = {}
        # candidates of cards glimpsed while hands were over the board (`_note_glimpses`)
        self._glimpses: dict[str, list[list[tuple[str, float]]]] = {}
        self._kinds_seen: dict[str, str] = {}  # the last piece read per cell, kind included
        self._piece_reads: dict[str, object] = {}  # the last PieceReading per cell
        self._empty_read_at: dict[str, int] = {}  # the last frame a cell's piece read empty
        self._unit_read_at: dict[str, int] = {}  # the last frame a cell's piece read a unit
        # frames a cell's piece read unsure since (the first GONE_UNSURE of them)
        self._unsure_since_unit: dict[str, list[int]] = {}
        self._first_seen: dict[str, int] = {}  # frame a unit was first believed on a cell
        self._gone_since: dict[str, int] = {}  # frame a cell was last believed to go empty
        self._card_since: dict[str, int] = {}  # frame a card key's belief last changed
        self._unit_since: dict[str, int] = {}  # frame a cell's believed unit was believed there
        self._held_card: str | None = None  # the card key a hold is about
        self._held_keys: set[str] = set()  # what differed from the engine then
        self._go_on_with: str | None = None  # a held card the table has moved on past
        self._dirty = False
        # readings the game went on with before they were sure (module doc)
        self.questions: list[CardQuestion | PlacementQuestion] = []
        self._pending_question: tuple | None = None  # a card question waiting for its event
        self._origin: dict[str, str] = {}  # cell -> the cell its unit was placed on
        self._arrived: dict[str, int] = {}  # cell -> journal length when its unit came
        self._removals: list[tuple[TableEvent, Side, str | None]] = []  # and the unit's origin
        # the last removal with no attack entered for it: (event, engine before it, cell, side)
        self._taken_off: tuple[TableEvent, Snapshot, str, str] | None = None
        self.armies = {side: list(p.army) for side, p in self.state.players.items()}
        # everything done to the engine, in order: actions in text notation, and corrections
        # ("correct remove d4"); `replay_journal` rebuilds the game from it
        self.journal: list[str] = []
        # the distinct unexplained differences since the last event (`_re_read_table`)
        self._unexplained: list[frozenset] = []
        self._events_when_stuck = 0
        self._start = self._snapshot()  # a read the rules later refute replays from here
        # per card key the rules decided against the reader: their card, and what the reader
        # took it for (`_known_misreads`)
        self._misread_as: dict[str, tuple[str, set[str]]] = {}
        # per side, its units' placements so far: (cell, event, journal entry, kinds read
        # then); and the engine before the first unit was placed (`_watch_placement`)
        self._placements: dict[Side, list[tuple[str, TableEvent, int, dict]]] = {}
        self._before_placing: Snapshot | None = None
        # per cell key: a card read sure, bare, where the engine has another card of its
        # colour laid under a unit, and on how many settled frames in a row (`_bare_looks`)
        self._seen_bare: dict[str, tuple[str, int]] = {}
        self._bare_tried: set[tuple[str, str]] = set()  # (journal entry, bare card) refused
        self._under_unit: dict[str, object] = {}  # per card key: its last sure read under a unit
        # per card key: the card observed there and every read of it (`_earlier_gives_way`);
        # per logged event that laid a card on a read's word: its place and those reads
        self._card_looks: dict[str, tuple[str, CardEvidence]] = {}
        self._laid_looks: dict[int, tuple[str, CardEvidence]] = {}
        # cells whose unit the game took as standing there while its piece was not read (a
        # move taken from its card alone, a unit never seen on its set-up card): non-firm
        # empty reads there say nothing until one is firm
        self._misread_empty: set[str] = set()

    # ----------------------------------------------------------------- frames

    def _settles_in(self, value: object) -> int:
        """Settled frames in a row before an observed `value` is believed: a card the reader
        named, or a unit read with its side (and kind), one fewer than an unread card, a unit
        of unknown kind or an empty cell, which stay at `settle_frames` (session 31: on the
        three validation sets the tracked game then showed the table right on 3,659 -> 4,443
        of 9,966 settled frames, moves 1,529 -> 1,530, spurious 6 either way; believing every
        change after 2 frames made 50 spurious events of 3 on the first two sets)."""
        named = isinstance(value, str) and value != UNREAD \
            and not value.endswith(f"-{UNKNOWN_KIND}")
        return max(1, self.settle_frames - 1) if named else self.settle_frames

    def update(self, reading: TableReading) -> list[TableEvent]:
        """Feed one frame; returns the events it completed (usually none)."""
        self.frames += 1
        if reading.occluded or not reading.board_found:
            for belief in self.beliefs.values():  # hands may have moved things: start over
                belief.candidate, belief.streak = NO_READING, 0
            self._note_glimpses(reading)
            return []
        self.settled_frames += 1
        believed = self.believed()
        values = reading_values(reading, believed, self._sides_only, self._placing())
        cards_now = card_readings(reading)
        if reading.changed is not None:
            self._news_on_awaited_piles(reading, values, believed)
            self._misreads_of_agreed(reading, values, believed, cards_now)
        self._known_misreads(values, believed, cards_now)
        for cell in list(self._misread_empty):
            read = reading.cells.get(cell)
            piece = read.piece if read is not None else None
            if parse_cell(cell) not in self.state.units or (
                    piece is not None and piece.occupied is True) or surely_empty(piece):
                self._misread_empty.discard(cell)  # moved on, or read surely either way
            elif values.get(f"{cell}.unit") is None:
                values[f"{cell}.unit"] = NO_READING
        self._bare_looks(values, cards_now)
        self._news_over_a_joker(values, believed, cards_now)
        # (an awaited pile whose pixels changed holds a new card: its reads speak of that one)
        live = [q for q in self.questions if isinstance(q, CardQuestion) and not q.watched
                and self._engine_card(q.key) == q.chosen and q.key not in self._pile_changed]
        for q in live:  # a read of the card in question is evidence, not a new card
            read = cards_now.get(q.key)
            if read is not None and read.card and not q.key.startswith("init.") \
                    and q.coverable_by(read.card):
                # news after all: a card laid over another answer the reads still weigh
                # (val-s35: a QS laid over the joker taken for a JC at 78 % was taken for
                # that JC misread, and the move onto it never came)
                values[q.key] = read.card
                continue
            if speaks_of(read, q):
                values[q.key] = q.chosen
                # a later look counts once nothing stands on the card (a piece on it spoils
                # the read the same way each time: that evidence is in already)
                clear = q.key.startswith("init.") or (
                    values.get(q.key[:-5] + ".unit") is None
                    and parse_cell(q.key[:-5]) not in self.state.units)
                if clear and self._last_read.get(q.key) is not read:
                    if not q.bare_look and reading.changed is not None:
                        # the card seen bare after it was first read under its unit: other
                        # pixels, a witness more (later bare reads are more of the same look)
                        q.evidence.new_look()
                        q.bare_look = True
                    q.evidence.add(read.candidates or [(read.card, read.confidence)])
        fresh_pieces = {name for name, cell in reading.cells.items() if cell.piece is not None
                        and self._piece_reads.get(name) is not cell.piece} \
            if self.questions else set()
        for key, value in values.items():
            if self.beliefs[key].observe(value, self._settles_in(value)):
                self._dirty = True
                if key.endswith(".unit") and value is None:
                    self._gone_since[key[:-5]] = reading.frame_index
                    self._unit_since.pop(key[:-5], None)
                elif key.endswith(".unit"):
                    self._first_seen.setdefault(key[:-5], reading.frame_index)
                    self._unit_since[key[:-5]] = reading.frame_index
                    self._gone_since.pop(key[:-5], None)
                else:
                    self._card_since[key] = reading.frame_index
                if self.beliefs[key].value != UNREAD:
                    self.evidence.pop(key, None)  # known now: the guesses are done with
        for name, cell in reading.cells.items():
            if cell.piece is not None:
                self._piece_reads[name] = cell.piece
                if cell.piece.piece not in (None, "empty"):
                    self._kinds_seen[name] = cell.piece.piece
                    self._unit_read_at[name] = reading.frame_index
                    self._unsure_since_unit[name] = []
                elif cell.piece.piece is None and cell.piece.occupied is not False:
                    run = self._unsure_since_unit.setdefault(name, [])
                    if len(run) < GONE_UNSURE:
                        run.append(reading.frame_index)
                if cell.piece.occupied is False:
                    self._empty_read_at[name] = reading.frame_index
        if self.questions:
            self._placement_views(reading, fresh_pieces)
            if self._settle_questions():
                self._dirty = True
        for key, card in cards_now.items():
            # each fresh read counts once (an incremental scanner repeats unchanged ones)
            fresh = self._last_read.get(key) is not card
            code = values.get(key)
            if code in CODES and card.candidates and fresh:
                # every read of the card seen here, sure or misread alike: what the rules may
                # later weigh against another place's read (`_earlier_gives_way`)
                if self._card_looks.get(key, ("",))[0] != code:
                    self._card_looks[key] = (code, CardEvidence())
                self._card_looks[key][1].add(card.candidates)
            # reads of something new (not backing the believed card) are evidence about it
            if code == UNREAD and fresh:
                redrawn = reading.changed is not None and zone_of(key) in reading.changed
                if redrawn:
                    # the place looks different now (a card laid on a patch of cloth taken
                    # for one, a new initiative card): the earlier reads were of something else
                    self.evidence.pop(key, None)
                evidence = self.evidence.setdefault(key, CardEvidence())
                # glimpses: the card bare, a look of its own; but one that backs the card the
                # engine has there is of that card, seen before the new one was laid over it
                # (val-s19: an 8D glimpsed while black's hand laid an AS on it joined the AS's
                # reads, 96 % 8D against the other questions of black's deck, and AS read
                # 97 % stayed open to the end)
                glimpses = [look for look in self._glimpses.get(key, [])
                            if not backs(look, self._engine_card(key))]
                if glimpses:
                    evidence.new_look()
                    for look in glimpses:
                        evidence.add(look)
                if redrawn:
                    # the settled read is a look of its own: after a bare glimpse (the only
                    # kind kept), the card under its unit; else a fresh start of the evidence
                    evidence.new_look()
                evidence.add(card.candidates)
            self._last_read[key] = card
        self._glimpses.clear()  # they were of the table this frame shows: used or not needed
        if not self._dirty or any(b.settling for b in self.beliefs.values()):
            return []
        self._dirty = False
        before = {id(e) for e in self.events}
        self._interpret(reading.frame_index)
        # (a removal may go in before events already logged: `_removal_place`)
        return [e for e in self.events if id(e) not in before]

    @property
    def _sides_only(self) -> bool:
        """After set-up, units are told apart by side only (see `reading_values`)."""
        return self.state.phase not in (Phase.SETUP, Phase.PLACE)

    def believed(self) -> dict[str, object]:
        if not self._sides_only:
            return {k: b.value for k, b in self.beliefs.items()}
        # after set-up units are told apart by side only, also where a unit has not been seen
        # since it was placed (its belief still names the kind the army gave it)
        return {k: b.value.split("-")[0] if k.endswith(".unit") and isinstance(b.value, str)
                else b.value for k, b in self.beliefs.items()}

    # ----------------------------------------------------------------- players' input

    def confirm(self, action_text: str, frame: int | None = None) -> TableEvent:
        """A player settles what the tracker held (or corrects it): apply their action, or, where
        it answers an open question, settle the question with it."""
        answered = self._answer(action_text)
        if answered is not None:
            return answered
        action = parse_action(action_text)
        self._make_room_for(action)
        self._apply(action)
        event = TableEvent(self.frames if frame is None else frame, str(action),
                           action.verb.value, ["confirmed by a player"])
        self.events.append(event)
        self.holding = None
        self._held_card = None
        # the card the player named is what lies there, whatever the camera could not read
        table = visible_table(self.state)
        for key, belief in self.beliefs.items():
            if belief.value == UNREAD and table[key] is not None:
                belief.value = table[key]
        self._interpret(event.frame)
        return event

    def resolve_attack(self, target: str, style: str) -> None:
        """The players say which attack the unit that just moved made."""
        if self.state.phase is not Phase.ATTACK:
            raise RulesError("no attack is due: the last move has been followed by others")
        self._apply(parse_action(f"{self.state.to_move.value} attack {target} {style}"))
        if self.attacks_to_resolve:
            self.attacks_to_resolve.pop()

    # ----------------------------------------------------------------- interpretation

    def _interpret(self, frame: int) -> None:
        if self._held_card is not None:
            # a card only the players can name: nothing after it may be read before it, unless
            # that very card now reads clearly and nothing else has changed. Once the table
            # has moved on past it, the game goes on with its likeliest legal reading as an
            # open question the players can still answer: waiting stalled every later event
            # (session 14: a set-up card nobody named held one held-out game from frame 24 to
            # its end)
            if set(self._diff()) != self._held_keys:
                self._go_on_with = self._held_card
            elif self.believed()[self._held_card] in (UNREAD, None):
                return
            self._held_card = None
        try:
            self._explain(frame)
        finally:
            self._go_on_with = None

    def _explain(self, frame: int) -> None:
        """Step the engine through what the table shows that it does not, as far as it goes."""
        for _ in range(64):  # each step explains at least one difference; a game is small
            diff = self._diff()
            if not diff:
                self.holding = None
                return
            if self.state.is_terminal():
                self.holding = "the game is over but the table still changes"
                return
            try:
                progressed = self._step(diff, frame)
            except RulesError as exc:  # a reading the rules reject: wait for the players
                self.holding = str(exc)
                progressed = False
            if not progressed:
                if self.holding is None:
                    self.holding = "can't explain the change at " + ", ".join(sorted(diff))
                if self._stuck(diff) and self._re_read_table(frame):
                    continue
                return

    def _stuck(self, diff: dict) -> bool:
        """Has the table changed RE_READ_AFTER times, each change unexplained, since the last
        event? Waiting for a card or a unit to be read leaves the same difference standing;
        a game that has parted ways with the table keeps finding new ones."""
        if self.state.phase in (Phase.SETUP, Phase.PLACE):
            return False
        if len(self.events) != self._events_when_stuck:
            self._events_when_stuck = len(self.events)
            self._unexplained = []
        seen = frozenset((k, str(v)) for k, v in diff.items())
        if seen not in self._unexplained:
            self._unexplained.append(seen)
        return len(self._unexplained) >= RE_READ_AFTER

    def _re_read_table(self, frame: int) -> bool:
        """Take the units' cells and the top cards from the table where the engine's differ:
        each unit the engine has where the table shows none goes to the nearest cell where the
        table shows one of its side and the engine none; a card read sure on a cell whose top
        card the engine has otherwise is laid there. Kinds, injuries, hands and the turn stay
        the engine's. True when something was taken."""
        seen = self.believed()
        engine = visible_table(self.state, sides_only=True)
        changes: list[str] = []
        for name in CELL_NAMES:
            card = seen[f"{name}.card"]
            if card in CODES and card != engine[f"{name}.card"]:
                changes.append(f"correct lay {name} {card}")
        for side in Side:
            def side_at(table, name, side=side):
                return str(table[f"{name}.unit"]).split("-")[0] == side.value
            gone = [n for n in CELL_NAMES if side_at(engine, n) and not side_at(seen, n)
                    and seen[f"{n}.unit"] != UNREAD]
            # a unit only ever arrives on a card laid for it, and is read surely there: a
            # face card's picture taken for a piece is neither (s42: an empty queen read as a
            # pawn at 75 % drew a unit in transit onto it)
            new = [n for n in CELL_NAMES if side_at(seen, n) and not side_at(engine, n)
                   and engine[f"{n}.unit"] is None and self._firmly_occupied(n)
                   and seen[f"{n}.card"] not in (None, engine[f"{n}.card"])]
            for frm, to in _nearest_pairs(gone, new):
                changes.append(f"correct relocate {frm} {to}")
        done = []
        for entry in changes:
            try:
                self._correct(entry)
            except (RulesError, KeyError, ValueError):
                continue  # the rules refuse it (a card its deck has no more of): leave it
            self.journal.append(entry)
            done.append(entry.split(maxsplit=1)[1])
        if not done:
            return False
        self._unexplained = []
        self.events.append(TableEvent(
            frame, "table re-read: " + ", ".join(done), "re-read",
            ["the game could not explain what the table showed; these were taken from the "
             "table: check them (moves and cards in between are missing)"]))
        self._events_when_stuck = len(self.events)
        return True

    def _correct(self, entry: str) -> None:
        """Apply a re-read's correction to the engine ("correct lay c3 AD": the card laid
        on top there; "correct relocate d2 c3": the unit moved there)."""
        _, what, cell, arg = entry.split()
        data = to_json(self.state)
        board = data["board"]
        if what == "lay":
            entry_json = board.setdefault(cell, {"cards": []})
            unit = entry_json.get("unit")
            if "owners" in entry_json:
                entry_json["owners"].append(unit["side"] if unit else entry_json["owners"][-1])
            entry_json["cards"].append(arg)
            for k in ("orientation", "corners", "declared"):
                entry_json.pop(k, None)
        elif what == "relocate":
            if arg not in board or not board[arg].get("cards") or board[arg].get("unit"):
                raise ValueError(f"no free card on {arg}")
            board[arg]["unit"] = board[cell].pop("unit")
        else:
            raise ValueError(entry)
        self._rebuild(data)
        if what == "relocate":
            self._origin[arg] = self._origin.pop(cell, cell)
            self._arrived[arg] = len(self.journal) + 1

    def _diff(self) -> dict[str, tuple[object, object]]:
        seen = self.believed()
        engine = visible_table(self.state, self._sides_only)
        return {k: (engine[k], seen[k]) for k in engine if engine[k] != seen[k]}

    def _step(self, diff: dict[str, tuple[object, object]], frame: int) -> bool:
        state = self.state
        seen = self.believed()
        if state.is_chance_node():
            ev = state.pending[0]
            if ev.verb is Verb.SETUP:
                place = CELL_NAMES[ev.cell]
                card = seen[f"{place}.card"]
                if card is None:
                    self.holding = f"waiting for {ev.side.value}'s set-up card on {place}"
                    return False
                flags: list[str] = []
                if card == UNREAD:  # aces and jokers are shuffled back at set-up
                    card, flags = self._resolve_card(
                        f"{place}.card", place,
                        lambda c: self._legal(f"{ev.side.value} setup {place} {c}"),
                        side=ev.side.value)
                    if card is None:
                        return False
                return self._event(f"{ev.side.value} setup {place} {card}", "setup", frame,
                                   flags)
            if ev.verb is Verb.INITIATIVE:
                key = f"init.{ev.side.value}"
                if key not in diff or seen[key] is None:
                    if not any(k.startswith("init.") for k in diff) \
                            and self._order_gives_way(diff, seen):
                        return True
                    if key not in diff and self._new_card_like_the_asked_one(key):
                        return True
                    self.holding = f"waiting for {ev.side.value}'s initiative card"
                    return False
                card, flags = seen[key], []
                if card == UNREAD:
                    card, flags = self._resolve_card(
                        key, f"{ev.side.value}'s initiative pile",
                        lambda c: self._legal(f"{ev.side.value} initiative {c}"),
                        side=ev.side.value)
                    if card is None:
                        return False
                else:
                    self._watch_a_tie(key, ev.side, card)
                return self._event(f"{ev.side.value} initiative {card}", "initiative", frame,
                                   flags)
            self._apply(parse_action(f"{ev.side.value} draw ?"))  # draws are never seen
            return True

        if self._lifted_back(diff):
            return True
        if self._seen_before_its_turn(diff, seen):
            return True
        # a movement card always carries the unit that moved onto it: a card seen where no unit
        # stands was not laid this turn (a misread, or a card knocked aside) and ends no turn
        laid = [k[:-5] for k, (_old, new) in diff.items()
                if k.endswith(".card") and new is not None
                and isinstance(seen.get(k[:-5] + ".unit"), str)
                and not self._before_own_last_move(k, str(seen[k[:-5] + ".unit"]))]
        # a unit taken off belongs after the attacker's move and before its owner's next one
        if self._removal(diff, seen, frame, before_moves=not laid):
            return True
        if state.phase is Phase.PLACE and not self.infer_armies:
            return self._place_armies(seen, frame)
        if state.phase is Phase.PLACE:
            side = state.to_move.value
            for key, (old, new) in sorted(diff.items()):
                if key.endswith(".unit") and old is None and isinstance(new, str) \
                        and new.startswith(side + "-") and key[:-5] in self._placeable():
                    return self._place(key[:-5], new.split("-")[1], frame)
            self.holding = f"waiting for {side} to place a unit"
            return False
        awaited = self._cards_awaiting_their_unit(diff, seen)
        unread = self._unit_not_read(awaited, seen) or (
            {} if laid else self._own_card_covered(diff, seen))
        if unread:  # the move whose card was seen and whose unit was not: taken as it is
            seen = {**seen, **{f"{to}.unit": side for to, side in unread.items()}}
            laid = sorted(set(laid) | set(unread))
            awaited = []
        if any(k.startswith("init.") for k in diff) and not laid:
            arrived = self._arrivals(diff, seen)
            if arrived:  # a move seen before its card was: it belongs to the round ending
                self.holding = f"a unit moved to {', '.join(arrived)}: waiting to read the " \
                               "movement card under it"
                return False
            if awaited:  # and one whose card was seen before its unit was
                return self._await_units(awaited)
            # a new round's initiative cards: finish the turn in progress first
            return self._finish_turn()
        if not laid:
            if self._card_under_arrival(diff, seen, frame):
                return True
            self.holding = "a unit moved without a movement card: " + ", ".join(sorted(diff))
            return False
        recoloured = self._colour_misread(laid, seen)
        if recoloured:
            seen = {**seen, **{f"{to}.unit": side for to, side in recoloured.items()}}
        movers = {str(seen[f"{to}.unit"]).split("-")[0] for to in laid}
        if state.to_move.value not in movers:
            if awaited:  # its move may be the card whose unit can't be read yet
                return self._await_units(awaited)
            missed = self._move_read_empty(diff, seen)
            if not missed:
                return self._finish_turn()  # the other side is laying cards: this turn is over
            seen = {**seen, **{f"{to}.unit": side for to, side in missed.items()}}
            laid = sorted(set(laid) | set(missed))
            unread = {**unread, **missed}
        if state.phase is not Phase.MOVEMENT or state.current_player() is None:
            return self._finish_turn() if state.phase in (Phase.ATTACK, Phase.POST_TURN) \
                else self._advance_to_movement()
        return self._movement(laid, diff, seen, frame, recoloured, unread)

    def _colour_misread(self, laid: list[str], seen: dict) -> dict[str, str]:
        """Cells where a card was laid under a unit read, not firmly, as one side's, which is
        the other side's unit with its colour misread (the side it is): the unit the engine
        has there, where it has one (a unit never changes colour, and none moves onto another;
        s51: a held-out black knight covering its own card read as white), or else the side to
        move, where it has not moved yet and one of its units next door is seen gone and none
        of the other side's. A player who can move must, so a turn passed is the rarer reading
        (s51: a black knight moved b5-b4 read as a white knight at 53 %; black's turn was taken
        as passed and white's rook, still on a4, as the mover)."""
        state = self.state
        side = state.to_move
        waiting = self._yet_to_move
        out: dict[str, str] = {}
        for to in laid:
            read_as = str(seen[f"{to}.unit"]).split("-")[0]
            read = self._piece_reads.get(to)
            if read is None or read.confidence >= FIRM:
                continue
            here = state.units.get(parse_cell(to))
            if here is not None:
                if here.side.value != read_as:
                    out[to] = here.side.value
                continue
            if not waiting or read_as == side.value:
                continue
            gone = {u.side for c, u in state.units.items() if c in NEIGHBOURS[parse_cell(to)]
                    and seen[f"{CELL_NAMES[c]}.unit"] is None}
            if gone == {side}:
                out[to] = side.value
        return out

    def _left_with_the_move(self, sources: list[str], frame: int
                            ) -> tuple[list[str], list[str]]:
        """Two units of the side next door are both gone (one moved, one was taken off) and
        their kinds can't tell them apart: the one whose cell was already seen empty when the
        last move before this frame was read had left before this move began, so it is the one
        taken off. Returns the sources left, and those ruled out (s42: two black rooks, one
        removed at d4 a hundred frames before the other moved to e4, held the game to its end)."""
        last_move = self._last_move_frame(before=frame)
        if last_move is None:
            return sources, []
        before = [c for c in sources if self._gone_since.get(c, frame) <= last_move]
        after = [c for c in sources if c not in before]
        return (after, before) if len(after) == 1 else (sources, [])

    def _before_own_last_move(self, key: str, unit: str) -> bool:
        """Was the card at `key` seen as it is now already when the side of the `unit` on it
        last moved, that move taking another card? Then it is no movement card of that side's
        next turn: one card a turn, and that turn's was another (val-s47: a hand moving a
        pawn beside the queen on g2 spoilt the joker's look there, read JC at 60 %; once the
        next round's initiative cards lay that look was taken for white's new move, a round
        before its real one)."""
        since = self._card_since.get(key)
        if since is None:
            return False
        last = self._last_move_frame(side=unit.split("-")[0])
        return last is not None and since <= last

    def _seen_before_its_turn(self, diff: dict, seen: dict) -> bool:
        """A card read surely where an open question asks which card a side's move laid, the
        unit that laid it still on it, and read so before that side's next initiative card
        lay: no move of that side could lay it since, so it is the question's card seen
        better, and settles it (v3-s173: an orell 8H under a black token read JK 44 %, JH 35 %,
        KH 14 % for 25 frames, went on with as JK; read 8H at 99 % as the next round's
        initiative cards came, it was taken for a second card black laid there, and black's
        next move came a turn late). A set-up card's question is no move's (v4-s199: white's
        set-up 4S, asked to the end under its unit, took the 2D white later laid on it in
        place for itself seen better, and the move was lost). True where a question was
        settled."""
        for key, (_old, new) in diff.items():
            if not key.endswith(".card") or new in (None, UNREAD):
                continue
            cell = key[:-5]
            unit = self.state.units.get(parse_cell(cell))
            if unit is None or not str(seen.get(f"{cell}.unit")).startswith(unit.side.value):
                continue
            side = unit.side.value
            q = next((q for q in self.questions if isinstance(q, CardQuestion) and q.key == key
                      and q.entry == self._last_laid_on(cell) and q.event.kind == "move"
                      and q.event.text.startswith(side + " ")), None)
            pile = self._card_since.get(f"init.{side}")
            since = self._card_since.get(key)
            if q is None or pile is None or since is None or not q.event.frame < pile \
                    or not since < pile:
                continue
            if self._settle(q, new, f"read as {q.chosen} under its unit, then as {new} before "
                            f"{side}'s next initiative card: the same card seen better; "
                            "check it"):
                return True
        return False

    def _last_event_frame(self) -> int:
        """The latest frame any event was logged at (-1 before any; events may be logged out
        of order, so not simply the last one's)."""
        return max((e.frame for e in self.events), default=-1)

    def _last_move_frame(self, side: str | None = None, before: int | None = None
                         ) -> int | None:
        """The frame of the last move event (of `side`, before frame `before`, where given)."""
        return max((e.frame for e in self.events if e.kind == "move"
                    and (side is None or e.text.startswith(side + " "))
                    and (before is None or e.frame < before)), default=None)

    @property
    def _yet_to_move(self) -> bool:
        """Is the side to move before or in its movement (no draw of a round pending)?"""
        return self.state.phase in (Phase.PRE_TURN_DRAW, Phase.MOVEMENT) \
            and not self.state.is_chance_node()

    def _gone_next_to(self, cell: str, seen: dict) -> list[int]:
        """The cells next to `cell` whose unit, of the side to move, is no longer seen there."""
        side = self.state.to_move.value
        return [c for c in NEIGHBOURS[parse_cell(cell)]
                if (u := self.state.units.get(c)) is not None and u.side.value == side
                and not str(seen[f"{CELL_NAMES[c]}.unit"]).startswith(side)]

    def _cards_awaiting_their_unit(self, diff: dict, seen: dict) -> list[str]:
        """Cells with a new card and no unit seen on it where the last piece read there was
        unsure, or empty but not firmly on a card read surely, next to a unit of the side to
        move that is gone from its cell: most likely that unit's move, its piece not read
        yet. Taking the side's turn as passed would put its move into the next turn
        (mirror-read pieces, s42: a white king's move to b5, its piece unsure for 24 frames,
        recorded after black's move and the next round's initiative cards, and the game a
        turn out of step from there)."""
        out = []
        for key, (_old, new) in diff.items():
            if not (key.endswith(".card") and new is not None):
                continue
            cell = key[:-5]
            read = self._piece_reads.get(cell)
            if seen.get(f"{cell}.unit") is not None or self.state.units.get(parse_cell(cell)) \
                    or read is None:
                continue
            # unsure, or empty but not firmly on a card read surely (val-s35: a paper queen
            # on the KC it moved to read empty at 83-86 %; the game waited from there)
            if not (read.piece is None and read.occupied is not False
                    or read.occupied is False and not surely_empty(read) and new in CODES):
                continue
            if self._gone_next_to(cell, seen):
                out.append(cell)
        return sorted(out)

    def _unit_not_read(self, awaited: list[str], seen: dict) -> dict[str, str]:
        """The one card awaiting its unit, where exactly one unit of the side to move, in its
        movement, is gone from next to it: that unit's move, its piece not read on the card
        ({cell: side}). Waiting for the piece lost the game where it never was read before
        it moved on (val-s58: a brutalchess pawn on a nicu joker, unsure for 45 frames)."""
        if len(awaited) != 1 or not self._yet_to_move:
            return {}
        to = awaited[0]
        return {to: self.state.to_move.value} if len(self._gone_next_to(to, seen)) == 1 else {}

    def _own_card_covered(self, diff: dict, seen: dict) -> dict[str, str]:
        """The one new card where a unit of the side to move, in its movement, stood and no
        unit is seen now, its piece not read surely empty: a card is laid only under the unit
        that moves onto it, so that unit covered its own card ({cell: side}) and was misread
        as gone (val-s23: a dreamchess pawn on the QH it laid read empty at 93 %; the move was
        never taken and the game fell behind from there)."""
        state = self.state
        if not self._yet_to_move:
            return {}
        side = state.to_move.value
        out = {}
        for key, (_old, new) in diff.items():
            if not key.endswith(".card") or new is None:
                continue
            cell = key[:-5]
            unit = state.units.get(parse_cell(cell))
            read = self._piece_reads.get(cell)
            if unit is None or unit.side.value != side or seen[f"{cell}.unit"] is not None \
                    or surely_empty(read):
                continue
            out[cell] = side
        return out if len(out) == 1 else {}

    def _move_read_empty(self, diff: dict, seen: dict) -> dict[str, str]:
        """The other side lays its card while the side to move, in its movement, has one unit
        gone and, next to it, the one card laid since the last event with no unit read on it:
        that unit moved there and its piece was read empty ({cell: side}). A unit leaves its
        cell only by moving or by the enemy's attack, and the enemy has not moved yet; taking
        the turn as passed put the move a round late (xv-s83: a paper token on the 10D it
        moved to read empty for 30 frames until black laid its card)."""
        if not self._yet_to_move:
            return {}
        last = self._last_event_frame()
        out = {}
        for key, (_old, new) in diff.items():
            cell = key[:-5]
            if not key.endswith(".card") or new is None or seen[f"{cell}.unit"] is not None \
                    or parse_cell(cell) in self.state.units \
                    or self._card_since.get(key, -1) <= last:
                continue
            if len(self._gone_next_to(cell, seen)) == 1:
                out[cell] = self.state.to_move.value
        return out if len(out) == 1 else {}

    def _card_under_arrival(self, diff: dict, seen: dict, frame: int) -> bool:
        """A unit of the side to move (or, once that side has moved, of the other) has visibly
        moved onto a cell whose card is believed unchanged: a unit moves only onto the card it
        lays, so that card is new, whatever its unsure reads seemed to back (v3-s137: a berlin
        joker laid over an 8C read JK 42 %, KC 41 %, KS 11 %, kept as the 8C misread; the
        knight that moved onto it held the game). The card is taken as unread, its last read
        the evidence. True where one was."""
        state = self.state
        if self._yet_to_move:
            side = state.to_move.value
        elif state.phase in (Phase.ATTACK, Phase.POST_TURN):
            side = state.to_move.other.value  # the side to move has moved: the other's turn
        else:
            return False
        for to in self._arrivals(diff, seen):
            key = f"{to}.card"
            read = self._last_read.get(key)
            if key in diff or not str(seen[f"{to}.unit"]).startswith(side) or read is None \
                    or read.card or not read.candidates:
                continue
            self.beliefs[key].value = UNREAD
            self._card_since[key] = frame  # laid now, as far as the game knows
            evidence = self.evidence.setdefault(key, CardEvidence())
            evidence.add(read.candidates)
            return True
        return False

    def _await_units(self, cells: list[str]) -> bool:
        self.holding = f"a card was laid on {', '.join(cells)}: waiting to read the unit " \
                       "on it"
        return False

    def _arrivals(self, diff: dict, seen: dict) -> list[str]:
        """Cells a unit has visibly moved to: it stands where the engine has none, and a unit
        of its side the engine has next door is gone from there."""
        out = []
        for key, (old, new) in diff.items():
            if not (key.endswith(".unit") and old is None and isinstance(new, str)):
                continue
            side = new.split("-")[0]
            for c in NEIGHBOURS[parse_cell(key[:-5])]:
                unit = self.state.units.get(c)
                if unit is not None and unit.side.value == side and \
                        not str(seen[f"{CELL_NAMES[c]}.unit"]).startswith(side):
                    out.append(key[:-5])
                    break
        return sorted(out)

    def _place_armies(self, seen: dict, frame: int) -> bool:
        """With the armies known, the units placed are decided together: once every unit a
        side still has to place stands on its free set-up cards, the assignment of its kinds
        to those cells that the classifier's kind probabilities make likeliest is taken when
        it is at least ACCEPT sure (one confident misread kind can then not steal a kind
        another cell needs). Events follow the engine's turns, each side's units in the
        order they appeared on the table."""
        import itertools

        state = self.state
        if self._place_one_sure(seen, frame):
            return True
        plans: dict[Side, dict[str, str]] = {}
        opened: dict[Side, PlacementQuestion] = {}
        tables: dict[Side, dict[str, dict[str, float]]] = {}
        snap = self._snapshot()
        waiting = None
        for side in Side:
            need = list(state.to_place[side])
            if not need:
                continue
            cells = self._setup_cells_seen(side, seen)
            if len(cells) < len(need):
                if not any(seen[f"init.{s.value}"] is not None for s in Side):
                    # the other side, all its units down, may still place them first
                    waiting = waiting or f"waiting for {side.value} to place a unit " \
                                         f"({len(need) - len(cells)} to go)"
                    continue
                # initiative cards lie: every unit was placed, on the side's free set-up cards,
                # whether the camera saw it there or not (val-s35 with session 19's piece
                # reader: a paper token never seen on its card held the game at set-up)
                unseen = [c for c in self._free_setup_cells(side) if c not in cells]
                cells += unseen[:len(need) - len(cells)]
                seen = {**seen, **{f"{c}.unit": f"{side.value}-{UNKNOWN_KIND}" for c in unseen}}
                self._misread_empty.update(unseen)
            cells = cells[:len(need)]
            table = tables[side] = self._kinds_read(cells, seen)
            options = sorted(set(itertools.permutations(need)))
            scores = _assignment_scores(cells, table, options)
            probs = normalised(scores)
            best = int(max(range(len(options)), key=lambda i: scores[i]))
            p = probs[best]
            plans[side] = dict(zip(cells, options[best], strict=True))
            if p < ACCEPT:  # the likeliest stands in; the units' later views settle it
                keep = [o for o, q in zip(options, probs, strict=True) if q > 1e-3]
                opened[side] = PlacementQuestion(side, cells, keep, [], [], snap,
                                                  chosen=options[best])
        steps = _placing_steps(state, plans)
        if not steps:
            self.holding = waiting
            return False
        for side in set(plans) - set(steps):
            plans.pop(side)
            opened.pop(side, None)
        for _ in steps:
            side = state.to_move  # (the engine's turn, which `_placing_steps` follows)
            cell = next(iter(plans[side]))
            kind = plans[side].pop(cell)
            self._place_unit(side, cell, kind, seen, frame, tables[side][cell])
            if side in opened:
                opened[side].events.append(self.events[-1])
                opened[side].entries.append(len(self.journal) - 1)
        for side, q in opened.items():
            for c in q.origins:  # the set-up view is the first look at each unit
                q.add_view(c, c, tables[side][c])
            self._ask(q)
            self.questions.append(q)
        for side in plans:
            self._watch_placement(side)
        return True

    def _placing(self) -> dict[str, str]:
        """While units are placed: each free set-up card and the side that places there (a
        side places only on its own set-up cards; session 14: a held-out king whose colour
        the classifier never settled, though it saw the cell occupied, held the game at
        placement for 90 frames, and the round it missed was lost)."""
        if self.state.phase is not Phase.PLACE:
            return {}
        return {cell: side.value for side in Side if self.state.to_place[side]
                for cell in self._free_setup_cells(side)}

    def _free_setup_cells(self, side: Side) -> list[str]:
        """The side's set-up cards with no unit on them yet."""
        home = "1" if side is Side.WHITE else "5"
        return [f + home for f in "aceg" if parse_cell(f + home) not in self.state.units]

    def _setup_cells_seen(self, side: Side, seen: dict) -> list[str]:
        """The side's free set-up cards with one of its units seen on them, in the order the
        units appeared."""
        return sorted((c for c in self._free_setup_cells(side)
                       if str(seen[f"{c}.unit"]).startswith(side.value)),
                      key=lambda c: (self._first_seen.get(c, 0), c))

    def _kinds_read(self, cells: list[str], seen: dict) -> dict[str, dict[str, float]]:
        """Per cell, the classifier's kind probabilities (a reading naming its kind outright
        counts as that kind)."""
        table = {c: dict(getattr(self._piece_reads.get(c), "kinds", []) or []) for c in cells}
        for c in cells:
            read = str(seen[f"{c}.unit"]).split("-")[-1]
            if not table[c] and read not in (UNKNOWN_KIND, "None"):
                table[c] = {read: 1.0}
        return table

    def _place_one_sure(self, seen: dict, frame: int) -> bool:
        """Before every unit is down, the side to place places the first unit it put on the
        table where its kind is already ACCEPT sure: over every way the army's kinds left can
        go to the units seen so far, not from its own reading alone (a kind read
        confidently elsewhere can still take the kind it needs). So the record follows the
        table unit by unit rather than all at once."""
        import itertools

        side = self.state.to_move
        need = list(self.state.to_place[side])
        cells = self._setup_cells_seen(side, seen)
        if not cells or len(cells) >= len(need):
            return False  # nothing to place, or all there: decided together
        table = self._kinds_read(cells, seen)
        options = sorted(set(itertools.permutations(need, len(cells))))
        scores = _assignment_scores(cells, table, options)
        marginal: dict[str, float] = {}
        for kinds, p in zip(options, normalised(scores), strict=True):
            marginal[kinds[0]] = marginal.get(kinds[0], 0.0) + p
        kind, p = max(marginal.items(), key=lambda kp: kp[1])
        if p < ACCEPT:
            return False
        self._place_unit(side, cells[0], kind, seen, frame, table[cells[0]])
        return True

    def _place_unit(self, side: Side, cell: str, kind: str, seen: dict, frame: int,
                    kinds: dict[str, float]) -> None:
        """Place a unit of the kind the army decided, flagged where the reading said else
        (`kinds`: what the classifier read there)."""
        if self._before_placing is None:
            self._before_placing = self._snapshot()
        read = str(seen[f"{cell}.unit"]).split("-")[1]
        flags = [] if read == kind else [
            f"{'could not be read' if read == UNKNOWN_KIND else 'read as a ' + read}; the "
            f"army makes it a {kind}: check it"]
        self._event(f"{side.value} place {kind} {cell}", "place", frame, flags)
        self._placements.setdefault(side, []).append(
            (cell, self.events[-1], len(self.journal) - 1, kinds))
        self.beliefs[f"{cell}.unit"].value = f"{side.value}-{kind}"

    def _watch_placement(self, side: Side) -> None:
        """Once all of a side's units stand, one question covers where its kinds stand, over
        all its units: an open one grows to take in the units placed sure before it, and a
        placement taken sure throughout is watched (session 18: on the held-out lathe set a
        rook and a queen were each read as the other at set-up, sure; every later removal
        then named the wrong kind, and with one of them fixed the open question about the
        others could never come right)."""
        import itertools

        placed = self._placements.get(side, [])
        if self.state.to_place[side] or len(placed) < 2 or self._before_placing is None:
            return
        old = next((q for q in self.questions if isinstance(q, PlacementQuestion)
                    and q.side is side), None)
        origins = [cell for cell, *_ in placed]
        chosen = tuple(e.text.split()[2] for _c, e, _i, _k in placed)
        q = PlacementQuestion(side, origins, sorted(set(itertools.permutations(chosen))),
                               [e for _c, e, _i, _k in placed], [i for *_, i, _k in placed],
                               self._before_placing, chosen=chosen, watched=old is None)
        for cell, _e, _i, kinds in placed:
            if old is None or cell not in old.origins:  # (the open one has its first look)
                q.add_view(cell, cell, kinds)
        if old is not None:
            q.views.update(old.views)
            q.went_with = old.went_with
            self.questions.remove(old)
        self.questions.append(q)

    def _placeable(self) -> set[str]:
        """The cells the side to place may put a unit on now (its free set-up cards)."""
        return {str(a).split()[-1] for a in self.state.legal_actions()
                if str(a).split()[1] == "place"}

    def _place(self, cell: str, kind: str, frame: int) -> bool:
        """Armies not given: a unit of the side to place stands on `cell`, its kind as read
        (the first units placed make the army, `_expect_kind`); with the armies known
        `_place_armies` decides instead."""
        side = self.state.to_move
        if kind == UNKNOWN_KIND:
            self.holding = f"a {side.value} unit stands on {cell}: which is it?"
            return False
        self._expect_kind(side, kind)
        self._event(f"{side.value} place {kind} {cell}", "place", frame)
        self.beliefs[f"{cell}.unit"].value = f"{side.value}-{kind}"
        return True

    def _movement(self, laid: list[str], diff: dict, seen: dict, frame: int,
                  recoloured: dict[str, str] | None = None,
                  unread: dict[str, str] | None = None) -> bool:
        state = self.state
        side = state.to_move.value
        engine = visible_table(state, self._sides_only)  # the table before this move, once
        reasons = []
        # a card held for the players comes first: any later one would be out of order
        for to in sorted(laid, key=lambda c: (f"{c}.card" != self._held_card, c)):
            flags: list[str] = []
            card = seen[f"{to}.card"]
            mover = seen[f"{to}.unit"]
            if not (isinstance(mover, str) and mover.split("-")[0] == side):
                reasons.append(f"{card} on {to} has no {side} unit on it")
                continue
            was_here = engine[f"{to}.unit"]
            stale = False
            if was_here == mover:
                frm = to  # covered its own standing card
            else:
                next_door = [CELL_NAMES[c] for c in NEIGHBOURS[parse_cell(to)]
                             if engine[f"{CELL_NAMES[c]}.unit"] == mover]
                sources = [c for c in next_door if seen[f"{c}.unit"] != mover]
                if not sources:
                    # a card laid with the side's unit on it is a move; where no unit next door
                    # is seen gone, the old cell's read is stale (a lathe piece's empty cell
                    # read as still occupied held two held-out games for the rest of the game)
                    sources, stale = next_door, bool(next_door)
                    if len(sources) > 1:  # the one whose piece reads least sure left
                        weak = [c for c in sources if not self._firmly_occupied(c)]
                        sources = weak if len(weak) == 1 else sources
                    if len(sources) > 1:  # or the one now read as a kind it is not: a face
                        # card's picture (s42: the KH a pawn left read as a king at 99 %)
                        odd = [c for c in sources if self._kinds_seen.get(c) not in (
                            None, f"{side}-{self.state.units[parse_cell(c)].kind}")]
                        sources = odd if len(odd) == 1 else sources
                if len(sources) > 1:  # two of the side's units next door: the kind read decides
                    kind = self._kinds_seen.get(to)
                    by_kind = [c for c in sources if kind is not None and
                               f"{side}-{self.state.units[parse_cell(c)].kind}" == kind]
                    sources = by_kind if len(by_kind) == 1 else sources
                if len(sources) > 1:
                    sources, gone_before = self._left_with_the_move(sources, frame)
                    if gone_before:
                        flags.append(f"{', '.join(gone_before)} seen empty before the last "
                                     "move: not the unit that moved; check it")
                if len(sources) != 1:
                    reasons.append(f"which {mover} moved to {to}? candidates: "
                                   f"{', '.join(sources) or 'none next to it'}")
                    continue
                frm = sources[0]
            if to in (recoloured or {}):
                flags.append(f"its unit read as {state.to_move.other.value}'s, not firmly: "
                             f"taken as {side}'s; check it")
            if to in (unread or {}):
                flags.append(f"the unit on {to} not read: taken as the {side} unit " + (
                    "that stood there, covering its own card" if frm == to
                    else f"gone from {frm}") + "; check it")
            if _assume_unseen_draw(self.state, state.to_move):
                flags.append("card from a draw the camera could not see")
            if card == UNREAD:  # the rules pick among what the reader thought it might be
                # a card laid under a unit that stays is only ever read with the unit on it
                card, why = self._resolve_card(
                    f"{to}.card", to, lambda c, frm=frm, to=to: self._legal(
                        f"{side} move {frm}-{to} {c}"), SWITCH if frm == to else ACCEPT,
                    side=side)
                if card is None:  # this is the side's move; another cell would be out of order
                    return False
                flags += why
            text = f"{side} move {frm}-{to} {card}"
            try:
                text, notes = self._apply_giving_way(text)
                flags += notes
            except RulesError as exc:
                over_joker = self._joker_misread(to, text)
                if over_joker is None:
                    reasons.append(str(exc))
                    continue
                text, notes = over_joker
                flags += notes
            if stale:  # the move explains the old cell: empty until the camera sees otherwise
                self.beliefs[f"{frm}.unit"].value = None
                flags.append(f"{frm} still read occupied after its unit moved")
            if to in (unread or {}):  # there until the camera sees otherwise
                self.beliefs[f"{to}.unit"].value = side if self._sides_only else \
                    f"{side}-{self.state.units[parse_cell(to)].kind}"
                self._misread_empty.add(to)
            self._record(TableEvent(frame, text, "move", flags))
            self.attacks_to_resolve.append(text)
            return True
        self.holding = "; ".join(reasons)
        return False

    def _firmly_occupied(self, cell: str) -> bool:
        """Did the last look at `cell` see a piece, surely? A face card's picture can pass
        for a piece, but rarely a sure one (session 15: an empty plastic queen of spades read as
        a white pawn at 75 %, its neighbour's real pawn at 100 %)."""
        read = self._piece_reads.get(cell)
        return read is not None and read.occupied is True and read.confidence >= FIRM

    def _removal(self, diff: dict, seen: dict, frame: int, before_moves: bool) -> bool:
        """A unit gone from a cell whose card did not change, and not moved next door.
        With cards also laid (`before_moves` false), only a removal the engine's current turn
        explains comes first: the side to move has moved and the unit is its enemy's."""
        state = self.state
        attacker_done = state.phase in (Phase.ATTACK, Phase.POST_TURN)
        engine = {k: was for k, (was, _now) in diff.items()}  # engine values where they differ
        last = self._last_event_frame()
        for key, (old, new) in sorted(diff.items()):
            if not (key.endswith(".unit") and isinstance(old, str) and new is None):
                continue
            if not before_moves and not (attacker_done
                                         and old.split("-")[0] != state.to_move.value):
                continue
            cell = key[:-5]
            # (a card read anew where the unit stood is laid with it, unless it only reads
            # unsure now: bare, the card the unit stood on may read otherwise, and a movement
            # card always carries its unit; val-s58: a JC under the king taken off read JK
            # 55 %, and the game's last removal was never seen)
            if f"{cell}.card" in diff and diff[f"{cell}.card"][1] != UNREAD:
                continue
            if self._covered_own_card(cell, diff):
                continue
            # (a move lays a card where the unit goes: a unit read not firmly next door, on
            # the very card the engine has there, is a face card's picture; s42: a plastic
            # AC's big pip read as a black rook at 78 % held the removal beside it 130 frames)
            moved_next_door = any(
                seen[f"{n}.unit"] == old and engine.get(f"{n}.unit", seen[f"{n}.unit"]) != old
                and (f"{n}.card" in diff or seen[f"{n}.card"] == UNREAD
                     or self.beliefs[f"{n}.card"].settling or self._firmly_occupied(n))
                and not self._there_before(n, cell, last)
                for n in (CELL_NAMES[c] for c in NEIGHBOURS[parse_cell(cell)]))
            if moved_next_door:
                continue
            # a card just laid next door with no unit on it yet: the unit is on its way there
            # (a flat token moved off its cell can be seen gone before it is seen arrived).
            # For a unit of the side yet to move any new card will do, read or not: only the
            # enemy's attack takes a unit off, and the enemy has had its turn (val-s47: a
            # queen lifted toward an orell joker whose picture no reader leans on was taken
            # off the board, and the game parted ways with the table from there)
            # A card that changed before the last event is no card just laid: bare cards
            # whose units left read otherwise for good (val-s7: two such beside the game's
            # last removal held it to the end), unless the unit was seen gone with it: a
            # move logged late, in the same look, is no event between them (xv-s83: white's
            # move, its token read empty until black's card lay, logged with black's pawn
            # lifted toward that card; the pawn was taken off as hit, its move lost)
            own_move = self._yet_to_move and old.split("-")[0] == state.to_move.value
            if any(f"{CELL_NAMES[c]}.card" in diff and seen[f"{CELL_NAMES[c]}.unit"] is None
                   and (self._card_since.get(f"{CELL_NAMES[c]}.card", last + 1) > last
                        or abs(self._card_since.get(f"{CELL_NAMES[c]}.card", -TOGETHER - 1)
                               - self._gone_since.get(cell, TOGETHER + 1)) <= TOGETHER)
                   and (own_move or self._looks_laid(f"{CELL_NAMES[c]}.card", seen))
                   for c in NEIGHBOURS[parse_cell(cell)]):
                continue
            if not self._an_attack_explains(cell):
                continue
            unit = self.state.units[parse_cell(cell)]
            life = unit.life_left
            who = f"{unit.side.value} {unit.kind}"
            flags = [] if life <= 0 else [
                f"removed with {unit.injury} injury recorded of {unit.injury + life} life: "
                "enter the attack that took it off"]
            origin = self._origin.get(cell)
            self._attack_view(cell, unit.side)
            before = self._snapshot()
            self._remove_unit(cell)
            event = TableEvent(frame, f"{who} removed {cell}", "removed", flags)
            self.events.insert(self._removal_place(diff, cell, unit.side), event)
            self._removals.append((event, unit.side, origin))
            self._taken_off = (event, before, cell, unit.side.value) if flags else None
            return True
        return False

    def _new_card_like_the_asked_one(self, key: str) -> bool:
        """The engine waits for a side's initiative card, and its pile reads sure the card the
        latest open question there goes on with, though that question first went on with
        another: a deck holds each card once, so the sure reads are of the new card, and
        the question's card is the one it first went on with (v5-s229: black's 9C, read 9C
        81 %, 9S 19 %, went on as 9C; black's real 9S a round later, a thumbnail too like it
        to be seen laid, was taken for more looks at it and turned the question to 9S, and
        the game fell a round behind). The question takes that answer back; the new card is
        logged next. True where it was."""
        asked = [q for q in self.questions if isinstance(q, CardQuestion) and q.key == key
                 and q.event.kind == "initiative"]
        q = max(asked, key=lambda q: q.event.frame, default=None)
        read = self._last_read.get(key)
        if q is None or read is None or read.card != q.chosen:
            return False
        # the answer it first went on with, from the looks before the new card came
        for answer in [a for a in q.went_with[:1] if a != q.chosen]:
            if self._settle(
                    q, answer, f"{q.chosen} turned up again on this pile, read sure: taken as "
                    f"{answer}; check it"):
                return True
        return False

    def _lifted_back(self, diff: dict) -> bool:
        """A unit taken off with no attack entered for it, seen back on its cell of its own
        side before the game logged anything else: it was lifted, not taken off (a hand the
        occlusion gate did not see holding it while a card went under it), and the removal is
        undone (v5-s223: a white knight lifted for three unclouded frames while white laid 2H
        under it was taken off, and the game parted ways with the table). True where it was."""
        if self._taken_off is None:
            return False
        event, before, cell, side = self._taken_off
        back = diff.get(f"{cell}.unit")
        if back is None or back[0] is not None or str(back[1]).split("-")[0] != side:
            return False
        # (a unit of that side gone next door has moved onto the cell: val-s58, a pawn onto
        # the card its rook was taken off)
        if any(str(old).split("-")[0] == side and new is None
               for n in NEIGHBOURS[parse_cell(cell)]
               for old, new in [diff.get(f"{CELL_NAMES[n]}.unit", (None, None))]):
            return False
        self._taken_off = None
        since = self.journal[before.entry:]
        if since[:1] != [f"correct remove {cell}"] or not any(e is event for e in self.events) \
                or any(a.split()[1] not in _FILLER_VERBS + ("draw",) for a in since[1:]):
            return False  # the game went on since: the unit back is another story
        self._back_to(before)
        self.events = [e for e in self.events if e is not event]
        self._removals = [r for r in self._removals if r[0] is not event]
        return True

    def _covered_own_card(self, cell: str, diff: dict) -> bool:
        """The unit gone from `cell` as the card there reads unsure but leaning (LEAN) to a
        card of the other colour than the engine's: a card laid over it, and a card is laid
        only under the unit that moves onto it, so the unit covered its own card and was
        misread as gone, not taken off (val-s35 with the stage-9 piece model: a white paper
        queen on the QD it laid on c2, read empty at 62 %, the QD read QD 94 % and unsure,
        was taken off as hit before its side had moved). A bare card a unit was taken off
        may lean to the joker (val-s58: a JC read JK 55 %): a joker, read or believed, says
        nothing here."""
        key = f"{cell}.card"
        read = self._last_read.get(key)
        if key not in diff or diff[key][1] != UNREAD or read is None or not read.candidates:
            return False
        top, p = read.candidates[0]
        engine = self._engine_card(key)
        return p >= LEAN and engine not in (None, "JK") and top != "JK" \
            and not may_be_same(top, engine)

    def _removal_place(self, diff: dict, cell: str, side: Side) -> int:
        """Where a removal goes in the event log. Only an attack takes a unit off, and only
        the unit that moved attacks: a removal seen after a new round's initiative cards, with
        no move since and none under way (no card and no unit newly seen anywhere), was the
        last attack's, and goes before those cards (val-s23: a queen's blast took two units
        off, seen 25 frames later, after both piles' new cards). Elsewhere: the end."""
        at = len(self.events)
        while at > 0 and self.events[at - 1].kind == "initiative":
            at -= 1
        under_way = any(k.endswith(".card") or (k.endswith(".unit") and new is not None)
                        for k, (_old, new) in diff.items())
        if at == len(self.events) or at == 0 or under_way \
                or self.events[at - 1].kind not in ("move", "removed"):
            at = len(self.events)
        return self._taken_off_earlier(cell, side, at)

    def _taken_off_earlier(self, cell: str, side: Side, at: int) -> int:
        """Where a removal goes whose unit was last read on its cell before a later enemy move
        was logged, the cell read unsure, neither the unit nor empty, on GONE_UNSURE unclouded
        frames before that move: right after the enemy's last move logged before that read,
        where the unit that made it (followed to where it stands) reaches the cell, and the
        removed unit's side has not moved since. The cell read unsure from that attack on,
        and empty only as the enemy's next move came (val-s19: a black bishop hit from a1
        was logged taken off after white's next move, a round late). Else `at`. (A unit
        last read just before the later move, its cell clouded by the hands making it, was
        that move's to take: s4, s51.)"""
        seen = self._unit_read_at.get(cell)
        if seen is None:
            return at
        enemy = side.other.value

        def move_of(e: TableEvent, who: str) -> bool:
            return e.kind == "move" and e.text.startswith(who + " ")

        k = next((i for i in range(at - 1, -1, -1) if move_of(self.events[i], enemy)
                  and self.events[i].frame <= seen), None)
        if k is None or k == at - 1 or any(move_of(e, side.value)
                                           for e in self.events[k + 1:at]):
            return at
        later = next((e.frame for e in self.events[k + 1:at] if move_of(e, enemy)), None)
        if later is None:
            return at  # no later enemy move: the removal is not late
        unsure = self._unsure_since_unit.get(cell, [])  # its first GONE_UNSURE frames, in order
        if len(unsure) < GONE_UNSURE or unsure[-1] >= later:
            return at
        dest = where = _lays_on(self.events[k].text)
        for e in self.events[k + 1:at]:  # that unit may have moved on since: follow it
            if move_of(e, enemy) and e.text.split()[2].split("-")[0] == where:
                where = _lays_on(e.text)
        mover = self.state.units.get(parse_cell(where))
        if mover is None or mover.side is side or not _reaches(
                mover.kind, parse_cell(dest), parse_cell(cell)):
            return at
        return k + 1

    def _there_before(self, n: str, cell: str, last: int) -> bool:
        """The unit seen on `n` was seen there at the last event (frame `last`, -1 before
        any), while the one on `cell` was still seen on `cell`: it is not that unit moved
        (s42: the phantom units two face cards showed on e1 and g1 for 100 frames hid the white
        pawn taken off f2 between them; the pawn moved from g3 to f3 next was then taken for
        the one from f2 and a re-read followed)."""
        return last >= 0 and self._unit_since.get(n, last + 1) <= last \
            < self._gone_since.get(cell, -1)

    def _last_mover(self, side: Side) -> tuple[str | None, object]:
        """The cell `side` last moved a unit to, and that unit if it still stands there
        (None where the journal has no such move or the cell holds another side's unit)."""
        mover = next((e.split()[2].split("-")[1] for e in reversed(self.journal)
                      if e.split()[0] == side.value and e.split()[1] == "move"), None)
        unit = self.state.units.get(parse_cell(mover)) if mover else None
        return mover, unit if unit is not None and unit.side is side else None

    def _an_attack_explains(self, cell: str) -> bool:
        """Could the enemy's last mover have taken the unit on `cell` off? Only the unit that
        moved attacks (`_reaches`), and only after its move. A mover whose kind is asked (in
        doubt in its side's open placement question) could be any of its army's kinds."""
        side = self.state.units[parse_cell(cell)].side
        mover, attacker = self._last_mover(side.other)
        if attacker is None:
            return True
        # a unit seen gone before that move, and not read empty since, was not taken off by
        # it: the empty reads were of a piece the classifier lost (val-s23: a dreamchess
        # bishop read empty at 62 % was taken off two turns before the knight that took it)
        moved_at = next((e.frame for e in reversed(self.events) if e.kind == "move"
                         and e.text.split()[0] == side.other.value), None)
        if moved_at is not None and self._gone_since.get(cell, moved_at) < moved_at \
                and self._empty_read_at.get(cell, -1) <= moved_at:
            return False
        kinds = {attacker.kind}
        if any(isinstance(q, PlacementQuestion) and q.side is attacker.side and not q.watched
               and self._origin.get(mover) in q.doubted() for q in self.questions):
            kinds = set(self.armies[attacker.side])
        return any(_reaches(k, parse_cell(mover), parse_cell(cell)) for k in kinds)

    def _attack_view(self, cell: str, side: Side) -> None:
        """A unit of `side` taken off `cell` was hit by the enemy's last mover: a view of that
        mover's kind for the open question of where the enemy's kinds stand. Melee units
        attack orthogonally, ranged ones diagonally, a pawn also diagonally (Extended Reach),
        and a queen's Mystic Blast reaches every enemy on a card of its target's colour. A
        removal may be seen late or put down to the wrong move, so the view leans (90 %)
        rather than rules out."""
        mover, attacker = self._last_mover(side.other)
        if attacker is None:
            return
        q = next((q for q in self.questions if isinstance(q, PlacementQuestion)
                  and q.side is attacker.side and self._origin.get(mover) in q.origins), None)
        if q is None:
            return
        kinds = set(self.armies[attacker.side])
        could = {k for k in kinds if _reaches(k, parse_cell(mover), parse_cell(cell))}
        if not could or could == kinds:
            return  # (nothing to tell the kinds apart)
        share = 0.9 / len(could), 0.1 / max(len(kinds - could), 1)
        q.add_view(self._origin[mover], f"attack on {cell}",
                   {k: share[0] if k in could else share[1] for k in kinds})

    def _misreads_of_agreed(self, reading: TableReading, values: dict, believed: dict,
                            cards_now: dict) -> None:
        """An unsure read of a card the engine agreed with, at a place whose pixels have not
        changed since, is that card misread (a routine re-read of a card under a piece can
        lean elsewhere), not news: the believed card stands."""
        for key, code in believed.items():
            if key.endswith(".unit") or code in (None, UNREAD) or values.get(key) != code \
                    or self.beliefs[key].settling:
                continue
            if self._engine_card(key) == code:  # engine, belief and this look agree
                self._agreed_at[key] = self._changes.get(key, 0)
        for key in cards_now:
            if zone_of(key) in reading.changed:
                self._changes[key] = self._changes.get(key, 0) + 1
            elif values.get(key) == UNREAD and believed.get(key) not in (None, UNREAD) \
                    and self._agreed_at.get(key) == self._changes.get(key, 0):
                values[key] = believed[key]

    def _known_misreads(self, values: dict, believed: dict, cards_now: dict) -> None:
        """A card the rules took against the reader's word (a held-out joker read as a jack
        of diamonds at 99 %, which the colour rule refused) is read the same way again once
        the unit on it leaves and the look changes: that read is the known misread, not a card
        laid, unless a unit arrives with it (a movement card always carries its unit); nor
        is a read that leans that way. On s51 the joker's bare look, read JD, stood as a card
        laid next door and kept the removal beside it from being seen."""
        for key, (code, looks) in list(self._misread_as.items()):
            if self._engine_card(key) != code:
                del self._misread_as[key]  # covered, or re-read: the decision is spent
                continue
            unit = key[:-5] + ".unit"
            read = cards_now.get(key)
            leaning = values.get(key) == UNREAD and read is not None and read.candidates \
                and read.candidates[0][0] in looks
            if (values.get(key) in looks or leaning) \
                    and values.get(unit) in (believed.get(unit), NO_READING):
                values[key] = code

    def _bare_looks(self, values: dict, cards_now: dict) -> None:
        """A movement card is read with the unit that moved onto it standing on it (a piece
        hides part of a card). Where the reader named it sure then, and now, with no unit on
        it, names another card of its colour sure for SETTLE_FRAMES frames in a row, the bare
        look is the better one: the move is rewritten to that card and flagged, where the rules
        take it (s42: a 6H under a white rook read as 4H at 99.9 %, and bare as 6H at 99.98 %
        once the rook had left; a card of the same colour can't be a new one laid on it)."""
        for key, read in cards_now.items():
            if key.startswith("init.") or getattr(read, "card", None) in (None, UNREAD):
                self._seen_bare.pop(key, None)
                continue
            cell, engine = key[:-5], self._engine_card(key)
            if values.get(f"{cell}.unit") is not None or parse_cell(cell) in self.state.units:
                self._under_unit[key] = read
            if read.card == engine or engine is None or not may_be_same(read.card, engine) \
                    or values.get(f"{cell}.unit") is not None \
                    or parse_cell(cell) in self.state.units:
                self._seen_bare.pop(key, None)
                continue
            code, n = self._seen_bare.get(key, (read.card, 0))
            n = n + 1 if code == read.card else 1
            self._seen_bare[key] = (read.card, n)
            if n < self.settle_frames:
                continue
            self._seen_bare.pop(key, None)
            entry = self._last_laid_on(cell)
            if entry is None or self.journal[entry].split()[1] != "move" \
                    or self.journal[entry].split()[-1] != engine \
                    or (self.journal[entry], read.card) in self._bare_tried \
                    or not self._left_as_recorded(cell, self.journal[entry]):
                continue
            self._bare_tried.add((self.journal[entry], read.card))  # (once: a replay each)
            why = f"read as {engine} under its unit, and as {read.card} once bare: taken as " \
                "that; check it"
            question = next((q for q in self.questions if isinstance(q, CardQuestion)
                             and q.entry == entry), None)
            if question is not None:  # an open one weighs its bare looks itself
                if question.watched and self._settle(question, read.card, why):
                    self.beliefs[key].value = values[key] = read.card
                continue
            if self._ask_bare(key, entry, engine, read, why):
                self.beliefs[key].value = values[key] = self._engine_card(key)

    def _ask_bare(self, key: str, entry: int, engine: str, read, why: str) -> bool:
        """Two sure reads of one movement card disagree: under its unit and bare. Neither is
        taken on its own word: the move becomes an open question weighing both looks (later
        bare reads add to the bare one), going on with the bare read unless the look under
        the unit was surer (nothing hides a bare card). Session 18, s42: a 6H under a rook
        read 4H at 99.9 %, bare 6H at 99.98 %; val-s7: a berlin JS under a knight read JS at
        99.8 %, bare QS at 99.9 %, and rewriting it to the bare read was a spurious move."""
        event = self._event_of(entry)
        if event is None or self._confirmed_by_a_player(entry):
            return False
        self._laid_looks.pop(id(event), None)  # a question now: its answer is the players'
        under = self._under_unit.get(key)
        evidence = CardEvidence()
        evidence.add([(engine, getattr(under, "confidence", ACCEPT))])
        evidence.new_look()
        evidence.add([(read.card, read.confidence)])
        q = self._question_on_past_event(key, key[:-5], event, entry, evidence, engine)
        ranked = dict(q.ranked())
        best = read.card if ranked.get(read.card, 0.0) >= ranked.get(engine, 0.0) else engine
        if best != engine and not self._choose(q, best):
            return False
        event.flags.append(why)
        event.question = q.describe()
        self.questions.append(q)
        return True

    def _question_on_past_event(self, key: str, place: str, event: TableEvent, entry: int,
                                evidence: CardEvidence, chosen: str) -> CardQuestion:
        """A question on the card of an event logged earlier (journal `entry`), going on with
        `chosen`: any card may answer it (the rules then say which can), and its looks
        already include one of the card bare."""
        return CardQuestion(key, place, event, entry, self._start, list(CARDS), evidence,
                            chosen, bare_look=True)

    def _left_as_recorded(self, cell: str, laid: str) -> bool:
        """The cell was last seen going empty when the game recorded its unit leaving (moving
        on or taken off), after the move that laid its card: no unit the game does not know
        of stood there since (a missed move's card misread in the colour of the card it
        covered would otherwise pass for that card read better)."""
        laid_at = next((i for i in range(len(self.events) - 1, -1, -1)
                        if self.events[i].text == laid), None)
        if laid_at is None:
            return False
        left = next((e.frame for e in reversed(self.events[laid_at + 1:])
                     if (e.kind == "move" and e.text.split()[2].startswith(cell + "-")
                         and not e.text.split()[2].endswith("-" + cell))
                     or (e.kind == "removed" and e.text.split()[-1] == cell)), None)
        return left is not None and self._gone_since.get(cell, left + 1) <= left

    def _news_over_a_joker(self, values: dict, believed: dict, cards_now: dict) -> None:
        """A card read sure in the colour of the card believed under it is that card misread
        (`card_value`), unless the side of the unit seen on it could have laid it there (from
        that cell or one next door, once the turns the camera can't see are over) had the card
        under it been a joker the reader took for another: then it is news, and the move
        rewrites that card (`_joker_misread`)."""
        for key, read in cards_now.items():
            code = getattr(read, "card", None)
            if key.startswith("init.") or not code or values.get(key) != believed.get(key) \
                    or code == believed.get(key) or self._engine_card(key) != believed[key]:
                continue
            cell = key[:-5]
            seen = values.get(f"{cell}.unit")  # a movement card carries the unit that moved
            if not isinstance(seen, str) or seen == UNREAD:
                continue
            side = seen.split("-")[0]
            units = self.state.units
            movers = [c for c in [cell] + [CELL_NAMES[n] for n in NEIGHBOURS[parse_cell(cell)]]
                      if parse_cell(c) in units and units[parse_cell(c)].side.value == side
                      and (c == cell or parse_cell(cell) not in units)]
            if any(self._laid_on_a_joker(cell, f"{side} move {frm}-{cell} {code}") is not None
                   for frm in movers):
                values[key] = code

    def _laid_on_a_joker(self, cell: str, text: str) -> int | None:
        """Would the rules take `text` had the top card on `cell` been a joker, and was that
        card laid by a move the reader named (set-up cards are never jokers; a re-read's card
        is the table's)? Returns that move's journal entry, or None."""
        top = self.state.top(parse_cell(cell))
        if top is None or top.card.is_joker:
            return None
        entry = self._last_laid_on(cell)
        if entry is None or self.journal[entry].split()[-1] != top.card.code \
                or self.journal[entry].split()[1] != "move":
            return None
        trial = self.state.copy()  # the move alone, over a joker (a replay is dearer)
        cell_id = parse_cell(cell)
        trial.stacks[cell_id] = trial.stacks[cell_id][:-1] + (
            dataclasses.replace(top, card=parse_card("JK")),)
        action = parse_action(text)
        try:
            for _ in range(8):  # on to that side's movement, as `_step` would go
                if trial.is_chance_node():
                    ev = trial.pending[0]
                    if ev.verb is not Verb.DRAW:
                        break  # a new round's initiative cards come first
                    trial.apply(parse_action(f"{ev.side.value} draw ?"))
                    continue
                if trial.phase is Phase.MOVEMENT and trial.to_move is action.side:
                    break
                step = _unseen_step(trial, to_movement=True)
                if step is None:
                    break
                trial.apply(parse_action(step))
            _assume_unseen_draw(trial, action.side)
            trial.apply(action)
        except RulesError:
            return None
        return entry

    def _news_on_awaited_piles(self, reading: TableReading, values: dict,
                               believed: dict) -> None:
        """An initiative pile whose pixels changed while the rules await its side's card holds
        a new card, even where it reads like the last one (a club taken for the spade it
        covers): one deck can't turn up the same card twice, so the rules weigh the read."""
        awaited = {f"init.{ev.side.value}" for ev in self.state.pending
                   if ev.verb is Verb.INITIATIVE}
        for key in awaited:
            if zone_of(key) in reading.changed:
                self._pile_changed[key] = self._engine_card(key)
        for key, was in list(self._pile_changed.items()):
            if key not in awaited or self._engine_card(key) != was:
                del self._pile_changed[key]  # its new card is in the game now
            elif values.get(key) == believed.get(key) not in (None, UNREAD):
                values[key] = UNREAD

    def _note_glimpses(self, reading: TableReading) -> None:
        """Keep what an occluded frame glimpsed for the settled frame that follows: a card
        its unit covers at once was seen uncovered only then. Glimpses are never state; they
        join the evidence of a card the settled frame cannot name on its own."""
        for zone, card in reading.glimpses.items():
            if card is None or card.face_down:
                continue
            key = card_key_of(zone)
            look = card.candidates or ([(card.card, card.confidence)] if card.card else [])
            if look:
                self._glimpses.setdefault(key, []).append(look)

    def _looks_laid(self, key: str, seen: dict) -> bool:
        """Is a real card seen at `key`: read, or unsure but leaning to one card or one rank
        (a patch of cloth taken for a card gives no reading that leans; v6-s277: an orell joker
        read JS 46 %, JC 24 %, KS 10 % leans to jacks)?"""
        if seen[key] is None:
            return False
        if seen[key] != UNREAD:
            return True
        evidence = self.evidence.get(key)
        ranked = evidence.ranked() if evidence else []
        ranks = Counter()
        for code, p in ranked:
            ranks[code[:-1]] += p
        return bool(ranked) and (ranked[0][1] >= LEAN or max(ranks.values()) >= LEAN)

    # ----------------------------------------------------------------- engine steps

    def _event(self, text: str, kind: str, frame: int, flags: list[str] | None = None) -> bool:
        """Apply and log a set-up, initiative or placing action. Where the rules refuse a
        card because an open question went on with it elsewhere, the question gives way, as
        for a movement card (session 14: a set-up card read 99.99 % sure was refused for the
        question before it, and the held-out game stalled there for 1,165 frames)."""
        text, notes = self._apply_giving_way(text)
        self._record(TableEvent(frame, text, kind, list(flags or []) + notes))
        return True

    def _apply_giving_way(self, text: str) -> tuple[str, list[str]]:
        """Apply an action that lays a card (its last word). Where the rules refuse it because
        an open question went on with that card elsewhere, the question takes its next answer;
        where its deck turned that card up before, the one read under a unit is taken as its
        twin (`_laid_card_is_the_twin`), else the earlier (`_twin_gives_way`). Returns the
        action applied and the note for the players (none where nothing gave way). Raises
        RulesError where nothing helps."""
        try:
            self._apply(parse_action(text))
            return text, []
        except RulesError:
            self._pending_question = None
            card = text.split()[-1]
            moved = self._question_gives_way(card, text)
            if moved is None:
                twin = self._laid_card_is_the_twin(card, text)
                if twin is not None:
                    text, moved = twin
                else:
                    moved = self._twin_gives_way(card, text)
            if moved is None:
                moved = self._sure_read_weighed(card, text)
            if moved is None:
                raise
            self._apply(parse_action(text))
            return text, [moved]

    def _record(self, event: TableEvent) -> None:
        """Log an event whose action was just applied; a card it took on trust opens its
        question."""
        self.events.append(event)
        words = event.text.split()
        if self._pending_question is None and event.kind in ("setup", "initiative", "move"):
            key = f"init.{words[0]}" if event.kind == "initiative" else \
                f"{_lays_on(event.text)}.card"
            looks = self._card_looks.get(key)
            if looks is not None and looks[0] == words[-1]:
                self._laid_looks[id(event)] = (key, looks[1])
        if self._pending_question is not None:
            key, place, answers, evidence, snap, watched = self._pending_question
            self._pending_question = None
            q = CardQuestion(key, place, event, len(self.journal) - 1, snap, answers, evidence,
                              event.text.split()[-1], watched=watched)
            # read bare from the start (no unit on it): later bare reads are the same look
            q.bare_look = key.startswith("init.") or parse_cell(key[:-5]) not in self.state.units
            if not watched:
                event.question = q.describe()
            self.questions.append(q)

    def _legal(self, text: str) -> bool:
        """Would the engine accept this action now?"""
        try:
            self.state.copy().apply(parse_action(text))
        except RulesError:
            return False
        return True

    def _resolve_card(self, key: str, place: str, allowed, accept: float = ACCEPT,
                      side: str | None = None) -> tuple[str | None, list[str]]:
        """A card the reader could not name alone: the best of its candidates that the rules
        allow, when that is at least `accept` sure; otherwise hold and say what it might be.
        `side`: whose deck it came from."""
        evidence = self.evidence.get(key)
        legal = {c for c in CARDS if allowed(c)}  # each asks the engine: once, not per use
        if evidence is not None and side is not None \
                and self._earlier_gives_way(evidence, legal, side, allowed):
            legal = {c for c in CARDS if allowed(c)}
        ranked = evidence.ranked(legal.__contains__) if evidence else []
        # the rules rule out cards already seen; a card the game went on with in an open
        # question may not be there after all, so it is not ruled out when judging certainty
        open_cards = {q.chosen: q for q in self.questions if isinstance(q, CardQuestion)}
        if open_cards and evidence is not None:
            # (also where the reads name no card allowed here: only a question's card)
            joint, rewritten = self._with_questions(evidence, legal, open_cards)
            if rewritten:  # the past changed: so did what the rules allow here
                legal = {c for c in CARDS if allowed(c)}
                ranked = evidence.ranked(legal.__contains__)
            if joint is not None and ranked:
                ranked = [(ranked[0][0], min(ranked[0][1], joint))] + ranked[1:]
        # the rules' word is taken only for a card the reader itself gave some weight: where
        # they refused nearly all it read, the card left is no reading but a guess (val-s47:
        # a JS on b2 read 99.85 %, refused as an open question's card elsewhere, left KS at
        # 0.05 %, taken at "100 % after the rules")
        if ranked and ranked[0][1] >= accept \
                and dict(evidence.ranked()).get(ranked[0][0], 0.0) >= CONSISTENT:
            code, p = ranked[0]
            self._take_card(key, place, code, legal, evidence, watched=True)
            return code, [f"card on {place} read as {code} ({p:.0%} after the rules): check it"]
        if ranked and ranked[0][1] >= (0.0 if key == self._go_on_with else GO_ON):
            # the likeliest stands in as an open question; later looks settle it
            code = ranked[0][0]
            self._take_card(key, place, code, legal, evidence, watched=False)
            return code, []
        if not ranked and key == self._go_on_with and evidence is not None:
            # the table has moved on and the rules rule out every card the reader named: go on
            # with an allowed card of the rank it read (it tells ranks apart far better than
            # suits), as an open question (val-s7: a KD under a rook read JS, JC or JD, JD
            # already laid; the move was lost and the game parted ways with the table)
            code = of_the_rank_read(evidence, legal)
            if code is not None:
                self._take_card(key, place, code, legal, evidence, watched=False)
                why = "the picture card left when it read courts" if code == "JK" \
                    else "of the rank it read"
                return code, [f"no card the reader named is allowed on {place}: going on with "
                              f"{code}, {why}; check it"]
        self._held_card = key
        self._held_keys = set(self._diff())
        guesses = ", ".join(f"{c} {p:.0%}" for c, p in sorted(ranked, key=lambda r: -r[1])[:3]) \
            or "no usable reading"
        self.holding = f"which card lies on {place}? it looks like: {guesses}"
        return None, []

    def _earlier_gives_way(self, evidence: CardEvidence, legal: set[str], side: str,
                           allowed) -> bool:
        """This place reads only cards the rules refuse, one of them a card that `side`'s deck
        turned up before on a read's word: one of the two reads is wrong. Both places' reads
        are weighed as a pair that can't hold the same card (this place keeping its best
        allowed card, or the earlier place taking its next best): where the swap is likelier,
        the earlier event takes its next best card, settled and flagged where ACCEPT sure,
        else as an open question (val-s7: a berlin KD read JD sure, bare reads leaning KD at
        60-84 %, refused white's real JD on its initiative pile 290 frames later, read JD
        42 %; the game went on with a QH the reader never named). Returns whether the past
        changed."""
        raw = evidence.ranked()
        if not raw:
            return False
        listed = dict(raw)
        floor = rest_per_card(raw, lambda c: True)
        keep_here = max((listed.get(c, floor) for c in legal), default=0.0)
        if keep_here >= CONSISTENT:
            # the reads here still name a card the rules allow: no cause to doubt the past
            # (val-s7: a pile read JC 36 %, JS 25 %, JK 16 % would otherwise have turned a JS
            # read sure under its knight, its weaker reads leaning QS, into a QS)
            return False
        for card, p_here in raw:
            if p_here < CONSISTENT or card in legal or card not in ONCE_IN_A_DECK:
                continue
            entry = self._earlier(side, card)
            event = self._event_of(entry) if entry is not None else None
            if event is None or event.question is not None \
                    or id(event) not in self._laid_looks or self._confirmed_by_a_player(entry):
                continue
            key, looks = self._laid_looks[id(event)]
            there = looks.ranked()
            alternatives = [(c, p) for c, p in there if c != card]
            if not alternatives:
                continue
            keep = dict(there).get(card, 0.0) * keep_here
            swap = alternatives[0][1] * p_here
            share = swap / max(keep + swap, 1e-12)
            if share <= 0.5:
                continue
            place = key[:-5] if key.endswith(".card") else f"{side}'s initiative pile"
            q = self._question_on_past_event(key, place, event, entry, looks.copy(), card)
            if not self._choose(q, alternatives[0][0]):
                continue
            if not allowed(card):  # no help here after all: as it was
                self._choose(q, card)
                continue
            del self._laid_looks[id(event)]
            why = f"read as {card}, but {card} turned up again later ({share:.0%} that the " \
                f"earlier read was the wrong one): taken as {alternatives[0][0]}; check it"
            if share >= ACCEPT:
                event.flags.append(why)
            else:
                event.question = q.describe()
                self.questions.append(q)
            return True
        return False

    def _take_card(self, key: str, place: str, code: str, legal: set[str],
                   evidence: CardEvidence, watched: bool) -> None:
        """Go on with `code` at `key` as the rules chose it from an unsure look: later unsure
        reads that still back it agree, and so does this very look while its pixels stay; the
        event about to be recorded opens its question (`watched`: taken on the rules' word)."""
        self.beliefs[key].value = code
        self._agreed_at[key] = self._changes.get(key, 0)
        if watched and not key.startswith("init."):  # a pile's next card lies on it anyway
            self._misread_as[key] = (code, {c for c, p in evidence.ranked()
                                            if c != code and p >= CONSISTENT})
        self._held_card = None
        self._pending_question = (key, place, [c for c in CARDS if c in legal],
                                  evidence.copy(), self._snapshot(), watched)

    def _with_questions(self, evidence: CardEvidence, legal: set[str],
                        open_cards: dict) -> tuple[float | None, bool]:
        """The rules rule out a card already seen; but a card an open question went on with may
        not be there after all. Where the card read here is likeliest such a card, the two
        places are weighed together: the question keeps its card and this place takes its best
        other, or the question takes its next best and this place that card. The likelier pair
        is gone on with (the question's answer rewritten if need be, still open; settled where
        ACCEPT sure). Returns how sure the card now best here is (None if nothing bears), and
        whether the journal was rewritten."""
        honest = evidence.ranked(lambda c: c in legal or c in open_cards)
        if not honest:
            return None, False
        if honest[0][0] not in open_cards or honest[0][0] in legal:
            # (a card the rules allow here anyway, from the other player's deck, say, is no
            # competitor of the question's)
            best = evidence.ranked(legal.__contains__)
            return (dict(honest).get(best[0][0], 0.0) if best else None), False
        # reads lying mostly on cards that can't be here say the reader took a suit for its
        # twin, or the place is misbelieved (the card it covers, say): weighed over what is
        # left, a 10 % read becomes 98 %, and the swap it makes is a question, never settled
        # (xv-s71: a 9S read 90 % where only red cards were allowed settled the question on
        # a4, rightly going on with 9C, to 9S; v3-s149: a QH read QD 69 % rightly turned the
        # a5 set-up card, taken as QH, into a question)
        weak = sum(p for c, p in evidence.ranked() if c in legal or c in open_cards) < LEAN
        taken, p_taken = honest[0]
        q = open_cards[taken]
        here = [(c, p) for c, p in honest if c != taken]
        there = q.ranked()
        alternatives = [(c, p) for c, p in there if c != taken]
        if not alternatives:
            return None, False
        # this place's best other card: the likeliest listed, or where the reads name no
        # other, an unlisted one's share of what they leave
        rest = rest_per_card(honest, lambda c: c in legal or c in open_cards)
        keep = dict(there).get(taken, 0.0) * (here[0][1] if here else rest)
        share = 0.0
        for alt, p_alt in alternatives:
            # the question's likeliest other answer first; where the rules refuse it there now
            # (the card turned up elsewhere since), the next
            swap = p_alt * p_taken
            share = swap / max(keep + swap, 1e-12)
            if share >= ACCEPT and not weak:
                if self._settle(q, alt, f"{taken} was seen elsewhere: check it"):
                    return share, True
            elif share > 0.5:
                if self._choose(q, alt):
                    q.event.question = q.describe()
                    return share, True
            else:
                break
        if share > 0.5:
            return None, False  # the rules refuse every swap: the question keeps its card
        return 1.0 - share, False

    def _joker_misread(self, cell: str, text: str) -> str | None:
        """A movement card read sure that the rules refuse, where the card it covers on `cell`
        was itself taken from a read: a joker lying on the board has no colour, and a joker
        the reader took for another card (the held-out tango joker's "J" over an "o" reads as
        a jack of diamonds at 99.99 %) makes the next card laid on it look illegal (session 17,
        s51: a QH laid on it was taken for that jack misread, and the game stalled there).
        Where the rules take `text` with the covered card as the joker, the action that laid
        it is rewritten to the joker and its event flagged, and `text` applied. Where the
        covered card is an open question, each answer its reads still weigh that `text` may
        cover (`CardQuestion.coverable_by`: the joker, a card of the other colour) is tried,
        likeliest first, with the card laid free to make its own questions elsewhere give way
        (val-s35: black's QS, held by the question on its initiative pile, whose card was the
        other joker). Returns the action applied and the notes for this move, or None
        (nothing changed)."""
        entry = self._laid_on_a_joker(cell, text)
        misread = self._engine_card(f"{cell}.card")
        note = f"the {misread} under it was read wrong: a joker; check it"
        if entry is not None:
            if not self._rewrite_card(
                    entry, "JK", text, f"read as {misread}, but a later card laid on it could "
                    "only lie on a joker: taken as the joker; check it"):
                return None
            self._apply(parse_action(text))
            return text, [note]
        key = f"{cell}.card"
        q = next((q for q in self.questions if isinstance(q, CardQuestion) and q.key == key
                  and q.chosen == misread and q.entry == self._last_laid_on(cell)), None)
        laid = text.split()[-1]
        if q is None or not q.coverable_by(laid):
            return None
        before, watched, went_with = q.chosen, q.watched, list(q.went_with)
        for alt, p in q.ranked():
            if p < CONSISTENT or alt == before or may_be_same(laid, alt) \
                    or not self._choose(q, alt):
                continue
            try:
                applied, notes = self._apply_giving_way(text)
            except RulesError:
                self._choose(q, before)
                q.watched, q.went_with = watched, list(went_with)
                continue
            q.event.question = q.describe()
            what = "a joker" if alt == "JK" else alt
            return applied, [f"the {misread} under it was read wrong: {what}; check it"] + notes
        return None

    def _last_laid_on(self, cell: str) -> int | None:
        """The journal entry that laid the card now on top of `cell`."""
        return next((i for i in range(len(self.journal) - 1, -1, -1)
                     if _lays_on(self.journal[i]) == cell), None)

    def _earlier(self, side: str, card: str) -> int | None:
        """The journal entry where `side`'s deck last turned up `card`."""
        return next((i for i in range(len(self.journal) - 1, -1, -1)
                     if self.journal[i].split()[0] == side
                     and self.journal[i].split()[-1] == card), None)

    def _laid_card_is_the_twin(self, card: str, text: str) -> tuple[str, str] | None:
        """A movement card that the rules refuse because its deck turned it up before on a
        set-up card or an initiative pile: the earlier card was read bare, this one under the
        unit that moved onto it (a piece hides part of a card), so this read is the reader's
        usual confusion and the card laid is its twin of the same rank and colour, where the
        rules take it (s64: white's 3S initiative card, read bare, was taken for a 3C when a
        3C laid under a king read as 3S, and both events came out wrong). Returns the action
        and the note, or None."""
        if card == "JK" or text.split()[1] != "move":
            return None
        entry = self._earlier(text.split()[0], card)
        if entry is None or self.journal[entry].split()[1] not in ("initiative", "setup"):
            return None
        twin_card = _twin(card)
        twin = _with_card(text, twin_card)
        if not self._legal(twin):
            return None
        key = f"{_lays_on(text)}.card"
        self.beliefs[key].value = twin_card  # (while its pixels stay, the read is that misread)
        self._agreed_at[key] = self._changes.get(key, 0)
        self._misread_as[key] = (twin_card, {card})
        return twin, (f"read as {card} under its unit, but this deck's {card} was seen bare "
                      f"before: taken as {twin_card}; check it")

    def _twin_gives_way(self, card: str, text: str) -> str | None:
        """A card that the rules refuse because its deck already turned it up, where that
        earlier card is out of sight now (an initiative card covered since, a card under
        others) and was named by the reader: clubs and spades, diamonds and hearts are the
        reader's usual confusion, so the earlier one is taken as the twin of the same rank
        and colour, its event flagged, where the rules take both (session 17, s64: black's
        4C read as 4S at round 1 refused the real 4S at round 14, and the game went wrong
        from there). Returns the note for this action, or None (nothing changed)."""
        if card == "JK":
            return None
        twin = _twin(card)
        side = text.split()[0]
        entry = self._earlier(side, card)
        if entry is None:
            return None
        verb = self.journal[entry].split()[1]
        where = f"init.{side}" if verb == "initiative" else f"{_lays_on(self.journal[entry])}.card"
        if verb not in ("initiative", "move", "setup") or self._engine_card(where) == card:
            return None  # (a card still in view: the look there says which)
        if not self._rewrite_card(entry, twin, text, f"read as {card}, but {card} turned up "
                                  f"again later: taken as {twin}; check it"):
            return None
        return f"the earlier {card} of this deck was read wrong: {twin}; check it"

    def _sure_read_weighed(self, card: str, text: str) -> str | None:
        """A card read sure that the rules refuse because its deck turned it up before, where
        the earlier one is still in view (so not simply its twin): the two places' reads are
        weighed as a pair that can't hold the same card (`_earlier_gives_way`), as for a card
        the reader could not name alone (v4-s199: black's QH on g4, read JH 97 % and QH 3 %
        under its unit, refused black's JH read 100 % on its initiative pile, and the game
        held there until the table was re-read). Returns the note for this action, or None."""
        words = text.split()
        side = words[0]
        key = f"init.{side}" if words[1] == "initiative" else f"{_lays_on(text)}.card"
        looks = self._card_looks.get(key)
        if looks is None or looks[0] != card:
            return None

        def allowed(code: str) -> bool:
            return self._legal(_with_card(text, code))

        legal = {c for c in CARDS if allowed(c)}
        if not self._earlier_gives_way(looks[1], legal, side, allowed):
            return None
        return f"{card} turned up again here, read sure: the earlier {card} of this deck " \
            "was taken as the other card its reads named; check it"

    def _event_with(self, text: str) -> TableEvent | None:
        """The latest logged event that reads `text`."""
        return next((e for e in reversed(self.events) if e.text == text), None)

    def _event_of(self, entry: int) -> TableEvent | None:
        """The logged event of journal `entry`."""
        return self._event_with(self.journal[entry])

    def _confirmed_by_a_player(self, entry: int) -> bool:
        """Whether journal `entry` is an action a player entered or settled: what the players
        said is never rewritten from what the camera saw later."""
        return any(e.text == self.journal[entry]
                   and any(f.startswith("confirmed by a player") for f in e.flags)
                   for e in self.events)

    def _rewrite_card(self, entry: int, code: str, text: str | None, why: str) -> bool:
        """Rewrite the card of journal `entry` (an open question's answer, or an event taken
        as seen, then flagged with `why`) where the rules then take `text` (None: no action
        waits on it); else nothing changes. A player's word is never rewritten."""
        if self._confirmed_by_a_player(entry):
            return False
        old = self.journal[entry]
        question = next((q for q in self.questions if isinstance(q, CardQuestion)
                         and q.entry == entry), None)
        if question is not None:
            before = question.chosen
            if not self._choose(question, code):
                return False
            if text is not None and not self._legal(text):
                self._choose(question, before)
                return False
            return True
        if not self._rewrite(self._start, {entry: _with_card(old, code)}):
            return False
        if text is not None and not self._legal(text):
            self._rewrite(self._start, {entry: old})
            return False
        event = self._event_with(old)
        if event is not None:
            event.text = _with_card(old, code)
            event.flags.append(why)
        return True

    def _question_gives_way(self, card: str, text: str) -> str | None:
        """A card read sure here that the rules refuse because an open question went on with
        it elsewhere: the question takes its next likeliest answer that makes `text` legal
        (still open): one the reader named at CONSISTENT or more, else what the reader is
        known to take for that card. Where the reader named no other, the first the rules
        allowed there stands in, still asked (s64: black's 2C read as the joker at 76 % and
        nothing else refused black's last joker, and the game's last rounds with it). Returns
        the note for the players, or None (nothing changed)."""
        for q in self.questions:
            if not isinstance(q, CardQuestion) or q.chosen != card:
                continue
            ranked = q.ranked()
            likely = [alt for alt, p in ranked if p >= CONSISTENT]
            # then what the reader is known to take for this card: its same-colour twin, and
            # for a jack the joker, whose big "J" over "oker" reads as a jack (s31: the tango
            # joker on b4 was read JC at 100 %, and when black's JC turned up it gave way to
            # a 3C listed at 0 %)
            confused = [_twin(card)] if card != "JK" else []
            if card.startswith("J") and card != "JK":
                confused.append("JK")
            order = likely + confused + [alt for alt, _p in ranked]
            for alt in dict.fromkeys(order + [c for c in q.answers if c not in order]):
                if alt == card or not self._choose(q, alt):
                    continue
                if self._legal(text):
                    q.event.question = q.describe()
                    return f"{card} was seen here: the open question on {q.place} now goes " \
                           f"on with {alt}"
                self._choose(q, card)  # no help: as it was
                break
        return None

    def _order_gives_way(self, diff: dict, seen: dict) -> bool:
        """A side lays a card under its unit once the round is over, with no new initiative
        card on either pile: the round is not over, so the other side won the initiative and
        moved first, and the turn the engine filled in as passed is still to come (s64:
        black's AC read as 3C at 74 % against white's KD; black's move was taken as white
        passing, and white's move after it held the game until the next round). Of this
        round's initiative piles' questions (open, or taken on the rules' word), the answer
        that would have it so and that the reads found likeliest, on either pile, is taken,
        asked; True where one was."""
        movers = {str(seen[k[:-5] + ".unit"]).split("-")[0] for k in diff
                  if k.endswith(".card") and diff[k][1] is not None
                  and isinstance(seen.get(k[:-5] + ".unit"), str)}
        if not movers:
            return False
        drawn = {}  # each side's initiative card of this round: its journal entry
        for i, entry in enumerate(self.journal):
            if entry.split()[1] == "initiative":
                drawn[entry.split()[0]] = i
        # a card taken on the rules' word too (watched): the order of play outweighs a read
        # (v6-s263: white's QC read JC 99.7 % against black's JS; black's move after white's
        # went into the next round, and the game lost 27 moves)
        asked = [q for q in self.questions if isinstance(q, CardQuestion)
                 and q.key.startswith("init.") and drawn.get(owner_of(q)) == q.entry]
        # both piles' answers the reads name, likeliest first, then the rest pile by pile
        named = sorted(((p, n, alt) for n, q in enumerate(asked) for alt, p in q.ranked()
                        if alt != q.chosen), key=lambda t: -t[0])
        tries = [(asked[n], alt) for _p, n, alt in named] + [
            (q, alt) for q in asked for alt in q.answers
            if alt != q.chosen and alt not in dict(q.ranked())]
        was = {id(q): (q.chosen, q.watched) for q in asked}
        for q, alt in tries:
            if alt == q.chosen or not self._choose(q, alt):
                continue
            state = self.state
            if not state.is_terminal() and state.to_move.value in movers and not (
                    state.is_chance_node() and state.pending[0].verb is Verb.INITIATIVE):
                q.event.question = q.describe()
                q.event.flags = [f for f in q.event.flags  # (the latest order stands)
                                 if "moved first in this round" not in f]
                q.event.flags.append(f"{state.to_move.other.value} moved first in this "
                                     f"round and {state.to_move.value} after: not "
                                     f"{was[id(q)][0]}; check it")
                return True
            self._choose(q, was[id(q)][0])  # no help: as it was
            q.watched = was[id(q)][1]
        return False

    def _watch_a_tie(self, key: str, side: Side, card: str) -> None:
        """A side's initiative card read sure as the very card on the other pile (a tie, both
        draw again), where its reads named another card too: the tie is kept, but watched, so
        that a move seen where the engine waits for new cards can turn it to that card
        (`_order_gives_way`; v7-s313: black's KD read JD 79 %, KD 21 %, against white's JD;
        black's move then came with no new card, and the rounds went out of step)."""
        other = self.state.initiative[side.other]
        looks = self._card_looks.get(key)
        if other is None or other.code != card or looks is None or looks[0] != card:
            return
        evidence = looks[1]
        if not any(alt != card and p >= CONSISTENT for alt, p in evidence.ranked()):
            return
        answers = [c for c in CARDS if self._legal(f"{side.value} initiative {c}")]
        self._pending_question = (key, f"{side.value}'s initiative pile", answers,
                                  evidence.copy(), self._snapshot(), True)

    def _apply(self, action) -> None:
        self.state.apply(action)
        self.journal.append(str(action))
        words = str(action).split()
        if words[1] == "place":  # where each unit came from: its identity while kinds are open
            self._origin[words[3]] = words[3]
            self._arrived[words[3]] = len(self.journal)
        elif words[1] == "move":
            frm, to = words[2].split("-")
            if frm != to:
                self._origin[to] = self._origin.pop(frm, frm)
                self._arrived[to] = len(self.journal)

    def _expect_kind(self, side: Side, kind: str) -> None:
        """Armies not given: the first units placed fill the army, one of each seen."""
        to_place = self.state.to_place[side]
        if not self.infer_armies or kind in to_place or not to_place:
            return
        player = self.state.players[side]
        placed = [u.kind for u in self.state.units.values() if u.side is side]
        to_place[0] = kind
        player.army = tuple(placed + to_place)
        self.armies[side] = list(player.army)
        self.journal.append(f"correct army {side.value} {','.join(player.army)}")

    def _finish_turn(self) -> bool:
        """Close the turn in progress with what can't be seen: no attack entered, hand kept."""
        return self._unseen(to_movement=False)

    def _advance_to_movement(self) -> bool:
        return self._unseen(to_movement=True)

    def _unseen(self, to_movement: bool) -> bool:
        step = _unseen_step(self.state, to_movement)
        if step is None:
            return False
        self._apply(parse_action(step))
        return True

    def _make_room_for(self, action) -> None:
        """Fill in what the camera never sees (hidden draws, passes, hands kept, no attack)
        until `action` is due: a move in its side's movement phase, an initiative card when
        the round asks for it."""
        for _ in range(32):  # a round of filler is a handful of actions
            state = self.state
            if state.is_terminal():
                return
            if state.is_chance_node():
                ev = state.pending[0]
                if ev.verb is not Verb.DRAW or action.verb is Verb.DRAW:
                    return  # a seen card (set-up, initiative) is due, or this very draw
                self._apply(parse_action(f"{ev.side.value} draw ?"))
                continue
            if action.verb is Verb.MOVE:
                if state.phase is Phase.MOVEMENT and state.to_move is action.side:
                    _assume_unseen_draw(self.state, action.side)
                    return
                if not self._advance_to_movement():
                    return
            elif action.verb is Verb.INITIATIVE:
                if not self._finish_turn():
                    return
            else:
                return

    def _remove_unit(self, cell: str) -> None:
        """Take a unit off the engine's board (a correction: its attack was not entered)."""
        self._origin.pop(cell, None)
        data = to_json(self.state)
        data["board"][cell].pop("unit")
        self._rebuild(data)
        self.journal.append(f"correct remove {cell}")

    def _rebuild(self, data: dict) -> None:
        """The engine from an edited `to_json` of it (which validates it: raises
        RulesError), keeping the history that `undo` walks back."""
        actions, history = self.state.actions, self.state.history
        restored = from_json(data)  # to_json built fresh dicts: nothing shared to copy
        restored.actions, restored.history = actions, history  # from_json ends a wiped-out side
        self.state = restored

    # ----------------------------------------------------------------- open questions

    def placed_units(self) -> dict[str, str]:
        """Cell -> "white-knight" for each unit standing on the table, leaving out a unit
        whose kind is in doubt: what the piece classifier may learn the players' own set from
        (a wrong kind would teach it the wrong look, and then read every later view of that
        set wrong: on s64, with a piece model fine-tuned in session 19, black's c5 was placed
        a king, sure, before a5 stood; a5 read a king too and the army made it the queen; the
        classifier learnt the swap and the game lost 24 moves). Where a side's placement is
        still an open question, or is watched but no longer backed by its units' views, only
        the units the question doubts are left out (two read as each other's kind leave the
        army's others sure: v8-s349's black queen and king); the whole side once any of its
        units has left the cell it was placed on."""
        left_out: set[int] = set()
        for q in self.questions:
            if not isinstance(q, PlacementQuestion) or (q.watched and q.backed()):
                continue
            cells = {cell for cell, u in self.state.units.items() if u.side is q.side}
            if cells != {parse_cell(o) for o in q.origins}:
                left_out |= cells
                continue
            # a kind a doubted unit may be is learnt from none of the side's units: one
            # example of it would then decide the doubt (game-s31, with doubt taken at 90 %:
            # a pawn and a bishop learnt from one each, the two in doubt were read swapped)
            doubted = q.doubted()
            in_doubt = {option[i] for option, p in q.ranked() if p >= 0.01
                        for i, o in enumerate(q.origins) if o in doubted}
            left_out |= {cell for cell in cells if self.state.units[cell].kind in in_doubt}
        return {CELL_NAMES[cell]: f"{u.side.value}-{u.kind}"
                for cell, u in sorted(self.state.units.items()) if cell not in left_out}

    def open_questions(self) -> list[str]:
        """What the game went on with unsure, as questions for the players."""
        return [q.describe() for q in self.questions if not q.watched]

    def _engine_card(self, key: str) -> str | None:
        """The card the engine has at a card key ("d3.card" or "init.white")."""
        place, what = key.split(".")
        if place == "init":
            card = self.state.initiative[Side(what)]
            return card.code if card else None
        top = self.state.top(parse_cell(place))
        return top.card.code if top else None

    def _snapshot(self) -> Snapshot:
        return Snapshot(_with_history(self.state), len(self.journal), dict(self._origin),
                         dict(self._arrived))

    def _placement_views(self, reading: TableReading, fresh: set[str]) -> None:
        """Fresh reads of units whose kinds are in question: one more look at each."""
        for q in self.questions:
            if not isinstance(q, PlacementQuestion):
                continue
            for name in fresh:
                unit = self.state.units.get(parse_cell(name))
                origin = self._origin.get(name)
                piece = reading.cells[name].piece
                if unit is None or unit.side is not q.side or origin not in q.origins \
                        or getattr(piece, "seen_side", None) not in (None, q.side.value):
                    continue
                kinds = dict(piece.kinds or [])
                if not kinds and piece.piece and piece.piece.startswith(q.side.value + "-"):
                    kinds = {piece.piece.split("-")[1]: piece.confidence}
                if kinds:
                    q.add_view(origin, name, kinds)

    def _settle_questions(self) -> bool:
        """Settle every open question whose answer is now at least SWITCH sure; one whose
        likeliest answer is another than the game went on with, and FOLLOW likely, goes on
        with that one, still open."""
        changed = False
        decks = self._questions_by_deck()  # once per frame, not once per question
        for q in list(self.questions):
            if q.watched and isinstance(q, CardQuestion):
                continue  # no new evidence comes to it (see `CardQuestion.watched`)
            ranked = q.ranked()
            if not ranked:
                continue
            best, p = ranked[0]
            if q.watched:  # a sure placement: asked again only once later looks say else
                if best != q.chosen and p >= FOLLOW and self._choose(q, best):
                    changed = True
                    self._ask(q)
                continue
            if isinstance(q, CardQuestion) and p >= FOLLOW:  # (below, nothing it could lower)
                p = min(p, against_rivals(q, best, decks))
            if p < SWITCH:
                # a placement goes on with its likeliest answer once that is LEAD times as
                # likely as the one standing: every later removal names its kinds
                ahead = isinstance(q, PlacementQuestion) \
                    and p >= LEAD * dict(ranked).get(q.chosen, 0.0)
                if best != q.chosen and (p >= FOLLOW or ahead):
                    # still asked, but the game follows; where another question of the deck
                    # holds that card, the two may trade
                    changed |= self._choose(q, best) or (
                        isinstance(q, CardQuestion) and p >= FOLLOW and self._trade(q, best))
                self._ask(q)
                continue
            changed |= self._settle(q, best, f"settled on later looks ({p:.0%}): check it")
        return changed

    def _trade(self, q: CardQuestion, best: str) -> bool:
        """Question `q` reads likeliest `best`, a card another question of its deck went on
        with (open, or taken on the rules' word and watched): where both places' reads make
        the trade (q `best`, the other q's card) FOLLOW likely against the cards as they stand,
        both go on traded, both asked (xv-s71: white's 8C laid on c2 read 8C 84 %, taken as 8S
        when first read under its unit; white's 8S on its pile read 8S 84 %, refused as that
        8S and taken as 8C on the rules' word, a spurious event)."""
        r = next((o for o in self.questions if isinstance(o, CardQuestion) and o is not q
                  and o.chosen == best and owner_of(o) == owner_of(q)), None)
        if r is None or best not in ONCE_IN_A_DECK:
            return False
        # (each weighed over its answers and both cards at stake: a card another question
        # held when it was asked is not among its answers)
        both = {best, q.chosen}
        mine = dict(q.evidence.ranked((set(q.answers) | both).__contains__))
        theirs = dict(r.evidence.ranked((set(r.answers) | both).__contains__))
        trade = mine.get(best, 0.0) * theirs.get(q.chosen, 0.0)
        stand = mine.get(q.chosen, 0.0) * theirs.get(best, 0.0)
        if trade < FOLLOW * max(trade + stand, 1e-12):
            return False
        first = min((q, r), key=lambda o: o.snapshot.entry)
        new = [(q, best), (r, q.chosen)]  # (dataclasses: no dict keys)
        if not self._rewrite(first.snapshot, {o.entry: _with_card(self.journal[o.entry], c)
                                              for o, c in new}):
            return False
        for o, code in new:
            if self.beliefs[o.key].value == o.chosen and self._engine_card(o.key) == code:
                self.beliefs[o.key].value = code
            o.event.text = _with_card(o.event.text, code)
            if o.chosen not in o.went_with:
                o.went_with.append(o.chosen)
            o.chosen, o.watched = code, False
            if code not in o.answers:
                o.answers.append(code)
            o.event.question = o.describe()
        return True

    def _questions_by_deck(self) -> dict[str, list[CardQuestion]]:
        """Per deck (its owner), the card questions whose cards came from it."""
        decks: dict[str, list[CardQuestion]] = {}
        for q in self.questions:
            if isinstance(q, CardQuestion):
                decks.setdefault(owner_of(q), []).append(q)
        return decks

    def _settle(self, q, answer, why: str) -> bool:
        """Close question `q` with `answer`, rewriting the journal where it differs from the
        answer the game went on with. False where the rules refuse it (that answer is dropped)."""
        if not self._choose(q, answer):
            return False
        earlier = [a for a in q.went_with if a != answer]
        if earlier:
            shown = [a if isinstance(a, str) else ", ".join(a) for a in earlier]
            why = f"{why} (the game went on with {'; then '.join(shown)})"
        for e in q.events:
            e.question = None
            e.flags.append(why)
        if isinstance(q, PlacementQuestion):
            for e, side, _origin in self._removals:
                if side is q.side:
                    e.question = None
        self.questions.remove(q)
        return True

    def _ask(self, q) -> None:
        """Ask open question `q` on the events that hang on it: a card question on its
        event; a placement question on the placements of the units whose kind is in doubt,
        and their removals, which name the kind. A side's other units stay sure (val-s19,
        val-s58: a brutalchess king and queen seen nearly from above were read as each other
        at every later view; the pawns and rooks were never in doubt)."""
        if isinstance(q, CardQuestion):
            q.event.question = q.describe()
            return
        text, doubted = q.describe(), q.doubted()
        for origin, e in zip(q.origins, q.events, strict=True):
            e.question = text if origin in doubted else None
        for e, side, origin in self._removals:
            if side is q.side and origin in q.origins:
                e.question = text if origin in doubted else None

    def _choose(self, q, answer) -> bool:
        """Go on with `answer` to question `q` (still open), rewriting the journal where it
        differs from the answer standing. False where the rules refuse it (answer dropped)."""
        if answer == q.chosen:
            return True
        if isinstance(q, CardQuestion):
            changes = {q.entry: _with_card(self.journal[q.entry], answer)}
        else:
            kind_of = dict(zip(q.origins, answer, strict=True))
            changes = {i: _with_kind(self.journal[i], kind_of) for i in q.entries}
        if not self._rewrite(q.snapshot, changes):
            if isinstance(q, CardQuestion):
                # (a card another open question went on with may come free again: kept)
                if not any(isinstance(o, CardQuestion) and o is not q and o.chosen == answer
                           for o in self.questions):
                    q.answers = [c for c in q.answers if c != answer]
            else:
                q.options = [o for o in q.options if o != answer]
            return False
        q.watched = False  # its answer changed: asked like any open question
        if isinstance(q, CardQuestion):
            old_code = q.chosen
            q.event.text = _with_card(q.event.text, answer)
            if self.beliefs[q.key].value == old_code and self._engine_card(q.key) == answer:
                self.beliefs[q.key].value = answer
        else:
            for e in q.events:
                e.text = _with_kind(e.text, kind_of)
                # (what the army made of the set-up read no longer applies to the new kind)
                e.flags = [f for f in e.flags if "the army makes it a" not in f]
            for e, side, origin in self._removals:
                if side is q.side and origin in kind_of:
                    w = e.text.split()  # "white pawn removed d4"
                    e.text = " ".join([w[0], kind_of[origin]] + w[2:])
        if q.chosen not in q.went_with:
            q.went_with.append(q.chosen)
        q.chosen = answer
        return True

    def _back_to(self, snap: Snapshot) -> None:
        """The engine, the journal and where units came from, as they were at `snap`."""
        self.state = _with_history(snap.state)
        self.journal = self.journal[:snap.entry]
        self._origin, self._arrived = dict(snap.origin), dict(snap.arrived)

    def _rewrite(self, snap: Snapshot, changes: dict[int, str]) -> bool:
        """Replay the journal from `snap` with some entries changed; False (and nothing
        changed) where the rules refuse the result."""
        if any(i < snap.entry for i in changes):  # a change the replay would not reach
            return False
        self._taken_off = None  # (its engine before the removal is of the old past)
        saved = (self.state, self.journal, self._origin, self._arrived,
                 [(q, q.snapshot, entries_of(q)) for q in self.questions])
        old = self.journal
        self._back_to(snap)
        later: dict[int, list] = {}  # old journal index -> questions whose snapshot is there
        for q in self.questions:
            if q.snapshot.entry > snap.entry:
                later.setdefault(q.snapshot.entry, []).append(q)
        moved = {i: i for i in range(snap.entry)}  # old journal index -> new one
        try:
            for i in range(snap.entry, len(old)):
                for q in later.pop(i, []):  # later questions replay from the rewritten past
                    q.snapshot = self._snapshot()
                length = len(self.journal)
                self._replay(changes.get(i, old[i]))
                if len(self.journal) > length:  # (filler the new past has no room for is gone)
                    moved[i] = len(self.journal) - 1
            # the past may hold more or less filler now: the questions' actions moved with it
            for q in self.questions:
                set_entries(q, [moved[e] for e in entries_of(q)])
        except (RulesError, KeyError):
            self.state, self.journal, self._origin, self._arrived, snaps = saved
            for q, sn, entries in snaps:
                q.snapshot = sn
                set_entries(q, entries)
            return False
        return True

    def _replay(self, entry: str) -> None:
        """Apply one journal entry: an action, or a correction."""
        if entry.startswith("correct remove "):
            self._remove_unit(entry.split()[-1])
        elif entry.startswith(("correct lay ", "correct relocate ")):
            try:  # a rewritten past may have made it unneeded or impossible
                self._correct(entry)
            except (RulesError, KeyError, ValueError):
                return
            self.journal.append(entry)
        elif entry.startswith("correct army "):
            _, _, side_name, kinds = entry.split()
            side = Side(side_name)
            army = kinds.split(",")
            left = list(army)
            for u in self.state.units.values():
                if u.side is side and u.kind in left:
                    left.remove(u.kind)
            self.state.players[side].army = tuple(army)
            self.state.to_place[side] = left if self.state.to_place[side] else []
            self.armies[side] = army
            self.journal.append(entry)
        else:
            action = parse_action(entry)
            if _is_filler(entry):
                # filled in for what the camera could not see: a rewritten past may need other
                # filler, which the next seen action makes room for
                try:
                    self._apply(action)
                except RulesError:
                    pass
                return
            try:
                self._apply(action)
            except RulesError:
                self._make_room_for(action)
                self._apply(action)

    def _answer(self, action_text: str) -> TableEvent | None:
        """A player's action that answers an open question: settle it (None: it answers none)."""
        words = action_text.split()
        for q in list(self.questions):
            if isinstance(q, CardQuestion) and q.event.text.split()[:-1] == words[:-1]:
                if not self._settle(q, words[-1], "confirmed by a player"):
                    raise RulesError(f"the rules refuse {action_text} there")
                return q.event
            if isinstance(q, PlacementQuestion) and len(words) == 4 and \
                    words[:2] == [q.side.value, "place"] and words[3] in q.origins:
                i = q.origins.index(words[3])
                fits = [o for o in q.options if o[i] == words[2]]
                if not fits:
                    raise RulesError(f"{q.side.value}'s army has no {words[2]} left for "
                                     f"{words[3]}")
                q.options = fits
                event = next(e for e in q.events if e.text.split()[3] == words[3])
                if len(fits) == 1:
                    self._settle(q, fits[0], "confirmed by a player")
                return event
        return None

    # ----------------------------------------------------------------- the event log

    def log_json(self) -> dict:
        """The event log, saved as JSON: replay it with `replay_journal`."""
        return {"game": "royal-battles",
                "armies": {s.value: a for s, a in self.armies.items()},
                "options": self.state.options.to_json(),
                "events": [e.to_json() for e in self.events],
                "journal": list(self.journal)}


def replay_journal(log: dict) -> GameState:
    """Rebuild the engine state from a saved event log (the tracker's journal)."""
    from engines.royal_battles import Options

    armies = {Side(k): v for k, v in log["armies"].items()}
    tracker = GameTracker(armies, state=GameState.new(armies, Options(**log.get("options", {}))))
    for entry in log["journal"]:
        if not entry.startswith("correct army "):  # the log's armies are the final ones
            tracker._replay(entry)
    return tracker.state
