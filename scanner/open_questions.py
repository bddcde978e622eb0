"""The tracker's open questions: a card or a side's placement the game went on with before the
camera was sure of it. Each keeps what was read of it and the journal entries its answer is
written into; later looks settle it (`scanner.tracker`, module doc).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engines.royal_battles import GameState, Side
from engines.royal_battles.cards import CARDS, parse_card
from engines.royal_battles.units import UNIT_KINDS

from .observations import (
    CONSISTENT,
    FOLLOW,
    LEAN,
    ONCE_IN_A_DECK,
    SWITCH,
    CardEvidence,
    may_be_same,
    normalised,
)
from .piece_height import stature_log_odds

if TYPE_CHECKING:
    from .tracker import TableEvent


@dataclass
class Snapshot:
    """The tracker's engine just before an open question's first action: a settled answer
    replays the journal from here."""

    state: GameState
    entry: int  # journal length at that point
    origin: dict[str, str]
    arrived: dict[str, int]


@dataclass
class CardQuestion:
    """Which card lies at `key` (a cell's top card or an initiative pile)."""

    key: str
    place: str
    event: TableEvent
    entry: int  # the journal entry of the action that laid it
    snapshot: Snapshot
    answers: list[str]  # every card the rules allowed there
    evidence: CardEvidence
    chosen: str  # the card standing in the engine now
    bare_look: bool = False  # whether a look at it with nothing standing on it began
    went_with: list[str] = field(default_factory=list)  # answers the game went on with before
    # taken at ACCEPT after the rules (the event stands as seen, flagged): kept only so that a
    # card later seen elsewhere, which the rules say can't be in both places, is weighed
    # against it; once its answer changes it is an open question like any other
    watched: bool = False

    @property
    def events(self) -> list[TableEvent]:
        return [self.event]

    def ranked(self) -> list[tuple[str, float]]:
        allowed = set(self.answers)
        return self.evidence.ranked(lambda c: c in allowed)

    def coverable_by(self, code: str) -> bool:
        """Could a card read sure as `code` on this cell have been laid over the card in
        question? Over the card gone with it could not (same colour), but the reads still
        weigh another answer it may cover: a joker (no colour), or a card of the other
        colour. A card the question itself weighs is a look at the question's card."""
        ranked = dict(self.ranked())
        if ranked.get(code, 0.0) >= CONSISTENT:
            return False
        return any(p >= CONSISTENT and alt != self.chosen and not may_be_same(code, alt)
                   for alt, p in ranked.items())

    def describe(self) -> str:
        ranked = self.ranked()[:3]
        if ranked:
            looks = "it looks like: " + ", ".join(f"{c} {p:.0%}" for c, p in ranked)
        elif read := self.evidence.ranked()[:3]:
            # every card it looked like was since seen elsewhere, or the rules refuse it here
            looks = "it looked like " + ", ".join(f"{c} {p:.0%}" for c, p in read) \
                + ", none of which can lie there now"
        else:
            looks = "the camera could not read it"
        return f"which card lies on {self.place}? going on with {self.chosen}; {looks}"


@dataclass
class PlacementQuestion:
    """Which of a side's units stands where: the army's kinds over the cells they were placed
    on (`origins`). Each place a unit stood on is one view of it (seen again from the same
    place, it is the same view); the kind a view shows is the mean of its fresh reads (reads
    of one still view are not independent)."""

    side: Side
    origins: list[str]
    options: list[tuple[str, ...]]  # kinds per origin, each a permutation of the army left
    events: list[TableEvent]
    entries: list[int]
    snapshot: Snapshot
    # (origin, cell) -> [summed kind probabilities, reads, summed top probability of each read]
    views: dict[tuple[str, str], list] = field(default_factory=dict)
    chosen: tuple[str, ...] = ()
    went_with: list[tuple[str, ...]] = field(default_factory=list)  # as `CardQuestion`'s
    # a side's placement taken ACCEPT sure is watched, not asked: its units' later looks
    # still count, and where they make another assignment FOLLOW likely it is asked again
    watched: bool = False
    # origin -> the unit's height over its set-up card (`piece_height`), weighed with the views
    heights: dict[str, float | None] = field(default_factory=dict)

    def add_view(self, origin: str, cell: str, kinds: dict[str, float]) -> None:
        if not kinds:
            return
        view = self.views.setdefault((origin, cell), [Counter(), 0, 0.0])
        view[0].update(kinds)
        view[1] += 1
        view[2] += max(kinds.values())

    def stray(self) -> float:
        """The chance that a view says nothing of its unit's kind, from how far its reads
        disagree with one another: where each read is sure but they name different kinds
        (the classifier lost in this light or on this set), the views are worth little; where
        they agree, they are taken at their word. Only views read twice or more tell."""
        agree = sum(max(sums.values()) for sums, n, _t in self.views.values() if n > 1)
        sure = sum(top for _s, n, top in self.views.values() if n > 1)
        return min(max(1.0 - agree / sure, 0.0), 0.9) if sure else 0.0

    def ranked(self) -> list[tuple[tuple[str, ...], float]]:
        stray = self.stray()
        # a unit's views from many cells add up, tempered by the square root of their number
        # as `CardEvidence`'s looks: one set in one light can fool every view alike
        views_of = Counter(o for o, _c in self.views)
        scores = []
        for option in self.options:
            kind_of = dict(zip(self.origins, option, strict=True))
            scores.append(sum(
                math.log(max((1 - stray) * sums.get(kind_of[o], 0.0) / n
                             + stray / len(UNIT_KINDS), 1e-3)) / math.sqrt(views_of[o])
                for (o, _c), (sums, n, _t) in self.views.items())
                + stature_log_odds(kind_of, self.heights))
        return sorted(zip(self.options, normalised(scores), strict=True), key=lambda ow: -ow[1])

    def backed(self) -> bool:
        """Whether the units' views still back the assignment gone with: it is the likeliest,
        and no other is 1 - FOLLOW likely. A placement taken sure unit by unit can be put in
        doubt by the units placed after it (two read as the army's one king); views that
        say little (kinds not read) leave it backed, as the army decided it. Measured at
        the set-up view: s42's two sides 0.82 against 0.14 and 0.997 (backed); s64 with a
        fine-tuned piece model 0.45 against 0.54 and 0.58 against 0.39 (not)."""
        ranked = self.ranked()
        runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
        return ranked[0][0] == self.chosen and runner_up < 1 - FOLLOW

    def doubted(self) -> set[str]:
        """The origins whose unit's kind is in doubt: over all assignments, the kind gone
        with there is less than SWITCH likely (two units read as each other leave the
        army's other units sure)."""
        ranked = self.ranked()
        return {o for i, o in enumerate(self.origins)
                if sum(p for option, p in ranked if option[i] == self.chosen[i]) < SWITCH}

    def describe(self) -> str:
        best, p = self.ranked()[0]
        now = ", ".join(f"{k} {c}" for c, k in zip(self.origins, self.chosen, strict=True))
        likeliest = ", ".join(f"{k} {c}" for c, k in zip(self.origins, best, strict=True))
        return f"which of {self.side.value}'s units stands where? going on with {now}; " \
               f"likeliest now: {likeliest} ({p:.0%})"


def speaks_of(read, q: CardQuestion) -> bool:
    """Does a card reading speak of the card in question (rather than of a new one on it)?"""
    if read is None or read.face_down:
        return False
    best = read.card or (read.candidates[0][0] if read.candidates else None)
    if not read.card and dict(q.evidence.ranked()).get(best, 0.0) >= CONSISTENT:
        # an unsure read naming what the question's own reads named, refused there or not, is
        # that card seen again (v3-s173: an orell joker under a token, read JD 51 % when laid,
        # JD 60 % later, was taken for a JD laid over it, a move the game then placed wrong)
        return True
    if best not in q.answers:
        return False
    # a card the question itself still weighs is a look at that card, whatever its colour;
    # any other is news on an initiative pile (a new draw may be of either colour), while on a
    # cell a card laid over another differs in colour from it, so a read of the same colour
    # is the question's card misread
    if dict(q.ranked()).get(best, 0.0) >= CONSISTENT:
        return True
    return not q.key.startswith("init.") and may_be_same(best, q.chosen)


def owner_of(q: CardQuestion) -> str:
    """The side whose deck a question's card came from ("white", "black")."""
    return q.event.text.split()[0]


def against_rivals(q: CardQuestion, best: str, decks: dict[str, list[CardQuestion]]
                    ) -> float:
    """How sure `best` is at q's place when the cards that other questions of the same deck
    went on with (`GameTracker._questions_by_deck`) are not ruled out here (they may lie
    elsewhere after all): the rules narrow q's answers, but they can't make a read of one of
    those cards evidence for q's best. Each such rival is weighed with q as a pair that
    can't hold the same card, both places' reads together (session 18, s42: white's 7C
    and 7S, each read the other's way at 21 and 11 %, held each other open, when together
    they are 97 % sure); the least sure pair bounds it."""
    rivals = [r for r in decks.get(owner_of(q), []) if r is not q]
    held = {r.chosen for r in rivals}
    mine = dict(q.evidence.ranked((set(q.answers) | held).__contains__))
    pairs = []
    for r in rivals:
        if mine.get(r.chosen, 0.0) < 1e-3:
            continue  # q's reads don't name r's card: no rival
        theirs = dict(r.evidence.ranked(
            (set(r.answers) | held | {q.chosen}).__contains__))
        # only a card the deck holds once can't lie in both places: it holds two jokers
        # (val-s19: white's two initiative jokers, each read 99 % a joker, held each other
        # open at 50 % to the game's end)
        apart = 1.0 - sum(pm * theirs.get(c, 0.0) for c, pm in mine.items() if c in ONCE_IN_A_DECK)
        clash = theirs.get(best, 0.0) if best in ONCE_IN_A_DECK else 0.0
        pairs.append(mine.get(best, 0.0) * (1.0 - clash) / max(apart, 1e-12))
    return min(pairs, default=mine.get(best, 0.0))


PICTURES = frozenset((11, 12, 13, 15))  # jack, queen, king, joker: a picture, no pips


def of_the_colour_read(evidence: CardEvidence, legal: set[str]) -> str | None:
    """The lowest allowed card of the colour the reads give most weight (the joker counting
    for none), or of either colour where none of it is allowed; None if no card is."""
    weight = {"red": 0.0, "black": 0.0}
    for code, p in evidence.ranked():
        card = parse_card(code)
        if not card.is_joker:
            weight[card.colour] += p
    for colour in sorted(weight, key=lambda c: -weight[c]):
        pool = [c for c in CARDS if c in legal and not parse_card(c).is_joker
                and parse_card(c).colour == colour]
        if pool:
            return min(pool, key=lambda c: parse_card(c).rank)
    return None


def of_the_rank_read(evidence: CardEvidence, legal: set[str]) -> str | None:
    """The allowed card of a colour read whose rank the reads give the most weight (the
    readers tell red from black far better than ranks apart); where there is none and the
    reads lie mostly on court cards, the joker if allowed: the other picture card, which the
    readers rarely name on a design they never saw (xv-s111: an orell joker under a rook read
    QD, JH or KD, no court allowed there, and the game waited for the players to its end;
    v3-s173: one read JH, QH or QD where red was refused went on as QS). Else the allowed
    card of a rank read, whatever its colour; None if there is none."""
    mass: dict[int, float] = {}
    colours: set[str] = set()
    for code, p in evidence.ranked():
        card = parse_card(code)
        mass[card.rank] = mass.get(card.rank, 0.0) + p
        if not card.is_joker and p >= CONSISTENT:
            colours.add(card.colour)

    def best_of(pool):
        return max(pool, key=lambda c: mass[parse_card(c).rank], default=None)

    of_rank = [c for c in CARDS if c in legal and parse_card(c).rank in mass]
    in_colour = best_of(c for c in of_rank if parse_card(c).is_joker
                        or parse_card(c).colour in colours)
    if in_colour is not None:
        return in_colour
    if "JK" in legal and sum(p for r, p in mass.items() if r in PICTURES) >= LEAN:
        return "JK"
    return best_of(of_rank)


def entries_of(q) -> list[int]:
    """The journal entries a question's answer is written into."""
    return [q.entry] if isinstance(q, CardQuestion) else list(q.entries)


def set_entries(q, entries: list[int]) -> None:
    if isinstance(q, CardQuestion):
        q.entry = entries[0]
    else:
        q.entries = entries
