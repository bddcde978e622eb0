"""The map of Joda: whatever the players laid. Territories and their adjacencies.

A map is entered either as hex positions (axial coordinates, adjacency derived) or as an explicit
list of adjacent pairs. Every Territory of the card set must be laid exactly once, the map must be
connected (each tile was laid touching another) and a hexagon has at most six neighbours.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from engines.errors import InvalidPositionError

from .cards import CardSet

HEX_DIRECTIONS = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))


@dataclass(frozen=True)
class Board:
    territories: tuple[str, ...]  # in the order they were laid
    adjacent: frozenset[frozenset[str]]
    hexes: tuple[tuple[str, int, int], ...] = ()  # optional axial positions, for drawing

    @cached_property
    def _neighbours(self) -> dict[str, tuple[str, ...]]:
        return {t: tuple(sorted(next(iter(e - {t})) for e in self.adjacent if t in e))
                for t in self.territories}

    @cached_property
    def _distances(self) -> dict[str, dict[str, int]]:
        out = {}
        for start in self.territories:
            dist = {start: 0}
            queue = deque([start])
            while queue:
                here = queue.popleft()
                for nxt in self._neighbours.get(here, ()):
                    if nxt not in dist:
                        dist[nxt] = dist[here] + 1
                        queue.append(nxt)
            out[start] = dist
        return out

    def neighbours(self, territory: str) -> list[str]:
        return list(self._neighbours.get(territory, ()))

    def distances(self, start: str) -> dict[str, int]:
        """Moves needed to reach each Territory from `start` (unreachable ones are absent)."""
        return dict(self._distances[start])

    def within(self, start: str, steps: int) -> list[str]:
        """Territories reachable in 1..steps moves (the start excluded), in laying order."""
        dist = self._distances[start]
        return [t for t in self.territories if 0 < dist.get(t, steps + 1) <= steps]

    def to_dict(self) -> dict[str, Any]:
        if self.hexes:
            return {"hexes": {t: [q, r] for t, q, r in self.hexes}}
        return {"territories": list(self.territories),
                "adjacent": sorted(sorted(e) for e in self.adjacent)}


def board_from_dict(data: Any, cards: CardSet, field: str = "map") -> Board:
    if not isinstance(data, dict):
        raise InvalidPositionError("a map must be an object with 'hexes' or 'adjacent'", field)
    hexes: tuple[tuple[str, int, int], ...] = ()
    if "hexes" in data:
        raw = data["hexes"]
        if not isinstance(raw, dict) or not raw:
            raise InvalidPositionError("must map territory id -> [q, r]", f"{field}.hexes")
        cells: dict[tuple[int, int], str] = {}
        for tid, pos in raw.items():
            if (not isinstance(pos, list) or len(pos) != 2
                    or not all(isinstance(v, int) and not isinstance(v, bool) for v in pos)):
                raise InvalidPositionError(f"must be [q, r] integers, got {pos!r}",
                                           f"{field}.hexes.{tid}")
            if tuple(pos) in cells:
                raise InvalidPositionError(f"{tid!r} and {cells[tuple(pos)]!r} share a hex",
                                           f"{field}.hexes.{tid}")
            cells[(pos[0], pos[1])] = tid
        order = list(raw)
        edges = set()
        for (q, r), tid in cells.items():
            for dq, dr in HEX_DIRECTIONS:
                other = cells.get((q + dq, r + dr))
                if other is not None:
                    edges.add(frozenset((tid, other)))
        hexes = tuple((tid, raw[tid][0], raw[tid][1]) for tid in order)
    elif "adjacent" in data:
        order = data.get("territories")
        pairs = data["adjacent"]
        if not isinstance(pairs, list):
            raise InvalidPositionError("must be a list of [a, b] pairs", f"{field}.adjacent")
        edges = set()
        seen: list[str] = []
        for i, pair in enumerate(pairs):
            if (not isinstance(pair, list) or len(pair) != 2
                    or not all(isinstance(t, str) for t in pair) or pair[0] == pair[1]):
                raise InvalidPositionError(f"must be two different territory ids, got {pair!r}",
                                           f"{field}.adjacent[{i}]")
            edges.add(frozenset(pair))
            seen += [t for t in pair if t not in seen]
        if order is None:
            order = seen
        if not isinstance(order, list) or not all(isinstance(t, str) for t in order):
            raise InvalidPositionError("must be a list of territory ids", f"{field}.territories")
    else:
        raise InvalidPositionError("needs 'hexes' or 'adjacent'", field)

    if len(set(order)) != len(order):
        raise InvalidPositionError("a territory is laid twice", f"{field}.territories")
    for tid in order:
        if tid not in cards.territories:
            raise InvalidPositionError(f"unknown territory {tid!r}", f"{field}.territories")
    for edge in edges:
        for tid in edge:
            if tid not in order:
                raise InvalidPositionError(f"unknown or unlaid territory {tid!r}",
                                           f"{field}.adjacent")
    missing = sorted(set(cards.territories) - set(order))
    if missing:
        raise InvalidPositionError(f"every territory must be laid; missing {missing}",
                                   f"{field}.territories")
    board = Board(tuple(order), frozenset(edges), hexes)
    for tid in order:
        if len(board.neighbours(tid)) > 6:
            raise InvalidPositionError(f"{tid!r} has more than six neighbours",
                                       f"{field}.adjacent")
    if len(board.distances(order[0])) != len(order):
        unreached = sorted(set(order) - set(board.distances(order[0])))
        raise InvalidPositionError(f"the map is not connected; cut off: {unreached}",
                                   f"{field}.adjacent")
    return board


def random_board(cards: CardSet, rng: random.Random) -> Board:
    """Lay the territories as the players would: Joda City first, then each new hex touching
    at least one laid hex."""
    order = [cards.capital] + sorted(t for t in cards.territories if t != cards.capital)
    rest = order[1:]
    rng.shuffle(rest)
    cells: dict[tuple[int, int], str] = {(0, 0): order[0]}
    for tid in rest:
        free = sorted({(q + dq, r + dr) for (q, r) in cells for dq, dr in HEX_DIRECTIONS}
                      - set(cells))
        cells[rng.choice(free)] = tid
    return board_from_dict({"hexes": {t: [q, r] for (q, r), t in cells.items()}}, cards)


def sample_board(cards: CardSet) -> Board:
    """A fixed layout for the sample card set (a compact blob around Joda City)."""
    return random_board(cards, random.Random(0))
