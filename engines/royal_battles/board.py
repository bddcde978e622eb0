"""The 7 x 5 battle board: cells, neighbours and the four symmetrical positions around a card.

Files `a`–`g` run left to right as white sees them, ranks `1`–`5` from white's edge to black's.
Directions use a map's words: north is toward black (higher rank), east toward file g.
"""

from __future__ import annotations

from enum import StrEnum

from engines.errors import ParseError

FILES = "abcdefg"
RANKS = 5
WIDTH = len(FILES)
CELL_COUNT = WIDTH * RANKS

Cell = int  # 0..34, file + 7 * rank; use cell_name / parse_cell at the edges


def cell_name(cell: Cell) -> str:
    return f"{FILES[cell % WIDTH]}{cell // WIDTH + 1}"


def make_cell(file: int, rank: int) -> Cell:
    return file + WIDTH * rank


def parse_cell(text: str) -> Cell:
    """Read `a1` … `g5`; anything off the board raises ParseError."""
    if not isinstance(text, str) or len(text) != 2:
        raise ParseError(f"not a cell: {text!r} (expected a1 … g5)")
    f, r = text[0].lower(), text[1]
    if f not in FILES or r not in "12345":
        raise ParseError(f"cell {text!r} is off the 7 x 5 board (a1 … g5)")
    return make_cell(FILES.index(f), int(r) - 1)


ALL_CELLS: tuple[Cell, ...] = tuple(range(CELL_COUNT))
CELL_NAMES: tuple[str, ...] = tuple(cell_name(c) for c in ALL_CELLS)


def _neighbours(cell: Cell) -> tuple[Cell, ...]:
    f, r = cell % WIDTH, cell // WIDTH
    out = []
    for dr in (-1, 0, 1):
        for df in (-1, 0, 1):
            if (df or dr) and 0 <= f + df < WIDTH and 0 <= r + dr < RANKS:
                out.append(make_cell(f + df, r + dr))
    return tuple(out)


# The up to 8 cells "next to" a cell (fewer at the edges: nothing moves off the board).
NEIGHBOURS: tuple[tuple[Cell, ...], ...] = tuple(_neighbours(c) for c in ALL_CELLS)


def offset(a: Cell, b: Cell) -> tuple[int, int]:
    """(file step, rank step) from a to b."""
    return (b % WIDTH - a % WIDTH, b // WIDTH - a // WIDTH)


def is_melee(a: Cell, b: Cell) -> bool:
    """Orthogonal neighbours are in melee position."""
    df, dr = offset(a, b)
    return abs(df) + abs(dr) == 1


def is_ranged(a: Cell, b: Cell) -> bool:
    """Diagonal neighbours are in ranged position."""
    df, dr = offset(a, b)
    return abs(df) == 1 and abs(dr) == 1


class Orientation(StrEnum):
    PORTRAIT = "portrait"  # long edges (sides) face the neighbouring files
    LANDSCAPE = "landscape"  # turned 90 degrees: sides face the neighbouring ranks


class DigitCorners(StrEnum):
    """Which diagonal of the card carries the index, as white sees the table."""

    NW_SE = "nw-se"  # a portrait card's usual corners: white's upper-left and lower-right
    NE_SW = "ne-sw"  # a landscape card's usual corners (or a mirrored design)


def default_digit_corners(orientation: Orientation) -> DigitCorners:
    return DigitCorners.NW_SE if orientation is Orientation.PORTRAIT else DigitCorners.NE_SW


class Symmetry(StrEnum):
    """The four symmetrical positions around a standing card; each initiative suit keys one."""

    SIDE_TO_SIDE = "side-to-side"  # spades
    HEAD_TO_HEAD = "head-to-head"  # hearts
    DIGIT_DIAGONAL = "digit-diagonal"  # diamonds
    CLEAR_DIAGONAL = "clear-diagonal"  # clubs


KEY_BY_SUIT = {
    "S": Symmetry.SIDE_TO_SIDE,
    "H": Symmetry.HEAD_TO_HEAD,
    "D": Symmetry.DIGIT_DIAGONAL,
    "C": Symmetry.CLEAR_DIAGONAL,
}


def symmetry(
    card_cell: Cell, other: Cell, orientation: Orientation, corners: DigitCorners
) -> Symmetry:
    """Which symmetrical position of the card on `card_cell` the neighbour `other` is in."""
    df, dr = offset(card_cell, other)
    if dr == 0:
        portrait_side = True
    elif df == 0:
        portrait_side = False
    else:
        on_nw_se = (df, dr) in ((-1, 1), (1, -1))
        digit = on_nw_se == (corners is DigitCorners.NW_SE)
        return Symmetry.DIGIT_DIAGONAL if digit else Symmetry.CLEAR_DIAGONAL
    if orientation is Orientation.LANDSCAPE:
        portrait_side = not portrait_side
    return Symmetry.SIDE_TO_SIDE if portrait_side else Symmetry.HEAD_TO_HEAD
