"""What the camera's frames say, for the tracker: one settled frame's observation per key (a
cell's top card and unit, an initiative pile), each believed only after several frames in a row
(`Belief`), and the reads of a card nobody could name alone added up over frames
(`CardEvidence`). The levels of belief the tracker acts on are set here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engines.royal_battles import CELL_NAMES, GameState, Side
from engines.royal_battles.cards import CARDS, DECK

from .detections import TableReading

NO_READING = object()  # what a frame says of a key it could not read: nothing
UNREAD = "?"  # a card lies there, but the camera could not say which on its own
UNKNOWN_KIND = "?"  # "white-?": a white unit whose kind the camera could not say
ACCEPT = 0.9  # a card the rules leave standing is taken when this sure (and flagged)
CONSISTENT = 0.05  # an unsure read still supports the believed card at this probability
LEAN = 0.5  # an unsure read this sure of a card that can't be the believed one is news
GO_ON = 0.5  # below ACCEPT but this likely: the game goes on with it as an open question
SWITCH = 0.97  # later looks rewrite the answer the game went on with only when this sure
FOLLOW = 0.8  # an open question goes on with another answer once that is this likely
LEAD = 2.0  # or, for a placement, once that is this many times as likely as the standing one
FIRM = 0.95  # a piece read this sure is still there (`GameTracker._firmly_occupied`)
# a piece read unsure whose occupancy is under this (the classifier's own `unsure` class takes
# nearly all of it) is a bare card: see `reading_values`
BARE_UNSURE = 0.01


def normalised(scores: list[float]) -> list[float]:
    """Log scores -> probabilities (they sum to 1)."""
    top = max(scores)
    weights = [math.exp(x - top) for x in scores]
    total = sum(weights)
    return [w / total for w in weights]


class CardEvidence:
    """What the reader said about one place's card over its fresh reads. Each read's short
    list of candidates is a distribution over the deck (the unlisted cards share what the list
    leaves). Reads of one still card are not independent witnesses (the same pixels misread the
    same way), so within one look they are averaged in log space, never multiplied into false
    certainty. A new look is the card seen bare where it was read under a piece (a glimpse
    before its unit came, the unit gone from it): other pixels are a further witness, so looks
    add up, tempered by the square root of their number (one design can fool every look the
    same way)."""

    N_CODES = 53

    def __init__(self) -> None:
        self._looks: list[tuple[dict[str, float], int]] = []  # closed looks: (delta, reads)
        self.delta: dict[str, float] = {}  # this look's listed cards: summed log p - log floor
        self.reads = 0  # this look's reads
        self._scores: tuple[dict[str, float], set[str]] | None = None  # ranked()'s, until a read

    def new_look(self) -> None:
        """The reads that follow are of different pixels (call before adding them)."""
        if self.reads:
            self._looks.append((self.delta, self.reads))
            self.delta, self.reads = {}, 0
            self._scores = None

    @property
    def looks(self) -> int:
        return len(self._looks) + (1 if self.reads else 0)

    def add(self, candidates: list[tuple[str, float]]) -> None:
        if not candidates:
            return
        rest = max(1.0 - sum(p for _, p in candidates), 1e-4)
        floor = math.log(rest / max(self.N_CODES - len(candidates), 1))
        for code, p in candidates:
            self.delta[code] = self.delta.get(code, 0.0) + math.log(max(p, 1e-6)) - floor
        self.reads += 1
        self._scores = None

    def ranked(self, allowed=None) -> list[tuple[str, float]]:
        """Posterior over the listed cards that `allowed(code)` admits, best first; the
        unlisted cards it admits keep their share of the mass."""
        if self._scores is None:  # the tracker asks this many times a frame between reads
            looks = self._looks + ([(self.delta, self.reads)] if self.reads else [])
            if not looks:
                return []
            temper = 1.0 / math.sqrt(len(looks))
            self._scores = ({c: temper * sum(d.get(c, 0.0) / n for d, n in looks)
                             for c in CARDS}, set().union(*(d for d, _ in looks)))
        by_code, listed = self._scores
        codes = [c for c in CARDS if allowed is None or allowed(c)]
        if not codes:
            return []
        probs = normalised([by_code[c] for c in codes])
        return sorted(((c, p) for c, p in zip(codes, probs, strict=True) if c in listed),
                      key=lambda cw: -cw[1])

    def copy(self) -> CardEvidence:
        other = CardEvidence()
        other._looks = [(dict(d), n) for d, n in self._looks]
        other.delta, other.reads = dict(self.delta), self.reads
        return other


@dataclass
class Belief:
    """One observed quantity with hysteresis: the believed value and a candidate replacing it."""

    value: object
    candidate: object = NO_READING
    streak: int = 0

    def observe(self, value: object, needed: int) -> bool:
        """Feed one settled observation; True when the believed value changed."""
        if value is NO_READING:
            return False
        if value == self.value:
            self.candidate, self.streak = NO_READING, 0
            return False
        if value == self.candidate:
            self.streak += 1
        else:
            self.candidate, self.streak = value, 1
        if self.streak >= needed:
            self.value, self.candidate, self.streak = value, NO_READING, 0
            return True
        return False

    @property
    def settling(self) -> bool:
        return self.candidate is not NO_READING


def visible_table(state: GameState, sides_only: bool = False) -> dict[str, object]:
    """What a camera could see of an engine state: top cards, units ("white-knight", or just
    "white" with `sides_only`) and initiative cards."""
    out: dict[str, object] = {}
    for cell, name in enumerate(CELL_NAMES):
        top = state.top(cell)
        unit = state.units.get(cell)
        out[f"{name}.card"] = top.card.code if top else None
        out[f"{name}.unit"] = (unit.side.value if sides_only else
                               f"{unit.side.value}-{unit.kind}") if unit else None
    for side in Side:
        card = state.initiative[side]
        out[f"init.{side.value}"] = card.code if card else None
    return out


def card_value(card, believed: object, board: bool = True) -> object:
    """One card reading as an observation: its code when read; when unsure but its candidates
    still back the believed card, that card (a piece now hides part of it); `UNREAD` when they
    do not (something new lies there); `NO_READING` when the reading says nothing.

    On the board a card laid over another must differ from it in colour (`may_be_same`), so a
    read that names, or mostly leans to, a card of the believed card's colour is not news: it
    is the same card misread (typically under the piece standing on it). Initiative piles
    (`board` false) take any card over the last."""
    if card is None:
        return NO_READING
    known = isinstance(believed, str) and believed in CODES
    if card.card:
        if board and known and card.card != believed and may_be_same(card.card, believed):
            return believed
        return card.card
    if not card.candidates or card.face_down:
        return NO_READING
    if not known:
        return UNREAD
    top, p_top = card.candidates[0]
    backed = any(code == believed and p >= CONSISTENT for code, p in card.candidates)
    if backed and (p_top < LEAN or may_be_same(top, believed)):
        return believed
    # the readers take jokers for courts: a court-leaning read still backing the believed
    # joker is that joker misread (a card laid over a joker hides it: the read then gives
    # the joker next to nothing). v7-s283: a berlin joker under a black knight, read JC 58 %,
    # JK 34 %, was taken for a card laid there in place, and the knight's move next door lost
    if board and backed and believed == "JK" and top[:-1] in COURTS:
        return believed
    if board and sum(p for code, p in card.candidates if may_be_same(code, believed)) >= LEAN \
            and not _a_joker_over(card.candidates, believed, backed) \
            and not _another_rank(card.candidates, believed, backed):
        return believed
    return UNREAD


def _another_rank(candidates: list[tuple[str, float]], believed: str, backed: bool) -> bool:
    """Does an unsure read of the believed card's colour name another rank, the believed
    card's rank not at all, and the other colour a little? The readers tell ranks apart far
    better than suits, so that read is a card of the other colour laid over it, misread in
    colour: news (v8-s349: black's AS laid in place over its JH, read AH 53 %, AD 35 %, AS 7 %
    under its bishop, was taken for the JH misread; the move was lost, and the JH was later
    turned into a joker to explain the move off it). Without the other colour's share it is
    the card itself misread under its unit (v12-s487: a 4S under a bishop read 5S 52 %, KS,
    9S; counting that as news cost the game 40 of its 93 moves)."""
    if backed or believed == "JK":
        return False
    rank = believed[:-1]
    mass: dict[str, float] = {}
    for code, p in candidates:
        mass[code[:-1]] = mass.get(code[:-1], 0.0) + p
    other_colour = sum(p for code, p in candidates if not may_be_same(code, believed))
    return mass.get(rank, 0.0) < CONSISTENT and max(mass.values(), default=0.0) >= LEAN \
        and other_colour >= CONSISTENT


def _a_joker_over(candidates: list[tuple[str, float]], believed: str, backed: bool) -> bool:
    """Can an unsure read of the believed card's colour be a joker laid over it? A joker
    covers any card, and the readers take a joker they were never shown for a court card
    (v6-s277: an orell joker over a 5S read JS 46 %, JC 24 %, KS 10 % for the 44 frames it
    lay there, kept as the 5S). So a read leaning to courts, with nothing on the number card
    believed, is news."""
    return believed[:-1] not in COURTS and not backed \
        and sum(p for code, p in candidates if code[:-1] in COURTS) >= LEAN


CODES = frozenset(CARDS)
COURTS = ("J", "Q", "K")  # ranks drawn as a picture

ONCE_IN_A_DECK = frozenset(c.code for c in DECK if DECK.count(c) == 1)  # cards a deck holds once


def card_colour(code: str) -> str | None:
    return None if code == "JK" else ("red" if code[-1] in "HD" else "black")


def may_be_same(read: str, believed: str) -> bool:
    """Could a read whose best guess is `read` be of the card `believed`? A card laid over
    another must differ in colour from it, so a read leaning to the other colour may be a new
    card, never just a blurred look at the old one; a joker may cover anything and be covered
    by anything, so a joker on either side is never taken for the other card."""
    if (read == "JK") != (believed == "JK"):
        return False
    return card_colour(read) == card_colour(believed)


def reading_values(reading: TableReading, believed: dict[str, object] | None = None,
                   sides_only: bool = False, placing: dict[str, str] | None = None
                   ) -> dict[str, object]:
    """The observations one frame gives; unreadable ones are `NO_READING`. With `sides_only` a
    unit is observed by its side alone: once placed, a unit's kind follows it from cell to
    cell in the engine, and the camera's weakest answer (which kind) can't derail the game.
    `placing`: while units are placed, each free set-up card and the side whose units go
    there, so a unit seen standing on one is that side's even where its colour was unsure."""
    believed = believed or {}
    placing = placing or {}
    out: dict[str, object] = {}
    for name in CELL_NAMES:
        cell = reading.cells.get(name)
        card: object = NO_READING
        unit: object = NO_READING
        if cell is not None:
            # a unit stands only on a card: one read FIRM on a place read bare says its card
            # was missed (v7-s307: a paper token on an orell JD, no card found under it for
            # 26 settled frames while the knight was read at 1.0; its move was never logged)
            on_missed_card = cell.empty is True and cell.piece is not None \
                and cell.piece.piece not in (None, "empty") and cell.piece.confidence >= FIRM
            was = believed.get(f"{name}.card")
            if on_missed_card:
                # a card is there: the one believed, else one the rules must name
                card = was or UNREAD
            elif cell.empty is True and was is not None:
                # no card leaves the board: the one the game has there was missed (v5-s239: an
                # orell QD under glare read bare; the bishop taken off it was never logged,
                # its card seen gone with it); a unit is gone only where read so firmly
                unit = None if surely_empty(cell.piece) else NO_READING
            elif cell.empty is True:
                card, unit = None, None
            elif cell.empty is False:
                card = card_value(cell.card, was)
            piece = cell.piece if cell.empty is False or on_missed_card else None
            if piece is not None and piece.piece is not None:
                unit = None if piece.piece == "empty" else piece.piece
                if sides_only and unit is not None:
                    unit = str(unit).split("-")[0]
            elif piece is not None:
                # the kind unsure, but occupancy (and the side) sure: enough once set up; at
                # set-up "white-?" (the army still to place decides, see `_place`), or the
                # unit believed there when it is of that side
                occupied = getattr(piece, "occupied", None)
                side = getattr(piece, "seen_side", None) or (placing.get(name) if occupied
                                                             else None)
                if occupied is False or (occupied is None and piece.confidence < BARE_UNSURE):
                    # (the second: over the 78 recorded games, 730 reads with a unit
                    # on the cell left unsure by the piece classifier, all at 0.05 and up,
                    # while 1,458 of 5,836 such reads of bare cards, court pictures of decks
                    # it never saw, were under 0.01: s51's black rook taken off a tango QH
                    # read so for the rest of the game, and stood there in the game; an arm
                    # over a cell reads 0.033 and up, 328 cells of 200 held-out bench scenes)
                    unit = None
                elif occupied and side is not None:
                    was = believed.get(f"{name}.unit")
                    unit = side if sides_only else (
                        was if isinstance(was, str) and was.startswith(side + "-")
                        else f"{side}-{UNKNOWN_KIND}")
        out[f"{name}.card"] = card
        out[f"{name}.unit"] = unit
    for side in ("white", "black"):
        init = reading.initiative.get(side)
        out[f"init.{side}"] = card_value(init, believed.get(f"init.{side}"), board=False) \
            if init is not None and init.corners is not None else \
            (init.card if init is not None and init.card else NO_READING)
    return out


