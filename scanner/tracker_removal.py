"""Units taken off, part of `GameTracker` (tracker.py): a unit gone from a cell whose card did
not change; where in the log its removal goes, whether an attack explains it, and a unit only
lifted and put back.
"""

from __future__ import annotations

from engines.royal_battles import CELL_NAMES, GameState, Phase, Side, parse_action
from engines.royal_battles.board import NEIGHBOURS, is_melee, parse_cell
from engines.royal_battles.units import UNIT_KINDS

from .observations import LEAN, UNREAD, may_be_same
from .open_questions import CardQuestion, PlacementQuestion, Snapshot
from .table_events import FILLER_VERBS, TableEvent, known_confusion, lays_on, unseen_step
from .tracker_settings import GONE_UNSURE, MOVED_ON_FRAMES, TOGETHER


def _reaches(kind: str, attacker: int, target: int) -> bool:
    """Can a unit of `kind` on cell `attacker` take off the unit on `target`? Melee units
    attack orthogonal neighbours, ranged ones diagonal neighbours, a pawn both (Extended
    Reach), and a queen's Mystic Blast reaches every enemy on a card of its target's colour."""
    return kind == "queen" or target in NEIGHBOURS[attacker] and (
        UNIT_KINDS[kind].ranged != is_melee(attacker, target) or kind == "pawn")


