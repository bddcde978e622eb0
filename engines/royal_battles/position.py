"""Position JSON: how the scanner, the web UI and the planner exchange a game.

    {"game": "royal-battles", "options": {"allow_pass": false}, "round": 5, "to_move": "black",
     "initiative": {"white": "3D", "black": "5S"},
     "board": {"d2": {"cards": ["JS", "8D"], "orientation": "portrait"},
               "c3": {"cards": ["9H"], "unit": {"side": "white", "kind": "pawn", "injury": 0}}},
     "hands": {"black": ["8D"], "white": null},
     "decks": {"white": 40, "black": 38}}

Loading validates everything and names the offending field in an InvalidPositionError.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from engines.errors import InvalidPositionError, ParseError, RulesError

from .actions import Verb
from .board import (
    CELL_NAMES,
    DigitCorners,
    Orientation,
    default_digit_corners,
    parse_cell,
)
from .cards import DECK, Card, Colour, parse_card
from .state import ARMY_SIZE, GameState, Options, Outcome, Pending, Phase, PlacedCard, Player, Unit
from .units import UNIT_KINDS, Side

GAME_NAME = "royal-battles"
TOP_KEYS = {"game", "options", "round", "phase", "to_move", "first", "moved", "initiative",
            "initiative_piles", "board", "hands", "hand_sizes", "decks", "discards", "armies",
            "pending", "outcome"}
MAX_COPIES = Counter({c: 2 for c in set(DECK)})  # two decks together
MAX_COPIES[parse_card("JK")] = 4


def to_json(state: GameState) -> dict[str, Any]:
    """The whole state as plain JSON data (history is not included)."""
    board: dict[str, Any] = {}
    for cell, stack in enumerate(state.stacks):
        if not stack:
            continue
        top = stack[-1]
        entry: dict[str, Any] = {"cards": [p.card.code for p in stack],
                                 "orientation": top.orientation.value}
        if top.corners is not default_digit_corners(top.orientation):
            entry["digit_corners"] = top.corners.value
        if top.declared is not None:
            entry["declared"] = top.declared.value
        if all(p.owner is not None for p in stack):
            entry["owners"] = [p.owner.value for p in stack]
        unit = state.units.get(cell)
        if unit is not None:
            entry["unit"] = {"side": unit.side.value, "kind": unit.kind, "injury": unit.injury}
        board[CELL_NAMES[cell]] = entry
    players = state.players
    out: dict[str, Any] = {
        "game": GAME_NAME,
        "options": state.options.to_json(),
        "round": state.round,
        "phase": state.phase.value,
        "to_move": state.to_move.value,
        "first": state.first.value if state.first else None,
        "moved": CELL_NAMES[state.moved] if state.moved is not None else None,
        "initiative": {s.value: (c.code if c else None) for s, c in state.initiative.items()},
        "initiative_piles": {s.value: [c.code for c in players[s].initiative_pile] for s in Side},
        "board": board,
        "hands": {s.value: (None if players[s].hand is None else [c.code for c in players[s].hand])
                  for s in Side},
        "hand_sizes": {s.value: players[s].hand_size for s in Side},
        "decks": {s.value: players[s].deck for s in Side},
        "discards": {s.value: [c.code for c in players[s].discards] for s in Side},
        "armies": {s.value: list(players[s].army) for s in Side if players[s].army},
        "pending": [_pending_json(p) for p in state.pending],
    }
    if state.outcome is not None:
        out["outcome"] = state.outcome.to_json()
    return out


def _pending_json(p: Pending) -> dict[str, Any]:
    d = {"event": p.verb.value, "side": p.side.value}
    if p.cell is not None:
        d["cell"] = CELL_NAMES[p.cell]
    return d


def dumps(state: GameState, indent: int | None = None) -> str:
    return json.dumps(to_json(state), indent=indent)


def loads(text: str) -> GameState:
    """Parse position JSON text; malformed JSON and duplicate keys are InvalidPositionErrors."""
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            norm = key.lower() if isinstance(key, str) else key
            if norm in seen:
                raise InvalidPositionError(f"{key!r} appears twice (two units or stacks on one "
                                           "cell?)", field=key)
            seen[norm] = value
        return dict(pairs)

    try:
        data = json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise InvalidPositionError(f"not valid JSON: {exc.msg} at line {exc.lineno} "
                                   f"column {exc.colno}") from None
    return from_json(data)


def from_json(data: Any) -> GameState:
    """Build and validate a GameState from position JSON data."""
    try:
        return _from_json(data)
    except InvalidPositionError:
        raise
    except (ParseError, RulesError) as exc:  # a bare parse error inside: keep its message
        raise InvalidPositionError(str(exc)) from None


def _expect(cond: bool, message: str, field: str) -> None:
    if not cond:
        raise InvalidPositionError(message, field=field)


def _side_map(data: dict, name: str, required: bool = False) -> dict[Side, Any]:
    value = data.get(name)
    if value is None:
        _expect(not required, "is required", name)
        return {}
    _expect(isinstance(value, dict), "must be an object keyed by side", name)
    out = {}
    for key, v in value.items():
        _expect(key in ("white", "black"), f"unknown side {key!r}", f"{name}.{key}")
        out[Side(key)] = v
    return out


def _card(code: Any, field: str) -> Card:
    try:
        return parse_card(code)
    except ParseError as exc:
        raise InvalidPositionError(str(exc), field=field) from None


def _int(value: Any, field: str, lo: int, hi: int) -> int:
    _expect(isinstance(value, int) and not isinstance(value, bool), "must be an integer", field)
    _expect(lo <= value <= hi, f"must be between {lo} and {hi}, got {value}", field)
    return value


def _from_json(data: Any) -> GameState:
    _expect(isinstance(data, dict), "a position must be a JSON object", "position")
    unknown = set(data) - TOP_KEYS
    _expect(not unknown, f"unknown field(s) {sorted(unknown)}", min(unknown, default=""))
    _expect(data.get("game", GAME_NAME) == GAME_NAME, f"must be {GAME_NAME!r}", "game")

    raw_opts = data.get("options") or {}
    _expect(isinstance(raw_opts, dict), "must be an object", "options")
    known = Options().to_json()
    for k, v in raw_opts.items():
        _expect(k in known, f"unknown option (known: {', '.join(known)})", f"options.{k}")
        _expect(isinstance(v, bool), "must be true or false", f"options.{k}")
    state = GameState(Options(**raw_opts))

    state.round = _int(data.get("round", 1), "round", 0, 1000)
    try:
        state.phase = Phase(data.get("phase", "movement"))
    except ValueError:
        raise InvalidPositionError(f"unknown phase {data.get('phase')!r}", "phase") from None
    for name in ("to_move", "first"):
        value = data.get(name, "white" if name == "to_move" else None)
        if value is not None:
            _expect(value in ("white", "black"), "must be 'white' or 'black'", name)
            setattr(state, name, Side(value))
    if state.first is None and state.phase in (Phase.PRE_TURN_DRAW, Phase.MOVEMENT, Phase.ATTACK,
                                               Phase.POST_TURN):
        state.first = state.to_move  # by default the other player has yet to play this round

    # ---- board
    board = data.get("board", {})
    _expect(isinstance(board, dict), "must be an object keyed by cell", "board")
    placed: list[tuple[int, list[Card], dict]] = []
    for name, entry in board.items():
        f = f"board.{name}"
        try:
            cell = parse_cell(name)
        except ParseError as exc:
            raise InvalidPositionError(str(exc), field=f) from None
        _expect(isinstance(entry, dict), "must be an object with 'cards'", f)
        extra = set(entry) - {"cards", "orientation", "digit_corners", "declared", "unit",
                              "owners"}
        _expect(not extra, f"unknown field(s) {sorted(extra)}", f)
        cards = entry.get("cards")
        _expect(isinstance(cards, list), "'cards' must be a list (bottom to top)", f + ".cards")
        if not cards:
            _expect("unit" not in entry, "a unit cannot stand on an empty cell", f + ".unit")
            continue
        stack = [_card(c, f"{f}.cards[{i}]") for i, c in enumerate(cards)]
        placed.append((cell, stack, entry))
        if "unit" in entry:
            u = entry["unit"]
            _expect(isinstance(u, dict), "must be an object", f + ".unit")
            extra = set(u) - {"side", "kind", "injury", "life"}
            _expect(not extra, f"unknown field(s) {sorted(extra)}", f + ".unit")
            _expect(u.get("side") in ("white", "black"), "must be 'white' or 'black'",
                    f + ".unit.side")
            _expect(u.get("kind") in UNIT_KINDS, f"must be one of {', '.join(UNIT_KINDS)}",
                    f + ".unit.kind")
            life = UNIT_KINDS[u["kind"]].life
            injury = _int(u.get("injury", 0), f + ".unit.injury", 0, 10**6)
            _expect(injury < life, f"injury {injury} reaches the {u['kind']}'s life {life}: "
                    "such a unit has been removed", f + ".unit.injury")
            state.units[cell] = Unit(Side(u["side"]), u["kind"], injury)

    for side in Side:
        n = sum(1 for u in state.units.values() if u.side is side)
        _expect(n <= ARMY_SIZE, f"{n} {side.value} units on the board; an army has 4", "board")

    # ---- cards off the board
    initiative = _side_map(data, "initiative")
    piles = _side_map(data, "initiative_piles")
    hands = _side_map(data, "hands")
    hand_sizes = _side_map(data, "hand_sizes")
    decks = _side_map(data, "decks")
    discards = _side_map(data, "discards")
    armies = _side_map(data, "armies")
    known: dict[Side, Counter] = {s: Counter() for s in Side}
    for side in Side:
        player = Player(Counter(), 0)
        pile_codes = piles.get(side)
        if pile_codes is not None:
            _expect(isinstance(pile_codes, list), "must be a list",
                    f"initiative_piles.{side.value}")
            player.initiative_pile = [_card(c, f"initiative_piles.{side.value}[{i}]")
                                      for i, c in enumerate(pile_codes)]
        card = initiative.get(side)
        if card is not None:
            card = _card(card, f"initiative.{side.value}")
            if not player.initiative_pile or player.initiative_pile[-1] is not card:
                _expect(pile_codes is None, "must be the top of initiative_piles",
                        f"initiative.{side.value}")
                player.initiative_pile = [*player.initiative_pile, card]
        elif player.initiative_pile:
            card = player.initiative_pile[-1]
        state.initiative[side] = card
        hand = hands.get(side, None)
        if hand is None:
            player.hand = None
            size = hand_sizes.get(side, 0)
            player.hidden_hand_size = _int(size, f"hand_sizes.{side.value}", 0, 54)
        else:
            _expect(isinstance(hand, list), "must be a list of cards or null",
                    f"hands.{side.value}")
            player.hand = [_card(c, f"hands.{side.value}[{i}]") for i, c in enumerate(hand)]
            if side in hand_sizes:
                _expect(hand_sizes[side] == len(hand), "disagrees with the hand",
                        f"hand_sizes.{side.value}")
        d = discards.get(side, [])
        _expect(isinstance(d, list), "must be a list", f"discards.{side.value}")
        player.discards = [_card(c, f"discards.{side.value}[{i}]") for i, c in enumerate(d)]
        army = armies.get(side)
        if army is not None:
            _expect(isinstance(army, list) and len(army) == ARMY_SIZE
                    and all(k in UNIT_KINDS for k in army),
                    "must list exactly 4 unit kinds", f"armies.{side.value}")
            on_board = Counter(u.kind for u in state.units.values() if u.side is side)
            _expect(not (on_board - Counter(army)), "units on the board are not in this army",
                    f"armies.{side.value}")
            player.army = tuple(army)
        else:
            player.army = ()  # not known: units already removed can't be seen
        known[side].update(player.initiative_pile)
        known[side].update(player.hand or [])
        known[side].update(player.discards)
        state.players[side] = player

    everything = Counter()
    for side in Side:
        everything.update(known[side])
    for _cell, stack, _entry in placed:
        everything.update(stack)
    for card, n in everything.items():
        _expect(n <= MAX_COPIES[card], f"{n} copies of {card}; the two decks hold "
                f"{MAX_COPIES[card]}", "cards")

    # Board cards don't say whose deck they came from: give each to the side with more copies
    # of it left unseen, so both decks stay consistent.
    unseen = {s: Counter(DECK) - known[s] for s in Side}
    for side in Side:
        over = known[side] - Counter(DECK)
        _expect(not over, f"more {', '.join(map(str, over))} than one deck holds", side.value)
    required = {s: _int(decks.get(s, 0), f"decks.{s.value}", 0, 54)
                + state.players[s].hidden_hand_size for s in Side}
    for cell, stack, entry in placed:
        f = f"board.{CELL_NAMES[cell]}"
        owners = entry.get("owners")
        if owners is not None:
            _expect(isinstance(owners, list) and len(owners) == len(stack)
                    and all(o in ("white", "black") for o in owners),
                    "must name white or black for each card", f + ".owners")
        stack_placed = []
        for i, card in enumerate(stack):
            if owners is not None:
                owner = Side(owners[i])
                _expect(unseen[owner][card] > 0, f"{owner.value}'s deck has no {card} left",
                        f"{f}.owners[{i}]")
            else:
                # Whose deck a board card came from is not visible: give it to a side that
                # still has a copy, the one with the most cards to spare.
                owner = max(Side, key=lambda s: (unseen[s][card] > 0,
                                                 sum(unseen[s].values()) - required[s]))
            unseen[owner][card] -= 1
            top = i == len(stack) - 1
            stack_placed.append(_placed(card, owner, entry if top else {}, f))
        state.stacks[cell] = tuple(stack_placed)
    for side in Side:
        player = state.players[side]
        player.unseen = +unseen[side]
        pool = sum(player.unseen.values())
        default_deck = max(0, pool - player.hidden_hand_size)
        player.deck = _int(decks.get(side, default_deck), f"decks.{side.value}", 0, 54)
        _expect(player.deck + player.hidden_hand_size <= pool,
                f"{player.deck} in the deck (+{player.hidden_hand_size} hidden in hand) but only "
                f"{pool} of {side.value}'s cards are unaccounted for", f"decks.{side.value}")

    # ---- turn state
    moved = data.get("moved")
    if moved is not None:
        try:
            state.moved = parse_cell(moved)
        except ParseError as exc:
            raise InvalidPositionError(str(exc), field="moved") from None
        unit = state.units.get(state.moved)
        _expect(unit is not None and unit.side is state.to_move,
                f"no {state.to_move.value} unit stands on {moved}", "moved")
    if state.phase is Phase.ATTACK:
        _expect(state.moved is not None, "the attack phase needs the moved unit's cell", "moved")
    if state.phase in (Phase.MOVEMENT, Phase.ATTACK):
        for side in Side:
            _expect(state.initiative[side] is not None, "required during a turn",
                    f"initiative.{side.value}")
    pending = data.get("pending", [])
    _expect(isinstance(pending, list), "must be a list", "pending")
    for i, p in enumerate(pending):
        f = f"pending[{i}]"
        _expect(isinstance(p, dict) and p.get("event") in ("setup", "initiative", "draw")
                and p.get("side") in ("white", "black"), "must be {event, side[, cell]}", f)
        cell = parse_cell(p["cell"]) if p.get("cell") else None
        state.pending.append(Pending(Verb(p["event"]), Side(p["side"]), cell))
    if state.phase is Phase.PLACE:
        for side in Side:
            left = Counter(state.players[side].army) - Counter(
                u.kind for u in state.units.values() if u.side is side)
            state.to_place[side] = sorted(left.elements())
    if data.get("outcome") is not None:
        o = data["outcome"]
        _expect(isinstance(o, dict) and o.get("winner") in ("white", "black", None),
                "must be {winner, reason}", "outcome")
        state.outcome = Outcome(Side(o["winner"]) if o["winner"] else None,
                                str(o.get("reason", "")), state._unit_counts())
        state.phase = Phase.OVER
    elif state.phase not in (Phase.SETUP, Phase.PLACE):
        # a side with no unit left has lost at once, however the position came about
        # (a correction that took off the last unit, a position typed in)
        counts = state._unit_counts()
        for side, n in zip(Side, counts, strict=True):
            if n == 0:
                state._finish(Outcome(side.other, "annihilation", counts))
                break
    return state


def _placed(card: Card, owner: Side, entry: dict, field: str) -> PlacedCard:
    try:
        orientation = Orientation(entry.get("orientation", "portrait"))
    except ValueError:
        raise InvalidPositionError("must be 'portrait' or 'landscape'",
                                   field + ".orientation") from None
    try:
        corners = DigitCorners(entry.get("digit_corners",
                                         default_digit_corners(orientation).value))
    except ValueError:
        raise InvalidPositionError("must be 'nw-se' or 'ne-sw'", field + ".digit_corners") from None
    declared = entry.get("declared")
    if declared is not None:
        _expect(card.is_joker and declared in ("red", "black"),
                "only a joker can carry a declared colour (red or black)", field + ".declared")
        declared = Colour(declared)
    return PlacedCard(card, owner, orientation, corners, declared)
