"""Set-up, part of `GameTracker` (tracker.py): which unit each side places on which of its
set-up cards, decided together once the armies are known, and the placement question that
watches the kinds while they are still in doubt.
"""

from __future__ import annotations

import math

from engines.royal_battles import CELL_NAMES, GameState, Phase, Side
from engines.royal_battles.board import parse_cell

from .detections import TableReading
from .observations import ACCEPT, NO_READING, UNKNOWN_KIND, normalised, surely_empty
from .open_questions import PlacementQuestion
from .piece_height import stature_log_odds


def _assignment_scores(cells: list[str], table: dict[str, dict[str, float]],
                       options: list[tuple[str, ...]],
                       heights: dict[str, float | None] | None = None) -> list[float]:
    """Log likelihood of each way of giving `cells` the kinds of an option, from the kind
    probabilities read per cell (a kind never read is not impossible: floor 1e-3) and the
    units' heights (a king stands taller than its queen)."""
    return [sum(math.log(max(table[c].get(k, 0.0), 1e-3)) for c, k in
                zip(cells, kinds, strict=True))
            + (stature_log_odds(dict(zip(cells, kinds, strict=True)), heights) if heights
               else 0.0) for kinds in options]


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


class ArmyPlacement:
    """Mixed into `GameTracker`; works on the state its `__init__` sets up."""

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
                # each in its turn as its pixels changed (v9-s383: black's pawn on c5, read
                # bare throughout, went out last though set down before its rook and king;
                # the four placements after it were logged out of order)
                never = float("inf")
                unseen = sorted((c for c in self._free_setup_cells(side) if c not in cells),
                                key=lambda c: self._placing_changed.get(c, never))
                cells = sorted(cells + unseen[:len(need) - len(cells)],
                               key=lambda c: self._first_seen.get(
                                   c, self._placing_changed.get(c, never)))
                seen = {**seen, **{f"{c}.unit": f"{side.value}-{UNKNOWN_KIND}" for c in unseen}}
                self._misread_empty.update(unseen)
            cells = cells[:len(need)]
            table = tables[side] = self._kinds_read(cells, seen)
            heights = self._heights_read(cells)
            options = sorted(set(itertools.permutations(need)))
            scores = _assignment_scores(cells, table, options, heights)
            probs = normalised(scores)
            best = int(max(range(len(options)), key=lambda i: scores[i]))
            p = probs[best]
            plans[side] = dict(zip(cells, options[best], strict=True))
            if p < ACCEPT:  # the likeliest stands in; the units' later views settle it
                keep = [o for o, q in zip(options, probs, strict=True) if q > 1e-3]
                opened[side] = PlacementQuestion(side, cells, keep, [], [], snap,
                                                  chosen=options[best], heights=heights)
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

    def _set_down_unread(self, reading: TableReading, values: dict, places: dict[str, str]
                         ) -> None:
        """While units are placed: note the first settled frame each free set-up card's
        pixels changed, and take a unit the classifier could not say was there or not on a
        card whose pixels changed so for the placing side's unit, its kind for the army to
        decide (v7-s307: white's paper queen on g1, read neither bare nor occupied from the
        frame it was set down, was placed only when the initiative cards lay; white's next two
        units and black's between them went out of order)."""
        for name in reading.changed & places.keys():
            self._placing_changed.setdefault(name, reading.frame_index)
        for name, side in places.items():
            cell = reading.cells.get(name)
            piece = cell.piece if cell is not None and cell.empty is False else None
            if name in self._placing_changed and values.get(f"{name}.unit") is NO_READING \
                    and piece is not None and piece.piece is None and piece.occupied is None:
                values[f"{name}.unit"] = f"{side}-{UNKNOWN_KIND}"

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
        units appeared. A unit believed on its card since before the set-up cards were all
        down is no unit placed (a court's picture read as one) until its read changes
        (`_first_seen`): v9-s383's JH on g1, read as a white knight from the moment it was
        laid, put the queen later placed there before the bishop placed first on c1, and the
        placements went out of order."""
        return sorted((c for c in self._free_setup_cells(side)
                       if str(seen[f"{c}.unit"]).startswith(side.value)
                       and c in self._first_seen),
                      key=lambda c: (self._first_seen[c], c))

    def _kinds_read(self, cells: list[str], seen: dict) -> dict[str, dict[str, float]]:
        """Per cell, the classifier's kind probabilities (a reading naming its kind outright
        counts as that kind)."""
        table = {c: dict(getattr(self._piece_reads.get(c), "kinds", []) or []) for c in cells}
        for c in cells:
            read = str(seen[f"{c}.unit"]).split("-")[-1]
            if not table[c] and read not in (UNKNOWN_KIND, "None"):
                table[c] = {read: 1.0}
        return table

    def _heights_read(self, cells: list[str]) -> dict[str, float | None]:
        """Per cell, the unit's height as last measured over its bare set-up card."""
        return {c: getattr(self._piece_reads.get(c), "height_cm", None) for c in cells}

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
        first = self._first_seen[cells[0]]
        if any(self._placing_changed.get(c, first) < first
               and not surely_empty(self._piece_reads.get(c))
               for c in self._free_setup_cells(side) if c not in cells):
            return False  # a unit read bare may have been set down before it (v9-s383)
        table = self._kinds_read(cells, seen)
        options = sorted(set(itertools.permutations(need, len(cells))))
        scores = _assignment_scores(cells, table, options, self._heights_read(cells))
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
        if read == UNKNOWN_KIND:  # a unit the classifier barely sees: a bare read is no news
            self._misread_empty.add(cell)
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
                               self._before_placing, chosen=chosen, watched=old is None,
                               heights=self._heights_read(origins))
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

    def placed_units(self) -> dict[str, str]:
        """Cell -> "white-knight" for each unit standing on the table, leaving out a unit
        whose kind is in doubt: what the piece classifier may learn the players' own set from
        (a wrong kind would teach it the wrong look, and then read every later view of that
        set wrong: on s64, with a piece model fine-tuned in session 19, black's c5 was placed
        a king, sure, before a5 stood; a5 read a king too and the army made it the queen; the
        classifier learnt the swap and the game lost 24 moves). Where a side's placement is
        still an open question, or is watched but no longer backed by its units' views, only
        the units the question doubts are left out (two read as each other's kind leave the
        army's others sure: v8-s349's black queen and king), units that have moved on
        known by the cells they were placed on; the whole side where one of its units stands
        that the question does not cover."""
        left_out: set[int] = set()
        for q in self.questions:
            if not isinstance(q, PlacementQuestion) or (q.watched and q.backed()):
                continue
            cells = {cell for cell, u in self.state.units.items() if u.side is q.side}
            # a unit that has moved on is known by the cell it was placed on
            if not {self._origin.get(CELL_NAMES[c], CELL_NAMES[c]) for c in cells} \
                    <= set(q.origins):
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
