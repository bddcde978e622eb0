"""Read cards: rank and suit (or joker, or face down) from their index corners, with ONNX.

Each card is rectified (`scanner.rectify`), its four corner crops are classified in one batch,
and the corners are combined: the index may be hidden under a piece at one corner, so the best
visible index answers, unless another corner confidently says something else. An answer below the
confidence threshold (chosen on validation designs so answers above it are >= 99.9 % right) is
given as `card: None`, never as a guess.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from .detections import CardReading
from .onnx_session import one_core_session
from .pip_suits import COURT_RANKS, PIP_RANKS, SUITS, TWIN, PipReader, spelled_index
from .rectify import (
    CANON_H,
    CANON_RECT,
    CANON_W,
    CORNER_NAMES,
    border_for,
    diagonal_crops,
    normalise,
    portrait_order,
    rectify,
    rectify_mapped,
)

MODEL_DIR = Path(__file__).resolve().parent.parent / "models" / "cards"
MODEL_FILE = MODEL_DIR / "card_index.onnx"
META_FILE = MODEL_DIR / "card_index.json"
FACE_MODEL_FILE = MODEL_DIR / "card_face.onnx"
FACE_META_FILE = MODEL_DIR / "card_face.json"
# A card whose index corners spell a word is a joker: on the stills of the training,
# validation and spare decks (60 + 60 + 45, the 4,516 cards found) every card whose two index
# corners of either diagonal did so was one (19 of their 85 jokers; none of 1,003 courts and
# 3,428 number cards); on the held-out stills (24), the 5 tango jokers, 3 of them read JD at
# 0.999 before.
SPELLED_JOKER = 0.999
# A number card answered at under PIPS_CHECK_BELOW has its pips read too, and where they name
# its twin suit by more than PIPS_VETO (log odds) it is decided again with them, as an unsure
# card is (`CardReader._pips_look`). On the stills of the validation and spare decks (60 +
# 30, 1,759 number cards answered right) no right answer's pips named the twin by more than
# 0.85; the held-out stills' wrong answers are clubs read as spades at 0.9978-0.9998.
PIPS_CHECK_BELOW = 0.9999
PIPS_VETO = 3.0


class ModelMissingError(RuntimeError):
    pass


def combine(probs: np.ndarray, n_cards: int, back: int) -> tuple[int, bool, int, float]:
    """One card's corner probabilities (corners x classes) -> (card class, face down, corner
    that answered, confidence). Two corners of one diagonal agreeing are two looks at the same
    index: their evidence combines (1 - both wrong); any corner confidently naming another card
    caps the confidence (a conflict is never an answer). Training picks its threshold through
    this same function, so the threshold means what the reader does."""
    pred = probs.argmax(1)
    if (pred == back).sum() >= 2:
        return -1, True, -1, float(probs[:, back].mean())
    cards = probs[:, :n_cards]
    i, k = np.unravel_index(int(cards.argmax()), cards.shape)
    conf = float(cards[i, k])
    n = len(probs)
    if n == 4 or n == 2:
        j = (i + n // 2) % n  # the opposite corner of the same diagonal
        if pred[j] == k:
            conf = 1.0 - (1.0 - conf) * (1.0 - float(probs[j, k]))
    for m in range(n):
        if pred[m] < n_cards and pred[m] != k:
            conf = min(conf, 1.0 - float(probs[m, pred[m]]))
    return int(k), False, int(i), conf


def softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(-1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(-1, keepdims=True)


def index_evidence(corner_probs: np.ndarray, n_cards: int, seeing: np.ndarray) -> np.ndarray:
    """The index corners' log evidence per card (N x K, K = `n_cards`), from each corner's
    class probabilities (N x 4 x C, corners nw, ne, se, sw; the first K classes the cards)
    where it shows an index (`seeing`, N x 4), each renormalised over the cards.
    A deck prints its index on one diagonal or on both, so where corners of both diagonals
    claim an index, which diagonal carries it is left open: a mixture of both diagonals true,
    only nw-se, only ne-sw, the corners of a diagonal taken as blank saying nothing (uniform).
    Pips near a blank corner can look like an index (a tango six's corner read as the joker
    at 99 %); as a plain product two such corners outvoted the true index and the whole card."""
    c = corner_probs[:, :, :n_cards].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):  # blank corners: never used below
        log_c = np.log(c / c.sum(2, keepdims=True) + 1e-9)
    n, _, k = log_c.shape
    per_diag = []
    for corners in ((0, 2), (1, 3)):
        e = np.zeros((n, k), np.float64)
        for i in corners:  # corner by corner, so the sum is the same in `fuse` and `fuse_many`
            e = np.where(seeing[:, i, None], e + log_c[:, i], e)
        per_diag.append(e)
    n_a = seeing[:, [0, 2]].sum(1)[:, None]
    n_b = seeing[:, [1, 3]].sum(1)[:, None]
    blank = np.log(1.0 / k)
    both = np.stack([per_diag[0] + per_diag[1], per_diag[0] + n_b * blank,
                     per_diag[1] + n_a * blank])
    top = both.max(0)
    mixture = top + np.log(np.exp(both - top).sum(0) / 3.0)
    return np.where((n_a > 0) & (n_b > 0), mixture, per_diag[0] + per_diag[1])


def fuse(corner_probs: np.ndarray, face_probs: np.ndarray | None, n_cards: int,
         back: int) -> tuple[int, bool, int, float]:
    """The index corners and the whole-card model as independent witnesses: a card's
    probability is the normalised product of what each witness says, counting only corners
    that show an index (a blank corner says nothing about which card it is), with the index
    diagonal left open where both diagonals claim one (`index_evidence`). Returns (card
    class, face down, corner that saw the index or -1, confidence). The threshold applied to
    it is calibrated through this same function (`models/cards/face.py`)."""
    pred = corner_probs.argmax(1)
    seeing = [i for i in range(len(pred)) if pred[i] < n_cards]
    face_says_back = face_probs is not None and int(face_probs.argmax()) == back
    if (pred == back).sum() >= 2 or (face_says_back and not seeing):
        p = [float(corner_probs[:, back].mean())] + (
            [float(face_probs[back])] if face_probs is not None else [])
        return -1, True, -1, max(p)
    if not seeing and face_probs is None:
        return int(corner_probs[:, :n_cards].max(0).argmax()), False, -1, 0.0
    log_e = index_evidence(corner_probs[None], n_cards, (pred < n_cards)[None])[0]
    if face_probs is not None:
        f = face_probs[:n_cards].astype(np.float64)
        log_e += np.log(f / f.sum() + 1e-9)
    post = softmax(log_e)
    k = int(post.argmax())
    corner = max(seeing, key=lambda i: corner_probs[i, k]) if seeing else -1
    return k, False, corner, float(post[k])


def fuse_many(corner_probs: np.ndarray, face_probs: np.ndarray, n_cards: int, back: int,
              extra: np.ndarray | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`fuse` for N cards at once (N x 4 x C corners, N x C whole cards), with the same
    arithmetic, so the same answers (tested against `fuse`): a frame's 30 cards one by one
    cost more in Python than in sums. `extra`: N x `n_cards` log evidence of a further
    witness (the pips' or index marks' suit, `scanner.pip_suits`), added as one more
    independent look.
    Returns (card class, face down, corner, confidence)."""
    n = len(corner_probs)
    pred = corner_probs.argmax(2)
    seeing = pred < n_cards
    any_seeing = seeing.any(1)
    down = ((pred == back).sum(1) >= 2) | ((face_probs.argmax(1) == back) & ~any_seeing)
    log_e = index_evidence(corner_probs, n_cards, seeing)
    f = face_probs[:, :n_cards].astype(np.float64)
    log_e = log_e + np.log(f / f.sum(1, keepdims=True) + 1e-9)
    if extra is not None:
        log_e = log_e + extra
    post = softmax(log_e)
    k = post.argmax(1)
    conf = post[np.arange(n), k]
    at_k = np.where(seeing, corner_probs[np.arange(n), :, k], -np.inf)
    corner = np.where(any_seeing, at_k.argmax(1), -1)
    back_conf = np.maximum(corner_probs[:, :, back].mean(1).astype(np.float64),
                           face_probs[:, back].astype(np.float64))
    return (np.where(down, -1, k), down, np.where(down, -1, corner),
            np.where(down, back_conf, conf))


