"""Adapting the piece classifier to the players' own set, from one view of the set-up position
or from a few labelled crops per class (up to 10).

The classifier's last layer is a cosine classifier, so the first adaptation is nearest class
means of embeddings, refined: each piece class seen in the examples gets the normalised mean of
its examples' embeddings as prototype; then a short gradient descent on those prototypes fits
the examples while staying close to where it started. Classes not seen, "empty" and "unsure"
keep the trained prototypes. This is what decides occupancy after adapting.

Kind and colour then come from a set head (`fit_set_head`): a logistic regression over the
embedding and the model's pooled mid-level features, fitted to the examples' pieces. On real
photographs (`real-pieces-dev`, 10 crops per class) the embedding's class means read 45.8 % of
the other photos' pieces right (top class), a regression over the embedding alone 56.6 % and one
over the pooled features 74.4 %: the embedding was shaped by renders alone, the mid-level maps
less so; the embedding still helps on paper tokens. Since session 19 the head corrects the
model's own answer (its logits start from the model's log-probabilities): a model trained on
photos of the set (stage 8) read real photos 95.0 % right before adapting and 92.8 % after a
head of its own, 94.7 % after a correcting one. Numpy only, under a second on one core.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from engines.royal_battles import CELL_NAMES

from .piece_classifier import (
    CLASSES,
    COSINE_SCALE,
    UNSURE_CLASS,
    PieceClassifier,
    SetHead,
    _softmax,
    model_logits,
)
from .piece_crops import PITCH_X, PITCH_Y, as_board_camera, cell_centre, crop_quad, warp_quad

EMPTY = CLASSES.index("empty")
PLACEMENT_IN_QUESTION = "a side's placement was still a question"
# a piece stands where a player put it: crop each cell a little off centre too
_OFFSETS = [(0.0, 0.0), (-1.2, 0.0), (1.2, 0.0), (0.0, -1.2), (0.0, 1.2)]


def _normalise(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-9)


def adapt_from_embeddings(base: np.ndarray, emb: np.ndarray, labels: np.ndarray,
                          steps: int = 150, lr: float = 0.5, keep: float = 0.3,
                          fixed: tuple[int, ...] = (EMPTY, UNSURE_CLASS)) -> np.ndarray:
    """New prototypes (C x D) from labelled embeddings: class means, then refined by gradient
    descent on the cosine-softmax loss with a pull (`keep`) toward those starting points. Only
    the classes seen move; `fixed` ones never do: "empty" and "unsure" are learnt well from
    renders of every kind of table, while a set-up view shows only a few empty cards (whose
    mean made pieces read as empty in other views)."""
    protos = base.astype(np.float64).copy()
    labels = np.asarray(labels)
    seen = [c for c in np.unique(labels) if c not in fixed]
    for c in seen:
        protos[c] = _normalise(emb[labels == c].mean(0))
    movable = np.zeros((len(protos), 1))
    movable[seen] = 1.0
    start = protos.copy()
    if len(labels) == 0:
        return protos.astype(np.float32)
    onehot = np.eye(len(protos))[labels]
    e = emb.astype(np.float64)
    for _ in range(steps):
        z = COSINE_SCALE * e @ protos.T
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(1, keepdims=True)
        grad = COSINE_SCALE * (p - onehot).T @ e / len(e) + keep * (protos - start)
        protos = _normalise(protos - lr * grad * movable)
    return protos.astype(np.float32)


def fit_scale(protos: np.ndarray, emb: np.ndarray, labels: np.ndarray,
              groups: np.ndarray | None = None) -> float:
    """The cosine scale that makes the adapted classifier's probabilities honest: class means
    sit closer together than the trained prototypes, so the trained scale would leave almost
    every reading below the threshold. Fitted by likelihood with each example scored against
    its class mean without its own group (leave-one-group-out, so it is not overconfident)."""
    groups = np.arange(len(labels)) if groups is None else np.asarray(groups)
    logits = emb @ protos.T
    for i in range(len(labels)):
        c = labels[i]
        same = (labels == c) & (groups != groups[i])
        if same.any():
            logits[i, c] = float(emb[i] @ _normalise(emb[same].mean(0)))
    best, best_nll = COSINE_SCALE, np.inf
    for s in np.linspace(COSINE_SCALE, 4 * COSINE_SCALE, 25):
        z = s * logits
        z = z - z.max(1, keepdims=True)
        nll = -(z[np.arange(len(labels)), labels] - np.log(np.exp(z).sum(1))).mean()
        if nll < best_nll:
            best, best_nll = float(s), nll
    return best


# inverse strength of the set head's weight penalty: over the pooled features, 0.1 / 1 / 10 /
# 100 read 57.4 / 65.4 / 68.8 / 70.5 % of real-pieces-dev's pieces right after adapting, their
# answers 83-80 % right; 10 keeps the answers' precision near the top of that range
SET_HEAD_C = 10.0
SET_HEAD_STEPS = 300


def fit_set_head(desc: np.ndarray, labels: np.ndarray, c: float = SET_HEAD_C,
                 steps: int = SET_HEAD_STEPS, lr: float = 0.05,
                 probs: np.ndarray | None = None) -> SetHead | None:
    """A multinomial logistic regression (L2 penalty 1 / (2 c N)) over standardised
    descriptors, for the piece classes among `labels` (CLASSES indices); None with fewer than
    two. Adam from zero weights: the problem is convex, and a fixed number of steps keeps it
    quick."""
    labels = np.asarray(labels)
    piece = (labels > 0) & (labels < UNSURE_CLASS)
    classes = np.unique(labels[piece])
    if len(classes) < 2:
        return None
    x = desc[piece].astype(np.float64)
    y = np.searchsorted(classes, labels[piece])
    mean, std = x.mean(0), x.std(0) + 1e-3
    z = (x - mean) / std
    n, d = z.shape
    onehot = np.eye(len(classes))[y]
    offset = 0.0 if probs is None else model_logits(probs[piece], classes)
    params = [np.zeros((d, len(classes))), np.zeros(len(classes))]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        g = (_softmax(z @ params[0] + params[1] + offset) - onehot) / n
        grads = [z.T @ g + params[0] / (c * n), g.sum(0)]
        for i, gr in enumerate(grads):
            m1[i] = 0.9 * m1[i] + 0.1 * gr
            m2[i] = 0.999 * m2[i] + 0.001 * gr * gr
            params[i] -= lr * (m1[i] / (1 - 0.9 ** t)) / (np.sqrt(m2[i] / (1 - 0.999 ** t)) + 1e-8)
    return SetHead(classes, mean.astype(np.float32), std.astype(np.float32),
                   params[0].astype(np.float32), params[1].astype(np.float32),
                   residual=probs is not None)


def adapt_from_crops(clf: PieceClassifier, crops: np.ndarray, labels: list[str],
                     mirror: bool = True, groups: list | None = None) -> dict:
    """Adapt `clf` in place from labelled crops (N x H x W x 3; labels like "white-king",
    "empty"). Mirrored copies double the examples (a piece looks the same mirrored)."""
    t0 = time.perf_counter()
    bad = [lab for lab in labels if lab not in CLASSES]
    if bad:
        raise ValueError(f"unknown piece label {bad[0]!r} (expected e.g. white-knight, empty)")
    y = np.array([CLASSES.index(lab) for lab in labels], np.int64)
    g = np.arange(len(y)) if groups is None else np.unique(np.asarray(groups),
                                                             return_inverse=True)[1]
    crops = np.asarray(crops)
    desc = clf.embed(crops)
    if mirror and len(crops):
        # a classifier that reads each crop with its mirror image gives a crop and its mirror
        # image one descriptor: it is taken twice, as the mirrored copy would be, not run again
        desc = np.concatenate([desc, desc if clf.mirror else clf.embed(crops[:, :, ::-1])])
        y = np.concatenate([y, y])
        g = np.concatenate([g, g])  # a mirrored crop is no independent example
    emb = desc[:, :clf.embed_dim]
    clf.prototypes = adapt_from_embeddings(clf.base_prototypes, emb, y)
    clf.scale = fit_scale(clf.prototypes, emb, y, g)
    # an older model without the pooled features: the prototypes alone adapt
    # a correction to the prototype-adapted model's answer: where it already reads the
    # examples right, little is learnt on top of it
    clf.set_head = None  # the head starts from the adapted prototypes' answer alone
    clf.set_head = fit_set_head(desc, y, probs=clf.probabilities(desc)) \
        if clf.has_features else None
    return {"examples": int(len(labels)), "classes": sorted({CLASSES[i] for i in y}),
            "scale": round(clf.scale, 2), "set_head": clf.set_head is not None,
            "seconds": round(time.perf_counter() - t0, 3)}


def setup_labels(position: dict) -> dict[str, str]:
    """Cell -> label for every card cell of a position JSON (the engine's): the unit standing
    there ("white-knight") or "empty". Accepts {cell: label} as well."""
    board = position.get("board", position)
    out: dict[str, str] = {}
    for cell, st in board.items():
        if isinstance(st, str):
            out[cell] = st
            continue
        if not isinstance(st, dict):
            raise ValueError(f"cell {cell}: expected an object, got {type(st).__name__}")
        unit = st.get("unit")
        if unit:
            out[cell] = f"{unit['side']}-{unit['kind']}"
        elif st.get("cards"):
            out[cell] = "empty"
    return out


def token_matches(clf: PieceClassifier, image: np.ndarray, camera, cells: list[str]
                  ) -> dict[str, object]:
    """The token reader's best glyph on each of `cells` (`token_reader.TokenMatch`), once it
    has taken the print scale their top views fit best (`TokenReader.fit_print_scale`: a
    printer shrinks a sheet to fit its page); {} where the reader is off."""
    if clf.tokens is None or not cells:
        return {}
    views = clf.tokens.top_views(image, as_board_camera(camera, image.shape), list(cells))
    clf.tokens.fit_print_scale(list(views.values()))
    return {cell: clf.tokens.match(view) for cell, view in views.items()}


def printed_units(matches: dict[str, object], units: dict[str, str],
                  doubted: list[str] = ()) -> int:
    """How many of the `units` (cell -> "white-knight") `token_matches` found printed on their
    cells, as the units they are, and of the `doubted` cells (a unit whose kind is still asked)
    how many it read surely: the printed tokens need no adapting to (their print is known),
    and adapting the classifier to them cost the tokens validation game 5 of 81 moves (its
    set head, learnt from the set-up view, later read bare cards as still occupied)."""
    return sum(1 for cell, unit in units.items()
               if cell in matches and matches[cell].sure and matches[cell].piece == unit) \
        + sum(1 for cell in doubted if cell in matches and matches[cell].sure)


def adapt_from_setup(clf: PieceClassifier, image: np.ndarray, camera, position: dict) -> dict:
    """Adapt `clf` to the set in view from the set-up position: every cell named in the
    position (its units, and its cards with no unit as "empty") is cropped at a few offsets."""
    labels = setup_labels(position)
    if not labels:
        raise ValueError("the position names no cells to learn from")
    cam = as_board_camera(camera, image.shape)
    crops, labs, groups = [], [], []
    for cell, lab in labels.items():
        x, y = cell_centre(cell, cam.pitch)
        for dx, dy in _OFFSETS:
            # offsets in cm, well inside the cell (pitch PITCH_X x PITCH_Y)
            assert abs(dx) < PITCH_X / 2 and abs(dy) < PITCH_Y / 2
            crops.append(warp_quad(image, crop_quad(cam, x + dx, y + dy)))
            labs.append(lab)
            groups.append(cell)  # one cell's offsets are one example, not five
    return adapt_from_crops(clf, np.array(crops), labs, groups=groups)


def all_printed(clf: PieceClassifier, image: np.ndarray, camera, cells: list[str]) -> bool:
    """Whether the units standing on `cells` are all tokens to the glyph reader: none of them
    is `none` to it as surely as `piece_classifier.bare_print` asks (a 3D piece standing in
    for a lost token is), so that a cell whose print shows no token may be read bare for the
    rest of the game. Units out of the frame say nothing, but most must be in it. False where
    the glyph reader is not installed."""
    if clf.tokens is None or clf.tokens.glyphs is None or not cells:
        return False
    looks = clf.tokens.read(image, as_board_camera(camera, image.shape), list(cells))
    return 2 * len(looks) > len(cells) and all(
        m.present or m.glyph.p_none < m.glyph.sure_at for m in looks.values())


@dataclass(frozen=True)
class SetLearning:
    """What `learn_set` did: whether the set was learnt, whether it was not only because too
    few units' kinds were settled yet (a caller may try again once the game has settled
    them), and the note for the players ("at frame 190 from 8 units ...", or "none: ...")."""

    note: str
    learnt: bool = False
    too_few_settled: bool = False


def learn_set(clf: PieceClassifier, image: np.ndarray, camera, units: dict[str, str],
              cells: list[str], when: str) -> SetLearning:
    """`_learn_set`, whose failure of any kind (a crop off the image, a model's error) leaves
    the trained classifier reading and says so, never stopping the scan or the web camera's
    thread that asked (there, every later frame would have asked again and failed again)."""
    try:
        return _learn_set(clf, image, camera, units, cells, when)
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, the trained one reads on
        clf.new_set()
        return SetLearning(f"none: adapting {when} failed ({exc.__class__.__name__}: {exc})")


def _learn_set(clf: PieceClassifier, image: np.ndarray, camera, units: dict[str, str],
               cells: list[str], when: str) -> SetLearning:
    """Adapt `clf` to the set in view, from the units known to stand on the table (`units`,
    cell -> "white-knight"); a unit standing (`cells`) that is not among them is one whose
    kind is still a question, left out, as a kind taken wrong would teach the wrong look (on
    s64 a king and queen learnt swapped cost 24 moves); its class keeps the trained look.
    Not at all where too few are left (`_enough_left`). First one look at every unit's cell
    by the token reader, fitting the print scale; with no token among the units it rests for
    the game (no 3D piece passed for a token in its training renders, and it costs 0.5 ms a
    cell); a set most of whose units are tokens read by their print is not adapted to
    (val-s35 lost 5 of 81 moves when its set head later read bare cards as still occupied).
    What is learnt is kept only where it reads no cell without a unit (`bare`) as a unit
    that the trained classifier read otherwise. Says what it did (`SetLearning`), its note
    starting with `when` ("at frame 190") or with "none: "."""
    matches = token_matches(clf, image, camera, list(cells))
    rests = ""
    if clf.tokens is not None and cells and not any(m.present for m in matches.values()):
        clf.tokens = None
        rests = "; the token reader rests, no unit being a paper token"
    # tokens first: a set mostly of printed tokens is not adapted to, its placement in doubt
    # or not, and the note should say so (a unit whose kind is in doubt counts where its
    # print was read surely: s16 with the stage-9 model, a bishop token read as a pawn)
    printed = printed_units(matches, units, [c for c in cells if c not in units])
    if 2 * printed > len(cells):
        clf.tokens.printed_set = all_printed(clf, image, camera, cells)
        scale = clf.tokens.print_scale
        printed_at = "" if scale == 1.0 else f", printed at {scale:.0%} of the sheet's size"
        reads_bare = "; a cell whose print shows no token reads bare" \
            if clf.tokens.printed_set else ""
        return SetLearning(f"none: {when} {printed} of {len(cells)} units were paper "
                           f"tokens read by their print{printed_at}{reads_bare}")
    if not enough_to_learn(units, cells):
        return SetLearning(f"none: {when} {PLACEMENT_IN_QUESTION}{rests}", too_few_settled=True)
    doubted = sorted(set(cells) - set(units))
    bare = [cell for cell in CELL_NAMES if cell not in cells]  # no unit stands there
    units_before = read_as_units(clf, image, camera, bare)
    try:
        info = adapt_from_setup(clf, image, camera, units)
    except (ValueError, RuntimeError) as exc:  # a crop off the image, say: keep the trained one
        clf.reset()
        return SetLearning(f"none: adapting {when} failed ({exc})")
    # what was learnt must leave the view's bare cells bare: on v6-s263 a black knight stood
    # on a court card's picture and was learnt as one with it, and from then on nearly every
    # bare cell read as a black knight, sure (8,704 of the 9,683 empty cells of settled frames)
    taken = sorted(set(read_as_units(clf, image, camera, bare)) - set(units_before))
    if taken:
        clf.reset()
        return SetLearning(
            f"none: {when} the look learnt from {len(units)} units read {len(taken)} bare "
            f"cells as units ({', '.join(taken[:3])}{', ...' if len(taken) > 3 else ''}), "
            f"so the trained one is kept{rests}")
    left = f", {len(doubted)} whose kind is still a question left out " \
           f"({', '.join(doubted)})" if doubted else ""
    return SetLearning(f"{when} from {len(units)} units ({', '.join(info['classes'])}) in "
                       f"{info['seconds']} s{left}{rests}", learnt=True)


def enough_to_learn(units: dict[str, str], cells: list[str]) -> bool:
    """Whether `units` (the units standing on `cells` whose kinds are settled) are enough to
    learn the set from (`_enough_left`): all of them, or enough with the doubted left out."""
    doubted = set(cells) - set(units)
    return not doubted or _enough_left(units, sorted(doubted))


def _enough_left(units: dict[str, str], doubted: list[str]) -> bool:
    """Whether the units whose kinds are settled are enough to learn the set from, the
    `doubted` ones left out: at least two of each side's (adapting from one side alone moved
    only that side's prototypes: s4 and s31 lost 27 and 34 moves in session 11), and more
    than are left out."""
    per_side = Counter(unit.split("-")[0] for unit in units.values())
    return len(units) > len(doubted) and all(per_side[side] >= 2 for side in ("white", "black"))


def read_as_units(clf: PieceClassifier, image: np.ndarray, camera, cells: list[str]
                  ) -> dict[str, str]:
    """Cell -> piece for each of `cells` that `clf` reads as a unit, sure."""
    if not cells:
        return {}
    reads = clf.read(image, camera, list(cells))
    return {cell: r.piece for cell, r in reads.items() if r.piece not in (None, "empty")}