class UnitRemoval:
    """Mixed into `GameTracker`; works on the state its `__init__` sets up."""

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
            if f"{cell}.card" in diff and diff[f"{cell}.card"][1] != UNREAD \
                    and not self._bare_misread_under(cell, *diff[f"{cell}.card"]):
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
            if self._laid_in_place_unseen(cell, frame):
                return True  # that move first; the removal is looked at again after it
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

    def _bare_misread_under(self, cell: str, engine: object, read: object) -> bool:
        """Is the card now read bare where a unit stood one the reader is known to take for
        the engine's card there (its twin; a jack and the joker), and was that card laid by a
        move (so read with a unit on it)? Then the look is that card seen better with the unit
        gone, not a card laid: a removal is not held back by it (v5-s239: white's JS on g4,
        read JK under its king, read JS once the king was taken off, held the removal 116
        frames, until after five later events)."""
        if not isinstance(engine, str) or not isinstance(read, str) \
                or not known_confusion(read, engine):  # (never a card with itself)
            return False
        entry = self._last_laid_on(cell)
        return entry is not None and self.journal[entry].split()[1] == "move"

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
        if not self._nothing_since(event, before, cell):
            return False  # the game went on since: the unit back is another story
        self._undo_removal(event, before)
        return True

    def _removal_undone(self, diff: dict, seen: dict, frame: int) -> bool:
        """The last removal with no attack entered undone: its unit lifted back, or moved on
        (`_lifted_back`, `_taken_off_moved_on`). True where it was."""
        return self._taken_off is not None and (
            self._lifted_back(diff) or self._taken_off_moved_on(diff, seen, frame))

    def _nothing_since(self, event: TableEvent, before: Snapshot, cell: str) -> bool:
        """Has the game done nothing since the removal `event` (taken off `cell`, the engine
        `before` it) but what the camera can't see?"""
        since = self.journal[before.entry:]
        return since[:1] == [f"correct remove {cell}"] and any(e is event for e in self.events) \
            and all(a.split()[1] in FILLER_VERBS + ("draw",) for a in since[1:])

    def _undo_removal(self, event: TableEvent, before: Snapshot) -> None:
        self._back_to(before)
        self.events = [e for e in self.events if e is not event]
        self._removals = [r for r in self._removals if r[0] is not event]

    def _taken_off_moved_on(self, diff: dict, seen: dict, frame: int) -> bool:
        """A unit taken off with no attack entered for it, its side the next to move, and a
        new card next door, seen within MOVED_ON_FRAMES of the unit gone, that has lain
        MOVED_ON_FRAMES frames with no unit read on it (or one of that side), nothing else
        having happened since: the unit moved there, seen gone before its card was seen and
        its piece not read (a flat token). The removal is undone, the enemy's turn closed,
        and the card is taken as the unit's move (v9-s379: a black paper king moved g4-f4,
        seen gone six frames before the 2S it went onto and never read there, was taken off
        and the card waited for its unit to the game's end: 51 -> 59 of 76 moves). True
        where it was undone."""
        if self._taken_off is None:
            return False
        event, before, cell, side = self._taken_off
        # (where the removal ended the game, whose turn it was before it says)
        if not self._moves_next(side, before.state if self.state.is_terminal() else None):
            return False
        gone = self._gone_since.get(cell)
        if gone is None or (cell, gone) in self._moved_on:
            return False  # undone once, and taken off again: the rules' word stands
        if not any(self._moved_onto(n, cell, side, gone, diff, seen, frame)
                   for n in (CELL_NAMES[c] for c in NEIGHBOURS[parse_cell(cell)])):
            return False
        if not self._nothing_since(event, before, cell):
            return False
        self._taken_off = None
        self._moved_on.add((cell, gone))
        self._undo_removal(event, before)
        # the enemy's turn closed with what can't be seen, so the move is the side's own
        while self.state.to_move.value != side and not self.state.is_chance_node() \
                and self._finish_turn():
            pass
        return True

    def _moved_onto(self, n: str, cell: str, side: str, gone: int, diff: dict, seen: dict,
                    frame: int) -> bool:
        """Is `n` a new card the unit gone from `cell` at frame `gone` went onto: seen within
        MOVED_ON_FRAMES of it, lying MOVED_ON_FRAMES frames since with no unit read on it (or
        one of `side`), and no other unit of `side` gone next to it (a card is laid before its
        unit moves onto it: such a unit made that move)?"""
        key = f"{n}.card"
        laid = self._card_since.get(key)
        unit = seen.get(f"{n}.unit")
        if key not in diff or diff[key][1] is None or laid is None \
                or not (unit is None or str(unit).startswith(side)) \
                or parse_cell(n) in self.state.units \
                or abs(laid - gone) > MOVED_ON_FRAMES or frame - laid < MOVED_ON_FRAMES:
            return False
        return not any(c != parse_cell(cell) and (u := self.state.units.get(c)) is not None
                       and u.side.value == side
                       and not str(seen.get(f"{CELL_NAMES[c]}.unit")).startswith(side)
                       for c in NEIGHBOURS[parse_cell(n)])

    def _moves_next(self, side: str, state: GameState | None = None) -> bool:
        """Is `side` to move in `state` (the engine's now), or next once the enemy's turn in
        its attack is closed with what can't be seen (no draw of a new round's initiative
        between)?"""
        state = state if state is not None else self.state
        if state.to_move.value == side:
            return True
        if state.phase not in (Phase.ATTACK, Phase.POST_TURN):
            return False
        state = state.copy()
        for _ in range(4):
            if state.is_chance_node():
                return False
            if state.to_move.value == side:
                return True
            step = unseen_step(state, False)
            if step is None:
                return False
            state.apply(parse_action(step))
        return False

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
        dest = where = lays_on(self.events[k].text)
        for e in self.events[k + 1:at]:  # that unit may have moved on since: follow it
            if move_of(e, enemy) and e.text.split()[2].split("-")[0] == where:
                where = lays_on(e.text)
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

    def _laid_in_place_unseen(self, cell: str, frame: int) -> bool:
        """The unit on `cell` is gone while its enemy is still to move (or next, the turn in
        progress closed): only the enemy's attack takes a unit off, and only its unit that
        moved attacks. Where exactly one enemy unit that reaches `cell` stands on a card whose
        place changed since the last event, its card read as the one it covered, that unit
        moved in place, laying a card the readers took for the covered one: the card is taken
        as unread, its last read the evidence (xv-s103: a berlin KD laid over the joker under
        black's king read JK 55 %, KD 19 %; the white bishop it took off was logged before
        black's move, found a hundred frames later, and the next two moves went out of order).
        True where one was."""
        side = self.state.units[parse_cell(cell)].side.other  # the enemy, who attacks
        if not (self._yet_to_move and self.state.to_move is side
                or self.state.to_move is not side and self._moves_next(side.value)):
            return False
        last = self._last_event_frame()
        found = []
        for at, unit in self.state.units.items():
            key = f"{CELL_NAMES[at]}.card"
            read = self._last_read.get(key)
            if unit.side is side and self._changed_at.get(key, -1) > last \
                    and _reaches(unit.kind, at, parse_cell(cell)) and read is not None \
                    and not read.card and read.candidates \
                    and self.beliefs[key].value not in (None, UNREAD):
                found.append((key, read))
        if len(found) != 1:
            return False
        self._laid_now_unread(*found[0], frame)
        return True

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