def sharpened(card: np.ndarray, amount: float, sigma: float) -> np.ndarray:
    """A rectified card through an unsharp mask (`amount` of the detail finer than a Gaussian
    of `sigma` px added again): an index blurred by a defocused camera, read again."""
    blurred = cv2.GaussianBlur(card, (0, 0), sigma)
    return cv2.addWeighted(card, 1.0 + amount, blurred, -amount, 0.0)


def _thumbnails(cards: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """N rectified cards -> N x h x w area-averaged thumbnails, in one resize of the cards
    stacked as one tall image (each card's rows scale onto whole output rows, so no output
    row mixes two cards: the same as card by card, tested, for a fraction of the calls)."""
    n, ch, cw = cards.shape[:3]
    w, h = size
    return cv2.resize(cards.reshape(n * ch, cw, -1), (w, n * h),
                      interpolation=cv2.INTER_AREA).reshape(n, h, w, -1)


def _width_px(quad: np.ndarray) -> float:
    """A portrait-ordered card's width in the image: the mean of its two short sides."""
    return float((np.linalg.norm(quad[1] - quad[0]) + np.linalg.norm(quad[2] - quad[3])) / 2)


def reader_in(folder: str | Path | None = None) -> CardReader:
    """The reader with the models of `folder` (default: the committed ones)."""
    if folder is None:
        return CardReader()
    folder = Path(folder)
    return CardReader(folder / MODEL_FILE.name, folder / META_FILE.name)


class CardReader:
    def __init__(self, model_path: str | Path = MODEL_FILE, meta_path: str | Path = META_FILE,
                 threshold: float | None = None, use_face: bool = True,
                 face_below_px: float | None = None, use_pips: bool = True):
        model_path, meta_path = Path(model_path), Path(meta_path)
        if not model_path.exists() or not meta_path.exists():
            raise ModelMissingError(f"card model missing: {model_path} (rebuild it with "
                                    "`royal-table train cards`)")
        meta = json.loads(meta_path.read_text())
        self.classes: list[str] = meta["classes"]
        self.temperature = float(meta.get("temperature", 1.0))
        self.threshold = float(meta["threshold"] if threshold is None else threshold)
        self.crop = tuple(int(v) for v in meta.get("crop", (48, 30)))  # H, W
        self.n_cards = self.classes.index("back")  # card classes come first
        self.back, self.none = self.classes.index("back"), self.classes.index("none")
        self.session = one_core_session(model_path)
        self.input_name = self.session.get_inputs()[0].name
        # the whole-card model, where one lies beside the index model: small cards
        self.face_session = None
        face_model = model_path.with_name(FACE_MODEL_FILE.name)
        face_meta = model_path.with_name(FACE_META_FILE.name)
        if use_face and face_model.exists() and face_meta.exists():
            fm = json.loads(face_meta.read_text())
            if "fused_threshold" in fm and fm["classes"] == self.classes:
                self.face_session = one_core_session(face_model)
                self.face_size = tuple(int(v) for v in fm["size"])  # w, h
                self.face_temperature = float(fm["temperature"])
                self.fused_threshold = float(fm["fused_threshold"]) if threshold is None \
                    else threshold
                # only cards smaller than this (short side, image px) call the whole-card
                # model: on big cards the index alone is surer, and cards in real photos
                # overlap, which the whole-card view was not trained on
                self.face_below_px = float(fm.get("face_below_px", 1e9)
                                           if face_below_px is None else face_below_px)
        # the suit's third witness (pips, index marks) for cards the two leave unsure
        self.pips = PipReader.installed(model_path.parent) \
            if use_pips and self.face_session is not None else None

    def classify(self, crops: np.ndarray) -> np.ndarray:
        """uint8 crops (N x H x W x 3) -> class probabilities (N x C)."""
        if len(crops) == 0:
            return np.zeros((0, len(self.classes)), np.float32)
        logits = self.session.run(None, {self.input_name: normalise(crops)})[0]
        return softmax(logits / self.temperature)

    def classify_faces(self, cards: np.ndarray) -> np.ndarray:
        """uint8 whole-card thumbnails (N x h x w x 3) -> class probabilities (N x C)."""
        name = self.face_session.get_inputs()[0].name
        logits = self.face_session.run(None, {name: normalise(cards)})[0]
        return softmax(logits / self.face_temperature)

    def _no_back(self, probs: np.ndarray, faces_up: bool) -> np.ndarray:
        """Class probabilities with the card-back class ruled out, where every card is known
        to lie face up (renormalised over the rest)."""
        if not faces_up or len(probs) == 0:
            return probs
        probs = probs.copy()
        probs[:, self.back] = 0.0
        return probs / np.maximum(probs.sum(1, keepdims=True), 1e-12)

    def decide(self, probs: np.ndarray, face: np.ndarray | None = None
               ) -> tuple[str | None, bool, str | None, float, list[tuple[str, float]]]:
        """One card's 4 corner probabilities (nw, ne, se, sw) and, for a small card, its
        whole-card probabilities -> (card, face_down, index diagonal of the rectified card,
        confidence, best candidates). Each path answers above its own calibrated threshold."""
        if face is not None:
            k, down, corner, conf = fuse(probs, face, self.n_cards, self.back)
            threshold = self.fused_threshold
        else:
            k, down, corner, conf = combine(probs, self.n_cards, self.back)
            threshold = self.threshold
        if down:
            return None, True, None, conf, []
        return self._answer(k, corner, conf, threshold, self._candidates(probs, face))

    def _answer(self, k: int, corner: int, conf: float, threshold: float,
                candidates: list[tuple[str, float]]
                ) -> tuple[str | None, bool, str | None, float, list[tuple[str, float]]]:
        diag = None if corner < 0 else \
            "nw-se" if CORNER_NAMES[corner] in ("nw", "se") else "ne-sw"
        card = self.classes[k] if conf >= threshold else None
        return card, False, diag, conf, candidates

    def decide_many(self, probs: np.ndarray, faces: list[np.ndarray | None],
                    extra: np.ndarray | None = None
                    ) -> list[tuple[str | None, bool, str | None, float, list[tuple[str, float]]]]:
        """`decide` for N cards (N x 4 x C): the cards with a whole-card view are fused in
        one go (`fuse_many`; with `extra`, N x `n_cards` further log evidence), the rest one
        by one."""
        out: list = [None] * len(probs)
        with_face = [i for i, f in enumerate(faces) if f is not None]
        if with_face:
            P = probs[with_face]
            F = np.stack([faces[i] for i in with_face])
            E = None if extra is None else extra[with_face]
            ks, downs, corners, confs = fuse_many(P, F, self.n_cards, self.back, E)
            cands = self._candidates_many(P, F, extra=E)
            for j, i in enumerate(with_face):
                out[i] = (None, True, None, float(confs[j]), []) if downs[j] else \
                    self._answer(int(ks[j]), int(corners[j]), float(confs[j]),
                                 self.fused_threshold, cands[j])
        for i, f in enumerate(faces):
            if f is None:
                out[i] = self.decide(probs[i])
        return out

    def _candidates(self, probs: np.ndarray, face: np.ndarray | None,
                    n: int = 3) -> list[tuple[str, float]]:
        """The best few cards by the witnesses' product, for the rules and the players."""
        e = np.log(probs[:, :self.n_cards].max(0) + 1e-9)
        if face is not None:
            e = e + np.log(face[:self.n_cards] + 1e-9)
        post = softmax(e)
        top = np.argsort(-post)[:n]
        return [(self.classes[int(i)], round(float(post[i]), 4)) for i in top]

    def _candidates_many(self, probs: np.ndarray, faces: np.ndarray, n: int = 3,
                         extra: np.ndarray | None = None) -> list[list[tuple[str, float]]]:
        """`_candidates` for N cards that all have a whole-card view."""
        e = np.log(probs[:, :, :self.n_cards].max(1) + 1e-9) \
            + np.log(faces[:, :self.n_cards] + 1e-9)
        if extra is not None:
            e = e + extra
        post = softmax(e)
        top = np.argsort(-post, axis=1)[:, :n]
        return [[(self.classes[int(i)], round(float(p[i]), 4)) for i in t]
                for p, t in zip(post, top, strict=True)]

    def _pips_look(self, cards: np.ndarray, ordered: list[np.ndarray], probs: np.ndarray,
                   faces: list[np.ndarray | None], decided: list) -> None:
        """A third witness for the suit (`scanner.pip_suits`: a number card's pips, a court
        card's index marks), in place in `decided`, asked in one read of the pip model about:
        - cards the index and whole card left unsure, decided again with it;
        - number cards answered at under PIPS_CHECK_BELOW: where their pips name the twin
          suit (the other of its colour) by more than PIPS_VETO log odds, decided again with
          them (mostly left unsure); where the pips agree, or say little, the answer stands.
        The pips only ever take an answer back, and a frame's sure cards cost nothing."""
        rank = {i: d[4][0][0][:-1] for i, d in enumerate(decided)
                if d[0] is None and not d[1] and faces[i] is not None and d[4]}
        unsure = [i for i, r in rank.items() if r in PIP_RANKS or r in COURT_RANKS]
        check = [i for i, d in enumerate(decided)
                 if d[0] is not None and d[0][:-1] in PIP_RANKS and d[3] < PIPS_CHECK_BELOW
                 and faces[i] is not None]
        ask = unsure + check
        if not ask:
            return
        courts = [i in rank and rank[i] in COURT_RANKS for i in ask]
        said = dict(zip(ask, self.pips.evidence(
            [cards[i] for i in ask], [_width_px(ordered[i]) for i in ask],
            [decided[i][2] for i in ask], courts, self.classes[:self.n_cards]), strict=True))
        again = [i for i in unsure if said[i] is not None]
        for i in check:
            e, card = said[i], decided[i][0]
            if e is not None:
                twin = card[:-1] + SUITS[TWIN[SUITS.index(card[-1])]]
                if e[self.classes.index(card)] - e[self.classes.index(twin)] < -PIPS_VETO:
                    again.append(i)
        if not again:
            return
        extra = np.stack([said[i] for i in again])
        for i, d in zip(again, self.decide_many(probs[again], [faces[i] for i in again], extra),
                        strict=True):
            decided[i] = d

    @staticmethod
    def _spelled_look(cards: np.ndarray, decided: list) -> None:
        """A card read as a court, or left unsure with a court or the joker its likeliest,
        whose index corners spell a word down from the rank (`pip_suits.spelled_index`: many
        decks print JOKER there) is read as the joker, at SPELLED_JOKER, in place in
        `decided`: on the held-out stills the readers took tango's jokers, whose J is the
        font's court J, for JD at 0.999."""
        for i, (card, down, diag, _conf, cands) in enumerate(decided):
            top = card or (cands[0][0] if cands else None)
            if down or diag is None or top is None or card == "JK" \
                    or not (top == "JK" or top[:-1] in COURT_RANKS) \
                    or not spelled_index(cards[i], diag):
                continue  # (an answered joker stands; an unsure one may be named)
            rest = [(c, round(p * (1.0 - SPELLED_JOKER), 4)) for c, p in cands if c != "JK"]
            decided[i] = ("JK", False, diag, SPELLED_JOKER, [("JK", SPELLED_JOKER)] + rest[:2])

    def read_corners(self, image: np.ndarray, hypotheses: list[tuple[np.ndarray, int]]
                     ) -> list[CardReading]:
        """Read one index corner of each card hypothesis (quad clockwise, and 0 or 1: its
        corner nw or ne, as `card_corners.corner_hypotheses` gives them), for cards the rest
        of which may lie under others: only that corner is warped and read, by the index
        model alone, and the card named where its probability reaches the reader's
        threshold. Card backs are not asked for (a back shows no corner worth reading)."""
        if not hypotheses:
            return []
        if image.ndim == 2:
            image = np.repeat(image[:, :, None], 3, axis=2)
        ch, cw = self.crop
        crops = np.empty((len(hypotheses), ch, cw, 3), np.uint8)
        to_ne = np.array([[1, 0, -(CANON_W - cw)], [0, 1, 0], [0, 0, 1]], np.float64)
        for i, (q, corner) in enumerate(hypotheses):
            q = np.asarray(q, np.float32).reshape(4, 2)
            M = cv2.getPerspectiveTransform(q, CANON_RECT).astype(np.float64)
            if corner == 1:  # the ne corner, mirrored as `diagonal_crops` cuts it
                M = to_ne @ M
            crop = cv2.warpPerspective(image, M, (cw, ch), flags=cv2.INTER_LINEAR,
                                       borderMode=border_for(q, image.shape))
            crops[i] = crop[:, ::-1] if corner == 1 else crop
        probs = self._no_back(self.classify(crops), True)
        out = []
        for (q, corner), p in zip(hypotheses, probs, strict=True):
            k = int(p[:self.n_cards].argmax())
            conf = float(p[k])
            q = np.asarray(q, np.float32).reshape(4, 2)
            long_axis = (q[3] - q[0]) + (q[2] - q[1])
            portrait = abs(long_axis[1]) >= abs(long_axis[0])
            diag = "nw-se" if (corner == 0) == portrait else "ne-sw"
            top = np.argsort(-p[:self.n_cards])[:3]
            out.append(CardReading(
                corners=q, card=self.classes[k] if conf >= self.threshold else None,
                orientation="portrait" if portrait else "landscape", digit_corners=diag,
                confidence=conf,
                candidates=[(self.classes[int(j)], round(float(p[j]), 4)) for j in top]))
        return out

    def read_quads(self, image: np.ndarray, quads: list[np.ndarray],
                   face_below_px: float | None = None,
                   maps: list[tuple[np.ndarray, np.ndarray] | None] | None = None,
                   faces_up: bool = False, in_portrait_order: bool = False,
                   sharpen: tuple[float, float] | None = None,
                   pips: bool = False) -> list[CardReading]:
        """Read each card quadrilateral (image corners, any order around the card). The
        reading's diagonal and orientation are relative to the image (portrait = long side
        nearer vertical). `face_below_px` overrides the width under which the whole-card model
        joins in: the board scanner shows it every card, since a card on the grid lies whole
        and apart (unlike the overlapping cards of a photo, for which the default is set).
        `maps`: per quad, `rectify_maps` of its portrait order where the caller keeps them.
        `faces_up`: every card lies face up (a Royal Battles board and its initiative piles):
        the card-back class is ruled out, so a face the models take for a back (a joker's
        picture with no index) is read as the face it most resembles, or left unsure.
        `in_portrait_order`: the quads are already in `portrait_order`, decided where the
        card's true sides are known (the board scanner's metric patch); otherwise the image's
        side lengths decide, right for cards seen from above. `sharpen`: (amount, sigma) of
        an unsharp mask each rectified card goes through before it is read (`sharpened`).
        `pips`: a card the whole-card and index models leave unsure is decided again with a
        third witness for its suit beside them, a number card's pips or a court's index marks
        (`scanner.pip_suits`; the board scanner's cards lie whole and apart; in photos, cards
        overlapping each other, the pips gave as many wrong answers as right ones on the
        photos choices are made on, session 43)."""
        if not quads:
            return []
        if image.ndim == 2:
            image = np.repeat(image[:, :, None], 3, axis=2)
        ordered = [np.asarray(q, np.float32).reshape(4, 2) if in_portrait_order
                   else portrait_order(q) for q in quads]
        cards = np.empty((len(ordered), CANON_H, CANON_W, 3), np.uint8)
        for i, (card, q) in enumerate(zip(cards, ordered, strict=True)):
            if maps is not None and maps[i] is not None:
                rectify_mapped(image, q, maps[i], out=card)
            else:
                rectify(image, q, out=card)
            if sharpen is not None:
                card[:] = sharpened(card, *sharpen)
        faces: list[np.ndarray | None] = [None] * len(quads)
        if self.face_session is not None:
            limit = self.face_below_px if face_below_px is None else face_below_px
            small = [i for i, q in enumerate(ordered) if _width_px(q) < limit]
            if small:
                thumbs = _thumbnails(cards[small], self.face_size)
                for i, f in zip(small, self._no_back(self.classify_faces(thumbs), faces_up),
                                strict=True):
                    faces[i] = f
        # first the nw-se diagonal, where standard decks print the index; the other diagonal
        # only for cards that diagonal did not settle (half the model work per frame)
        probs = np.zeros((len(quads), 4, len(self.classes)), np.float32)
        probs[:, [1, 3], self.none] = 1.0
        probs[:, [0, 2]] = self._no_back(self.classify(diagonal_crops(cards, "nw-se", self.crop)),
                                         faces_up).reshape(len(quads), 2, -1)
        decided = self.decide_many(probs, faces)
        # a card neither read nor face down after this diagonal: look at the other one
        again = [i for i, d in enumerate(decided) if d[0] is None and not d[1]]
        if again:
            probs[again, 1::2] = self._no_back(
                self.classify(diagonal_crops(cards[again], "ne-sw", self.crop)), faces_up) \
                .reshape(len(again), 2, -1)
            for i, d in zip(again, self.decide_many(probs[again], [faces[i] for i in again]),
                            strict=True):
                decided[i] = d
        if pips and self.pips is not None:
            self._pips_look(cards, ordered, probs, faces, decided)
        if pips:
            self._spelled_look(cards, decided)
        out = []
        for q, (card, down, diag, conf, cands) in zip(ordered, decided, strict=True):
            long_axis = (q[3] - q[0]) + (q[2] - q[1])
            portrait = abs(long_axis[1]) >= abs(long_axis[0])
            if diag is not None and not portrait:
                diag = "nw-se" if diag == "ne-sw" else "ne-sw"
            out.append(CardReading(corners=q.astype(np.float32), card=card, face_down=down,
                                   orientation="portrait" if portrait else "landscape",
                                   digit_corners=diag, confidence=conf, candidates=cands))
        return out
