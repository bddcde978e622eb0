"""What the table shows of a move, part of `GameTracker` (tracker.py): the cards laid this
settled change, the units that arrived on them or left, and the misreads a move's cells are
known to suffer (a unit's colour, a unit standing on its own card, a move read empty).
"""

from __future__ import annotations

from engines.errors import RulesError
from engines.royal_battles import CELL_NAMES, Phase
from engines.royal_battles.board import NEIGHBOURS, parse_cell
from engines.royal_battles.cards import CARDS

from .observations import (
    ACCEPT,
    CODES,
    FIRM,
    SWITCH,
    UNREAD,
    CardEvidence,
    surely_empty,
    visible_table,
)
from .open_questions import CardQuestion
from .table_events import TableEvent, assume_unseen_draw


class MoveReading:
    """Mixed into `GameTracker`; works on the state its `__init__` sets up."""

    def _colour_misread(self, laid: list[str], seen: dict) -> dict[str, str]:
        """Cells where a card was laid under a unit read, not firmly, as one side's, which is
        the other side's unit with its colour misread (the side it is): the unit the engine
        has there, where it has one (a unit never changes colour, and none moves onto another;
        s51: a held-out black knight covering its own card read as white), or else the side to
        move, where it has not moved yet and one of its units next door is seen gone and none
        of the other side's. A player who can move must, so a turn passed is the rarer reading
        (s51: a black knight moved b5-b4 read as a white knight at 53 %; black's turn was taken
        as passed and white's rook, still on a4, as the mover)."""
        state = self.state
        side = state.to_move
        waiting = self._yet_to_move
        out: dict[str, str] = {}
        for to in laid:
            read_as = str(seen[f"{to}.unit"]).split("-")[0]
            read = self._piece_reads.get(to)
            if read is None or read.confidence >= FIRM:
                continue
            here = state.units.get(parse_cell(to))
            if here is not None:
                if here.side.value != read_as:
                    out[to] = here.side.value
                continue
            if not waiting or read_as == side.value:
                continue
            gone = {u.side for c, u in state.units.items() if c in NEIGHBOURS[parse_cell(to)]
                    and seen[f"{CELL_NAMES[c]}.unit"] is None}
            if gone == {side}:
                out[to] = side.value
        return out

    def _left_with_the_move(self, sources: list[str], frame: int
                            ) -> tuple[list[str], list[str]]:
        """Two units of the side next door are both gone (one moved, one was taken off) and
        their kinds can't tell them apart: the one whose cell was already seen empty when the
        last move before this frame was read had left before this move began, so it is the one
        taken off. Returns the sources left, and those ruled out (s42: two black rooks, one
        removed at d4 a hundred frames before the other moved to e4, held the game to its end)."""
        last_move = self._last_move_frame(before=frame)
        if last_move is None:
            return sources, []
        before = [c for c in sources if self._gone_since.get(c, frame) <= last_move]
        after = [c for c in sources if c not in before]
        return (after, before) if len(after) == 1 else (sources, [])

    def _before_own_last_move(self, key: str, unit: str) -> bool:
        """Was the card at `key` seen as it is now already when the side of the `unit` on it
        last moved, that move taking another card? Then it is no movement card of that side's
        next turn: one card a turn, and that turn's was another (val-s47: a hand moving a
        pawn beside the queen on g2 spoilt the joker's look there, read JC at 60 %; once the
        next round's initiative cards lay that look was taken for white's new move, a round
        before its real one)."""
        since = self._card_since.get(key)
        if since is None:
            return False
        last = self._last_move_frame(side=unit.split("-")[0])
        return last is not None and since <= last

    def _seen_before_its_turn(self, diff: dict, seen: dict) -> bool:
        """A card read surely where an open question asks which card a side's move laid, the
        unit that laid it still on it, and read so before that side's next initiative card
        lay: no move of that side could lay it since, so it is the question's card seen
        better, and settles it (v3-s173: an orell 8H under a black token read JK 44 %, JH 35 %,
        KH 14 % for 25 frames, went on with as JK; read 8H at 99 % as the next round's
        initiative cards came, it was taken for a second card black laid there, and black's
        next move came a turn late). A set-up card's question is no move's (v4-s199: white's
        set-up 4S, asked to the end under its unit, took the 2D white later laid on it in
        place for itself seen better, and the move was lost). True where a question was
        settled."""
        for key, (_old, new) in diff.items():
            if not key.endswith(".card") or new in (None, UNREAD):
                continue
            cell = key[:-5]
            unit = self.state.units.get(parse_cell(cell))
            if unit is None or not str(seen.get(f"{cell}.unit")).startswith(unit.side.value):
                continue
            side = unit.side.value
            q = next((q for q in self.questions if isinstance(q, CardQuestion) and q.key == key
                      and q.entry == self._last_laid_on(cell) and q.event.kind == "move"
                      and q.event.text.startswith(side + " ")), None)
            pile = self._card_since.get(f"init.{side}")
            since = self._card_since.get(key)
            if q is None:
                if self._last_move_seen_better(key, side, new, since):
                    return True
                continue
            if pile is None or since is None or not q.event.frame < pile or not since < pile:
                continue
            if self._settle(q, new, f"read as {q.chosen} under its unit, then as {new} before "
                            f"{side}'s next initiative card: the same card seen better; "
                            "check it"):
                return True
            # the rules refuse that card there, yet no card could have been laid: the read is
            # a misread of the card the question goes on with, not a new card laid in place
            # (v7-s313: a berlin joker under white's king, asked JK 65 %, read JC 99.7 %
            # before white's initiative card; this deck's JC had lain bare, and a JS laid in
            # place was invented). Only while each turn that side had since has its move
            # logged, elsewhere: a turn between whose move was not seen may have laid one
            # (xv-s103: a KD laid in place over a joker under black's king, read JD a round
            # late; once that move was found in its turn, black's next move, to f5, and the
            # KD read JD 48 %, KD 47 % before black's next initiative card were taken for a
            # second card laid in place)
            later = [text.split()[1] for text in self.journal[q.entry + 1:]
                     if text.split()[0] == side and text.split()[1] in ("initiative", "move")]
            if later.count("move") < later.count("initiative") - 1:
                continue
            self._believe(key, q.chosen, {new})
            return True
        return False

    def _last_move_seen_better(self, key: str, side: str, new: str, since: int | None
                               ) -> bool:
        """A card read sure where `side`'s last move laid another, taken on the reader's
        word, its unit still on it, and read so before that side's next initiative card: no
        move of that side could lay it since, so one of the two reads is wrong. The move
        becomes an open question weighing both looks, going on with the likelier (v5-s239: an
        orell JS laid by black's pawn read QS 73 %, JS 26 %, then JS 100 % before black's next
        initiative card; it was taken for a second card laid in place over the QS, the QS for
        a joker misread, and the next moves came out of order). True where it did."""
        cell = key[:-5]
        named, first = self._read_since.get(key, (None, None))
        if named == new and since is not None:
            since = min(since, first)  # (the reads named it before the game took it in)
        entry = self._last_laid_on(cell)
        event = self._event_of(entry) if entry is not None else None
        if event is None or event.kind != "move" or not event.text.startswith(side + " ") \
                or new not in CODES or since is None or since <= event.frame \
                or self._last_move_frame(side=side) != event.frame \
                or (self.journal[entry], new) in self._bare_tried \
                or self._confirmed_by_a_player(entry):
            return False
        # the side's next initiative card after the move in the game's order (a move logged
        # late can share its frame: v7-s293's KS, logged with white's next pile card, then a
        # joker laid in place in that turn)
        turn = next((i for i in range(entry + 1, len(self.journal))
                     if self.journal[i].split()[:2] == [side, "initiative"]), None)
        drawn = self._event_of(turn) if turn is not None else None
        if turn is not None and (drawn is None or since >= drawn.frame):
            return False
        self._bare_tried.add((self.journal[entry], new))  # (once: a replay each)
        engine = self._engine_card(key)
        laid = self._laid_looks.get(id(event), (key, None))[1]
        evidence = laid.copy() if laid is not None else CardEvidence()
        if laid is None:
            evidence.add([(engine, ACCEPT)])
        read = self._last_read.get(key)
        evidence.new_look()
        evidence.add(getattr(read, "candidates", None) or [(new, ACCEPT)])
        # (a tie keeps the card the game went on with: neither look is the better one)
        if not self._ask_past_move(key, entry, event, engine, evidence, new, False,
                                   f"read as {engine} under its unit, then as {new} before "
                                   f"{side}'s next initiative card: one card read two ways; "
                                   "check it"):
            return False
        self._laid_looks.pop(id(event), None)  # a question now: its answer is the players'
        self.beliefs[key].value = self._engine_card(key)
        return True

    def _last_event_frame(self) -> int:
        """The latest frame any event was logged at (-1 before any; events may be logged out
        of order, so not simply the last one's)."""
        return max((e.frame for e in self.events), default=-1)

    def _last_move_frame(self, side: str | None = None, before: int | None = None
                         ) -> int | None:
        """The frame of the last move event (of `side`, before frame `before`, where given)."""
        return max((e.frame for e in self.events if e.kind == "move"
                    and (side is None or e.text.startswith(side + " "))
                    and (before is None or e.frame < before)), default=None)

    @property
    def _yet_to_move(self) -> bool:
        """Is the side to move before or in its movement (no draw of a round pending)?"""
        return self.state.phase in (Phase.PRE_TURN_DRAW, Phase.MOVEMENT) \
            and not self.state.is_chance_node()

    def _gone_next_to(self, cell: str, seen: dict) -> list[int]:
        """The cells next to `cell` whose unit, of the side to move, is no longer seen there."""
        side = self.state.to_move.value
        return [c for c in NEIGHBOURS[parse_cell(cell)]
                if (u := self.state.units.get(c)) is not None and u.side.value == side
                and not str(seen[f"{CELL_NAMES[c]}.unit"]).startswith(side)]

    def _cards_awaiting_their_unit(self, diff: dict, seen: dict) -> list[str]:
        """Cells with a new card and no unit seen on it where the last piece read there was
        unsure, or empty but not firmly on a card read surely, next to a unit of the side to
        move that is gone from its cell: most likely that unit's move, its piece not read
        yet. Taking the side's turn as passed would put its move into the next turn
        (mirror-read pieces, s42: a white king's move to b5, its piece unsure for 24 frames,
        recorded after black's move and the next round's initiative cards, and the game a
        turn out of step from there)."""
        out = []
        for key, (_old, new) in diff.items():
            if not (key.endswith(".card") and new is not None):
                continue
            cell = key[:-5]
            read = self._piece_reads.get(cell)
            if seen.get(f"{cell}.unit") is not None or self.state.units.get(parse_cell(cell)) \
                    or read is None:
                continue
            # unsure, or empty but not firmly on a card read at all (val-s35: a paper queen
            # on the KC it moved to read empty at 83-86 %; the game waited from there), sure
            # or not: a token on its card hides its index too (v9-s379: a black paper king
            # on the 2S it moved to read empty 76 %, the 2S unsure at 96 %; the king was
            # taken off, black's turn passed, and 7 moves lost)
            if not (read.piece is None and read.occupied is not False
                    or read.occupied is False and not surely_empty(read)
                    and (new in CODES or new == UNREAD)):
                continue
            if self._gone_next_to(cell, seen):
                out.append(cell)
        return sorted(out)

    def _unit_not_read(self, awaited: list[str], seen: dict) -> dict[str, str]:
        """The one card awaiting its unit, where exactly one unit of the side to move, in its
        movement, is gone from next to it: that unit's move, its piece not read on the card
        ({cell: side}). Waiting for the piece lost the game where it never was read before
        it moved on (val-s58: a brutalchess pawn on a nicu joker, unsure for 45 frames)."""
        if len(awaited) != 1 or not self._yet_to_move:
            return {}
        to = awaited[0]
        return {to: self.state.to_move.value} if len(self._gone_next_to(to, seen)) == 1 else {}

    def _own_card_covered(self, diff: dict, seen: dict) -> dict[str, str]:
        """The one new card where a unit of the side to move, in its movement, stood and no
        unit is seen now, its piece not read surely empty: a card is laid only under the unit
        that moves onto it, so that unit covered its own card ({cell: side}) and was misread
        as gone (val-s23: a dreamchess pawn on the QH it laid read empty at 93 %; the move was
        never taken and the game fell behind from there)."""
        state = self.state
        if not self._yet_to_move:
            return {}
        side = state.to_move.value
        out = {}
        for key, (_old, new) in diff.items():
            if not key.endswith(".card") or new is None:
                continue
            cell = key[:-5]
            unit = state.units.get(parse_cell(cell))
            read = self._piece_reads.get(cell)
            if unit is None or unit.side.value != side or seen[f"{cell}.unit"] is not None \
                    or surely_empty(read):
                continue
            out[cell] = side
        return out if len(out) == 1 else {}

    def _move_read_empty(self, diff: dict, seen: dict) -> dict[str, str]:
        """The other side lays its card while the side to move, in its movement, has one unit
        gone and, next to it, the one card laid since the last event with no unit read on it:
        that unit moved there and its piece was read empty ({cell: side}). A unit leaves its
        cell only by moving or by the enemy's attack, and the enemy has not moved yet; taking
        the turn as passed put the move a round late (xv-s83: a paper token on the 10D it
        moved to read empty for 30 frames until black laid its card)."""
        if not self._yet_to_move:
            return {}
        last = self._last_event_frame()
        out = {}
        for key, (_old, new) in diff.items():
            cell = key[:-5]
            if not key.endswith(".card") or new is None or seen[f"{cell}.unit"] is not None \
                    or parse_cell(cell) in self.state.units \
                    or self._card_since.get(key, -1) <= last:
                continue
            if len(self._gone_next_to(cell, seen)) == 1:
                out[cell] = self.state.to_move.value
        return out if len(out) == 1 else {}

    def _card_under_arrival(self, diff: dict, seen: dict, frame: int) -> bool:
        """A unit of the side to move (or, once that side has moved, of the other) has visibly
        moved onto a cell whose card is believed unchanged: a unit moves only onto the card it
        lays, so that card is new, whatever its unsure reads seemed to back (v3-s137: a berlin
        joker laid over an 8C read JK 42 %, KC 41 %, KS 11 %, kept as the 8C misread; the
        knight that moved onto it held the game). The card is taken as unread, its last read
        the evidence. True where one was."""
        state = self.state
        if self._yet_to_move:
            side = state.to_move.value
        elif state.phase in (Phase.ATTACK, Phase.POST_TURN):
            side = state.to_move.other.value  # the side to move has moved: the other's turn
        else:
            return False
        for to in self._arrivals(diff, seen):
            key = f"{to}.card"
            read = self._last_read.get(key)
            if key in diff or not str(seen[f"{to}.unit"]).startswith(side) or read is None \
                    or read.card or not read.candidates:
                continue
            self._laid_now_unread(key, read, frame)
            return True
        return False

    def _laid_now_unread(self, key: str, read, frame: int) -> None:
        """The card at `key` is a new one the readers took for the card it covered: unread,
        laid now as far as the game knows, its last read the evidence."""
        self.beliefs[key].value = UNREAD
        self._card_since[key] = frame
        self.evidence.setdefault(key, CardEvidence()).add(read.candidates)

    def _await_units(self, cells: list[str]) -> bool:
        self.holding = f"a card was laid on {', '.join(cells)}: waiting to read the unit " \
                       "on it"
        return False

    def _arrivals(self, diff: dict, seen: dict) -> list[str]:
        """Cells a unit has visibly moved to: it stands where the engine has none, and a unit
        of its side the engine has next door is gone from there."""
        out = []
        for key, (old, new) in diff.items():
            if not (key.endswith(".unit") and old is None and isinstance(new, str)):
                continue
            side = new.split("-")[0]
            for c in NEIGHBOURS[parse_cell(key[:-5])]:
                unit = self.state.units.get(c)
                if unit is not None and unit.side.value == side and \
                        not str(seen[f"{CELL_NAMES[c]}.unit"]).startswith(side):
                    out.append(key[:-5])
                    break
        return sorted(out)

    def _movement(self, laid: list[str], diff: dict, seen: dict, frame: int,
                  recoloured: dict[str, str] | None = None,
                  unread: dict[str, str] | None = None) -> bool:
        state = self.state
        side = state.to_move.value
        engine = visible_table(state, self._sides_only)  # the table before this move, once
        reasons = []
        # a card held for the players comes first: any later one would be out of order
        for to in sorted(laid, key=lambda c: (f"{c}.card" != self._held_card, c)):
            flags: list[str] = []
            card = seen[f"{to}.card"]
            mover = seen[f"{to}.unit"]
            if not (isinstance(mover, str) and mover.split("-")[0] == side):
                reasons.append(f"{card} on {to} has no {side} unit on it")
                continue
            was_here = engine[f"{to}.unit"]
            stale = False
            if was_here == mover:
                frm = to  # covered its own standing card
            else:
                next_door = [CELL_NAMES[c] for c in NEIGHBOURS[parse_cell(to)]
                             if engine[f"{CELL_NAMES[c]}.unit"] == mover]
                sources = [c for c in next_door if seen[f"{c}.unit"] != mover]
                if not sources:
                    # a card laid with the side's unit on it is a move; where no unit next door
                    # is seen gone, the old cell's read is stale (a lathe piece's empty cell
                    # read as still occupied held two held-out games for the rest of the game)
                    sources, stale = next_door, bool(next_door)
                    if len(sources) > 1:  # the one the card read may be laid from
                        sources = self._card_fits(sources, to, card, side)
                    if len(sources) > 1:  # the one whose piece reads least sure left
                        weak = [c for c in sources if not self._firmly_occupied(c)]
                        sources = weak if len(weak) == 1 else sources
                    if len(sources) > 1:  # or the one now read as a kind it is not: a face
                        # card's picture (s42: the KH a pawn left read as a king at 99 %)
                        odd = [c for c in sources if self._kinds_seen.get(c) not in (
                            None, f"{side}-{self.state.units[parse_cell(c)].kind}")]
                        sources = odd if len(odd) == 1 else sources
                if len(sources) > 1:  # two of the side's units next door: the kind read decides
                    kind = self._kinds_seen.get(to)
                    by_kind = [c for c in sources if kind is not None and
                               f"{side}-{self.state.units[parse_cell(c)].kind}" == kind]
                    sources = by_kind if len(by_kind) == 1 else sources
                if len(sources) > 1:
                    sources, gone_before = self._left_with_the_move(sources, frame)
                    if gone_before:
                        flags.append(f"{', '.join(gone_before)} seen empty before the last "
                                     "move: not the unit that moved; check it")
                if len(sources) != 1:
                    reasons.append(f"which {mover} moved to {to}? candidates: "
                                   f"{', '.join(sources) or 'none next to it'}")
                    continue
                frm = sources[0]
            if to in (recoloured or {}):
                flags.append(f"its unit read as {state.to_move.other.value}'s, not firmly: "
                             f"taken as {side}'s; check it")
            if to in (unread or {}):
                flags.append(f"the unit on {to} not read: taken as the {side} unit " + (
                    "that stood there, covering its own card" if frm == to
                    else f"gone from {frm}") + "; check it")
            if assume_unseen_draw(self.state, state.to_move):
                flags.append("card from a draw the camera could not see")
            if card == UNREAD:  # the rules pick among what the reader thought it might be
                # a card laid under a unit that stays is only ever read with the unit on it
                def allowed(c: str, frm: str = frm, to: str = to, side: str = side) -> bool:
                    return self._legal(f"{side} move {frm}-{to} {c}")

                accept = SWITCH if frm == to else ACCEPT
                card, why = self._resolve_card(f"{to}.card", to, allowed, accept, side=side)
                if card is None and frm != to:
                    card, why = self._standing_card_gives_way(frm, to, allowed, accept, side)
                if card is None:  # this is the side's move; another cell would be out of order
                    return False
                flags += why
            text = f"{side} move {frm}-{to} {card}"
            try:
                text, notes = self._apply_giving_way(text)
                flags += notes
            except RulesError as exc:
                over_joker = self._joker_misread(to, text)
                if over_joker is None and frm != to:
                    over_joker = self._joker_misread(frm, text, left=True)
                if over_joker is None:
                    reasons.append(str(exc))
                    continue
                text, notes = over_joker
                flags += notes
            if stale:  # the move explains the old cell: empty until the camera sees otherwise
                self.beliefs[f"{frm}.unit"].value = None
                flags.append(f"{frm} still read occupied after its unit moved")
            if to in (unread or {}):  # there until the camera sees otherwise
                self.beliefs[f"{to}.unit"].value = side if self._sides_only else \
                    f"{side}-{self.state.units[parse_cell(to)].kind}"
                self._misread_empty.add(to)
                if surely_empty(self._piece_reads.get(to)):
                    self._moved_in_unseen.add(to)
            self._record(TableEvent(frame, text, "move", flags))
            self.attacks_to_resolve.append(text)
            return True
        self.holding = "; ".join(reasons)
        return False

    def _card_fits(self, sources: list[str], to: str, card: object, side: str) -> list[str]:
        """Of the cells a unit may have come from, the one from which the rules allow the
        card read on `to` (named, or the likeliest of an unsure read), where only one does:
        the card's colour must differ from the mover's standing card's (s64: black's king
        left a5's JC for b4 with a 5D, read 99.999 %; the queen beside it on b5, read as a
        king, was taken for a face card's picture and the move for the queen's from b5, where
        a 5D is not allowed: the card became a 5C). Else `sources` as they are."""
        if card == UNREAD:
            evidence = self.evidence.get(f"{to}.card")
            ranked = evidence.ranked() if evidence is not None else []
            card = ranked[0][0] if ranked else None
        if card not in CARDS:
            return sources
        fits = [c for c in sources if self._legal(f"{side} move {c}-{to} {card}")]
        return fits if len(fits) == 1 else sources

    def _firmly_occupied(self, cell: str) -> bool:
        """Did the last look at `cell` see a piece, surely? A face card's picture can pass
        for a piece, but rarely a sure one (session 15: an empty plastic queen of spades read as
        a white pawn at 75 %, its neighbour's real pawn at 100 %)."""
        read = self._piece_reads.get(cell)
        return read is not None and read.occupied is True and read.confidence >= FIRM
