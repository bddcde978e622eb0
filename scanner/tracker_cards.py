"""Which card a place holds when the reader is unsure or the rules refuse its read, part of
`GameTracker` (tracker.py): the rules' likeliest legal card, an earlier sighting or an open
question giving way, twins (same colour, told apart by shape), jokers misread, and the order
of play overruling an initiative pile.
"""

from __future__ import annotations

from engines.errors import RulesError
from engines.royal_battles import Side, Verb, parse_action
from engines.royal_battles.cards import CARDS

from .observations import (
    ACCEPT,
    CONSISTENT,
    COURTS,
    GO_ON,
    LEAN,
    ONCE_IN_A_DECK,
    CardEvidence,
    may_be_same,
    rest_per_card,
)
from .open_questions import CardQuestion, of_the_colour_read, of_the_rank_read, owner_of
from .table_events import TableEvent, lays_on, taken_for, twin_of, with_card


def _guess_from_the_reads(evidence: CardEvidence, legal: set[str]) -> tuple[str | None, str]:
    """The card a held place goes on with where the rules refuse every card its reads name:
    an allowed card of the rank it read (the readers tell ranks apart far better than suits),
    else a card of the colour it read, as a guess the players are asked to correct (v8-s337:
    black's 2C on a3 read JK 40 %, AC 31 %, AS 11 %, none allowed there, held the game 180
    frames). (card or None, why)."""
    code = of_the_rank_read(evidence, legal)
    if code is not None:
        return code, ("the picture card left when it read courts" if code == "JK"
                      else "of the rank it read")
    return of_the_colour_read(evidence, legal), "a guess of the colour it read"


