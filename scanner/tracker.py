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

from dataclasses import dataclass, field

from engines.errors import RulesError
from engines.royal_battles import CELL_NAMES, GameState, Phase, Side, Verb, parse_action
from engines.royal_battles.board import NEIGHBOURS, parse_cell
from engines.royal_battles.position import from_json, to_json

from .detections import TableReading

SETTLE_FRAMES = 3  # consecutive settled frames before a change is believed
_UNSURE = object()


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


def visible_table(state: GameState) -> dict[str, object]:
    """What a camera could see of an engine state: top cards, units and initiative cards."""
    out: dict[str, object] = {}
    for cell, name in enumerate(CELL_NAMES):
        top = state.top(cell)
        unit = state.units.get(cell)
        out[f"{name}.card"] = top.card.code if top else None
        out[f"{name}.unit"] = f"{unit.side.value}-{unit.kind}" if unit else None
    for side in Side:
        card = state.initiative[side]
        out[f"init.{side.value}"] = card.code if card else None
    return out


def reading_values(reading: TableReading) -> dict[str, object]:
    """The observations one frame gives; unreadable ones are `_UNSURE`."""
    out: dict[str, object] = {}
    for name in CELL_NAMES:
        cell = reading.cells.get(name)
        card: object = _UNSURE
        unit: object = _UNSURE
        if cell is not None:
            if cell.empty is True:
                card, unit = None, None
            elif cell.empty is False and cell.card is not None and cell.card.card:
                card = cell.card.card
            if cell.empty is False and cell.piece is not None and cell.piece.piece is not None:
                unit = None if cell.piece.piece == "empty" else cell.piece.piece
        out[f"{name}.card"] = card
        out[f"{name}.unit"] = unit
    for side in ("white", "black"):
        init = reading.initiative.get(side)
        out[f"init.{side}"] = init.card if init is not None and init.card else _UNSURE
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
        for key, value in reading_values(reading).items():
            if self.beliefs[key].observe(value, self.settle_frames):
                self._dirty = True
        if not self._dirty or any(b.settling for b in self.beliefs.values()):
            return []
        self._dirty = False
        before = len(self.events)
        self._interpret(reading.frame_index)
        return self.events[before:]

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
        engine = visible_table(self.state)
        return {k: (engine[k], seen[k]) for k in engine if engine[k] != seen[k]}

    def _step(self, diff: dict[str, tuple[object, object]], frame: int) -> bool:
        state = self.state
        seen = self.believed()
        if state.is_chance_node():
            ev = state.pending[0]
            if ev.verb is Verb.SETUP:
                card = seen[f"{CELL_NAMES[ev.cell]}.card"]
                if card is None:
                    self.holding = f"waiting for {ev.side.value}'s set-up card on " \
                                   f"{CELL_NAMES[ev.cell]}"
                    return False
                return self._event(f"{ev.side.value} setup {CELL_NAMES[ev.cell]} {card}",
                                   "setup", frame)
            if ev.verb is Verb.INITIATIVE:
                key = f"init.{ev.side.value}"
                if key not in diff:
                    self.holding = f"waiting for {ev.side.value}'s initiative card"
                    return False
                return self._event(f"{ev.side.value} initiative {seen[key]}", "initiative", frame)
            self._apply(parse_action(f"{ev.side.value} draw ?"))  # draws are never seen
            return True

        laid = [k[:-5] for k, (_old, new) in diff.items()
                if k.endswith(".card") and new is not None]
        # a unit taken off belongs after the attacker's move and before its owner's next one
        if self._removal(diff, seen, frame, before_moves=not laid):
            return True
        if state.phase is Phase.PLACE:
            side = state.to_move.value
            for key, (old, new) in sorted(diff.items()):
                if key.endswith(".unit") and old is None and isinstance(new, str) \
                        and new.startswith(side + "-"):
                    self._expect_kind(state.to_move, new.split("-")[1])
                    return self._event(f"{side} place {new.split('-')[1]} {key[:-5]}", "place",
                                       frame)
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

    def _movement(self, laid: list[str], diff: dict, seen: dict, frame: int) -> bool:
        state = self.state
        side = state.to_move.value
        engine = visible_table(state)  # the table before this move, once
        reasons = []
        for to in sorted(laid):
            card = seen[f"{to}.card"]
            mover = seen[f"{to}.unit"]
            if not (isinstance(mover, str) and mover.startswith(side + "-")):
                reasons.append(f"{card} on {to} has no {side} unit on it")
                continue
            was_here = engine[f"{to}.unit"]
            if was_here == mover:
                frm = to  # covered its own standing card
            else:
                sources = [CELL_NAMES[c] for c in NEIGHBOURS[parse_cell(to)]
                           if engine[f"{CELL_NAMES[c]}.unit"] == mover
                           and seen[f"{CELL_NAMES[c]}.unit"] != mover]
                if len(sources) != 1:
                    reasons.append(f"which {mover} moved to {to}? candidates: "
                                   f"{', '.join(sources) or 'none next to it'}")
                    continue
                frm = sources[0]
            text = f"{side} move {frm}-{to} {card}"
            player = state.players[state.to_move]
            flags = []
            if player.hand is None and player.hidden_hand_size == 0:
                player.hidden_hand_size = 1  # a draw we could not see (e.g. after an attack)
                flags.append("card from a draw the camera could not see")
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
                                         and not old.startswith(state.to_move.value + "-")):
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
            flags = [] if life <= 0 else [
                f"removed with {unit.injury} injury recorded of {unit.injury + life} life: "
                "enter the attack that took it off"]
            self._remove_unit(cell)
            self.events.append(TableEvent(frame, f"{old.replace('-', ' ')} removed {cell}",
                                          "removed", flags))
            return True
        return False

    # ----------------------------------------------------------------- engine steps

    def _event(self, text: str, kind: str, frame: int) -> bool:
        self._apply(parse_action(text))
        self.events.append(TableEvent(frame, text, kind))
        return True

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
