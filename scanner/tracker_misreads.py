"""Reads that say more than they seem, part of `GameTracker` (tracker.py): a card the engine
agreed with read otherwise later, a movement card read bare and under its unit, a joker read as
a court, news on an initiative pile the rules await, what an occluded frame glimpsed.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from engines.errors import RulesError
from engines.royal_battles import CELL_NAMES, Phase, Verb, parse_action
from engines.royal_battles.board import NEIGHBOURS, parse_cell
from engines.royal_battles.cards import CARDS, parse_card

from .detections import TableReading
from .observations import (
    ACCEPT,
    COURTS,
    LEAN,
    NO_READING,
    UNREAD,
    CardEvidence,
    card_colour,
    card_key_of,
    may_be_same,
    zone_of,
)
from .open_questions import CardQuestion
from .table_events import TableEvent, assume_unseen_draw, twin_of, unseen_step

# a sure read of a card's twin still giving the card this much is a look at that card
# (v10-s410's AS read under white's rook gave its AC 3.4 %)
TWIN_WEIGHT = 0.01

# a re-read of unchanged pixels gives its candidates again within this (v7-s307: black's JC
# pile, read KH 95 % and taken as JC by the rules, re-read KH 95 % 50 frames later)
SAME_LOOK = 0.05


def _leans_to_the_other_colour(read, believed: str) -> bool:
    """Does an unsure read lean (LEAN) to a card of the other colour than the believed one?
    A card laid over another differs from it in colour, and a card laid in place under the
    unit standing on it can change its place's picture too little for the scanner to call
    it changed (v10-s399: a white queen's 6D laid over its 3S, read 6D 88 % for 110 frames
    and taken for the 3S misread; white's move was logged after black's, and the game was
    out of step from there)."""
    if not read.candidates:
        return False
    top, p = read.candidates[0]
    colours = card_colour(top), card_colour(believed)
    # (a joker has no colour, and the readers take jokers for courts: no news either way)
    return p >= LEAN and None not in colours and colours[0] != colours[1]


def _the_same_look(read, earlier) -> bool:
    """Is `read` the look `earlier` again: the very reading (an incremental scanner repeats
    an unchanged one), or a routine re-read of unchanged pixels naming the same candidates
    within SAME_LOOK of each other?"""
    if read is earlier:
        return True
    if read is None or earlier is None or not read.candidates or not earlier.candidates:
        return False
    now, then = read.candidates[:2], earlier.candidates[:2]
    return [c for c, _ in now] == [c for c, _ in then] and all(
        abs(p - q) <= SAME_LOOK for (_, p), (_, q) in zip(now, then, strict=True))


def _another_court_of_its_suit(read: object, believed: object) -> bool:
    """Are `read` and `believed` two different court cards of one suit (JC, QC, KC)?"""
    if read not in CARDS or believed not in CARDS or read == believed \
            or "JK" in (read, believed):
        return False
    return read[-1] == believed[-1] and read[:-1] in COURTS and believed[:-1] in COURTS


class MisreadWatch:
    """Mixed into `GameTracker`; works on the state its `__init__` sets up."""

    def _misreads_of_agreed(self, reading: TableReading, values: dict, believed: dict,
                            cards_now: dict) -> None:
        """An unsure read of a card the engine agreed with, at a place whose pixels have not
        changed since, is that card misread (a routine re-read of a card under a piece can
        lean elsewhere), not news: the believed card stands."""
        for key, code in believed.items():
            if key.endswith(".unit") or code in (None, UNREAD) or values.get(key) != code \
                    or self.beliefs[key].settling:
                continue
            if self._engine_card(key) == code:  # engine, belief and this look agree
                self._agreed_at[key] = self._changes.get(key, 0)
        for key in cards_now:
            if zone_of(key) in reading.changed:
                self._changes[key] = self._changes.get(key, 0) + 1
                self._changed_at[key] = reading.frame_index
            elif values.get(key) == UNREAD and believed.get(key) not in (None, UNREAD) \
                    and self._agreed_at.get(key) == self._changes.get(key, 0) \
                    and (_the_same_look(cards_now[key], self._taken_against.get(key))
                         or not _leans_to_the_other_colour(cards_now[key], believed[key])):
                # (the very read the rules took the card against, repeated by an incremental
                # scanner, says nothing new: v6-s257, a JC on a3 read JH 57 %, JC 32 % under
                # its pawn, taken as JC, became news 8 frames later and a move that never was)
                values[key] = believed[key]
            elif key.startswith("init.") and self._agreed_at.get(key) == self._changes.get(key, 0) \
                    and _another_court_of_its_suit(values.get(key), believed.get(key)):
                # a pile re-read on the same pixels naming another court of the agreed card's
                # suit: the readers' usual confusion, not a new card, which changes the pile's
                # pixels as it is laid (v10-s403: black's QH, taken from a read JH 91 %, read
                # JH 96 % 25 frames later and taken for black's next initiative card; replay
                # of the 78 games 6,280/116 -> 6,304/101, table re-reads 9 -> 5). Not for other
                # cards: a new ace on an ace can leave the pile's pixels unflagged (v6-s263:
                # black's AD laid on its AS; for every card, 6,139/199)
                values[key] = believed[key]

    def _known_misreads(self, values: dict, believed: dict, cards_now: dict) -> None:
        """A card the rules took against the reader's word (a held-out joker read as a jack
        of diamonds at 99 %, which the colour rule refused) is read the same way again once
        the unit on it leaves and the look changes: that read is the known misread, not a card
        laid, unless a unit arrives with it (a movement card always carries its unit); nor
        is a read that leans that way. On s51 the joker's bare look, read JD, stood as a card
        laid next door and kept the removal beside it from being seen."""
        for key, (code, looks) in list(self._misread_as.items()):
            if self._engine_card(key) != code:
                del self._misread_as[key]  # covered, or re-read: the decision is spent
                continue
            unit = key[:-5] + ".unit"
            read = cards_now.get(key)
            leaning = values.get(key) == UNREAD and read is not None and read.candidates \
                and read.candidates[0][0] in looks
            if (values.get(key) in looks or leaning) \
                    and values.get(unit) in (believed.get(unit), NO_READING):
                values[key] = code

    def _bare_looks(self, values: dict, cards_now: dict) -> None:
        """A movement card is read with the unit that moved onto it standing on it (a piece
        hides part of a card). Where the reader named it sure then, and now, with no unit on
        it, names another card of its colour sure for SETTLE_FRAMES frames in a row, the bare
        look is the better one: the move is rewritten to that card and flagged, where the rules
        take it (s42: a 6H under a white rook read as 4H at 99.9 %, and bare as 6H at 99.98 %
        once the rook had left; a card of the same colour can't be a new one laid on it)."""
        for key, read in cards_now.items():
            if key.startswith("init.") or getattr(read, "card", None) in (None, UNREAD):
                self._seen_bare.pop(key, None)
                continue
            cell, engine = key[:-5], self._engine_card(key)
            if values.get(f"{cell}.unit") is not None or parse_cell(cell) in self.state.units:
                self._under_unit[key] = read
            if read.card == engine or engine is None or not may_be_same(read.card, engine) \
                    or values.get(f"{cell}.unit") is not None \
                    or parse_cell(cell) in self.state.units:
                self._seen_bare.pop(key, None)
                continue
            code, n = self._seen_bare.get(key, (read.card, 0))
            n = n + 1 if code == read.card else 1
            self._seen_bare[key] = (read.card, n)
            if n < self.settle_frames:
                continue
            self._seen_bare.pop(key, None)
            entry = self._last_laid_on(cell)
            if entry is None or self.journal[entry].split()[1] != "move" \
                    or self.journal[entry].split()[-1] != engine \
                    or (self.journal[entry], read.card) in self._bare_tried \
                    or not self._left_as_recorded(cell, self.journal[entry]):
                continue
            self._bare_tried.add((self.journal[entry], read.card))  # (once: a replay each)
            why = f"read as {engine} under its unit, and as {read.card} once bare: taken as " \
                "that; check it"
            question = next((q for q in self.questions if isinstance(q, CardQuestion)
                             and q.entry == entry), None)
            if question is not None:  # an open one weighs its bare looks itself
                if question.watched and self._settle(question, read.card, why):
                    self.beliefs[key].value = values[key] = read.card
                continue
            if self._ask_bare(key, entry, engine, read, why):
                self.beliefs[key].value = values[key] = self._engine_card(key)

    def _ask_bare(self, key: str, entry: int, engine: str, read, why: str) -> bool:
        """Two sure reads of one movement card disagree: under its unit and bare. Neither is
        taken on its own word: the move becomes an open question weighing both looks (later
        bare reads add to the bare one), going on with the bare read unless the look under
        the unit was surer (nothing hides a bare card). Session 18, s42: a 6H under a rook
        read 4H at 99.9 %, bare 6H at 99.98 %; val-s7: a berlin JS under a knight read JS at
        99.8 %, bare QS at 99.9 %, and rewriting it to the bare read was a spurious move."""
        event = self._event_of(entry)
        if event is None or self._confirmed_by_a_player(entry):
            return False
        self._laid_looks.pop(id(event), None)  # a question now: its answer is the players'
        under = self._under_unit.get(key)
        evidence = CardEvidence()
        evidence.add([(engine, getattr(under, "confidence", ACCEPT))])
        evidence.new_look()
        evidence.add([(read.card, read.confidence)])
        return self._ask_past_move(key, entry, event, engine, evidence, read.card, True, why)

    def _ask_past_move(self, key: str, entry: int, event: TableEvent, engine: str,
                       evidence: CardEvidence, other: str, ties_to_other: bool,
                       why: str) -> bool:
        """The move of journal `entry`, which laid `engine` at `key`, becomes an open question
        weighing `evidence` (both looks), going on with `other` where its looks make it
        likelier (or as likely, with `ties_to_other`), where the rules take it; flagged `why`.
        True where it did."""
        q = self._question_on_past_event(key, key[:-5], event, entry, evidence, engine)
        ranked = dict(q.ranked())
        p_other, p_engine = ranked.get(other, 0.0), ranked.get(engine, 0.0)
        best = other if p_other > p_engine or (ties_to_other and p_other == p_engine) \
            else engine
        if best != engine and not self._choose(q, best):
            return False
        event.flags.append(why)
        event.question = q.describe()
        self.questions.append(q)
        return True

    def _question_on_past_event(self, key: str, place: str, event: TableEvent, entry: int,
                                evidence: CardEvidence, chosen: str) -> CardQuestion:
        """A question on the card of an event logged earlier (journal `entry`), going on with
        `chosen`: any card may answer it (the rules then say which can), and its looks
        already include one of the card bare."""
        return CardQuestion(key, place, event, entry, self._start, list(CARDS), evidence,
                            chosen, bare_look=True)

    def _left_as_recorded(self, cell: str, laid: str) -> bool:
        """The cell was last seen going empty when the game recorded its unit leaving (moving
        on or taken off), after the move that laid its card: no unit the game does not know
        of stood there since (a missed move's card misread in the colour of the card it
        covered would otherwise pass for that card read better)."""
        laid_at = next((i for i in range(len(self.events) - 1, -1, -1)
                        if self.events[i].text == laid), None)
        if laid_at is None:
            return False
        left = next((e.frame for e in reversed(self.events[laid_at + 1:])
                     if (e.kind == "move" and e.text.split()[2].startswith(cell + "-")
                         and not e.text.split()[2].endswith("-" + cell))
                     or (e.kind == "removed" and e.text.split()[-1] == cell)), None)
        return left is not None and self._gone_since.get(cell, left + 1) <= left

    def _news_over_a_joker(self, values: dict, believed: dict, cards_now: dict) -> None:
        """A card read sure in the colour of the card believed under it is that card misread
        (`card_value`), unless the side of the unit seen on it could have laid it there (from
        that cell or one next door, once the turns the camera can't see are over) had the card
        under it been a joker the reader took for another: then it is news, and the move
        rewrites that card (`_joker_misread`). Not where the read is the believed card's twin
        (the same rank and colour in the other suit: the reader's usual confusion) and still
        gives the believed card TWIN_WEIGHT: that is the card seen worse (v10-s410: an orell
        AC under white's rook, read AS 96.6 % and AC 3.4 % as black's knight came next to it,
        was taken for white covering a joker in place, and the rook's removal and the king's
        move onto its card were lost: 74/96 moves with 12 spurious events -> 93/0). A twin
        the reader does not take for that card at all may still be laid over a joker misread
        as its twin (the held-out tango joker reads as a diamond court)."""
        for key, read in cards_now.items():
            code = getattr(read, "card", None)
            if key.startswith("init.") or not code or values.get(key) != believed.get(key) \
                    or code == believed.get(key) or self._engine_card(key) != believed[key]:
                continue
            if code != "JK" and twin_of(code) == believed[key] \
                    and dict(read.candidates).get(believed[key], 0.0) >= TWIN_WEIGHT:
                continue
            cell = key[:-5]
            seen = values.get(f"{cell}.unit")  # a movement card carries the unit that moved
            if not isinstance(seen, str) or seen == UNREAD:
                continue
            side = seen.split("-")[0]
            units = self.state.units
            movers = [c for c in [cell] + [CELL_NAMES[n] for n in NEIGHBOURS[parse_cell(cell)]]
                      if parse_cell(c) in units and units[parse_cell(c)].side.value == side
                      and (c == cell or parse_cell(cell) not in units)]
            if any(self._laid_on_a_joker(cell, f"{side} move {frm}-{cell} {code}") is not None
                   for frm in movers):
                values[key] = code

    def _laid_on_a_joker(self, cell: str, text: str) -> int | None:
        """Would the rules take `text` had the top card on `cell` been a joker, and was that
        card laid by a move the reader named (set-up cards are never jokers; a re-read's card
        is the table's)? Returns that move's journal entry, or None."""
        top = self.state.top(parse_cell(cell))
        if top is None or top.card.is_joker:
            return None
        entry = self._last_laid_on(cell)
        if entry is None or self.journal[entry].split()[-1] != top.card.code \
                or self.journal[entry].split()[1] != "move":
            return None
        trial = self.state.copy()  # the move alone, over a joker (a replay is dearer)
        cell_id = parse_cell(cell)
        trial.stacks[cell_id] = trial.stacks[cell_id][:-1] + (
            dataclasses.replace(top, card=parse_card("JK")),)
        action = parse_action(text)
        try:
            for _ in range(8):  # on to that side's movement, as `_step` would go
                if trial.is_chance_node():
                    ev = trial.pending[0]
                    if ev.verb is not Verb.DRAW:
                        break  # a new round's initiative cards come first
                    trial.apply(parse_action(f"{ev.side.value} draw ?"))
                    continue
                if trial.phase is Phase.MOVEMENT and trial.to_move is action.side:
                    break
                step = unseen_step(trial, to_movement=True)
                if step is None:
                    break
                trial.apply(parse_action(step))
            assume_unseen_draw(trial, action.side)
            trial.apply(action)
        except RulesError:
            return None
        return entry

    def _news_on_awaited_piles(self, reading: TableReading, values: dict,
                               believed: dict) -> None:
        """An initiative pile whose pixels changed while the rules await its side's card holds
        a new card, even where it reads like the last one (a club taken for the spade it
        covers): one deck can't turn up the same card twice, so the rules weigh the read."""
        awaited = {f"init.{ev.side.value}" for ev in self.state.pending
                   if ev.verb is Verb.INITIATIVE}
        for key in awaited:
            if zone_of(key) in reading.changed:
                self._pile_changed[key] = self._engine_card(key)
        for key, was in list(self._pile_changed.items()):
            if key not in awaited or self._engine_card(key) != was:
                del self._pile_changed[key]  # its new card is in the game now
            elif values.get(key) == believed.get(key) not in (None, UNREAD):
                values[key] = UNREAD

    def _note_glimpses(self, reading: TableReading) -> None:
        """Keep what an occluded frame glimpsed for the settled frame that follows: a card
        its unit covers at once was seen uncovered only then. Glimpses are never state; they
        join the evidence of a card the settled frame cannot name on its own."""
        for zone, card in reading.glimpses.items():
            if card is None or card.face_down:
                continue
            key = card_key_of(zone)
            look = card.candidates or ([(card.card, card.confidence)] if card.card else [])
            if look:
                self._glimpses.setdefault(key, []).append(look)

    def _looks_laid(self, key: str, seen: dict) -> bool:
        """Is a real card seen at `key`: read, or unsure but leaning to one card or one rank
        (a patch of cloth taken for a card gives no reading that leans; v6-s277: an orell joker
        read JS 46 %, JC 24 %, KS 10 % leans to jacks)?"""
        if seen[key] is None:
            return False
        if seen[key] != UNREAD:
            return True
        evidence = self.evidence.get(key)
        ranked = evidence.ranked() if evidence else []
        ranks = Counter()
        for code, p in ranked:
            ranks[code[:-1]] += p
        return bool(ranked) and (ranked[0][1] >= LEAN or max(ranks.values()) >= LEAN)
