"""The War Lord Tourney state machine.

A turn follows the rulebook's move sequence: (1) prisoners freed earlier stand in their Castle,
(2) movement, (3) freeing prisoners from the opposing dungeon, (4) combat on every square where
opposing units meet (capture or slay the defeated), (5) the victory conditions. Every decision
(moves, which prisoner to free, slay or capture, the Warlord's succession) is an action of the
player concerned; every combat round is a chance node whose outcome the table reports
('white wins') or a seeded dice roller supplies.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import Any

from engines.errors import IllegalActionError, InvalidPositionError, ParseError, RulesError

from .actions import (
    Action,
    Decline,
    EndTurn,
    Free,
    Move,
    Pass,
    Roll,
    Strike,
    Succeed,
    Verdict,
    parse_action,
)
from .board import (
    DEFAULT_BOARD,
    DEFAULT_SERGEANTS,
    SIDE_LETTER,
    SIDES,
    UNIT_ID_RE,
    Board,
    cell_name,
    other,
    parse_cell,
    unit_kind,
    unit_side,
)

COMBAT_MODES = ("reported", "dice")
DOUBLE_KILL_MODES = ("off", "heal", "slay")
STATUSES = ("field", "keep", "prison", "dead")
STAGES = ("move", "free", "resolve", "over")
FIGHTER_KINDS = ("W", "K", "F", "S")


@dataclass(frozen=True)
class Options:
    """Rule options. Every point the rulebook leaves open is one of these (see README.md)."""

    combat: str = "reported"  # how a combat round is decided: 'reported' by the table, or 'dice'
    moves_per_turn: int = 1  # optional rule: more than one unit moved per turn
    blows_to_slay: int = 1  # blows a fighter takes before the killing blow lands
    retained_wounds: bool = False  # optional rule 1: wounds kept until Castle or a friendly Lady
    double_kills: str = "off"  # optional rules 3/4: 'off', 'heal' (rule 3) or 'slay' (rule 4)
    sergeants: bool = False  # optional rule: Sergeants (2 diagonally or 1 orthogonally)
    pass_through_units: bool = False  # may a move pass over occupied squares?
    max_turns: int = 300  # a drawn game after this many turns; 0: no limit
    first_player: str = "white"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        def bad(name: str, why: str) -> InvalidPositionError:
            return InvalidPositionError(f"{why}, got {getattr(self, name)!r}", f"options.{name}")

        if self.combat not in COMBAT_MODES:
            raise bad("combat", f"must be one of {COMBAT_MODES}")
        if self.double_kills not in DOUBLE_KILL_MODES:
            raise bad("double_kills", f"must be one of {DOUBLE_KILL_MODES}")
        for name, low, high in (("moves_per_turn", 1, 10), ("blows_to_slay", 1, 10),
                                ("max_turns", 0, 100_000)):
            value = getattr(self, name)
            if type(value) is not int or not low <= value <= high:
                raise bad(name, f"must be an integer {low}..{high}")
        for name in ("retained_wounds", "sergeants", "pass_through_units"):
            if type(getattr(self, name)) is not bool:
                raise bad(name, "must be true or false")
        if self.first_player not in SIDES:
            raise bad("first_player", "must be 'white' or 'black'")

    @classmethod
    def from_json(cls, data: Any) -> Options:
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise InvalidPositionError("must be an object", "options")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidPositionError(f"unknown option(s) {unknown}", "options")
        return cls(**data)


@dataclass
class Unit:
    id: str
    side: str
    kind: str  # current kind: a Knight who became Warlord is 'W'
    status: str = "field"  # field (on a board cell), keep (waiting in its Castle), prison, dead
    cell: str | None = None
    wounds: int = 0
    downed: bool = False  # a 'double kill' casualty lying on its square

    @property
    def at_large(self) -> bool:
        return self.status in ("field", "keep")


@dataclass(frozen=True)
class Outcome:
    winner: str | None  # None: a draw
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"winner": self.winner, "reason": self.reason}


# ---- movement geometry ---------------------------------------------------------------------
_ORTHO = ((1, 0), (-1, 0), (0, 1), (0, -1))
_DIAG = ((1, 1), (1, -1), (-1, 1), (-1, -1))


def move_pattern(kind: str) -> list[tuple[tuple[int, int], int]]:
    """(direction, most steps) for a kind. Moves are straight lines; patterns never combine."""
    if kind in ("F", "W"):
        return [(d, 2) for d in _ORTHO] + [(d, 1) for d in _DIAG]
    if kind == "S":
        return [(d, 1) for d in _ORTHO] + [(d, 2) for d in _DIAG]
    return [(d, 4) for d in _ORTHO + _DIAG]  # Knight, Lady


class GameState:
    """A War Lord Tourney game. Build with `GameState.new()` or `GameState.from_json()`."""

    def __init__(self, board: Board, options: Options) -> None:
        self.board = board
        self.options = options
        self.units: dict[str, Unit] = {}
        self.keep: dict[str, list[str]] = {s: [] for s in SIDES}
        self.dungeons: dict[str, list[str]] = {s: [] for s in SIDES}
        self.turn = 1
        self.to_move = options.first_player
        self.stage = "move"
        self.moved: list[str] = []
        self.frozen: list[str] = []
        self.freed_by: list[str] = []
        self.turn_done = False
        self.pending: list[str] = []
        self.combat_cell: str | None = None
        self.verdicts: list[str] = []
        self.verdict_side: str | None = None
        self.succession: dict[str, Any] | None = None
        self.outcome_: Outcome | None = None
        self._history: list[dict[str, Any]] = []
        self._legal: list[Action] | None = None  # legal_actions() of the current state

    # ---- construction ----------------------------------------------------------------------
    @classmethod
    def new(cls, board: Board | None = None, options: Options | None = None) -> GameState:
        options = options or Options()
        board = board or DEFAULT_BOARD
        setup = list(board.setup)
        if options.sergeants and board is DEFAULT_BOARD:
            setup += list(DEFAULT_SERGEANTS)
        state = cls(board, options)
        for unit_id, cell in setup:
            kind = unit_kind(unit_id)
            if kind == "S" and not options.sergeants:
                raise InvalidPositionError("a Sergeant needs Options.sergeants", "board.setup")
            state.units[unit_id] = Unit(unit_id, unit_side(unit_id), kind, "field", cell)
        state._validate()
        return state

    @classmethod
    def position(cls, placements: dict[str, str], *, board: Board | None = None,
                 options: Options | None = None, to_move: str = "white") -> GameState:
        """A custom position for tests and the table: each listed unit stands on a cell, or is
        'keep' (waiting in its Castle, in the order listed), 'prison' (in the opposing
        dungeon, in the order listed) or 'dead'. Units of the setup not listed are dead."""
        base = cls.new(board, options)
        data = base.to_json()
        units = {uid: {"kind": unit_kind(uid), "status": "dead", "cell": None}
                 for uid in data["units"]}
        keep: dict[str, list[str]] = {s: [] for s in SIDES}
        dungeons: dict[str, list[str]] = {s: [] for s in SIDES}
        for uid, where in placements.items():
            try:
                side = unit_side(uid)
            except ParseError as exc:
                raise InvalidPositionError(str(exc), "placements") from None
            unit = {"kind": unit_kind(uid), "status": "field", "cell": where}
            if where in ("keep", "prison", "dead"):
                unit.update(status=where, cell=None)
                if where == "keep":
                    keep[side].append(uid)
                elif where == "prison":
                    dungeons[other(side)].append(uid)
            units[uid] = unit
        data.update(units=units, keep=keep, dungeons=dungeons, to_move=to_move)
        return cls.from_json(data)

    # ---- queries ---------------------------------------------------------------------------
    def units_on(self, cell: str, side: str | None = None, *, active: bool = False) -> list[Unit]:
        return [u for u in self.units.values()
                if u.status == "field" and u.cell == cell and (side is None or u.side == side)
                and not (active and u.downed)]

    def _cap(self, cell: str) -> int:
        terrain = self.board.terrain(cell)
        return 1 if terrain in ("castle", "forest") else 2

    def current_player(self) -> str | None:
        """Who decides next: a side, or None at a chance node or when the game is over."""
        if self.outcome_ is not None or self.combat_cell is not None:
            return None
        if self.verdicts:
            return self.verdict_side
        if self.succession is not None:
            return self.succession["side"]
        return self.to_move

    @property
    def phase(self) -> str:
        if self.outcome_ is not None:
            return "over"
        if self.verdicts:
            return "verdict"
        if self.succession is not None:
            return "succession"
        if self.combat_cell is not None:
            return "combat"
        return self.stage

    def is_chance_node(self) -> bool:
        return self.outcome_ is None and not self.verdicts and self.succession is None \
            and self.combat_cell is not None

    def is_terminal(self) -> bool:
        return self.outcome_ is not None

    def outcome(self) -> Outcome | None:
        return self.outcome_

    def chance_outcomes(self) -> list[tuple[Action, float]]:
        if not self.is_chance_node():
            return []
        actions = self.legal_actions()
        return [(a, 1 / len(actions)) for a in actions]

    # ---- legal actions ---------------------------------------------------------------------
    def legal_actions(self) -> list[Action]:
        if self._legal is None:
            self._legal = self._compute_legal()
        return list(self._legal)

    def _compute_legal(self) -> list[Action]:
        phase = self.phase
        if phase == "over":
            return []
        if phase == "verdict":
            return [Verdict(self.verdicts[0], slay) for slay in (False, True)]
        if phase == "succession":
            return self._succession_actions()
        if phase == "combat":
            if self.options.combat == "dice":
                return [Roll(w, b) for w in range(1, 7) for b in range(1, 7)]
            sides: list[str | None] = list(SIDES)
            if self.options.double_kills != "off":
                sides.append(None)
            return [Strike(s) for s in sides]
        if phase == "free":
            return self._free_actions()
        # movement
        moves: list[Action] = []
        for unit in self.units.values():
            moves.extend(self.unit_moves(unit.id))
        if self.moved:
            moves.append(EndTurn())
        elif not moves:
            moves.append(Pass())
        return moves

    def unit_moves(self, unit_id: str) -> list[Move]:
        """The legal moves of one unit now (empty unless it is that side's movement stage)."""
        unit = self.units.get(unit_id)
        if (unit is None or self.phase != "move" or unit.side != self.to_move
                or unit.status != "field" or unit.downed or unit.id in self.moved
                or unit.id in self.frozen):
            return []
        assert unit.cell is not None
        board = self.board
        occupied: dict[str, list[Unit]] = {}
        for other_unit in self.units.values():
            if other_unit.status == "field" and other_unit.cell is not None:
                occupied.setdefault(other_unit.cell, []).append(other_unit)
        start = parse_cell(unit.cell)
        start_castle = board.castle_side(unit.cell)
        result: list[Move] = []
        for (df, dr), most in move_pattern(unit.kind):
            f, r = start
            prev = unit.cell
            for step in range(1, most + 1):
                f, r = f + df, r + dr
                if not board.on_board(f, r):
                    break
                cell = cell_name(f, r)
                # out of a Castle only onto its Green
                if step == 1 and start_castle and cell != board.green(start_castle):
                    break
                terrain = board.terrain(cell)
                if unit.kind in ("K", "L") and terrain in ("forest", "rough"):
                    break
                castle_side = board.castle_side(cell)
                if castle_side is not None:
                    if prev != board.green(castle_side):
                        break
                    if castle_side != unit.side and step != 1:
                        break  # stop on the opposing Green first
                    result.extend(self._moves_to(unit, cell, occupied.get(cell, [])))
                    break
                result.extend(self._moves_to(unit, cell, occupied.get(cell, [])))
                if cell in occupied and not self.options.pass_through_units:
                    break
                prev = cell
        return result

    def _moves_to(self, unit: Unit, cell: str, there: list[Unit]) -> list[Move]:
        friends = [u for u in there if u.side == unit.side and u.id != unit.id]
        enemies = [u for u in there if u.side != unit.side]
        cap = self._cap(cell)
        if self.board.castle_side(cell) == unit.side and self.keep[unit.side]:
            cap = 0  # units are waiting in the Castle
        result = []
        if len(friends) < cap:
            result.append(Move(unit.id, cell))
        if unit.kind == "L" and friends and not enemies and len(friends) <= cap:
            for friend in friends:
                if not friend.downed and self._rose_possible(unit, cell, friend):
                    result.append(Move(unit.id, cell, friend.id))
        return result

    def _rose_possible(self, lady: Unit, cell: str, friend: Unit) -> bool:
        """Her own unit goes to the Castle; a friend standing there must make way onto the
        Green, which needs room there (the Lady herself and the sent unit not counted)."""
        castle = self.board.castle(lady.side)
        green = self.board.green(lady.side)
        if cell == castle:
            return False
        occupants = [u for u in self.units_on(castle, lady.side) if u.id != lady.id]
        if not occupants and not (lady.cell == castle and self.keep[lady.side]):
            return True  # nobody will stand in the Castle (leaving it, she lets in the next)
        on_green = {u.id for u in self.units_on(green, lady.side)} - {lady.id, friend.id}
        if cell == green:
            on_green.add(lady.id)
        return len(on_green) < self._cap(green)

    def _free_actions(self) -> list[Action]:
        side = self.to_move
        green = self.board.green(other(side))
        prisoners = [self.units[p] for p in self.dungeons[other(side)]]
        result: list[Action] = []
        for freer in self.units_on(green, side, active=True):
            if freer.id in self.freed_by:
                continue
            for prisoner in prisoners:
                if prisoner.kind == "W" and freer.kind != "L":
                    continue  # only the Lady frees her Warlord
                result.append(Free(freer.id, prisoner.id))
        return result

    def _succession_actions(self) -> list[Action]:
        assert self.succession is not None
        side, tier = self.succession["side"], self.succession["tier"]
        candidates = self._tier_candidates(side, tier)
        if tier < 2:
            return [Succeed(u.id, "promote") for u in candidates] + [Decline()]
        lady = candidates[0]
        return [Succeed(lady.id, choice) for choice in ("promote", "return", "surrender", "trade")]

    def _tier_candidates(self, side: str, tier: int) -> list[Unit]:
        kinds = (("K",), ("F", "S"), ("L",))[tier]
        return [u for u in self.units.values()
                if u.side == side and u.kind in kinds and u.at_large]

    # ---- apply / undo ----------------------------------------------------------------------
    def apply(self, action: Action | str) -> None:
        if isinstance(action, str):
            try:
                action = parse_action(action)
            except ParseError as exc:
                raise IllegalActionError(str(exc)) from None
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(self._why_illegal(action, legal))
        self._history.append(self.to_json(include_history=False))
        self._legal = None
        try:
            self._do(action)
            self._advance()
        except Exception:
            self._load(self._history.pop())
            raise

    def _why_illegal(self, action: Action, legal: list[Action]) -> str:
        if self.outcome_ is not None:
            return f"the game is over; {action} is not possible"
        who = self.current_player() or "chance"
        hint = ", ".join(str(a) for a in legal[:8]) + (" ..." if len(legal) > 8 else "")
        return f"{action} is not legal in phase {self.phase} ({who} to act); legal: {hint}"

    def undo(self) -> None:
        if not self._history:
            raise IllegalActionError("nothing to undo")
        self._load(self._history.pop())

    @property
    def history_length(self) -> int:
        return len(self._history)

    def _do(self, action: Action) -> None:
        if isinstance(action, Move):
            self._do_move(action)
        elif isinstance(action, Pass | EndTurn):
            self.turn_done = True
        elif isinstance(action, Free):
            self.dungeons[other(self.to_move)].remove(action.prisoner)
            self.freed_by.append(action.freer)
            self._to_castle(self.units[action.prisoner], sortie=False)
        elif isinstance(action, Strike | Roll):
            self._do_round(action)
        elif isinstance(action, Verdict):
            self._do_verdict(action)
        elif isinstance(action, Succeed):
            self._do_succeed(action)
        elif isinstance(action, Decline):
            assert self.succession is not None
            self.succession["tier"] += 1
            self._settle_succession()

    def _do_move(self, move: Move) -> None:
        unit = self.units[move.unit]
        start = unit.cell
        unit.cell = move.to
        self.moved.append(unit.id)
        if start is not None and self.board.castle_side(start) == unit.side:
            self._refill_castle(unit.side)
        if move.rose:
            self._to_castle(self.units[move.rose], sortie=True)
        if self.units_on(move.to, other(unit.side)):
            self._contest(move.to)
        self._heal()

    def _contest(self, cell: str) -> None:
        if cell not in self.pending:
            self.pending.append(cell)

    def _take_off(self, unit: Unit, status: str) -> None:
        """Move a unit off the board (or out of its Castle queue) into `status`, with its
        wounds healed, refilling its Castle if it stood there."""
        cell, was = unit.cell, unit.status
        if was == "keep":
            self.keep[unit.side].remove(unit.id)
        unit.status, unit.cell, unit.wounds, unit.downed = status, None, 0, False
        if was == "field" and cell == self.board.castle(unit.side):
            self._refill_castle(unit.side)

    def _to_castle(self, unit: Unit, *, sortie: bool) -> None:
        """Send a unit to its own Castle (freed, rescued by the Lady, returned, revived).
        With `sortie`, a friendly unit standing in the Castle moves onto the Green first."""
        side = unit.side
        self._take_off(unit, "keep")
        self.keep[side].append(unit.id)
        castle, green = self.board.castle(side), self.board.green(side)
        if sortie:
            for occupant in self.units_on(castle, side):
                occupant.cell = green
                if occupant.id not in self.moved:
                    self.moved.append(occupant.id)
                if self.units_on(green, other(side)):
                    self._contest(green)
        self._refill_castle(side)

    def _refill_castle(self, side: str) -> None:
        """First in, first out: the longest-waiting unit steps into the emptied Castle."""
        castle = self.board.castle(side)
        if self.keep[side] and not self.units_on(castle):
            unit = self.units[self.keep[side].pop(0)]
            unit.status = "field"
            unit.cell = castle
            if unit.id not in self.frozen:
                self.frozen.append(unit.id)

    def _capture(self, unit: Unit, by: str) -> None:
        self._take_off(unit, "prison")
        self.dungeons[by].append(unit.id)

    def _slay(self, unit: Unit) -> None:
        was_warlord = unit.kind == "W"
        self._take_off(unit, "dead")
        if was_warlord:
            self._start_succession(unit)

    # ---- healing ---------------------------------------------------------------------------
    def _heal(self) -> None:
        """Optional rule 1: wounds heal in the unit's own Castle or beside a friendly Lady."""
        for unit in self.units.values():
            if unit.wounds and unit.status == "field" and not unit.downed:
                if unit.cell == self.board.castle(unit.side) or any(
                        u.kind == "L" and u.id != unit.id
                        for u in self.units_on(unit.cell or "", unit.side, active=True)):
                    unit.wounds = 0

    # ---- combat ----------------------------------------------------------------------------
    def _start_resolution(self, cell: str) -> None:
        """Step 4 on one square: downed units, the Ladies' roses, then combat if fighters of
        both sides remain."""
        sides = {s: self.units_on(cell, s) for s in SIDES}
        if not sides["white"] or not sides["black"]:
            return
        active = {s: [u for u in sides[s] if not u.downed] for s in SIDES}
        # double kills: a Lady heals her fallen fighters; rule 3 lets the healed one (rule 4
        # any arriving fighter) slay or capture the fallen enemy
        if self.options.double_kills != "off":
            for side in SIDES:
                foes_down = [u for u in sides[other(side)] if u.downed]
                healed = False
                if any(u.kind == "L" for u in active[side]):
                    for u in sides[side]:
                        if u.downed:
                            u.downed, u.wounds, healed = False, 0, True
                            active[side].append(u)
                has_fighter = any(u.kind in FIGHTER_KINDS for u in active[side])
                if foes_down and (healed or (self.options.double_kills == "slay"
                                             and has_fighter)):
                    self._queue_verdicts(side, foes_down)
            if self.verdicts:
                self.pending.insert(0, cell)  # the rest of the square after the verdicts
                return
        if not active["white"] or not active["black"]:
            return
        # the Ladies' roses, simultaneous: a Lady captures one opposing Warlord or Knight
        # (the Warlord first), and two Ladies capture each other
        taken: list[tuple[Unit, str]] = []
        for side in SIDES:
            if any(u.kind == "L" for u in active[side]):
                targets = sorted((u for u in active[other(side)] if u.kind in ("W", "K")),
                                 key=lambda u: u.kind != "W")
                if targets:
                    taken.append((targets[0], side))
                taken += [(u, side) for u in active[other(side)] if u.kind == "L"]
        for unit, by in taken:
            self._capture(unit, by)
        captured = {u.id for u, _ in taken}
        active = {s: [u for u in active[s] if u.id not in captured] for s in SIDES}
        fighters = {s: [u for u in active[s] if u.kind in FIGHTER_KINDS] for s in SIDES}
        if fighters["white"] and fighters["black"]:
            self.combat_cell = cell
            return
        for side in SIDES:  # fighters capture an unprotected Lady without combat
            if fighters[side]:
                for lady in active[other(side)]:
                    self._capture(lady, side)

    def _do_round(self, action: Strike | Roll) -> None:
        cell = self.combat_cell
        assert cell is not None
        fighters = {s: [u for u in self.units_on(cell, s, active=True) if u.kind in FIGHTER_KINDS]
                    for s in SIDES}
        struck: list[str]
        if isinstance(action, Strike):
            struck = list(SIDES) if action.side is None else [other(action.side)]
        else:  # dice: each side adds its number of fighters (2 against 1 fight together)
            white = action.white + len(fighters["white"])
            black = action.black + len(fighters["black"])
            if white != black:
                struck = ["black" if white > black else "white"]
            else:
                struck = list(SIDES) if self.options.double_kills != "off" else []
        beaten = []
        for side in struck:
            for unit in fighters[side]:
                unit.wounds += 1
            if any(u.wounds >= self.options.blows_to_slay for u in fighters[side]):
                beaten.append(side)
        if not beaten:
            return
        self.combat_cell = None
        if len(beaten) == 2:  # a double kill: both fall and stay on the square
            for side in SIDES:
                for unit in fighters[side]:
                    unit.downed, unit.wounds = True, 0
            return
        loser = beaten[0]
        winner = other(loser)
        if not self.options.retained_wounds:
            for unit in fighters[winner]:
                unit.wounds = 0
        for lady in [u for u in self.units_on(cell, loser, active=True) if u.kind == "L"]:
            self._capture(lady, winner)  # a Lady falls with her fighter; she is never slain
        for unit in fighters[loser]:
            unit.wounds = 0
        self._queue_verdicts(winner, fighters[loser])

    def _queue_verdicts(self, side: str, units: list[Unit]) -> None:
        self.verdict_side = side
        self.verdicts.extend(u.id for u in units if u.id not in self.verdicts)

    def _do_verdict(self, verdict: Verdict) -> None:
        unit = self.units[verdict.unit]
        by = self.verdict_side
        assert by is not None
        self.verdicts.pop(0)
        if not self.verdicts:
            self.verdict_side = None
        if verdict.slay:
            self._slay(unit)
        else:
            self._capture(unit, by)

    # ---- succession ------------------------------------------------------------------------
    def _start_succession(self, warlord: Unit) -> None:
        side = warlord.side
        if any(u.side == side and u.kind == "W" and u.at_large for u in self.units.values()):
            return
        self.succession = {"side": side, "tier": 0, "warlord": warlord.id}
        self._settle_succession()

    def _settle_succession(self) -> None:
        """Skip the tiers with nobody at large; end the succession after the Lady's tier."""
        assert self.succession is not None
        side = self.succession["side"]
        while self.succession["tier"] <= 2:
            if self._tier_candidates(side, self.succession["tier"]):
                return
            self.succession["tier"] += 1
        self.succession = None

    def _do_succeed(self, action: Succeed) -> None:
        assert self.succession is not None
        unit = self.units[action.unit]
        warlord = self.units[self.succession["warlord"]]
        self.succession = None
        if action.choice == "promote":
            unit.kind = "W"
        elif action.choice == "return":
            if not (unit.status == "keep" or unit.cell == self.board.castle(unit.side)):
                self._to_castle(unit, sortie=False)
        elif action.choice == "surrender":
            self._capture(unit, other(unit.side))
        else:  # trade: the Warlord lives again in his Castle, the Lady gives her life
            self._slay(unit)
            self._to_castle(warlord, sortie=False)

    # ---- turn flow -------------------------------------------------------------------------
    def _advance(self) -> None:
        """Run the deterministic steps until a player or chance must act."""
        while self.outcome_ is None:
            if self.verdicts or self.succession is not None or self.combat_cell is not None:
                return
            if self.stage == "move":
                if not self.turn_done and len(self.moved) < self.options.moves_per_turn:
                    return
                self.stage = "free"
            if self.stage == "free":
                if self._free_actions():
                    return
                self.stage = "resolve"
            if self.pending:
                self._start_resolution(self.pending.pop(0))
                continue
            self._end_turn()
            return

    def _end_turn(self) -> None:
        self._heal()
        self.outcome_ = self._victory()
        if self.outcome_ is not None:
            self.stage = "over"
            return
        if self.options.max_turns and self.turn >= self.options.max_turns:
            self.outcome_ = Outcome(None, f"turn limit {self.options.max_turns} reached")
            self.stage = "over"
            return
        self.to_move = other(self.to_move)
        self.turn += 1
        self.stage = "move"
        self.moved, self.frozen, self.freed_by = [], [], []
        self.turn_done = False

    def _victory(self) -> Outcome | None:
        for side in (self.to_move, other(self.to_move)):
            castle = self.board.castle(other(side))
            if self.units_on(castle, side) and not self.units_on(castle, other(side)):
                return Outcome(side, f"{side} captured the {other(side)} Castle")
        lost = [s for s in SIDES if not any(
            u.side == s and u.kind in ("W", "L") and u.at_large for u in self.units.values())]
        if len(lost) == 2:
            return Outcome(None, "both sides lost their Warlord and Lady")
        if lost:
            return Outcome(other(lost[0]),
                           f"{lost[0]} has no Warlord and no Lady left (slain or captured)")
        return None

    # ---- JSON ------------------------------------------------------------------------------
    def to_json(self, include_history: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "board": self.board.to_json(),
            "options": asdict(self.options),
            "turn": self.turn,
            "to_move": self.to_move,
            "stage": self.stage,
            "units": {u.id: {"kind": u.kind, "status": u.status, "cell": u.cell,
                             "wounds": u.wounds, "downed": u.downed}
                      for u in self.units.values()},
            "keep": {s: list(self.keep[s]) for s in SIDES},
            "dungeons": {s: list(self.dungeons[s]) for s in SIDES},
            "moved": list(self.moved),
            "frozen": list(self.frozen),
            "freed_by": list(self.freed_by),
            "turn_done": self.turn_done,
            "pending": list(self.pending),
            "combat_cell": self.combat_cell,
            "verdicts": list(self.verdicts),
            "verdict_side": self.verdict_side,
            "succession": dict(self.succession) if self.succession else None,
            "outcome": self.outcome_.to_json() if self.outcome_ else None,
        }
        if include_history:
            data["history"] = list(self._history)
        return data

    @classmethod
    def from_json(cls, data: Any) -> GameState:
        if not isinstance(data, dict):
            raise InvalidPositionError("the state must be a JSON object", "state")
        board = Board.from_json(data.get("board", DEFAULT_BOARD.to_json()))
        options = Options.from_json(data.get("options"))
        state = cls(board, options)
        state._load(data)
        history = data.get("history", [])
        if not isinstance(history, list):
            raise InvalidPositionError("must be a list", "history")
        for i, old in enumerate(history):  # validate every stored earlier state
            try:
                cls.from_json({**old, "history": []} if isinstance(old, dict) else old)
            except InvalidPositionError as exc:
                raise InvalidPositionError(str(exc), f"history[{i}]") from None
        state._history = [dict(h) for h in history]
        return state

    def _load(self, data: dict[str, Any]) -> None:
        self._legal = None
        def need(key: str, kind: type | tuple[type, ...]) -> Any:
            if key not in data:
                raise InvalidPositionError("missing", key)
            value = data[key]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise InvalidPositionError(f"wrong type {type(value).__name__}", key)
            return value

        units_data = need("units", dict)
        self.units = {}
        for unit_id, raw in units_data.items():
            field = f"units.{unit_id}"
            if not isinstance(unit_id, str) or not UNIT_ID_RE.match(unit_id):
                raise InvalidPositionError(f"bad unit id {unit_id!r}", "units")
            if not isinstance(raw, dict):
                raise InvalidPositionError("must be an object", field)
            kind, status = raw.get("kind"), raw.get("status", "field")
            cell, wounds, downed = raw.get("cell"), raw.get("wounds", 0), raw.get("downed", False)
            if kind not in ("W", "L", "K", "F", "S"):
                raise InvalidPositionError(f"bad kind {kind!r}", f"{field}.kind")
            if "S" in (kind, unit_kind(unit_id)) and not self.options.sergeants:
                raise InvalidPositionError("a Sergeant needs Options.sergeants", f"{field}.kind")
            if status not in STATUSES:
                raise InvalidPositionError(f"bad status {status!r}", f"{field}.status")
            if type(wounds) is not int or not 0 <= wounds < self.options.blows_to_slay:
                raise InvalidPositionError(f"bad wounds {wounds!r}", f"{field}.wounds")
            if type(downed) is not bool or (downed and status != "field"):
                raise InvalidPositionError(f"bad downed {downed!r}", f"{field}.downed")
            if status == "field":
                try:
                    f, r = parse_cell(cell)
                except ParseError as exc:
                    raise InvalidPositionError(str(exc), f"{field}.cell") from None
                if not self.board.on_board(f, r):
                    raise InvalidPositionError(f"{cell} is off the board", f"{field}.cell")
            elif cell is not None:
                raise InvalidPositionError(f"a unit in {status} has no cell", f"{field}.cell")
            self.units[unit_id] = Unit(unit_id, unit_side(unit_id), kind, status, cell, wounds,
                                       downed)
        for name, want in (("keep", "keep"), ("dungeons", "prison")):
            raw = need(name, dict)
            lists: dict[str, list[str]] = {}
            for side in SIDES:
                ids = raw.get(side, [])
                if not isinstance(ids, list) or len(set(map(str, ids))) != len(ids):
                    raise InvalidPositionError("must be a list of distinct unit ids",
                                               f"{name}.{side}")
                for uid in ids:
                    unit = self.units.get(uid) if isinstance(uid, str) else None
                    if unit is None or unit.status != want:
                        raise InvalidPositionError(f"{uid!r} is not a unit in {want}",
                                                   f"{name}.{side}")
                    if (unit.side == side) != (name == "keep"):
                        raise InvalidPositionError(f"{uid} belongs to the wrong side",
                                                   f"{name}.{side}")
                lists[side] = list(ids)
            listed = {u for ids in lists.values() for u in ids}
            missing = [u.id for u in self.units.values() if u.status == want and u.id not in listed]
            if missing:
                raise InvalidPositionError(f"{missing} are in {want} but not listed", name)
            setattr(self, name, lists)
        self.turn = need("turn", int)
        if self.turn < 1:
            raise InvalidPositionError("must be 1 or more", "turn")
        self.to_move = need("to_move", str)
        if self.to_move not in SIDES:
            raise InvalidPositionError(f"bad side {self.to_move!r}", "to_move")
        self.stage = data.get("stage", "move")
        if self.stage not in STAGES:
            raise InvalidPositionError(f"bad stage {self.stage!r}", "stage")
        for name in ("moved", "frozen", "freed_by", "verdicts"):
            ids = data.get(name, [])
            if not isinstance(ids, list) or any(i not in self.units for i in ids):
                raise InvalidPositionError("must be a list of unit ids", name)
            setattr(self, name, list(ids))
        self.turn_done = data.get("turn_done", False)
        if type(self.turn_done) is not bool:
            raise InvalidPositionError("must be true or false", "turn_done")
        pending = data.get("pending", [])
        if not isinstance(pending, list):
            raise InvalidPositionError("must be a list of cells", "pending")
        for cell in pending + [data.get("combat_cell")]:
            if cell is not None:
                try:
                    parse_cell(cell)
                except ParseError as exc:
                    raise InvalidPositionError(str(exc), "pending") from None
        self.pending = list(pending)
        self.combat_cell = data.get("combat_cell")
        self.verdict_side = data.get("verdict_side")
        if self.verdict_side not in (None, *SIDES) or (self.verdicts and not self.verdict_side):
            raise InvalidPositionError(f"bad side {self.verdict_side!r}", "verdict_side")
        succession = data.get("succession")
        if succession is not None:
            if (not isinstance(succession, dict) or succession.get("side") not in SIDES
                    or succession.get("tier") not in (0, 1, 2)
                    or succession.get("warlord") not in self.units):
                raise InvalidPositionError("needs side, tier 0..2 and warlord", "succession")
            succession = dict(succession)
        self.succession = succession
        outcome = data.get("outcome")
        if outcome is not None:
            if not isinstance(outcome, dict) or outcome.get("winner") not in (None, *SIDES) \
                    or not isinstance(outcome.get("reason"), str):
                raise InvalidPositionError("needs winner and reason", "outcome")
            self.outcome_ = Outcome(outcome["winner"], outcome["reason"])
        else:
            self.outcome_ = None
        self._validate()

    def _validate(self) -> None:
        """Stacking, terrain and unit counts of a position."""
        board = self.board
        for side in SIDES:
            letter = SIDE_LETTER[side]
            if not any(u.id.startswith(letter) for u in self.units.values()):
                raise InvalidPositionError(f"{side} has no units", "units")
        by_cell: dict[tuple[str, str], list[Unit]] = {}
        for unit in self.units.values():
            if unit.status != "field":
                continue
            assert unit.cell is not None
            by_cell.setdefault((unit.cell, unit.side), []).append(unit)
            terrain = board.terrain(unit.cell)
            if unit.kind in ("K", "L") and terrain in ("forest", "rough"):
                raise InvalidPositionError(f"a {unit.kind} cannot stand on {terrain}",
                                           f"units.{unit.id}.cell")
        for (cell, side), units in by_cell.items():
            if len(units) > self._cap(cell):
                raise InvalidPositionError(
                    f"{len(units)} {side} units on {cell}; at most {self._cap(cell)}",
                    f"units.{units[-1].id}.cell")


# ---- self-play and resolvers ---------------------------------------------------------------
CombatResolver = Callable[[GameState], Action]


class DiceResolver:
    """A seeded dice roller for combat rounds (Options.combat='dice'): two d6 a round."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def __call__(self, state: GameState) -> Action:
        if not state.is_chance_node() or state.options.combat != "dice":
            raise RulesError("the dice resolver rolls only for a combat round in dice mode")
        return Roll(self.rng.randint(1, 6), self.rng.randint(1, 6))


class RandomReporter:
    """Stands in for the table in reported mode: picks a round's result at random."""

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def __call__(self, state: GameState) -> Action:
        return self.rng.choice(state.legal_actions())


def play_random_game(seed: int, options: Options | None = None, board: Board | None = None,
                     max_actions: int = 20_000) -> GameState:
    """Self-play with uniformly random players and a seeded combat resolver."""
    rng = random.Random(seed)
    state = GameState.new(board, options)
    resolver: CombatResolver = (DiceResolver(rng.randrange(2**32))
                                if state.options.combat == "dice"
                                else RandomReporter(rng.randrange(2**32)))
    for _ in range(max_actions):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.apply(resolver(state))
        else:
            state.apply(rng.choice(state.legal_actions()))
    return state
