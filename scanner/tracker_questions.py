"""Open questions, part of `GameTracker` (tracker.py): readings the game went on with before
they were sure, asked, traded between the places of one deck, settled when later looks are
sure, and written back into the journal (the engine rebuilt from it).
"""

from __future__ import annotations

from engines.errors import RulesError
from engines.royal_battles import GameState, Side, parse_action
from engines.royal_battles.board import parse_cell

from .observations import FOLLOW, LEAD, ONCE_IN_A_DECK, SWITCH
from .open_questions import (
    CardQuestion,
    PlacementQuestion,
    Snapshot,
    against_rivals,
    entries_of,
    owner_of,
    set_entries,
)
from .table_events import TableEvent, is_filler, with_card, with_kind


def _with_history(state: GameState) -> GameState:
    """A copy of an engine state that keeps its action history (`copy` drops it)."""
    other = state.copy()
    other.actions, other.history = list(state.actions), list(state.history)
    return other


class QuestionKeeping:
    """Mixed into `GameTracker`; works on the state its `__init__` sets up."""

    def open_questions(self) -> list[str]:
        """What the game went on with unsure, as questions for the players."""
        return [q.describe() for q in self.questions if not q.watched]

    def _engine_card(self, key: str) -> str | None:
        """The card the engine has at a card key ("d3.card" or "init.white")."""
        place, what = key.split(".")
        if place == "init":
            card = self.state.initiative[Side(what)]
            return card.code if card else None
        top = self.state.top(parse_cell(place))
        return top.card.code if top else None

    def _snapshot(self) -> Snapshot:
        return Snapshot(_with_history(self.state), len(self.journal), dict(self._origin),
                         dict(self._arrived))

    def _settle_questions(self) -> bool:
        """Settle every open question whose answer is now at least SWITCH sure; one whose
        likeliest answer is another than the game went on with, and FOLLOW likely, goes on
        with that one, still open."""
        changed = False
        decks = self._questions_by_deck()  # once per frame, not once per question
        for q in list(self.questions):
            if q.watched and isinstance(q, CardQuestion):
                continue  # no new evidence comes to it (see `CardQuestion.watched`)
            ranked = q.ranked()
            if not ranked:
                continue
            best, p = ranked[0]
            if q.watched:  # a sure placement: asked again only once later looks say else
                if best != q.chosen and p >= FOLLOW and self._choose(q, best):
                    changed = True
                    self._ask(q)
                continue
            if isinstance(q, CardQuestion) and p >= FOLLOW:  # (below, nothing it could lower)
                p = min(p, against_rivals(q, best, decks))
            if p < SWITCH:
                # a placement goes on with its likeliest answer once that is LEAD times as
                # likely as the one standing: every later removal names its kinds
                ahead = isinstance(q, PlacementQuestion) \
                    and p >= LEAD * dict(ranked).get(q.chosen, 0.0)
                if best != q.chosen and (p >= FOLLOW or ahead):
                    # still asked, but the game follows; where another question of the deck
                    # holds that card, the two may trade
                    changed |= self._choose(q, best) or (
                        isinstance(q, CardQuestion) and p >= FOLLOW and self._trade(q, best))
                self._ask(q)
                continue
            if self._settle(q, best, f"settled on later looks ({p:.0%}): check it"):
                changed = True
        return changed

    def _trade(self, q: CardQuestion, best: str) -> bool:
        """Question `q` reads likeliest `best`, a card another question of its deck went on
        with (open, or taken on the rules' word and watched): where both places' reads make
        the trade (q `best`, the other q's card) FOLLOW likely against the cards as they stand,
        both go on traded, both asked (xv-s71: white's 8C laid on c2 read 8C 84 %, taken as 8S
        when first read under its unit; white's 8S on its pile read 8S 84 %, refused as that
        8S and taken as 8C on the rules' word, a spurious event)."""
        r = next((o for o in self.questions if isinstance(o, CardQuestion) and o is not q
                  and o.chosen == best and owner_of(o) == owner_of(q)), None)
        if r is None or best not in ONCE_IN_A_DECK:
            return False
        # (each weighed over its answers and both cards at stake: a card another question
        # held when it was asked is not among its answers)
        both = {best, q.chosen}
        mine = dict(q.evidence.ranked((set(q.answers) | both).__contains__))
        theirs = dict(r.evidence.ranked((set(r.answers) | both).__contains__))
        trade = mine.get(best, 0.0) * theirs.get(q.chosen, 0.0)
        stand = mine.get(q.chosen, 0.0) * theirs.get(best, 0.0)
        if trade < FOLLOW * max(trade + stand, 1e-12):
            return False
        first = min((q, r), key=lambda o: o.snapshot.entry)
        new = [(q, best), (r, q.chosen)]  # (dataclasses: no dict keys)
        if not self._rewrite(first.snapshot, {o.entry: with_card(self.journal[o.entry], c)
                                              for o, c in new}):
            return False
        for o, code in new:
            if self.beliefs[o.key].value == o.chosen and self._engine_card(o.key) == code:
                self.beliefs[o.key].value = code
            o.event.text = with_card(o.event.text, code)
            if o.chosen not in o.went_with:
                o.went_with.append(o.chosen)
            o.chosen, o.watched = code, False
            if code not in o.answers:
                o.answers.append(code)
            o.event.question = o.describe()
        return True

    def _questions_by_deck(self) -> dict[str, list[CardQuestion]]:
        """Per deck (its owner), the card questions whose cards came from it."""
        decks: dict[str, list[CardQuestion]] = {}
        for q in self.questions:
            if isinstance(q, CardQuestion):
                decks.setdefault(owner_of(q), []).append(q)
        return decks

    def _settle(self, q, answer, why: str, by_player: bool = False) -> bool:
        """Close question `q` with `answer`, rewriting the journal where it differs from the
        answer the game went on with. False where the rules refuse it (that answer is dropped).
        `by_player`: a player's answer, final; any other rests on the reads."""
        if not self._choose(q, answer):
            return False
        earlier = [a for a in q.went_with if a != answer]
        if earlier:
            shown = [a if isinstance(a, str) else ", ".join(a) for a in earlier]
            why = f"{why} (the game went on with {'; then '.join(shown)})"
        for e in q.events:
            e.question = None
            e.flags.append(why)
        if isinstance(q, PlacementQuestion):
            for e, side, _origin in self._removals:
                if side is q.side:
                    e.question = None
        self.questions.remove(q)
        if isinstance(q, CardQuestion) and not by_player:
            # its card rests on the reads' word, as one taken sure does: a sure read
            # of that card elsewhere in its deck may still weigh against them
            # (`_earlier_gives_way`; xv-s83: an orell QH under white's unit settled
            # as JH 99 %, and white's real JH, read 99.7 %, held the game 200 frames)
            self._laid_looks[id(q.event)] = (q.key, q.evidence)
        return True

    def _ask(self, q) -> None:
        """Ask open question `q` on the events that hang on it: a card question on its
        event; a placement question on the placements of the units whose kind is in doubt,
        and their removals, which name the kind. A side's other units stay sure (val-s19,
        val-s58: a brutalchess king and queen seen nearly from above were read as each other
        at every later view; the pawns and rooks were never in doubt)."""
        if isinstance(q, CardQuestion):
            q.event.question = q.describe()
            return
        text, doubted = q.describe(), q.doubted()
        for origin, e in zip(q.origins, q.events, strict=True):
            e.question = text if origin in doubted else None
        for e, side, origin in self._removals:
            if side is q.side and origin in q.origins:
                e.question = text if origin in doubted else None

    def _choose(self, q, answer) -> bool:
        """Go on with `answer` to question `q` (still open), rewriting the journal where it
        differs from the answer standing. False where the rules refuse it (answer dropped)."""
        if answer == q.chosen:
            return True
        if isinstance(q, CardQuestion):
            changes = {q.entry: with_card(self.journal[q.entry], answer)}
        else:
            kind_of = dict(zip(q.origins, answer, strict=True))
            changes = {i: with_kind(self.journal[i], kind_of) for i in q.entries}
        if not self._rewrite(q.snapshot, changes):
            if isinstance(q, CardQuestion):
                # (a card another open question went on with may come free again: kept)
                if not any(isinstance(o, CardQuestion) and o is not q and o.chosen == answer
                           for o in self.questions):
                    q.answers = [c for c in q.answers if c != answer]
            else:
                q.options = [o for o in q.options if o != answer]
            return False
        q.watched = False  # its answer changed: asked like any open question
        if isinstance(q, CardQuestion):
            old_code = q.chosen
            q.event.text = with_card(q.event.text, answer)
            if self.beliefs[q.key].value == old_code and self._engine_card(q.key) == answer:
                self.beliefs[q.key].value = answer
        else:
            for e in q.events:
                e.text = with_kind(e.text, kind_of)
                # (what the army made of the set-up read no longer applies to the new kind)
                e.flags = [f for f in e.flags if "the army makes it a" not in f]
            for e, side, origin in self._removals:
                if side is q.side and origin in kind_of:
                    w = e.text.split()  # "white pawn removed d4"
                    e.text = " ".join([w[0], kind_of[origin]] + w[2:])
        if q.chosen not in q.went_with:
            q.went_with.append(q.chosen)
        q.chosen = answer
        return True

    def _back_to(self, snap: Snapshot) -> None:
        """The engine, the journal and where units came from, as they were at `snap`."""
        self.state = _with_history(snap.state)
        self.journal = self.journal[:snap.entry]
        self._origin, self._arrived = dict(snap.origin), dict(snap.arrived)

    def _rewrite(self, snap: Snapshot, changes: dict[int, str]) -> bool:
        """Replay the journal from `snap` with some entries changed; False (and nothing
        changed) where the rules refuse the result."""
        if any(i < snap.entry for i in changes):  # a change the replay would not reach
            return False
        self._taken_off = None  # (its engine before the removal is of the old past)
        saved = (self.state, self.journal, self._origin, self._arrived,
                 [(q, q.snapshot, entries_of(q)) for q in self.questions])
        old = self.journal
        self._back_to(snap)
        later: dict[int, list] = {}  # old journal index -> questions whose snapshot is there
        for q in self.questions:
            if q.snapshot.entry > snap.entry:
                later.setdefault(q.snapshot.entry, []).append(q)
        moved = {i: i for i in range(snap.entry)}  # old journal index -> new one
        try:
            for i in range(snap.entry, len(old)):
                for q in later.pop(i, []):  # later questions replay from the rewritten past
                    q.snapshot = self._snapshot()
                length = len(self.journal)
                self._replay(changes.get(i, old[i]))
                if len(self.journal) > length:  # (filler the new past has no room for is gone)
                    moved[i] = len(self.journal) - 1
            # the past may hold more or less filler now: the questions' actions moved with it
            for q in self.questions:
                set_entries(q, [moved[e] for e in entries_of(q)])
        except (RulesError, KeyError):
            self.state, self.journal, self._origin, self._arrived, snaps = saved
            for q, sn, entries in snaps:
                q.snapshot = sn
                set_entries(q, entries)
            return False
        return True

    def _replay(self, entry: str) -> None:
        """Apply one journal entry: an action, or a correction."""
        if entry.startswith("correct remove "):
            self._remove_unit(entry.split()[-1])
        elif entry.startswith(("correct lay ", "correct relocate ")):
            try:  # a rewritten past may have made it unneeded or impossible
                self._correct(entry)
            except (RulesError, KeyError, ValueError):
                return
            self.journal.append(entry)
        elif entry.startswith("correct army "):
            _, _, side_name, kinds = entry.split()
            side = Side(side_name)
            army = kinds.split(",")
            left = list(army)
            for u in self.state.units.values():
                if u.side is side and u.kind in left:
                    left.remove(u.kind)
            self.state.players[side].army = tuple(army)
            self.state.to_place[side] = left if self.state.to_place[side] else []
            self.armies[side] = army
            self.journal.append(entry)
        else:
            action = parse_action(entry)
            if is_filler(entry):
                # filled in for what the camera could not see: a rewritten past may need other
                # filler, which the next seen action makes room for
                try:
                    self._apply(action)
                except RulesError:
                    pass
                return
            try:
                self._apply(action)
            except RulesError:
                self._make_room_for(action)
                self._apply(action)

    def _answer(self, action_text: str) -> TableEvent | None:
        """A player's action that answers an open question: settle it (None: it answers none)."""
        words = action_text.split()
        for q in list(self.questions):
            if isinstance(q, CardQuestion) and q.event.text.split()[:-1] == words[:-1]:
                if not self._settle(q, words[-1], "confirmed by a player", by_player=True):
                    raise RulesError(f"the rules refuse {action_text} there")
                return q.event
            if isinstance(q, PlacementQuestion) and len(words) == 4 and \
                    words[:2] == [q.side.value, "place"] and words[3] in q.origins:
                i = q.origins.index(words[3])
                fits = [o for o in q.options if o[i] == words[2]]
                if not fits:
                    raise RulesError(f"{q.side.value}'s army has no {words[2]} left for "
                                     f"{words[3]}")
                q.options = fits
                event = next(e for e in q.events if e.text.split()[3] == words[3])
                if len(fits) == 1:
                    self._settle(q, fits[0], "confirmed by a player", by_player=True)
                return event
        return None
