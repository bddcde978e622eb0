"""The game at the table: an engine `GameState` with hidden hands, kept as a journal of events.

Events are the engine's actions in text notation (`white move c1-c2 3H`), draws into a hidden
hand (`white draw ?`, applied automatically since they carry no information) and manual
corrections of what the camera got wrong (`set d3 card 8D`, `set d3 piece white-knight`,
`set d3 injury 4`, `set initiative white 5S`). Every change is validated on the state first,
committed to the journal second and shown third.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from engines.errors import IllegalActionError, ParseError, RulesError
from engines.royal_battles import (
    CELL_NAMES,
    UNIT_KINDS,
    GameState,
    Options,
    Phase,
    Side,
    Verb,
    parse_action,
    parse_card,
    parse_cell,
    resolve_attack,
)
from engines.royal_battles.board import KEY_BY_SUIT, NEIGHBOURS, symmetry
from engines.royal_battles.cards import Card
from engines.royal_battles.planner import plan, plan_hidden
from engines.royal_battles.position import from_json, to_json

from .journal import Event, Journal

EXPORT_FORMAT = "royal-table-game"
EXPORT_VERSION = 1
MAX_NAME = 40
MAX_EVENTS = 5000  # a whole game is a few hundred events; more is not a game


class InputError(ValueError):
    """A request the page or a client got wrong: shown to the player as it is."""


@dataclass
class GameSetup:
    armies: dict[str, list[str]]
    names: dict[str, str]
    options: dict[str, bool] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"game": "royal-battles", "armies": self.armies, "names": self.names,
                "options": self.options}

    @classmethod
    def from_json(cls, data: Any) -> GameSetup:
        """Validate the new-game form (or an imported game's head) with clear messages."""
        if not isinstance(data, dict):
            raise InputError("the game set-up must be a JSON object")
        if data.get("game", "royal-battles") != "royal-battles":
            raise InputError(f"unknown game {data.get('game')!r}: this page plays royal-battles")
        armies_in = data.get("armies")
        if not isinstance(armies_in, dict):
            raise InputError("armies: give white and black, 4 unit kinds each")
        armies: dict[str, list[str]] = {}
        for side in ("white", "black"):
            army = armies_in.get(side)
            if not isinstance(army, list) or len(army) != 4:
                raise InputError(f"armies.{side}: choose exactly 4 units")
            for kind in army:
                if kind not in UNIT_KINDS:
                    raise InputError(f"armies.{side}: unknown unit {kind!r} "
                                     f"(one of {', '.join(UNIT_KINDS)})")
            armies[side] = list(army)
        extra = set(armies_in) - {"white", "black"}
        if extra:
            raise InputError(f"armies: unknown side(s) {sorted(extra)}")
        names_in = data.get("names") or {}
        if not isinstance(names_in, dict):
            raise InputError("names must be an object with white and black")
        names = {}
        for side in ("white", "black"):
            name = names_in.get(side) or side.capitalize()
            if not isinstance(name, str) or len(name.strip()) == 0 or len(name) > MAX_NAME:
                raise InputError(f"names.{side}: a name of 1 to {MAX_NAME} characters")
            names[side] = name.strip()
        options_in = data.get("options") or {}
        if not isinstance(options_in, dict):
            raise InputError("options must be an object of true/false rule options")
        known = Options().to_json()
        options = {}
        for key, value in options_in.items():
            if key not in known:
                raise InputError(f"options: unknown rule option {key!r} "
                                 f"(known: {', '.join(known)})")
            if not isinstance(value, bool):
                raise InputError(f"options.{key}: must be true or false")
            options[key] = value
        return cls(armies, names, options)

    def new_state(self) -> GameState:
        state = GameState.new({Side(s): a for s, a in self.armies.items()},
                              Options(**self.options))
        for player in state.players.values():
            player.hand = None  # the assistant never sees a hand
        return state


def card_class(card: Card) -> str:
    return "joker" if card.is_joker else card.colour.value


def parse_hand(text: str | None) -> list[Card] | None:
    """The cards a player tapped (`8D,JS`); None when nothing was tapped."""
    if text is None or not text.strip():
        return None
    try:
        cards = [parse_card(c) for c in text.replace(" ", ",").split(",") if c]
    except ParseError as exc:
        raise InputError(str(exc)) from None
    if len(cards) > 12:
        raise InputError("a hand holds at most a dozen cards here")
    return cards


# --------------------------------------------------------------------------- corrections


def apply_correction(state: GameState, text: str) -> GameState:
    """A manual correction as a new state (through position JSON, which validates it)."""
    words = text.split()
    if len(words) < 3 or words[0] != "set":
        raise ParseError(f"not a correction: {text!r} (e.g. 'set d3 card 8D')")
    pos = to_json(state)
    board = pos["board"]
    if words[1] == "initiative":
        if len(words) != 4 or words[2] not in ("white", "black"):
            raise ParseError("expected 'set initiative white|black CARD'")
        side = words[2]
        card = parse_card(words[3]).code
        pile = pos["initiative_piles"][side]
        if pile:
            pile[-1] = card
        else:
            pile.append(card)
        pos["initiative"][side] = card
    else:
        if len(words) != 4:
            raise ParseError(f"expected 'set CELL card|piece|injury VALUE', got {text!r}")
        cell = CELL_NAMES[parse_cell(words[1])]
        what, value = words[2], words[3]
        entry = board.get(cell)
        if what == "card":
            if value == "none":
                if entry is None:
                    raise IllegalActionError(f"{cell} has no card to take away")
                entry["cards"].pop()
                entry.pop("owners", None)
                if not entry["cards"]:
                    if "unit" in entry:
                        raise IllegalActionError(f"a unit stands on {cell}: take it away first")
                    del board[cell]
            else:
                _lay_card(state, pos, cell, parse_card(value))
        elif what == "piece":
            if value == "none":
                if entry is None or "unit" not in entry:
                    raise IllegalActionError(f"no unit stands on {cell}")
                del entry["unit"]
            else:
                side, _, kind = value.partition("-")
                if side not in ("white", "black") or kind not in UNIT_KINDS:
                    raise ParseError(f"a piece is side-kind, e.g. white-knight, got {value!r}")
                if entry is None:
                    raise IllegalActionError(f"{cell} has no card for a unit to stand on")
                old = entry.get("unit")
                keep = old and old["side"] == side and old["kind"] == kind
                entry["unit"] = {"side": side, "kind": kind,
                                 "injury": old["injury"] if keep else 0}
        elif what == "injury":
            if entry is None or "unit" not in entry:
                raise IllegalActionError(f"no unit stands on {cell}")
            try:
                injury = int(value)
            except ValueError:
                raise ParseError(f"injury must be a whole number, got {value!r}") from None
            life = UNIT_KINDS[entry["unit"]["kind"]].life
            if not 0 <= injury < life:
                raise IllegalActionError(f"injury must be 0 to {life - 1} for a "
                                         f"{entry['unit']['kind']} (at {life} it is removed)")
            entry["unit"]["injury"] = injury
        else:
            raise ParseError(f"can set a cell's card, piece or injury, not {what!r}")
    if pos.get("moved") and (pos["moved"] not in board or "unit" not in board[pos["moved"]]):
        pos["moved"] = None
        if pos["phase"] == "attack":
            pos["phase"] = "post-turn"
    armies = pos.get("armies", {})
    for side, army in armies.items():
        on_board = [e["unit"]["kind"] for e in board.values()
                    if "unit" in e and e["unit"]["side"] == side]
        for kind in on_board:
            if on_board.count(kind) > army.count(kind):
                raise IllegalActionError(f"{side}'s army has no other {kind}")
    return from_json(pos)


def _lay_card(state: GameState, pos: dict, cell: str, card: Card) -> None:
    """Put `card` on top of `cell` (replacing a misread top card), keeping both decks' counts
    true: the card comes from a deck that still has it unseen."""
    board, decks = pos["board"], pos["decks"]
    entry = board.get(cell)
    top = state.top(parse_cell(cell))

    def has(side: str) -> bool:
        player = state.players[Side(side)]
        back = 1 if top is not None and top.card is card and top.owner is Side(side) else 0
        return player.unseen[card] + back > 0

    if top is not None and entry is not None and "owners" in entry:
        old_owner = entry["owners"][-1]
        owner = old_owner if has(old_owner) else Side(old_owner).other.value
        if not has(owner):
            raise IllegalActionError(f"no {card} is left unseen in either deck")
        if owner != old_owner:  # it came from the other deck: the misread one goes back
            if decks[owner] <= 0:
                raise IllegalActionError(f"{owner}'s deck is empty: {card} cannot come from it")
            decks[owner] -= 1
            decks[old_owner] += 1
        entry["cards"][-1] = card.code
        entry["owners"][-1] = owner
        return
    if entry is not None:  # owners unknown: let the loader assign them
        entry["cards"][-1] = card.code
        entry.pop("owners", None)
        return
    sides = [s for s in ("white", "black") if has(s) and decks[s] > 0]
    if not sides:
        raise IllegalActionError(f"no deck has {card} left to lay on {cell}")
    owner = max(sides, key=lambda s: decks[s])
    decks[owner] -= 1
    board[cell] = {"cards": [card.code], "owners": [owner]}


# --------------------------------------------------------------------------- the table


def auto_draws(state: GameState) -> Iterator[str]:
    """Apply the hidden draws now due (a hand nobody shows: the table records them itself),
    one at a time, yielding each applied action's text."""
    while state.is_chance_node():
        ev = state.pending[0]
        if ev.verb is not Verb.DRAW or state.players[ev.side].hand is not None:
            return
        state.apply(state.legal_actions()[0])
        yield str(state.actions[-1])


class Table:
    """The one game on the table: set-up, journal, current state, and a version for the page."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.version = 0
        self.game_id: int | None = None
        self.setup: GameSetup | None = None
        self.events: list[Event] = []
        self.state: GameState | None = None

    # ---- games

    def new_game(self, setup: GameSetup) -> None:
        with self.lock:
            setup.new_state()  # validate before anything is written
            self.game_id = self.journal.new_game(setup.to_json())
            self.setup = setup
            self.events = []
            self.state = setup.new_state()
            self._bump()

    def resume(self, game_id: int | None = None) -> bool:
        """Load the last game (or `game_id`) from the journal; False if there is none."""
        with self.lock:
            game_id = game_id or self.journal.last_game()
            if game_id is None:
                return False
            setup = GameSetup.from_json(self.journal.setup(game_id))
            events = self.journal.events(game_id)
            self.state = replay(setup, events)
            self.game_id, self.setup, self.events = game_id, setup, events
            self._settle()
            self._bump()
            return True

    def export(self) -> dict:
        with self.lock:
            self._need_game()
            return {"format": EXPORT_FORMAT, "version": EXPORT_VERSION,
                    **self.setup.to_json(),
                    "events": [{"kind": e.kind, "text": e.text} for e in self.events]}

    def import_game(self, data: Any) -> None:
        """A game exported earlier becomes the current game (a new one in the journal)."""
        if not isinstance(data, dict) or data.get("format") != EXPORT_FORMAT:
            raise InputError(f"not an exported game (expected \"format\": \"{EXPORT_FORMAT}\")")
        if data.get("version") != EXPORT_VERSION:
            raise InputError(f"unsupported export version {data.get('version')!r}")
        setup = GameSetup.from_json({k: data.get(k) for k in ("game", "armies", "names",
                                                                "options")})
        raw = data.get("events")
        if not isinstance(raw, list) or len(raw) > MAX_EVENTS:
            raise InputError(f"events must be a list of at most {MAX_EVENTS}")
        pairs = []
        for i, e in enumerate(raw):
            if not isinstance(e, dict) or e.get("kind") not in ("action", "auto", "correction") \
                    or not isinstance(e.get("text"), str):
                raise InputError(f"events[{i}]: expected {{kind: action|auto|correction, text}}")
            pairs.append((e["kind"], e["text"]))
        try:
            state = replay(setup, [Event(i + 1, k, t) for i, (k, t) in enumerate(pairs)])
        except RulesError as exc:
            raise InputError(f"the imported game does not replay: {exc}") from None
        with self.lock:
            game_id = self.journal.new_game(setup.to_json())
            events = self.journal.append(game_id, pairs) if pairs else []
            self.game_id, self.setup, self.events, self.state = game_id, setup, events, state
            self._settle()
            self._bump()

    # ---- events

    def act(self, text: str) -> list[Event]:
        """Play one action in text notation (raises RulesError, leaving everything unchanged)."""
        with self.lock:
            state = self._need_game()
            action = parse_action(text)
            if action.verb is Verb.DRAW and action.card is None:
                raise IllegalActionError("hidden draws are recorded by the table itself")
            state.apply(action)
            new = [("action", str(action))]
            autos = 0
            try:
                for text in auto_draws(state):
                    new.append(("auto", text))
                    autos += 1
                written = self.journal.append(self.game_id, new)
            except BaseException:
                for _ in range(autos + 1):
                    state.undo()
                raise
            self.events += written
            self._bump()
            return written

    def correct(self, text: str) -> list[Event]:
        with self.lock:
            state = self._need_game()
            new_state = apply_correction(state, " ".join(text.split()))
            written = self.journal.append(self.game_id, [("correction", " ".join(text.split()))])
            self.state = new_state
            self.events += written
            self._bump()
            return written

    def undo(self) -> list[Event]:
        """Take back the last event (with the hidden draws that followed it)."""
        with self.lock:
            self._need_game()
            if not self.events:
                raise IllegalActionError("nothing to undo")
            cut = len(self.events) - 1
            while cut > 0 and self.events[cut].kind == "auto":
                cut -= 1
            gone = self.events[cut:]
            kept = self.events[:cut]
            state = replay(self.setup, kept)
            self.journal.mark_undone(self.game_id, [e.seq for e in gone])
            self.events, self.state = kept, state
            self._bump()
            return gone

    # ---- helpers

    def _settle(self) -> None:
        """Record the hidden draws a replayed journal stopped before (a cut export, a crash
        between two writes), so the table never waits for a draw nobody can name."""
        state = self.state
        new = [("auto", text) for text in auto_draws(state)]
        if new:
            self.events += self.journal.append(self.game_id, new)

    def _need_game(self) -> GameState:
        if self.state is None:
            raise InputError("no game yet: start a new game first")
        return self.state

    def _bump(self) -> None:
        self.version += 1
        self.changed.notify_all()

    def wait_change(self, version: int, timeout: float) -> int:
        with self.changed:
            self.changed.wait_for(lambda: self.version != version, timeout=timeout)
            return self.version


def replay(setup: GameSetup, events: list[Event]) -> GameState:
    """The state after `events` (raises RulesError naming the event that does not apply)."""
    state = setup.new_state()
    for event in events:
        try:
            if event.kind == "correction":
                state = apply_correction(state, event.text)
            else:
                state.apply(parse_action(event.text))
        except RulesError as exc:
            raise type(exc)(f"event {event.seq} ({event.text}): {exc}") from None
    return state


# --------------------------------------------------------------------------- views


def prompt(state: GameState, names: dict[str, str]) -> str:
    """What the table is waiting for, in words."""
    if state.outcome is not None:
        o = state.outcome
        if o.winner is None:
            return f"The game is over: a tie ({o.reason})."
        return f"The game is over: {names[o.winner.value]} ({o.winner.value}) wins by {o.reason}."
    if state.pending:
        ev = state.pending[0]
        who = f"{names[ev.side.value]} ({ev.side.value})"
        if ev.verb is Verb.SETUP:
            return f"Lay {who}'s set-up card on {CELL_NAMES[ev.cell]} and name it."
        if ev.verb is Verb.INITIATIVE:
            return f"Turn up {who}'s initiative card and name it."
        return f"{who} draws a card."
    who = f"{names[state.to_move.value]} ({state.to_move.value})"
    return {
        Phase.PLACE: f"{who}: place a unit on a home set-up card.",
        Phase.PRE_TURN_DRAW: f"{who}: take the pre-turn draw or skip it.",
        Phase.MOVEMENT: f"{who}: play a movement card and move a unit.",
        Phase.ATTACK: f"{who}: attack with the unit that moved, or don't.",
        Phase.POST_TURN: f"{who}: keep or discard the hand.",
    }.get(state.phase, f"{who} to play")


CHOICE_LABELS = {
    Verb.TAKE_DRAW: "Take the pre-turn draw",
    Verb.SKIP_DRAW: "Skip the draw",
    Verb.PASS: "Pass (no movement)",
    Verb.NO_ATTACK: "No attack",
    Verb.KEEP: "Keep the hand",
    Verb.DISCARD: "Discard the hand",
}


def choices(state: GameState) -> list[dict]:
    """The decisions that are not a movement or an attack, as buttons."""
    if state.current_player() is None:
        return []
    out = []
    for action in state.legal_actions():
        if action.verb in CHOICE_LABELS:
            out.append({"action": str(action), "label": CHOICE_LABELS[action.verb]})
        elif action.verb is Verb.PLACE:
            out.append({"action": str(action), "label": f"{action.kind} on "
                        f"{CELL_NAMES[action.to]}", "kind": action.kind,
                        "to": CELL_NAMES[action.to]})
    return out


def chance_request(state: GameState) -> dict | None:
    """The card the table must name now (a set-up or initiative card), if any."""
    if not state.is_chance_node():
        return None
    ev = state.pending[0]
    cards = sorted({a.card.code for a in state.legal_actions() if a.card is not None},
                   key=lambda c: parse_card(c).order)
    return {"event": ev.verb.value, "side": ev.side.value,
            "cell": CELL_NAMES[ev.cell] if ev.cell is not None else None,
            "template": f"{ev.side.value} {ev.verb.value}"
                        + (f" {CELL_NAMES[ev.cell]}" if ev.cell is not None else "") + " {card}",
            "cards": cards}


def known_hand_state(state: GameState, cards: list[Card]) -> GameState:
    """A copy in which the side to move holds exactly the tapped cards."""
    side = state.to_move
    player = state.players[side]
    for card in set(cards):
        if player.unseen[card] < cards.count(card):
            raise InputError(f"{side.value} cannot hold {cards.count(card)} x {card}: "
                             f"{player.unseen[card]} unseen")
    if player.hand is None and len(cards) > player.hidden_hand_size:
        raise InputError(f"{side.value} holds only {player.hidden_hand_size} card(s), "
                         f"{len(cards)} tapped")
    copy = state.copy()
    p = copy.players[side]
    p.hand = list(cards)
    p.hidden_hand_size = 0
    for card in cards:
        p.take_unseen(card)
    return copy


def legal_moves(state: GameState, hand: list[Card] | None = None) -> dict:
    """The movements of the side to move: grouped by card colour (hidden hand), or exact."""
    if state.phase is not Phase.MOVEMENT or state.current_player() is None:
        return {"side": None, "exact": hand is not None, "moves": []}
    side = state.to_move
    if hand is not None:
        known = known_hand_state(state, hand)
        moves = [{"action": str(a), "from": CELL_NAMES[a.frm], "to": CELL_NAMES[a.to],
                  "unit": state.units[a.frm].kind, "card": a.card.code,
                  "colour": card_class(a.card),
                  "declared": a.declared.value if a.declared else None}
                 for a in known.movement_actions(side)]
        return {"side": side.value, "exact": True, "moves": moves}
    groups: dict[tuple, dict] = {}
    for a in state.movement_actions(side):
        # a joker named red or black (joker_declared_colour option) is its own choice
        declared = a.declared.value if a.declared else None
        key = (CELL_NAMES[a.frm], CELL_NAMES[a.to], card_class(a.card), declared)
        g = groups.get(key)
        if g is None:
            g = groups[key] = {"from": key[0], "to": key[1], "colour": key[2],
                               "declared": declared, "unit": state.units[a.frm].kind,
                               "cards": []}
        if a.card.code not in g["cards"]:
            g["cards"].append(a.card.code)
    order = {"red": 0, "black": 1, "joker": 2}
    moves = sorted(groups.values(), key=lambda g: (g["from"], g["to"], order[g["colour"]],
                                                   g["declared"] or ""))
    for g in moves:
        g["template"] = (f"{side.value} move {g['from']}-{g['to']} {{card}}"
                         + (f" as-{g['declared']}" if g["declared"] else ""))
    return {"side": side.value, "exact": False, "moves": moves}


def planner_options(state: GameState, hand: list[Card] | None = None) -> dict:
    """The planner's table for the side to move: exact with tapped cards, else hidden."""
    if state.phase is not Phase.MOVEMENT or state.current_player() is None:
        return {"exact": hand is not None, "options": []}
    if hand is not None:
        known = known_hand_state(state, hand)
        return {"exact": True, "options": [o.to_json() for o in plan(known)]}
    return {"exact": False, "options": [o.to_json() for o in plan_hidden(state)]}


def attack_options(state: GameState) -> list[dict]:
    """Every attack the unit that just moved may make, with the engine's exact result."""
    if state.phase is not Phase.ATTACK or state.current_player() is None:
        return []
    out = []
    for action in state.attack_actions():
        result = resolve_attack(state, state.moved, action.to, action.style)
        target = state.units[action.to]
        out.append({"action": str(action), "target_unit": f"{target.side.value} {target.kind}",
                    **result.to_json()})
    return out


def tallies(state: GameState, setup: GameSetup) -> dict:
    """The two Army Record forms: each unit's stats, advantage, life and injury."""
    out = {}
    for side in Side:
        on_board = sorted(((CELL_NAMES[c], u) for c, u in state.units.items()
                           if u.side is side), key=lambda t: t[0])
        rows = []
        left = list(on_board)
        army = setup.armies[side.value]
        for kind_name in army:
            kind = UNIT_KINDS[kind_name]
            match = next((t for t in left if t[1].kind == kind_name), None)
            if match:
                left.remove(match)
            placed = state.phase not in (Phase.SETUP, Phase.PLACE) or match is not None
            row = {"kind": kind_name, "type": kind.type_name, "life": kind.life,
                   "accuracy": kind.accuracy, "evasion": kind.evasion, "weapon": kind.weapon,
                   "damage": list(kind.damage), "armor_name": kind.armor_name,
                   "armor": kind.armor, "advantage": kind.advantage.value.replace("-", " "),
                   "advantage_text": kind.advantage_text,
                   "cell": match[0] if match else None,
                   "injury": match[1].injury if match else (kind.life if placed else 0),
                   "status": "on board" if match else ("removed" if placed else "to place")}
            row["life_left"] = kind.life - row["injury"]
            rows.append(row)
        out[side.value] = rows
    return out


def board_view(state: GameState) -> dict:
    """The board for drawing: top card, stack height, orientation and unit of each cell."""
    cells = {}
    for cell, stack in enumerate(state.stacks):
        unit = state.units.get(cell)
        if not stack and unit is None:
            continue
        top = stack[-1] if stack else None
        entry: dict[str, Any] = {"stack": len(stack)}
        if top is not None:
            entry.update(card=top.card.code, colour=card_class(top.card)
                         if top.declared is None else top.declared.value,
                         orientation=top.orientation.value)
        if unit is not None:
            life = UNIT_KINDS[unit.kind].life
            entry["unit"] = {"side": unit.side.value, "kind": unit.kind, "injury": unit.injury,
                             "life": life, "life_left": life - unit.injury}
        cells[CELL_NAMES[cell]] = entry
    return cells


def key_cells(state: GameState) -> list[str]:
    """In the attack phase: the cells around the moved unit that are in key position for it."""
    if state.phase is not Phase.ATTACK or state.moved is None or state.moved not in state.units:
        return []
    side = state.units[state.moved].side
    own = state.initiative[side]
    if own is None:
        return []
    card = state.top(state.moved)
    out = []
    for cell in NEIGHBOURS[state.moved]:
        if own.is_joker or KEY_BY_SUIT[own.suit] is symmetry(state.moved, cell, card.orientation,
                                                             card.corners):
            out.append(CELL_NAMES[cell])
    return sorted(out)


def view(table: Table) -> dict:
    """Everything the page shows, in one JSON object (sent after every change)."""
    with table.lock:
        if table.state is None:
            return {"version": table.version, "game": None}
        state, setup = table.state, table.setup
        names = setup.names
        return {
            "version": table.version,
            "game": {"id": table.game_id, **setup.to_json()},
            "round": state.round,
            "phase": state.phase.value,
            "to_move": state.current_player().value if state.current_player() else None,
            "first": state.first.value if state.first else None,
            "moved": CELL_NAMES[state.moved] if state.moved is not None else None,
            "prompt": prompt(state, names),
            "initiative": {s.value: (c.code if c else None) for s, c in state.initiative.items()},
            "decks": {s.value: p.deck for s, p in state.players.items()},
            "hand_sizes": {s.value: p.hand_size for s, p in state.players.items()},
            "outcome": state.outcome.to_json() if state.outcome else None,
            "board": board_view(state),
            "key_cells": key_cells(state),
            "chance": chance_request(state),
            "choices": choices(state),
            "moves": legal_moves(state),
            "attacks": attack_options(state),
            "tallies": tallies(state, setup),
            "log": [e.to_json() for e in table.events[-200:]],
            "events": len(table.events),
        }