class CardChoice:
    """Mixed into `GameTracker`; works on the state its `__init__` sets up."""

    def _resolve_card(self, key: str, place: str, allowed, accept: float = ACCEPT,
                      side: str | None = None) -> tuple[str | None, list[str]]:
        """A card the reader could not name alone: the best of its candidates that the rules
        allow, when that is at least `accept` sure; otherwise hold and say what it might be.
        `side`: whose deck it came from."""
        evidence = self.evidence.get(key)
        legal = {c for c in CARDS if allowed(c)}  # each asks the engine: once, not per use
        if evidence is not None and side is not None \
                and self._earlier_gives_way(evidence, legal, side, allowed):
            legal = {c for c in CARDS if allowed(c)}
        ranked = evidence.ranked(legal.__contains__) if evidence else []
        # the rules rule out cards already seen; a card the game went on with in an open
        # question may not be there after all, so it is not ruled out when judging certainty
        # (of this deck only: a card the other player's deck went on with is no rival here,
        # and keyed by card, one of its questions would stand in for this deck's)
        open_cards = {q.chosen: q for q in self.questions if isinstance(q, CardQuestion)
                      and (side is None or owner_of(q) == side)}
        if open_cards and evidence is not None:
            # (also where the reads name no card allowed here: only a question's card)
            joint, rewritten = self._with_questions(evidence, legal, open_cards)
            if rewritten:  # the past changed: so did what the rules allow here
                legal = {c for c in CARDS if allowed(c)}
                ranked = evidence.ranked(legal.__contains__)
            if joint is not None and ranked:
                ranked = [(ranked[0][0], min(ranked[0][1], joint))] + ranked[1:]
        # the rules' word is taken only for a card the reader itself gave some weight: where
        # they refused nearly all it read, the card left is no reading but a guess (val-s47:
        # a JS on b2 read 99.85 %, refused as an open question's card elsewhere, left KS at
        # 0.05 %, taken at "100 % after the rules")
        if ranked and ranked[0][1] >= accept \
                and dict(evidence.ranked()).get(ranked[0][0], 0.0) >= CONSISTENT:
            code, p = ranked[0]
            self._take_card(key, place, code, legal, evidence, watched=True)
            return code, [f"card on {place} read as {code} ({p:.0%} after the rules): check it"]
        if ranked and ranked[0][1] >= (0.0 if key == self._go_on_with else GO_ON):
            # the likeliest stands in as an open question; later looks settle it
            code = ranked[0][0]
            self._take_card(key, place, code, legal, evidence, watched=False)
            return code, []
        if not ranked and key == self._go_on_with and evidence is not None:
            # the table has moved on and the rules rule out every card the reader named: go on
            # with an allowed card of the rank it read (it tells ranks apart far better than
            # suits), as an open question (val-s7: a KD under a rook read JS, JC or JD, JD
            # already laid; the move was lost and the game parted ways with the table)
            code, why = _guess_from_the_reads(evidence, legal)
            notes = []
            if code is None and side is not None:
                code, why, notes = self._question_frees_a_card(evidence, side, allowed)
                if code is not None:  # (a question gave way: the rules allow more now)
                    legal = {c for c in CARDS if allowed(c)}
            if code is not None:
                self._take_card(key, place, code, legal, evidence, watched=False)
                return code, [f"no card the reader named is allowed on {place}: going on with "
                              f"{code}, {why}; check it"] + notes
        if evidence is None and key == self._go_on_with and legal:
            # no card was ever read there, only a unit standing on it (`reading_values`: the
            # finder missed the card): the table has moved on, so the game goes on with an
            # allowed card, a guess the players are asked to correct, rather than stall
            code = next(c for c in CARDS if c in legal)
            self._take_card(key, place, code, legal, CardEvidence(), watched=False)
            return code, [f"the card on {place} was never found under its unit: going on "
                          f"with {code}, a guess; check it"]
        self._held_card = key
        self._held_keys = set(self._diff())
        guesses = ", ".join(f"{c} {p:.0%}" for c, p in sorted(ranked, key=lambda r: -r[1])[:3]) \
            or "no usable reading"
        self.holding = f"which card lies on {place}? it looks like: {guesses}"
        return None, []

    def _question_frees_a_card(self, evidence: CardEvidence, side: str, allowed
                               ) -> tuple[str | None, str, list[str]]:
        """A card the game must go on with (the table has moved on) where the rules allow no
        card at all, because open questions of `side`'s deck hold every card that could lie
        there (the colour rule leaves a unit moving off a black card onto a red one only a
        joker). Each such question, covered or not, weakest first, tries its other answers,
        those its reads weigh (CONSISTENT) first, then the rest the rules allow; the first that
        lets its card lie here, as a card the reads' rank or colour name (`of_the_rank_read`,
        `of_the_colour_read`), is kept, both asked. v3-s173: black's 8H laid on d4 was gone on
        with as the joker (read JK 61 %, JH 37 %); black's real second joker, laid over a 10H
        moving off an AC and read as red courts, could then be no card at all, and the game
        held until it re-read the table 30 frames later (replay of the 78 games: that re-read
        gone, the joker's move asked with the right card, moves and spurious events the same).
        Returns (card, why, notes), or (None, "", []) with every question as it was."""
        asked = sorted(self._questions_by_deck().get(side, []),
                       key=lambda q: dict(q.ranked()).get(q.chosen, 0.0))
        for q in asked:
            before, saved = q.chosen, self._saved(q)
            named = [alt for alt, p in q.ranked() if p >= CONSISTENT]
            for alt in dict.fromkeys(named + list(q.answers)):
                if alt == before or not self._choose(q, alt):
                    continue
                legal = {c for c in CARDS if allowed(c)}
                if before in legal:
                    code, why = _guess_from_the_reads(evidence, legal)
                    if code is not None:
                        q.event.question = q.describe()
                        what = "a joker" if alt == "JK" else alt
                        return code, why, [f"the {before} on {q.place} may be {what}: the "
                                           f"{before} was needed here; check it"]
                self._restore(q, saved)
        return None, "", []

    def _earlier_gives_way(self, evidence: CardEvidence, legal: set[str], side: str,
                           allowed) -> bool:
        """This place reads only cards the rules refuse, one of them a card that `side`'s deck
        turned up before on a read's word: one of the two reads is wrong. Both places' reads
        are weighed as a pair that can't hold the same card (this place keeping its best
        allowed card, or the earlier place taking its next best): where the swap is likelier,
        the earlier event takes its next best card, settled and flagged where ACCEPT sure,
        else as an open question (val-s7: a berlin KD read JD sure, bare reads leaning KD at
        60-84 %, refused white's real JD on its initiative pile 290 frames later, read JD
        42 %; the game went on with a QH the reader never named). Returns whether the past
        changed."""
        raw = evidence.ranked()
        if not raw:
            return False
        listed = dict(raw)
        floor = rest_per_card(raw, lambda c: True)
        keep_here = max((listed.get(c, floor) for c in legal), default=0.0)
        # the past stands if this place holds any card allowed here, whichever: their whole
        # share, not the likeliest one's (v5-s239: white's joker, read QS 55 %, QC 41 %, both
        # refused, turned white's QS read 99.6 % on its pile into a JS, its 0.3 %, weighed
        # against one unlisted card's 0.04 % rather than all of them, 2 %)
        keep_all = sum(listed.get(c, floor) for c in legal)
        if keep_here >= CONSISTENT:
            # the reads here still name a card the rules allow: no cause to doubt the past
            # (val-s7: a pile read JC 36 %, JS 25 %, JK 16 % would otherwise have turned a JS
            # read sure under its knight, its weaker reads leaning QS, into a QS)
            return False
        for card, p_here in raw:
            if p_here < CONSISTENT or card in legal or card not in ONCE_IN_A_DECK:
                continue
            entry = self._earlier(side, card)
            event = self._event_of(entry) if entry is not None else None
            if event is None or event.question is not None \
                    or id(event) not in self._laid_looks or self._confirmed_by_a_player(entry):
                continue
            key, looks = self._laid_looks[id(event)]
            there = looks.ranked()
            # the earlier place's other cards, likeliest first, the first the rules allow
            # there (v5-s227: black's JC under its king on e4 read JS 95 %, QS 5 %, JC 0.2 %;
            # black's QS was on the table, and the real JS read 99.99 % on f2 was refused
            # until the table was re-read: 71 of its 89 moves, 4 spurious)
            keep = dict(there).get(card, 0.0) * keep_all
            q, alternative, share, freed = None, None, 0.0, None
            for alt, p_alt in there:
                if alt == card:
                    continue
                share = p_alt * p_here / max(keep + p_alt * p_here, 1e-12)
                if share <= 0.5:  # (and less for every card after it)
                    break
                if q is None:  # (asked only once the pair makes a swap likelier)
                    place = key[:-5] if key.endswith(".card") else f"{side}'s initiative pile"
                    q = self._question_on_past_event(key, place, event, entry, looks.copy(),
                                                      card)
                if self._choose(q, alt):
                    alternative = (alt, p_alt)
                    break
                freed = self._holder_gives_way(alt, side, p_alt * p_here, keep)
                if freed is not None and self._choose(q, alt):
                    alternative = (alt, p_alt)
                    break
                if freed is not None:
                    self._restore(*freed)
                    freed = None
            if alternative is None:
                continue
            if not allowed(card):  # no help here after all: as it was
                self._choose(q, card)
                if freed is not None:
                    self._restore(*freed)
                continue
            del self._laid_looks[id(event)]
            why = f"read as {card}, but {card} turned up again later ({share:.0%} that the " \
                f"earlier read was the wrong one): taken as {alternative[0]}; check it"
            if share >= ACCEPT:
                event.flags.append(why)
            else:
                event.question = q.describe()
                self.questions.append(q)
            return True
        return False

    def _holder_gives_way(self, card: str, side: str, swap: float, keep: float):
        """`_earlier_gives_way`'s next best card for the earlier place is `card`, which an
        open question of `side`'s deck went on with: where that question's own reads weigh
        another answer enough that the three-way swap still beats the past as it stands, it
        goes on with that answer, still asked (v5-s227: white's QH on its pile, read JH, had
        to give way to the real JH, but its QH was held by the question on b1, read QH 47 %,
        QD 47 %; the game stalled and re-read the table). Returns (question, what
        `_restore` needs) where it gave way, else None."""
        held = next((r for r in self._questions_by_deck().get(side, [])
                     if not r.watched and r.chosen == card), None)
        if held is None:
            return None
        ranked = dict(held.ranked())
        p_card = ranked.get(card, 0.0)
        saved = self._saved(held)
        for other, p_other in sorted(ranked.items(), key=lambda cp: -cp[1]):
            if other == card or p_other < CONSISTENT:
                continue
            chain = swap * p_other / max(p_card + p_other, 1e-12)
            if chain <= keep:  # (and less for every answer after it)
                return None
            if self._choose(held, other):
                held.event.question = held.describe()
                return held, saved
        return None

    def _believe(self, key: str, code: str, misread: set[str] | None = None) -> None:
        """Believe `code` at `key` where the reads said otherwise: the look standing there now
        agrees while its pixels stay, and where `misread` is given, later reads of those cards
        there are `code` misread (`_known_misreads`)."""
        self.beliefs[key].value = code
        self._agreed_at[key] = self._changes.get(key, 0)
        self._taken_against[key] = self._last_read.get(key)
        if misread is not None:
            self._misread_as[key] = (code, misread)

    def _take_card(self, key: str, place: str, code: str, legal: set[str],
                   evidence: CardEvidence, watched: bool) -> None:
        """Go on with `code` at `key` as the rules chose it from an unsure look: later unsure
        reads that still back it agree, and so does this very look while its pixels stay; the
        event about to be recorded opens its question (`watched`: taken on the rules' word)."""
        misread = None
        if watched and not key.startswith("init."):  # a pile's next card lies on it anyway
            misread = {c for c, p in evidence.ranked() if c != code and p >= CONSISTENT}
        self._believe(key, code, misread)
        self._held_card = None
        self._pending_question = (key, place, [c for c in CARDS if c in legal],
                                  evidence.copy(), self._snapshot(), watched)

    def _with_questions(self, evidence: CardEvidence, legal: set[str],
                        open_cards: dict) -> tuple[float | None, bool]:
        """The rules rule out a card already seen; but a card an open question went on with may
        not be there after all. Where the card read here is likeliest such a card, the two
        places are weighed together: the question keeps its card and this place takes its best
        other, or the question takes its next best and this place that card. The likelier pair
        is gone on with (the question's answer rewritten if need be, still open; settled where
        ACCEPT sure). Returns how sure the card now best here is (None if nothing bears), and
        whether the journal was rewritten."""
        honest = evidence.ranked(lambda c: c in legal or c in open_cards)
        if not honest:
            return None, False
        if honest[0][0] not in open_cards or honest[0][0] in legal:
            # (a card the rules allow here anyway, from the other player's deck, say, is no
            # competitor of the question's)
            best = evidence.ranked(legal.__contains__)
            return (dict(honest).get(best[0][0], 0.0) if best else None), False
        # reads lying mostly on cards that can't be here say the reader took a suit for its
        # twin, or the place is misbelieved (the card it covers, say): weighed over what is
        # left, a 10 % read becomes 98 %, and the swap it makes is a question, never settled
        # (xv-s71: a 9S read 90 % where only red cards were allowed settled the question on
        # a4, rightly going on with 9C, to 9S; v3-s149: a QH read QD 69 % rightly turned the
        # a5 set-up card, taken as QH, into a question)
        weak = sum(p for c, p in evidence.ranked() if c in legal or c in open_cards) < LEAN
        taken, p_taken = honest[0]
        q = open_cards[taken]
        here = [(c, p) for c, p in honest if c != taken]
        there = q.ranked()
        alternatives = [(c, p) for c, p in there if c != taken]
        if not alternatives:
            return self._unnamed_answer_gives_way(q, taken, p_taken,
                                                  dict(there).get(taken, 0.0), weak)
        # this place's best other card: the likeliest listed, or where the reads name no
        # other, an unlisted one's share of what they leave
        rest = rest_per_card(honest, lambda c: c in legal or c in open_cards)
        keep = dict(there).get(taken, 0.0) * (here[0][1] if here else rest)
        share = 0.0
        for alt, p_alt in alternatives:
            # the question's likeliest other answer first; where the rules refuse it there now
            # (the card turned up elsewhere since), the next
            swap = p_alt * p_taken
            share = swap / max(keep + swap, 1e-12)
            if share >= ACCEPT and not weak:
                if self._settle(q, alt, f"{taken} was seen elsewhere: check it"):
                    return share, True
            elif share > 0.5:
                if self._choose(q, alt):
                    q.event.question = q.describe()
                    return share, True
            else:
                break
        if share > 0.5:
            return None, False  # the rules refuse every swap: the question keeps its card
        return 1.0 - share, False

    def _unnamed_answer_gives_way(self, q: CardQuestion, taken: str, p_here: float,
                                  p_there: float, weak: bool) -> tuple[float | None, bool]:
        """`_with_questions` where the question's reads name no card but the one it went on
        with: this place, reading that card surer than the question's own reads did, takes
        it, and the question goes on with what the reader is known to take for that card (its
        twin; for a jack, the joker), else the first answer the rules allow; still asked, and
        this place's card is an open question too (at GO_ON: neither read outweighs the other
        by the rules). v6-s257: white's joker on its initiative pile read JC 68 %, then the
        real JC laid on a3 read 90 % was refused; the game took a QS no read named, re-read
        the table and lost the moves after it (replay of the 78 games: v6-s257 79 -> 81 moves,
        5 spurious as before; no other game changed). Of the 15 such refusals in those games,
        the surer read was this place's in 6 of the 9 where the question's card was wrong and
        in 1 of the 6 where it was right (at under LEAN, kept out). Where no read named the
        question's card (a stand-in of the rank or colour read) there is nothing to weigh:
        letting it give way too cost v8-s337 2 moves and 3 spurious events. Returns as
        `_with_questions`."""
        if weak or p_here < LEAN or p_here <= p_there or p_there < CONSISTENT:
            return None, False
        for alt in dict.fromkeys(taken_for(taken) + q.answers):
            if alt != taken and self._choose(q, alt):
                q.event.question = q.describe()
                return GO_ON, True
        return None, False

    def _joker_misread(self, cell: str, text: str, left: bool = False) -> str | None:
        """A movement card read sure that the rules refuse, where the card it covers on `cell`
        was itself taken from a read: a joker lying on the board has no colour, and a joker
        the reader took for another card (the held-out tango joker's "J" over an "o" reads as
        a jack of diamonds at 99.99 %) makes the next card laid on it look illegal (session 17,
        s51: a QH laid on it was taken for that jack misread, and the game stalled there).
        Where the rules take `text` with the covered card as the joker, the action that laid
        it is rewritten to the joker and its event flagged, and `text` applied. Where the
        covered card is an open question, each answer its reads still weigh that `text` may
        cover (`CardQuestion.coverable_by`: the joker, a card of the other colour) is tried,
        likeliest first, with the card laid free to make its own questions elsewhere give way
        (val-s35: black's QS, held by the question on its initiative pile, whose card was the
        other joker). `left`: `cell` is the card the unit moved off, which the rules weigh
        the same way (v5-s227: white's bishop left a joker read QD sure for b2 with an AD).
        Returns the action applied and the notes for this move, or None (nothing changed)."""
        misread = self._engine_card(f"{cell}.card")
        if left and misread is not None and misread[:-1] not in COURTS:
            # the readers take jokers for courts, not for number cards (of 118 looks at a
            # joker read sure as another card in the 78 recorded games, every one a court):
            # a number card refusing the move off it says the game is out of step, and a
            # joker there only hides it (v7-s307: a 2H read 3H; v6-s257: a 6H)
            return None
        entry = self._laid_on_a_joker(cell, text)
        where = f"the {misread} it left" if left else f"the {misread} under it"
        note = f"{where} was read wrong: a joker; check it"
        if entry is not None:
            if not self._rewrite_card(
                    entry, "JK", text, f"read as {misread}, but " + (
                        "the move off it could only be made from" if left
                        else "a later card laid on it could only lie on") +
                    " a joker: taken as the joker; check it"):
                return None
            self._apply(parse_action(text))
            return text, [note]
        q = self._question_on_top(cell)
        laid = text.split()[-1]
        if q is None or not q.coverable_by(laid):
            return None
        before, saved = q.chosen, self._saved(q)
        for alt, p in q.ranked():
            if p < CONSISTENT or alt == before or may_be_same(laid, alt) \
                    or not self._choose(q, alt):
                continue
            try:
                applied, notes = self._apply_giving_way(text)
            except RulesError:
                self._restore(q, saved)
                continue
            q.event.question = q.describe()
            what = "a joker" if alt == "JK" else alt
            return applied, [f"{where} was read wrong: {what}; check it"] + notes
        return None

    def _standing_card_gives_way(self, frm: str, to: str, allowed, accept: float, side: str
                                 ) -> tuple[str | None, list[str]]:
        """The movement card a unit laid on `to` as it left `frm`, whose reads name only cards
        the rules refuse there, where the card it left is an open question. The colour rule
        ties the two: a standing card misread in colour refuses every card of the colour read
        for the move off it (v8-s349: white's AD on d2 read AC 65 %, JK 27 %; the 3C white
        laid on c2, read 3C 61 %, 2C 36 %, could not follow a black standing card; the game
        held, re-read the table, and lost 15 moves). Each other answer the question's own
        reads still weigh is tried, likeliest first, where it lets a card the movement card's
        reads name lie on `to`, and kept where that card then resolves (`_resolve_card` with
        `allowed`, `accept`, `side`); the question stays open. Returns the card and notes, or
        (None, []) with the question and the hold as they were."""
        q, evidence = self._question_on_top(frm), self.evidence.get(f"{to}.card")
        if q is None or evidence is None:
            return None, []
        held = self._held_card, self._held_keys, self.holding
        before, saved = q.chosen, self._saved(q)
        for alt, p in q.ranked():
            if p < CONSISTENT or alt == before or not self._choose(q, alt):
                continue
            if any(p_card >= CONSISTENT and allowed(card)
                   for card, p_card in evidence.ranked()):
                card, why = self._resolve_card(f"{to}.card", to, allowed, accept, side=side)
                if card is not None:
                    q.event.question = q.describe()
                    what = "a joker" if alt == "JK" else alt
                    return card, [f"the {before} it left was read wrong: {what}; check it"] + why
            self._restore(q, saved)
        self._held_card, self._held_keys, self.holding = held
        return None, []

    @staticmethod
    def _saved(q: CardQuestion) -> tuple[str, bool, list[str]]:
        """What `_restore` puts back after q was tried with another answer."""
        return q.chosen, q.watched, list(q.went_with)

    def _restore(self, q: CardQuestion, saved: tuple[str, bool, list[str]]) -> None:
        """Question q as it was before it was tried with another answer (`_saved`)."""
        chosen, watched, went_with = saved
        self._choose(q, chosen)
        q.watched, q.went_with = watched, list(went_with)

    def _question_on_top(self, cell: str) -> CardQuestion | None:
        """The open card question about the card on top of `cell`, the one the game went on
        with there and asked of the action that laid it (None where there is none)."""
        key = f"{cell}.card"
        top = self._engine_card(key)
        return next((q for q in self.questions if isinstance(q, CardQuestion) and q.key == key
                     and q.chosen == top and q.entry == self._last_laid_on(cell)), None)

    def _last_laid_on(self, cell: str) -> int | None:
        """The journal entry that laid the card now on top of `cell`."""
        return next((i for i in range(len(self.journal) - 1, -1, -1)
                     if lays_on(self.journal[i]) == cell), None)

    def _earlier(self, side: str, card: str) -> int | None:
        """The journal entry where `side`'s deck last turned up `card`."""
        return next((i for i in range(len(self.journal) - 1, -1, -1)
                     if self.journal[i].split()[0] == side
                     and self.journal[i].split()[-1] == card), None)

    def _laid_card_is_the_twin(self, card: str, text: str) -> tuple[str, str] | None:
        """A movement card that the rules refuse because its deck turned it up before on a
        set-up card or an initiative pile: the earlier card was read bare, this one under the
        unit that moved onto it (a piece hides part of a card), so this read is the reader's
        usual confusion and the card laid is its twin of the same rank and colour, where the
        rules take it (s64: white's 3S initiative card, read bare, was taken for a 3C when a
        3C laid under a king read as 3S, and both events came out wrong). Returns the action
        and the note, or None."""
        if card == "JK" or text.split()[1] != "move":
            return None
        entry = self._earlier(text.split()[0], card)
        if entry is None or self.journal[entry].split()[1] not in ("initiative", "setup"):
            return None
        twin_card = twin_of(card)
        twin = with_card(text, twin_card)
        if not self._legal(twin):
            return None
        self._believe(f"{lays_on(text)}.card", twin_card, {card})
        return twin, (f"read as {card} under its unit, but this deck's {card} was seen bare "
                      f"before: taken as {twin_card}; check it")

    def _twin_gives_way(self, card: str, text: str) -> str | None:
        """A card that the rules refuse because its deck already turned it up, where that
        earlier card is out of sight now (an initiative card covered since, a card under
        others) and was named by the reader: clubs and spades, diamonds and hearts are the
        reader's usual confusion, so the earlier one is taken as the twin of the same rank
        and colour, its event flagged, where the rules take both (session 17, s64: black's
        4C read as 4S at round 1 refused the real 4S at round 14, and the game went wrong
        from there). Returns the note for this action, or None (nothing changed)."""
        if card == "JK":
            return None
        twin = twin_of(card)
        side = text.split()[0]
        entry = self._earlier(side, card)
        if entry is None:
            return None
        verb = self.journal[entry].split()[1]
        where = f"init.{side}" if verb == "initiative" else f"{lays_on(self.journal[entry])}.card"
        if verb not in ("initiative", "move", "setup") or self._engine_card(where) == card:
            return None  # (a card still in view: the look there says which)
        if not self._rewrite_card(entry, twin, text, f"read as {card}, but {card} turned up "
                                  f"again later: taken as {twin}; check it"):
            return None
        return f"the earlier {card} of this deck was read wrong: {twin}; check it"

    def _sure_read_weighed(self, card: str, text: str) -> str | None:
        """A card read sure that the rules refuse because its deck turned it up before, where
        the earlier one is still in view (so not simply its twin): the two places' reads are
        weighed as a pair that can't hold the same card (`_earlier_gives_way`), as for a card
        the reader could not name alone (v4-s199: black's QH on g4, read JH 97 % and QH 3 %
        under its unit, refused black's JH read 100 % on its initiative pile, and the game
        held there until the table was re-read). Returns the note for this action, or None."""
        words = text.split()
        side = words[0]
        key = f"init.{side}" if words[1] == "initiative" else f"{lays_on(text)}.card"
        looks = self._card_looks.get(key)
        if looks is None or looks[0] != card:
            return None

        def allowed(code: str) -> bool:
            return self._legal(with_card(text, code))

        legal = {c for c in CARDS if allowed(c)}
        if not self._earlier_gives_way(looks[1], legal, side, allowed):
            return None
        return f"{card} turned up again here, read sure: the earlier {card} of this deck " \
            "was taken as the other card its reads named; check it"

    def _event_with(self, text: str) -> TableEvent | None:
        """The latest logged event that reads `text`."""
        return next((e for e in reversed(self.events) if e.text == text), None)

    def _event_of(self, entry: int) -> TableEvent | None:
        """The logged event of journal `entry`."""
        return self._event_with(self.journal[entry])

    def _confirmed_by_a_player(self, entry: int) -> bool:
        """Whether journal `entry` is an action a player entered or settled: what the players
        said is never rewritten from what the camera saw later."""
        return any(e.text == self.journal[entry]
                   and any(f.startswith("confirmed by a player") for f in e.flags)
                   for e in self.events)

    def _rewrite_card(self, entry: int, code: str, text: str | None, why: str) -> bool:
        """Rewrite the card of journal `entry` (an open question's answer, or an event taken
        as seen, then flagged with `why`) where the rules then take `text` (None: no action
        waits on it); else nothing changes. A player's word is never rewritten."""
        if self._confirmed_by_a_player(entry):
            return False
        old = self.journal[entry]
        question = next((q for q in self.questions if isinstance(q, CardQuestion)
                         and q.entry == entry), None)
        if question is not None:
            before = question.chosen
            if not self._choose(question, code):
                return False
            if text is not None and not self._legal(text):
                self._choose(question, before)
                return False
            return True
        if not self._rewrite(self._start, {entry: with_card(old, code)}):
            return False
        if text is not None and not self._legal(text):
            self._rewrite(self._start, {entry: old})
            return False
        event = self._event_with(old)
        if event is not None:
            event.text = with_card(old, code)
            event.flags.append(why)
        return True

    def _question_gives_way(self, card: str, text: str) -> str | None:
        """A card read sure here that the rules refuse because an open question went on with
        it elsewhere: the question takes its next likeliest answer that makes `text` legal
        (still open): one the reader named at CONSISTENT or more, else what the reader is
        known to take for that card. Where the reader named no other, the first the rules
        allowed there stands in, still asked (s64: black's 2C read as the joker at 76 % and
        nothing else refused black's last joker, and the game's last rounds with it). Returns
        the note for the players, or None (nothing changed)."""
        # (only this deck's: the other player's card of that name is no obstacle here)
        for q in self._questions_by_deck().get(text.split()[0], []):
            if q.chosen != card:
                continue
            ranked = q.ranked()
            likely = [alt for alt, p in ranked if p >= CONSISTENT]
            # then what the reader is known to take for this card: its same-colour twin, and
            # for a jack the joker, whose big "J" over "oker" reads as a jack (s31: the tango
            # joker on b4 was read JC at 100 %, and when black's JC turned up it gave way to
            # a 3C listed at 0 %)
            order = likely + taken_for(card) + [alt for alt, _p in ranked]
            for alt in dict.fromkeys(order + [c for c in q.answers if c not in order]):
                if alt == card or not self._choose(q, alt):
                    continue
                if self._legal(text):
                    q.event.question = q.describe()
                    return f"{card} was seen here: the open question on {q.place} now goes " \
                           f"on with {alt}"
                self._choose(q, card)  # no help: as it was
                break
        return None

    def _order_gives_way(self, diff: dict, seen: dict) -> bool:
        """A side lays a card under its unit once the round is over, with no new initiative
        card on either pile: the round is not over, so the other side won the initiative and
        moved first, and the turn the engine filled in as passed is still to come (s64:
        black's AC read as 3C at 74 % against white's KD; black's move was taken as white
        passing, and white's move after it held the game until the next round). Of this
        round's initiative piles' questions (open, or taken on the rules' word), the answer
        that would have it so and that the reads found likeliest, on either pile, is taken,
        asked; True where one was."""
        movers = {str(seen[k[:-5] + ".unit"]).split("-")[0] for k in diff
                  if k.endswith(".card") and diff[k][1] is not None
                  and isinstance(seen.get(k[:-5] + ".unit"), str)}
        if not movers:
            return False
        drawn = {}  # each side's initiative card of this round: its journal entry
        for i, entry in enumerate(self.journal):
            if entry.split()[1] == "initiative":
                drawn[entry.split()[0]] = i
        # a card taken on the rules' word too (watched): the order of play outweighs a read
        # (v6-s263: white's QC read JC 99.7 % against black's JS; black's move after white's
        # went into the next round, and the game lost 27 moves)
        asked = [q for q in self.questions if isinstance(q, CardQuestion)
                 and q.key.startswith("init.") and drawn.get(owner_of(q)) == q.entry]
        # both piles' answers the reads name, likeliest first, then the rest pile by pile
        named = sorted(((p, n, alt) for n, q in enumerate(asked) for alt, p in q.ranked()
                        if alt != q.chosen), key=lambda t: -t[0])
        tries = [(asked[n], alt) for _p, n, alt in named] + [
            (q, alt) for q in asked for alt in q.answers
            if alt != q.chosen and alt not in dict(q.ranked())]
        was = {id(q): (q.chosen, q.watched) for q in asked}
        for q, alt in tries:
            if alt == q.chosen or not self._choose(q, alt):
                continue
            state = self.state
            if not state.is_terminal() and state.to_move.value in movers and not (
                    state.is_chance_node() and state.pending[0].verb is Verb.INITIATIVE):
                q.event.question = q.describe()
                q.event.flags = [f for f in q.event.flags  # (the latest order stands)
                                 if "moved first in this round" not in f]
                q.event.flags.append(f"{state.to_move.other.value} moved first in this "
                                     f"round and {state.to_move.value} after: not "
                                     f"{was[id(q)][0]}; check it")
                return True
            self._choose(q, was[id(q)][0])  # no help: as it was
            q.watched = was[id(q)][1]
        return False

    def _watch_an_initiative_card(self, key: str, side: Side, card: str) -> None:
        """A side's initiative card read sure, where its reads named another card too: it is
        kept, but watched, so that the order of play can turn it to that card
        (`_order_gives_way`) rather than turn the other pile's card to one no read named.
        v7-s313, a tie (both draw again): black's KD read JD 79 %, KD 21 %, against white's
        JD; black's move then came with no new card, and the rounds went out of step. s31:
        white's JD read 3D 79 %, JD 14 %, against black's 7C read 7S; white moved first, and
        black's card was turned to a 3C no read had named (replay of the 78 games: spurious
        129 -> 127, moves 6,245 -> 6,244, open questions going on with the right card 264 ->
        266; the fixtures' spurious 4 -> 3)."""
        looks = self._card_looks.get(key)
        if looks is None or looks[0] != card:
            return
        evidence = looks[1]
        if not any(alt != card and p >= CONSISTENT for alt, p in evidence.ranked()):
            return
        answers = [c for c in CARDS if self._legal(f"{side.value} initiative {c}")]
        self._pending_question = (key, f"{side.value}'s initiative pile", answers,
                                  evidence.copy(), self._snapshot(), True)
