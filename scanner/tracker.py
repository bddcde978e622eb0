"""From frames to the game: turn a stream of `TableReading`s into Royal Battles events.

Two ideas carry it (norfair's hysteresis and LiveChess2FEN's use of the previous position):
- a reading is believed only once it has been seen on several consecutive settled frames; frames
  with hands over the board (or no board) never become state;
- a settled change is interpreted against the engine: only a legal reading of what the camera saw
  becomes an event; what is still unclear is held for a player to confirm, with the reason.

Attacks are invisible: the tracker leaves them to the players (`resolve_attack`), and where a
unit vanishes from the table without enough recorded damage it says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from engines.errors import RulesError
from engines.royal_battles import CELL_NAMES, GameState, Phase, Side, Verb, parse_action
from engines.royal_battles.board import NEIGHBOURS, parse_cell
from engines.royal_battles.position import from_json, to_json

from .detections import TableReading

SETTLE_FRAMES = 3  # consecutive settled frames before a change is believed
_UNSURE = object()
UNREAD = "?"  # a card lies there, but the camera could not say which on its own
UNKNOWN_KIND = "?"  # "white-?": a white unit whose kind the camera could not say
ACCEPT = 0.9  # a card the rules leave standing is taken when this sure (and flagged)
CONSISTENT = 0.05  # an unsure read still supports the believed card at this probability


class CardEvidence:
    """What the reader said about one place's card over its fresh reads. Each read's short
    list of candidates is a distribution over the deck (the unlisted cards share what the list
    leaves). Reads of one still card are not independent witnesses (the same pixels misread the
    same way), so they are averaged in log space, never multiplied into false certainty."""

    N_CODES = 53

    def __init__(self) -> None:
        self.floor = 0.0  # summed log-probability of a card never listed
        self.delta: dict[str, float] = {}  # listed cards: summed log p - log floor
        self.reads = 0

    def add(self, candidates: list[tuple[str, float]]) -> None:
        if not candidates:
            return
        rest = max(1.0 - sum(p for _, p in candidates), 1e-4)
        floor = math.log(rest / max(self.N_CODES - len(candidates), 1))
        self.floor += floor
        for code, p in candidates:
            self.delta[code] = self.delta.get(code, 0.0) + math.log(max(p, 1e-6)) - floor
        self.reads += 1

    def ranked(self, allowed=None) -> list[tuple[str, float]]:
        """Posterior over the listed cards that `allowed(code)` admits, best first; the
        unlisted cards it admits keep their share of the mass."""
        from engines.royal_battles.cards import CARDS

        codes = [c for c in CARDS if allowed is None or allowed(c)]
        if not codes or not self.reads:
            return []
        scores = [self.delta.get(c, 0.0) / self.reads for c in codes]
        top = max(scores)
        weights = [math.exp(x - top) for x in scores]
        total = sum(weights)
        return sorted(((c, w / total) for c, w in zip(codes, weights, strict=True)
                       if c in self.delta), key=lambda cw: -cw[1])


@dataclass
class TableEvent:
    """Something that visibly happened at the table, in order."""

    frame: int
    text: str  # engine notation ("white move c1-c2 3H") or "black knight removed d4"
    kind: str  # setup | place | initiative | move | removed
    flags: list[str] = field(default_factory=list)  # what a player should look at

    def to_json(self) -> dict:
        return {"frame": self.frame, "event": self.text, "kind": self.kind, "flags": self.flags}


@dataclass
class _Belief:
    """One observed quantity with hysteresis: the believed value and a candidate replacing it."""

    value: object
    candidate: object = _UNSURE
    streak: int = 0

    def observe(self, value: object, needed: int) -> bool:
        """Feed one settled observation; True when the believed value changed."""
        if value is _UNSURE:
            return False
        if value == self.value:
            self.candidate, self.streak = _UNSURE, 0
            return False
        if value == self.candidate:
            self.streak += 1
        else:
            self.candidate, self.streak = value, 1
        if self.streak >= needed:
            self.value, self.candidate, self.streak = value, _UNSURE, 0
            return True
        return False

    @property
    def settling(self) -> bool:
        return self.candidate is not _UNSURE


def visible_table(state: GameState, sides_only: bool = False) -> dict[str, object]:
    """What a camera could see of an engine state: top cards, units ("white-knight", or just
    "white" with `sides_only`) and initiative cards."""
    out: dict[str, object] = {}
    for cell, name in enumerate(CELL_NAMES):
        top = state.top(cell)
        unit = state.units.get(cell)
        out[f"{name}.card"] = top.card.code if top else None
        out[f"{name}.unit"] = (unit.side.value if sides_only else
                               f"{unit.side.value}-{unit.kind}") if unit else None
    for side in Side:
        card = state.initiative[side]
        out[f"init.{side.value}"] = card.code if card else None
    return out


def _card_value(card, believed: object) -> object:
    """One card reading as an observation: its code when read; when unsure but its candidates
    still back the believed card, that card (a piece now hides part of it); `UNREAD` when they
    do not (something new lies there); `_UNSURE` when the reading says nothing."""
    if card is None:
        return _UNSURE
    if card.card:
        return card.card
    if not card.candidates or card.face_down:
        return _UNSURE
    if isinstance(believed, str) and any(code == believed and p >= CONSISTENT
                                         for code, p in card.candidates):
        return believed
    return UNREAD


def reading_values(reading: TableReading, believed: dict[str, object] | None = None,
                   sides_only: bool = False) -> dict[str, object]:
    """The observations one frame gives; unreadable ones are `_UNSURE`. With `sides_only` a
    unit is observed by its side alone: once placed, a unit's kind follows it from cell to
    cell in the engine, and the camera's weakest answer (which kind) can't derail the game."""
    believed = believed or {}
    out: dict[str, object] = {}
    for name in CELL_NAMES:
        cell = reading.cells.get(name)
        card: object = _UNSURE
        unit: object = _UNSURE
        if cell is not None:
            if cell.empty is True:
                card, unit = None, None
            elif cell.empty is False:
                card = _card_value(cell.card, believed.get(f"{name}.card"))
            piece = cell.piece if cell.empty is False else None
            if piece is not None and piece.piece is not None:
                unit = None if piece.piece == "empty" else piece.piece
                if sides_only and unit is not None:
                    unit = str(unit).split("-")[0]
            elif piece is not None:
                # the kind unsure, but occupancy (and the side) sure: enough once set up; at
                # set-up "white-?" (the army still to place decides, see `_place`), or the
                # unit believed there when it is of that side
                occupied = getattr(piece, "occupied", None)
                side = getattr(piece, "seen_side", None)
                if occupied is False:
                    unit = None
                elif occupied and side is not None:
                    was = believed.get(f"{name}.unit")
                    unit = side if sides_only else (
                        was if isinstance(was, str) and was.startswith(side + "-")
                        else f"{side}-{UNKNOWN_KIND}")
        out[f"{name}.card"] = card
        out[f"{name}.unit"] = unit
    for side in ("white", "black"):
        init = reading.initiative.get(side)
        out[f"init.{side}"] = _card_value(init, believed.get(f"init.{side}")) \
            if init is not None and init.corners is not None else \
            (init.card if init is not None and init.card else _UNSURE)
    return out


def _card_readings(reading: TableReading) -> dict[str, object]:
    """The CardReading behind every card key of a frame (for the evidence)."""
    out: dict[str, object] = {}
    for name, cell in reading.cells.items():
        if cell.card is not None:
            out[f"{name}.card"] = cell.card
    for side, card in reading.initiative.items():
        out[f"init.{side}"] = card
    return out


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
        self.beliefs = {k: _Belief(v) for k, v in visible_table(self.state).items()}
        self.events: list[TableEvent] = []
        self.holding: str | None = None  # why the tracker waits for a player
        self.attacks_to_resolve: list[str] = []  # moves whose attack the players must enter
        self.frames = 0
        self.settled_frames = 0
        self.evidence: dict[str, CardEvidence] = {}  # per card key, while it reads unsure
        self._last_read: dict[str, object] = {}
        self._kinds_seen: dict[str, str] = {}  # the last piece read per cell, kind included
        self._piece_reads: dict[str, object] = {}  # the last PieceReading per cell
        self._first_seen: dict[str, int] = {}  # frame a unit was first believed on a cell
        self._held_card: str | None = None  # the card key a hold is about
        self._held_keys: set[str] = set()  # what differed from the engine then
        self._dirty = False
        self.armies = {side: list(p.army) for side, p in self.state.players.items()}
        # everything done to the engine, in order: actions in text notation, and corrections
        # ("correct remove d4"); `replay_journal` rebuilds the game from it
        self.journal: list[str] = []

    # ----------------------------------------------------------------- frames

    def update(self, reading: TableReading) -> list[TableEvent]:
        """Feed one frame; returns the events it completed (usually none)."""
        self.frames += 1
        if reading.occluded or not reading.board_found:
            for belief in self.beliefs.values():  # hands may have moved things: start over
                belief.candidate, belief.streak = _UNSURE, 0
            return []
        self.settled_frames += 1
        believed = self.believed()
        values = reading_values(reading, believed, self._sides_only)
        for key, value in values.items():
            if self.beliefs[key].observe(value, self.settle_frames):
                self._dirty = True
                if key.endswith(".unit") and value is not None:
                    self._first_seen.setdefault(key[:-5], reading.frame_index)
                if self.beliefs[key].value != UNREAD:
                    self.evidence.pop(key, None)  # known now: the guesses are done with
        for name, cell in reading.cells.items():
            if cell.piece is not None:
                self._piece_reads[name] = cell.piece
                if cell.piece.piece not in (None, "empty"):
                    self._kinds_seen[name] = cell.piece.piece
        for key, card in _card_readings(reading).items():
            # reads of something new (not backing the believed card) are evidence about it;
            # each fresh read counts once (an incremental scanner repeats unchanged ones)
            if values.get(key) == UNREAD and self._last_read.get(key) is not card:
                self.evidence.setdefault(key, CardEvidence()).add(card.candidates)
            self._last_read[key] = card
        if not self._dirty or any(b.settling for b in self.beliefs.values()):
            return []
        self._dirty = False
        before = len(self.events)
        self._interpret(reading.frame_index)
        return self.events[before:]

    @property
    def _sides_only(self) -> bool:
        """After set-up, units are told apart by side only (see `reading_values`)."""
        return self.state.phase not in (Phase.SETUP, Phase.PLACE)

    def believed(self) -> dict[str, object]:
        return {k: b.value for k, b in self.beliefs.items()}

    # ----------------------------------------------------------------- players' input

    def confirm(self, action_text: str, frame: int | None = None) -> TableEvent:
        """A player settles what the tracker held (or corrects it): apply their action."""
        action = parse_action(action_text)
        self._make_room_for(action.side, action.verb)
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
            # that very card now reads clearly and nothing else has changed
            if set(self._diff()) != self._held_keys or \
                    self.believed()[self._held_card] in (UNREAD, None):
                return
            self._held_card = None
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
                return
            if not progressed:
                if self.holding is None:
                    self.holding = "can't explain the change at " + ", ".join(sorted(diff))
                return

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
                        lambda c: self._legal(f"{ev.side.value} setup {place} {c}"))
                    if card is None:
                        return False
                return self._event(f"{ev.side.value} setup {place} {card}", "setup", frame,
                                   flags)
            if ev.verb is Verb.INITIATIVE:
                key = f"init.{ev.side.value}"
                if key not in diff or seen[key] is None:
                    self.holding = f"waiting for {ev.side.value}'s initiative card"
                    return False
                card, flags = seen[key], []
                if card == UNREAD:
                    card, flags = self._resolve_card(
                        key, f"{ev.side.value}'s initiative pile",
                        lambda c: self._legal(f"{ev.side.value} initiative {c}"))
                    if card is None:
                        return False
                return self._event(f"{ev.side.value} initiative {card}", "initiative", frame,
                                   flags)
            self._apply(parse_action(f"{ev.side.value} draw ?"))  # draws are never seen
            return True

        laid = [k[:-5] for k, (_old, new) in diff.items()
                if k.endswith(".card") and new is not None]
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
        if any(k.startswith("init.") for k in diff) and not laid:
            # a new round's initiative cards: finish the turn in progress first
            return self._finish_turn()
        if not laid:
            self.holding = "a unit moved without a movement card: " + ", ".join(sorted(diff))
            return False
        movers = {str(seen[f"{to}.unit"]).split("-")[0] for to in laid}
        if state.to_move.value not in movers:
            return self._finish_turn()  # the other side is laying cards: this turn is over
        if state.phase is not Phase.MOVEMENT or state.current_player() is None:
            return self._finish_turn() if state.phase in (Phase.ATTACK, Phase.POST_TURN) \
                else self._advance_to_movement()
        return self._movement(laid, diff, seen, frame)

    def _place_armies(self, seen: dict, frame: int) -> bool:
        """With the armies known, the units placed are decided together: once every unit a
        side still has to place stands on its free set-up cards, the assignment of its kinds
        to those cells that the classifier's kind probabilities make likeliest is taken when
        it is at least ACCEPT sure (one confident misread kind can then not steal a kind
        another cell needs). Events follow the engine's turns, each side's units in the
        order they appeared on the table."""
        import itertools

        state = self.state
        plans: dict[Side, dict[str, str]] = {}
        for side in Side:
            need = list(state.to_place[side])
            if not need:
                continue
            home = "1" if side is Side.WHITE else "5"
            free = [f + home for f in "aceg" if parse_cell(f + home) not in state.units]
            cells = sorted((c for c in free if str(seen[f"{c}.unit"]).startswith(side.value)),
                           key=lambda c: (self._first_seen.get(c, 0), c))
            if len(cells) < len(need):
                self.holding = f"waiting for {side.value} to place a unit " \
                               f"({len(need) - len(cells)} to go)"
                return False
            cells = cells[:len(need)]
            table = {c: dict(getattr(self._piece_reads.get(c), "kinds", []) or []) for c in cells}
            for c in cells:  # a reading naming its kind outright counts as that kind
                read = str(seen[f"{c}.unit"]).split("-")[1]
                if not table[c] and read != UNKNOWN_KIND:
                    table[c] = {read: 1.0}
            options = sorted(set(itertools.permutations(need)))
            scores = [sum(math.log(max(table[c].get(k, 0.0), 1e-3)) for c, k in
                          zip(cells, kinds, strict=True)) for kinds in options]
            top = max(scores)
            weights = [math.exp(x - top) for x in scores]
            best = int(max(range(len(options)), key=lambda i: scores[i]))
            p = weights[best] / sum(weights)
            if p < ACCEPT:
                guess = ", ".join(f"{k} {c}" for c, k in zip(cells, options[best], strict=True))
                self.holding = (f"which of {side.value}'s units stands where? likeliest: "
                                f"{guess} ({p:.0%})")
                return False
            plans[side] = dict(zip(cells, options[best], strict=True))
        while state.phase is Phase.PLACE:
            side = state.to_move
            cell = next(iter(plans[side]))
            kind = plans[side].pop(cell)
            read = str(seen[f"{cell}.unit"]).split("-")[1]
            flags = [] if read == kind else [
                f"{'could not be read' if read == UNKNOWN_KIND else 'read as a ' + read}; the "
                f"army makes it a {kind}: check it"]
            self._event(f"{side.value} place {kind} {cell}", "place", frame, flags)
            self.beliefs[f"{cell}.unit"].value = f"{side.value}-{kind}"
        return True

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

    def _movement(self, laid: list[str], diff: dict, seen: dict, frame: int) -> bool:
        state = self.state
        side = state.to_move.value
        engine = visible_table(state, self._sides_only)  # the table before this move, once
        reasons = []
        # a card held for the players comes first: any later one would be out of order
        for to in sorted(laid, key=lambda c: (f"{c}.card" != self._held_card, c)):
            card = seen[f"{to}.card"]
            mover = seen[f"{to}.unit"]
            if not (isinstance(mover, str) and mover.split("-")[0] == side):
                reasons.append(f"{card} on {to} has no {side} unit on it")
                continue
            was_here = engine[f"{to}.unit"]
            if was_here == mover:
                frm = to  # covered its own standing card
            else:
                sources = [CELL_NAMES[c] for c in NEIGHBOURS[parse_cell(to)]
                           if engine[f"{CELL_NAMES[c]}.unit"] == mover
                           and seen[f"{CELL_NAMES[c]}.unit"] != mover]
                if len(sources) > 1:  # two of the side's units next door: the kind read decides
                    kind = self._kinds_seen.get(to)
                    by_kind = [c for c in sources if kind is not None and
                               f"{side}-{self.state.units[parse_cell(c)].kind}" == kind]
                    sources = by_kind if len(by_kind) == 1 else sources
                if len(sources) != 1:
                    reasons.append(f"which {mover} moved to {to}? candidates: "
                                   f"{', '.join(sources) or 'none next to it'}")
                    continue
                frm = sources[0]
            player = state.players[state.to_move]
            flags = []
            if player.hand is None and player.hidden_hand_size == 0:
                player.hidden_hand_size = 1  # a draw we could not see (e.g. after an attack)
                flags.append("card from a draw the camera could not see")
            if card == UNREAD:  # the rules pick among what the reader thought it might be
                card, why = self._resolve_card(
                    f"{to}.card", to, lambda c, frm=frm, to=to: self._legal(
                        f"{side} move {frm}-{to} {c}"))
                if card is None:  # this is the side's move; another cell would be out of order
                    return False
                flags += why
            text = f"{side} move {frm}-{to} {card}"
            try:
                self._apply(parse_action(text))
            except RulesError as exc:
                reasons.append(str(exc))
                continue
            self.events.append(TableEvent(frame, text, "move", flags))
            self.attacks_to_resolve.append(text)
            return True
        self.holding = "; ".join(reasons)
        return False

    def _removal(self, diff: dict, seen: dict, frame: int, before_moves: bool) -> bool:
        """A unit gone from a cell whose card did not change, and not moved next door.
        With cards also laid (`before_moves` false), only a removal the engine's current turn
        explains comes first: the side to move has moved and the unit is its enemy's."""
        state = self.state
        attacker_done = state.phase in (Phase.ATTACK, Phase.POST_TURN)
        engine = {k: was for k, (was, _now) in diff.items()}  # engine values where they differ
        for key, (old, new) in sorted(diff.items()):
            if not (key.endswith(".unit") and isinstance(old, str) and new is None):
                continue
            if not before_moves and not (attacker_done
                                         and old.split("-")[0] != state.to_move.value):
                continue
            cell = key[:-5]
            if f"{cell}.card" in diff:
                continue
            moved_next_door = any(
                seen[f"{CELL_NAMES[c]}.unit"] == old
                and engine.get(f"{CELL_NAMES[c]}.unit", seen[f"{CELL_NAMES[c]}.unit"]) != old
                for c in NEIGHBOURS[parse_cell(cell)])
            if moved_next_door:
                continue
            unit = self.state.units[parse_cell(cell)]
            life = unit.life_left
            who = f"{unit.side.value} {unit.kind}"
            flags = [] if life <= 0 else [
                f"removed with {unit.injury} injury recorded of {unit.injury + life} life: "
                "enter the attack that took it off"]
            self._remove_unit(cell)
            self.events.append(TableEvent(frame, f"{who} removed {cell}",
                                          "removed", flags))
            return True
        return False

    # ----------------------------------------------------------------- engine steps

    def _event(self, text: str, kind: str, frame: int, flags: list[str] | None = None) -> bool:
        self._apply(parse_action(text))
        self.events.append(TableEvent(frame, text, kind, list(flags or [])))
        return True

    def _legal(self, text: str) -> bool:
        """Would the engine accept this action now?"""
        try:
            self.state.copy().apply(parse_action(text))
        except RulesError:
            return False
        return True

    def _resolve_card(self, key: str, place: str, allowed) -> tuple[str | None, list[str]]:
        """A card the reader could not name alone: the best of its candidates that the rules
        allow, when that is at least ACCEPT sure; otherwise hold and say what it might be."""
        evidence = self.evidence.get(key)
        ranked = evidence.ranked(allowed) if evidence else []
        if ranked and ranked[0][1] >= ACCEPT:
            code, p = ranked[0]
            self.beliefs[key].value = code  # later unsure reads that still back it agree
            self._held_card = None
            return code, [f"card on {place} read as {code} ({p:.0%} after the rules): check it"]
        self._held_card = key
        self._held_keys = set(self._diff())
        guesses = ", ".join(f"{c} {p:.0%}" for c, p in ranked[:3]) or "no usable reading"
        self.holding = f"which card lies on {place}? it looks like: {guesses}"
        return None, []

    def _apply(self, action) -> None:
        self.state.apply(action)
        self.journal.append(str(action))

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
        state = self.state
        side = state.to_move.value
        if state.phase is Phase.ATTACK:
            self._apply(parse_action(f"{side} no-attack"))
        elif state.phase is Phase.POST_TURN:
            self._apply(parse_action(f"{side} keep"))
        elif state.phase is Phase.PRE_TURN_DRAW:
            self._apply(parse_action(f"{side} skip-draw"))
        elif state.phase is Phase.MOVEMENT:
            self._apply(parse_action(f"{side} pass"))
        else:
            return False
        return True

    def _advance_to_movement(self) -> bool:
        state = self.state
        if state.phase is Phase.PRE_TURN_DRAW:
            self._apply(parse_action(f"{state.to_move.value} take-draw"))
            return True
        return self._finish_turn()

    def _make_room_for(self, side: Side, verb: Verb) -> None:
        if verb is Verb.MOVE:
            while self.state.phase is not Phase.MOVEMENT or self.state.to_move is not side:
                if self.state.is_chance_node() or not self._advance_to_movement():
                    break

    def _remove_unit(self, cell: str) -> None:
        """Take a unit off the engine's board (a correction: its attack was not entered)."""
        data = to_json(self.state)
        data["board"][cell].pop("unit")
        actions, history = self.state.actions, self.state.history
        restored = from_json(data)  # to_json built fresh dicts: nothing shared to copy
        restored.actions, restored.history = actions, history  # from_json ends a wiped-out side
        self.state = restored
        self.journal.append(f"correct remove {cell}")

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
        if entry.startswith("correct remove "):
            tracker._remove_unit(entry.split()[-1])
        elif entry.startswith("correct army "):
            continue  # the log's armies are the final ones
        else:
            tracker._apply(parse_action(entry))
    return tracker.state
