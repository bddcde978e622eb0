"""The War Lord Tourney board: a grid as data, with chess-like cell names.

The rulebook gives no board, so a board is plain data: its size, each side's Castle and Castle
Green, forest and rough-terrain cells, and the starting cell of every unit. `DEFAULT_BOARD` is the
documented assumption (see README.md). Files `a`.. run left to right as white sees the board,
ranks `1`.. run from white's edge, so `a1` is white's left-most home cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from engines.errors import InvalidPositionError, ParseError

SIDES: tuple[str, str] = ("white", "black")
SIDE_LETTER = {"white": "w", "black": "b"}
LETTER_SIDE = {"w": "white", "b": "black"}

# unit kinds: letter -> name. Sergeant exists only with Options.sergeants.
KINDS: dict[str, str] = {
    "W": "Warlord",
    "L": "Lady",
    "K": "Knight",
    "F": "Footman",
    "S": "Sergeant",
}
# the chess piece that stands for each kind on a real table (see README.md)
CHESS_PIECE: dict[str, str] = {
    "W": "king",
    "L": "queen",
    "K": "knight",
    "F": "pawn",
    "S": "bishop",
}

_CELL_RE = re.compile(r"^([a-z])([1-9][0-9]?)$")
UNIT_ID_RE = re.compile(r"^([wb])([WLKFS])([1-9][0-9]?)?$")

MAX_FILES = 26
MAX_RANKS = 99


def other(side: str) -> str:
    return "black" if side == "white" else "white"


def parse_cell(text: str) -> tuple[int, int]:
    """'c5' -> (2, 4) (zero-based file, rank). Raises ParseError."""
    match = _CELL_RE.match(text.strip()) if isinstance(text, str) else None
    if not match:
        raise ParseError(f"bad cell {text!r}: expected a file letter and a rank, like 'c5'")
    return ord(match.group(1)) - ord("a"), int(match.group(2)) - 1


def cell_name(file: int, rank: int) -> str:
    return f"{chr(ord('a') + file)}{rank + 1}"


def unit_kind(unit_id: str) -> str:
    """The starting kind of a unit from its id ('wK' -> 'K')."""
    match = UNIT_ID_RE.match(unit_id)
    if not match:
        raise ParseError(f"bad unit id {unit_id!r}: expected like 'wK', 'bF2'")
    return match.group(2)


def unit_side(unit_id: str) -> str:
    match = UNIT_ID_RE.match(unit_id)
    if not match:
        raise ParseError(f"bad unit id {unit_id!r}: expected like 'wK', 'bF2'")
    return LETTER_SIDE[match.group(1)]


@dataclass(frozen=True)
class Board:
    """A board as data. `setup` lists (unit id, starting cell); the id names side and kind."""

    files: int
    ranks: int
    castles: tuple[tuple[str, str], ...]  # (side, cell)
    greens: tuple[tuple[str, str], ...]  # (side, cell)
    forests: frozenset[str]
    rough: frozenset[str]
    setup: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        self.validate()

    # ---- geometry -------------------------------------------------------------------------
    def on_board(self, file: int, rank: int) -> bool:
        return 0 <= file < self.files and 0 <= rank < self.ranks

    def castle(self, side: str) -> str:
        return dict(self.castles)[side]

    def green(self, side: str) -> str:
        return dict(self.greens)[side]

    @cached_property
    def _castle_at(self) -> dict[str, str]:
        return {cell: side for side, cell in self.castles}

    @cached_property
    def _green_at(self) -> dict[str, str]:
        return {cell: side for side, cell in self.greens}

    @cached_property
    def _terrain(self) -> dict[str, str]:
        def kind(cell: str) -> str:
            if cell in self._castle_at:
                return "castle"
            if cell in self._green_at:
                return "green"
            if cell in self.forests:
                return "forest"
            return "rough" if cell in self.rough else "open"

        return {cell: kind(cell) for cell in self.cells()}

    def castle_side(self, cell: str) -> str | None:
        return self._castle_at.get(cell)

    def green_side(self, cell: str) -> str | None:
        return self._green_at.get(cell)

    def cells(self) -> list[str]:
        return [cell_name(f, r) for r in range(self.ranks) for f in range(self.files)]

    def terrain(self, cell: str) -> str:
        """'castle', 'green', 'forest', 'rough' or 'open'."""
        return self._terrain[cell]

    # ---- validation and JSON ---------------------------------------------------------------
    def _check_cell(self, cell: Any, field: str) -> None:
        try:
            f, r = parse_cell(cell)
        except ParseError as exc:
            raise InvalidPositionError(str(exc), field) from None
        if not self.on_board(f, r):
            raise InvalidPositionError(f"cell {cell!r} is off the {self.files}x{self.ranks} board",
                                       field)

    def validate(self) -> None:
        if not (isinstance(self.files, int) and 3 <= self.files <= MAX_FILES):
            raise InvalidPositionError(f"files must be 3..{MAX_FILES}, got {self.files!r}",
                                       "board.files")
        if not (isinstance(self.ranks, int) and 3 <= self.ranks <= MAX_RANKS):
            raise InvalidPositionError(f"ranks must be 3..{MAX_RANKS}, got {self.ranks!r}",
                                       "board.ranks")
        for name in ("castles", "greens"):
            pairs = getattr(self, name)
            if sorted(s for s, _ in pairs) != sorted(SIDES):
                raise InvalidPositionError("need exactly one cell for white and one for black",
                                           f"board.{name}")
            for side, cell in pairs:
                self._check_cell(cell, f"board.{name}.{side}")
        special = [c for _, c in self.castles] + [c for _, c in self.greens]
        if len(set(special)) != 4:
            raise InvalidPositionError("castles and greens must be four different cells",
                                       "board.castles")
        for side in SIDES:
            cf, cr = parse_cell(self.castle(side))
            gf, gr = parse_cell(self.green(side))
            if abs(cf - gf) + abs(cr - gr) != 1:
                raise InvalidPositionError(
                    f"{side} green {self.green(side)} must be orthogonally next to its castle "
                    f"{self.castle(side)}", f"board.greens.{side}")
        for name in ("forests", "rough"):
            for cell in sorted(getattr(self, name)):
                self._check_cell(cell, f"board.{name}")
                if cell in special:
                    raise InvalidPositionError(f"{cell} is a castle or green", f"board.{name}")
        if self.forests & self.rough:
            raise InvalidPositionError(
                f"{sorted(self.forests & self.rough)} both forest and rough", "board.rough")
        seen: set[str] = set()
        for unit_id, cell in self.setup:
            field = f"board.setup.{unit_id}"
            if not isinstance(unit_id, str) or not UNIT_ID_RE.match(unit_id):
                raise InvalidPositionError(f"bad unit id {unit_id!r}", "board.setup")
            if unit_id in seen:
                raise InvalidPositionError("unit listed twice", field)
            seen.add(unit_id)
            self._check_cell(cell, field)
        for side in SIDES:
            letter = SIDE_LETTER[side]
            kinds = [unit_kind(u) for u, _ in self.setup if u[0] == letter]
            if kinds.count("W") != 1 or kinds.count("L") != 1:
                raise InvalidPositionError(f"{side} needs exactly one Warlord and one Lady",
                                           "board.setup")

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "ranks": self.ranks,
            "castles": dict(self.castles),
            "greens": dict(self.greens),
            "forests": sorted(self.forests),
            "rough": sorted(self.rough),
            "setup": dict(self.setup),
        }

    @classmethod
    def from_json(cls, data: Any) -> Board:
        if not isinstance(data, dict):
            raise InvalidPositionError("must be an object", "board")
        missing = [k for k in ("files", "ranks", "castles", "greens") if k not in data]
        if missing:
            raise InvalidPositionError(f"missing {missing}", "board")
        for key in ("castles", "greens", "setup"):
            if key in data and not isinstance(data[key], dict):
                raise InvalidPositionError("must be an object", f"board.{key}")
        for key in ("forests", "rough"):
            if key in data and not isinstance(data[key], list):
                raise InvalidPositionError("must be a list of cells", f"board.{key}")
        setup = data.get("setup", DEFAULT_BOARD.to_json()["setup"])
        if not isinstance(setup, dict):
            raise InvalidPositionError("must be an object", "board.setup")
        return cls(
            files=data["files"],
            ranks=data["ranks"],
            castles=tuple(sorted(data["castles"].items())),
            greens=tuple(sorted(data["greens"].items())),
            forests=frozenset(data.get("forests", [])),
            rough=frozenset(data.get("rough", [])),
            setup=tuple(setup.items()),
        )

    def render(self, occupants: dict[str, str] | None = None) -> str:
        """ASCII picture, rank 9 on top: C castle, G green, # forest, ~ rough, . open."""
        occupants = occupants or {}
        mark = {"castle": "C", "green": "G", "forest": "#", "rough": "~", "open": "."}
        lines = []
        for r in range(self.ranks - 1, -1, -1):
            row = []
            for f in range(self.files):
                cell = cell_name(f, r)
                row.append(f"{occupants.get(cell, mark[self.terrain(cell)]):>5}")
            lines.append(f"{r + 1:>2} " + "".join(row))
        lines.append("   " + "".join(f"{chr(ord('a') + f):>5}" for f in range(self.files)))
        return "\n".join(lines)


DEFAULT_BOARD = Board(
    files=9,
    ranks=9,
    castles=(("black", "e9"), ("white", "e1")),
    greens=(("black", "e8"), ("white", "e2")),
    forests=frozenset({"c4", "g4", "c6", "g6"}),
    rough=frozenset({"a5", "e5", "i5"}),
    setup=(
        ("wW", "d1"), ("wL", "f1"), ("wK", "c1"), ("wF", "e3"),
        ("bW", "d9"), ("bL", "f9"), ("bK", "c9"), ("bF", "e7"),
    ),
)

# extra units the Sergeants option adds to the default board
DEFAULT_SERGEANTS: tuple[tuple[str, str], ...] = (("wS", "g1"), ("bS", "g9"))