def rest_per_card(ranked: list[tuple[str, float]], admitted) -> float:
    """What each card `admitted(code)` lets in, and the reads never listed, keeps of the
    mass: `ranked` is `CardEvidence.ranked(admitted)`, whose unlisted cards share alike what
    the listed ones leave."""
    listed = dict(ranked)
    unlisted = sum(1 for c in CARDS if admitted(c) and c not in listed)
    return max(1.0 - sum(listed.values()), 0.0) / max(unlisted, 1)


def backs(look: list[tuple[str, float]], code: str | None) -> bool:
    """Does a read's short list name `code` at CONSISTENT or more?"""
    return code is not None and any(c == code and p >= CONSISTENT for c, p in look)


def surely_empty(read) -> bool:
    """Did a piece read see its cell empty, firmly?"""
    return read is not None and read.occupied is False and read.confidence >= FIRM


def card_readings(reading: TableReading) -> dict[str, object]:
    """The CardReading behind every card key of a frame (for the evidence)."""
    out: dict[str, object] = {}
    for name, cell in reading.cells.items():
        if cell.card is not None:
            out[f"{name}.card"] = cell.card
    for side, card in reading.initiative.items():
        out[f"init.{side}"] = card
    return out


def zone_of(key: str) -> str:
    """The scanner's zone ("d3", "init/white") of a card key ("d3.card", "init.white")."""
    return key[:-len(".card")] if key.endswith(".card") else key.replace("init.", "init/")


def card_key_of(zone: str) -> str:
    """The card key ("d3.card", "init.white") of a scanner's zone ("d3", "init/white")."""
    return zone.replace("init/", "init.") if zone.startswith("init/") else f"{zone}.card"
