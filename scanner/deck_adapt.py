"""Adapt the card reader to the decks on this table, from its own sure reads.

A deck the readers never saw (the held-out and validation designs) is read less well than
the training decks: its index glyphs and pips are new. But one game shows the reader the same
deck card after card, and most of them it reads sure. Those sure reads are labels: the
adapter keeps each (zone, card) read sure by the trained reader, and refits the readers' two
linear heads (rank, suit) over their 128-wide features on them, pulled toward the trained
heads (`PULL`), the trunk untouched (`models/cards/heads.py` exposes features and heads).

The refit heads only add answers where the trained reader was unsure, at `ADAPTED_SURE`; a
card the trained reader names sure keeps its name, and the two naming different cards sure
is no answer (`CardReader.read_quads`). And a crop whose trained heads give more than
`UNSEEN_MASS` to a rank or a suit this table has shown too rarely (under `SEEN_SHARE` of a
uniform deck's share of the sure reads) is read by the trained heads alone: refit heads that
never saw a suit read it as the suit they did see (gnome-plastic's clubs, read sure so rarely
that its refit heads named 70 clubs spades at 0.9999).

Measured on rendered stills (`royal-table cards bench --adapt`: each deck's sure reads of 16
stills teach, 32 other stills of it are read), see models/cards/MODEL_CARD.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

PULL = 0.003  # L2 pull of the refit heads' weights toward the trained heads'
UNSEEN_MASS = 0.01
SEEN_SHARE = 0.25
ADAPTED_SURE = 0.9999  # the refit heads' answers: stricter than the trained reader's 0.997
MIN_CARDS = 16  # distinct sure cards before the first refit
PER_CARD = 2  # zones a card is learnt in: one copy per player's deck
REFIT_GROWTH = 1.25  # refit when the sure cards have grown by a quarter (a handful per game)
LABEL_SHARE = 0.2  # a corner teaches its card's label where the trained reader gave it this
REFIT_ITERATIONS = 200


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


@dataclass
class Heads:
    """A reader's rank and suit heads over its features, and their spread over the classes."""

    rank_w: np.ndarray  # ranks x D (13 ranks, joker, back, no index)
    rank_b: np.ndarray
    suit_w: np.ndarray  # 4 x D
    suit_b: np.ndarray
    rank_spread: np.ndarray  # ranks x classes, 0/1
    suit_spread: np.ndarray  # 4 x classes, 0/1 (no suit for joker, back, no index)

    @classmethod
    def load(cls, path: str | Path) -> Heads:
        d = np.load(path)
        return cls(*(d[k].astype(np.float64) for k in (
            "rank_w", "rank_b", "suit_w", "suit_b", "rank_spread", "suit_spread")))

    def rank_suit(self, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Log-probabilities of each rank and each suit (N x ranks, N x 4)."""
        return (_log_softmax(f @ self.rank_w.T + self.rank_b),
                _log_softmax(f @ self.suit_w.T + self.suit_b))

    def log_probs(self, f: np.ndarray) -> np.ndarray:
        """The classes' log-probabilities (N x C), as the ONNX graph computes them."""
        lr, ls = self.rank_suit(f)
        return lr @ self.rank_spread + ls @ self.suit_spread

    def labels(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Class indices -> (rank-head label, suit-head label or -1 where the class shows no
        suit)."""
        k = np.asarray(k, int)
        suit = np.where(self.suit_spread[:, k].any(0), self.suit_spread[:, k].argmax(0), -1)
        return self.rank_spread[:, k].argmax(0), suit


def refit(h0: Heads, f: np.ndarray, rank: np.ndarray, suit: np.ndarray,
          pull: float = PULL, start: Heads | None = None) -> Heads:
    """The heads refit on features `f` (N x D) with their rank and suit labels (suit -1: the
    class shows none): mean cross-entropy of both heads plus `pull`/2 times the squared
    distance of every weight from the trained heads `h0` (L-BFGS, from `start` or `h0`)."""
    from scipy.optimize import minimize

    f = np.asarray(f, np.float64)
    n = len(f)
    has_suit = suit >= 0
    fs, ss = f[has_suit], suit[has_suit]
    parts = [h0.rank_w, h0.rank_b, h0.suit_w, h0.suit_b]
    x0 = np.concatenate([a.ravel() for a in parts])
    s = start or h0
    x_start = np.concatenate([a.ravel() for a in (s.rank_w, s.rank_b, s.suit_w, s.suit_b)])
    cuts = np.cumsum([a.size for a in parts])[:-1]

    def unpack(x):
        return [a.reshape(p.shape) for a, p in zip(np.split(x, cuts), parts, strict=True)]

    def loss_grad(x):
        rw, rb, sw, sb = unpack(x)
        lr = _log_softmax(f @ rw.T + rb)
        ls = _log_softmax(fs @ sw.T + sb)
        loss = -(lr[np.arange(n), rank].sum() + ls[np.arange(len(fs)), ss].sum()) / n
        gr = np.exp(lr)
        gr[np.arange(n), rank] -= 1
        gs = np.exp(ls)
        gs[np.arange(len(fs)), ss] -= 1
        grad = np.concatenate([(gr.T @ f).ravel(), gr.sum(0), (gs.T @ fs).ravel(),
                               gs.sum(0)]) / n
        d = x - x0
        return loss + 0.5 * pull * float(d @ d), grad + pull * d

    res = minimize(loss_grad, x_start, jac=True, method="L-BFGS-B",
                   options={"maxiter": REFIT_ITERATIONS})
    rw, rb, sw, sb = unpack(res.x)
    return Heads(rw, rb, sw, sb, h0.rank_spread, h0.suit_spread)


@dataclass
class CardEvidence:
    """What the reader saw of one card, for the adapter: the features and the trained
    reader's probabilities of the index corners it read (nw, ne, se, sw; rows of zeros
    where a corner was not read), the whole card's features, and the trained reader's sure
    answer (None: it was unsure)."""

    corners: np.ndarray  # 4 x D
    corner_probs: np.ndarray  # 4 x C
    face: np.ndarray | None  # D
    card: int | None  # class index


@dataclass
class DeckAdapter:
    """The heads refit to this table's decks. `learn` each zone's evidence as frames are
    read, `refit_if_due` after each frame; `log_probs` gives the refit heads' class
    log-probabilities for the crops they may read (None until the first refit)."""

    index: Heads
    face: Heads | None
    none_class: int
    pull: float = PULL
    sure: float = ADAPTED_SURE
    min_cards: int = MIN_CARDS
    max_per_card: int = PER_CARD
    cards: dict[tuple[str, int], CardEvidence] = field(default_factory=dict)
    per_card: dict[int, int] = field(default_factory=dict)
    fitted: dict[str, Heads] = field(default_factory=dict)
    seen: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    fitted_on: int = 0
    refits: int = 0

    def learn(self, zone: str, evidence: CardEvidence) -> None:
        """Keep the first sure look at each card in each zone (a card lying there frame after
        frame is one example, not hundreds), and a card in at most PER_CARD zones: a table
        holds one copy of it per deck, so more are the trained reader's systematic misreads
        (gnome-tango's jokers read JD, sure) that would teach the heads their own mistake."""
        k = evidence.card
        if k is None or (zone, k) in self.cards or self.per_card.get(k, 0) >= self.max_per_card:
            return
        self.cards[(zone, k)] = evidence
        self.per_card[k] = self.per_card.get(k, 0) + 1

    @property
    def ready(self) -> bool:
        return bool(self.fitted)

    def refit_if_due(self) -> bool:
        n = len(self.cards)
        if n < self.min_cards or n < self.fitted_on * REFIT_GROWTH:
            return False
        self.refit()
        return True

    def examples(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Features and class labels per head set: every index corner the trained reader
        gave the card's class at least LABEL_SHARE (or named it), every corner it read as
        no index as that, and every whole card."""
        idx_f, idx_k, face_f, face_k = [], [], [], []
        for (_, k), ev in self.cards.items():
            for c in range(len(ev.corners)):
                if not ev.corners[c].any():
                    continue
                p = ev.corner_probs[c]
                if p.argmax() == k or p[k] >= LABEL_SHARE:
                    idx_f.append(ev.corners[c])
                    idx_k.append(k)
                elif p.argmax() == self.none_class:
                    idx_f.append(ev.corners[c])
                    idx_k.append(self.none_class)
            if ev.face is not None and self.face is not None:
                face_f.append(ev.face)
                face_k.append(k)
        out = {}
        if idx_f:
            out["index"] = (np.array(idx_f, np.float64), np.array(idx_k))
        if face_f:
            out["face"] = (np.array(face_f, np.float64), np.array(face_k))
        return out

    def refit(self) -> None:
        for which, (f, k) in self.examples().items():
            h0 = self.index if which == "index" else self.face
            rank, suit = h0.labels(k)
            self.fitted[which] = refit(h0, f, rank, suit, self.pull, self.fitted.get(which))
            self.seen[which] = self._seen(rank, suit, len(h0.rank_b))
        self.fitted_on = len(self.cards)
        self.refits += 1

    @staticmethod
    def _seen(rank: np.ndarray, suit: np.ndarray, n_ranks: int) -> tuple[np.ndarray, np.ndarray]:
        """Which ranks (13 and the joker) and suits the sure reads have shown often enough:
        at least SEEN_SHARE of a uniform 54-card deck's share, and once. Back and no index
        count as seen (they are not the deck's faces)."""
        cr = np.bincount(rank, minlength=n_ranks)[:14].astype(float)
        s = suit[suit >= 0]
        cs = np.bincount(s, minlength=4).astype(float)
        share = np.r_[np.full(13, 4 / 54), 2 / 54] * cr.sum()
        seen_r = np.r_[cr >= np.maximum(1, SEEN_SHARE * share), np.ones(n_ranks - 14, bool)]
        seen_s = cs >= np.maximum(1, SEEN_SHARE * cs.sum() / 4)
        return seen_r, seen_s

    def log_probs(self, which: str, f: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """For features `f` (N x D) of the index crops ("index") or whole cards ("face"):
        (the refit heads' class log-probabilities N x C, and which rows they may read: the
        trained heads give ranks and suits the table has not shown at most UNSEEN_MASS).
        None before the first refit."""
        heads = self.fitted.get(which)
        if heads is None or len(f) == 0:
            return None
        f = np.asarray(f, np.float64)
        h0 = self.index if which == "index" else self.face
        seen_r, seen_s = self.seen[which]
        lr, ls = h0.rank_suit(f)
        unseen = np.maximum((np.exp(lr) * ~seen_r).sum(1), (np.exp(ls) * ~seen_s).sum(1))
        return heads.log_probs(f), unseen <= UNSEEN_MASS

    def summary(self) -> dict:
        return {"cards_learnt": len(self.cards), "refits": self.refits,
                "fitted_on": self.fitted_on}
