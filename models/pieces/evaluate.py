"""Measuring the piece classifier: held-out renders (per cell, as the scanner reads them) and
real photographs (one crop per labelled box, grouped by source photo)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from models.real_photos import fit_source, source_of
from scanner.piece_classifier import CLASSES, UNSURE_CLASS, PieceClassifier
from scanner.piece_crops import frame_single

REAL_PIECES = Path(__file__).resolve().parents[3] / "shared" / "data" / "real-pieces-dev"


def _pred_classes(clf: PieceClassifier, probs: np.ndarray) -> np.ndarray:
    """Class index per row of the whole answer, with -1 for unsure (`PieceClassifier.decide`)."""
    return clf.decide(probs)["piece"]


def rendered_metrics(clf: PieceClassifier, cs, batch: int = 256) -> dict:
    """The bars on held-out renders. An unsure answer counts as wrong in every accuracy (it is
    safe, not right); how often it happens is reported beside. Occupancy and side are the
    scanner's own decisions (`decide`), which may be sure while the kind is not."""
    probs = np.concatenate([clf.probabilities(clf.embed(cs.X[i:i + batch]))
                            for i in range(0, len(cs.y), batch)])
    d = clf.decide(probs)
    pred = d["piece"]
    y = cs.y
    known = y != UNSURE_CLASS
    token = cs.piece_set == "paper-token"
    occ_t = y > 0
    out: dict = {"cells": int(known.sum())}
    occ_ok = (d["occupied"] >= 0) & ((d["occupied"] == 1) == occ_t)
    out["occupancy"] = round(float(occ_ok[known].mean()), 4)
    out["occupancy_unsure_rate"] = round(float((d["occupied"] < 0)[known].mean()), 4)
    out["occupancy_wrong"] = int(((d["occupied"] >= 0) & ~occ_ok)[known].sum())
    out["unsure_rate"] = round(float((pred < 0)[known].mean()), 4)  # the whole answer
    side_t = (y - 1) // 6  # 0 white, 1 black for pieces
    for name, sel in (("3d", ~token), ("tokens", token)):
        m = known & occ_t & sel
        out[f"kind_colour_{name}"] = round(float((pred[m] == y[m]).mean()), 4) if m.any() else None
        if m.any():
            out[f"occupancy_{name}"] = round(float(occ_ok[known & sel].mean()), 4)
            # the side as decided (unsure or a wrong occupancy count as wrong)
            out[f"colour_{name}"] = round(float((d["side"][m] == side_t[m]).mean()), 4)
            out[f"colour_{name}_wrong"] = int(((d["side"][m] >= 0)
                                               & (d["side"][m] != side_t[m])).sum())
            top = probs[m].argmax(1)
            # without the unsure rule: the best class alone
            out[f"kind_colour_{name}_top1"] = round(float((top == y[m]).mean()), 4)
        out[f"occupied_cells_{name}"] = int(m.sum())
        me = known & ~occ_t & sel
        out[f"empty_ok_{name}"] = round(float((pred[me] == 0).mean()), 4) if me.any() else None
    m = ~known
    out["unsure_cells"] = int(m.sum())
    # knocked over or under a hand: right when the occupancy itself is unsure
    out["unsure_recall"] = round(float((d["occupied"][m] < 0).mean()), 4) if m.any() else None
    # the errors that matter most: a confident wrong piece
    wrong = known & (pred >= 0) & (pred != y)
    out["confident_errors"] = int(wrong.sum())
    return out


def _names(root: Path) -> list[str]:
    text = (root / "classes.yaml").read_text()
    line = next(x for x in text.splitlines() if x.strip().startswith("names:"))
    return [s.strip().strip("'\"") for s in line.split("[", 1)[1].rsplit("]", 1)[0].split(",")]


def real_crops(root: Path = REAL_PIECES) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Crops (N x H x W x 3), labels (CLASSES index) and source-photo ids of the real set, one
    crop per box framed as `frame_single` frames a photo; the generic 'bishop' (no colour) is
    left out."""
    names = _names(root)
    X, y, src = [], [], []
    for img_path in sorted((root / "images").glob("*.jpg")):
        lab = root / "labels" / (img_path.stem + ".txt")
        if not lab.exists():
            continue
        img = cv2.imread(str(img_path))
        if img is None:
            continue
        h, w = img.shape[:2]
        source = source_of(img_path.name)
        for line in lab.read_text().split("\n"):
            parts = line.split()
            if len(parts) != 5:
                continue
            name = names[int(parts[0])]
            if name not in CLASSES:
                continue
            cx, cy, bw, bh = (float(v) for v in parts[1:])
            box = ((cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h)
            X.append(frame_single(img, box))
            y.append(CLASSES.index(name))
            src.append(source)
    return np.array(X, np.uint8), np.array(y, np.int64), np.array(src)


def real_metrics(clf: PieceClassifier, X: np.ndarray, y: np.ndarray, src: np.ndarray,
                 shots: int = 10, trials: int = 5, seed: int = 0) -> dict:
    """Accuracy on the real crops of the measured sources (not `fit_source`) without
    adaptation, and after adapting from `shots` crops per class drawn from some of those
    source photos, measured on the crops of the others."""
    from scanner.piece_adapt import adapt_from_crops

    keep = np.array([not fit_source(s) for s in src], bool)
    X, y, src = X[keep], y[keep], src[keep]
    clf.reset()
    desc = np.concatenate([clf.embed(X[i:i + 256]) for i in range(0, len(X), 256)])
    probs = clf.probabilities(desc)
    pred = _pred_classes(clf, probs)
    out: dict = {"crops": int(len(y)), "sources": int(len(set(src.tolist())))}
    out["no_adaptation"] = round(float((pred == y).mean()), 4)
    out["no_adaptation_top1"] = round(float((probs.argmax(1) == y).mean()), 4)
    # the two halves of the answer, from the summed probabilities (as `decide` splits them)
    side = (probs[:, 7:13].sum(1) > probs[:, 1:7].sum(1)).astype(np.int64)
    kind = (probs[:, 1:7] + probs[:, 7:13]).argmax(1)
    out["no_adaptation_side"] = round(float((side == (y - 1) // 6).mean()), 4)
    out["no_adaptation_kind"] = round(float((kind == (y - 1) % 6).mean()), 4)
    rng = np.random.default_rng(seed)
    accs, top1s = [], []
    sources = np.array(sorted(set(src.tolist())))
    for _ in range(trials):
        order = rng.permutation(sources)
        chosen: list[int] = []
        used: set[str] = set()
        need = {c: shots for c in np.unique(y)}
        # take whole source photos until every class has its shots; test on the rest
        for s in order:
            if all(v <= 0 for v in need.values()):
                break
            idx = np.nonzero(src == s)[0]
            if not any(need[y[i]] > 0 for i in idx):
                continue
            used.add(s)
            for i in rng.permutation(idx):
                if need[y[i]] > 0:
                    chosen.append(int(i))
                    need[y[i]] -= 1
        test = ~np.isin(src, list(used))
        adapt_from_crops(clf, X[chosen], [CLASSES[i] for i in y[chosen]])
        p = clf.probabilities(desc[test])
        accs.append(float((_pred_classes(clf, p) == y[test]).mean()))
        top1s.append(float((p.argmax(1) == y[test]).mean()))
        clf.reset()
    out[f"adapted_{shots}_per_class"] = round(float(np.mean(accs)), 4)
    out[f"adapted_{shots}_per_class_top1"] = round(float(np.mean(top1s)), 4)
    out["adapted_trials"] = [round(a, 4) for a in accs]
    return out


def rendered_adaptation(clf: PieceClassifier, cs, piece_set: str = "lathe", shots: int = 10,
                        trials: int = 3, seed: int = 0, batch: int = 256) -> dict:
    """Held-out renders of one set: adapt from `shots` crops per class (empty and the 12
    pieces) taken from some tables, measure on the tables not used."""
    from scanner.piece_adapt import adapt_from_crops

    sel = np.nonzero(cs.piece_set == piece_set)[0]
    if len(sel) == 0:
        return {}
    X, y, fr = cs.X[sel], cs.y[sel], cs.frame[sel]
    clf.reset()
    desc = np.concatenate([clf.embed(X[i:i + batch]) for i in range(0, len(y), batch)])
    rng = np.random.default_rng(seed)
    res = []
    for _ in range(trials):
        frames = rng.permutation(np.unique(fr))
        chosen: list[int] = []
        need = {c: shots for c in range(13)}
        used = set()
        for f in frames:
            if all(v <= 0 for v in need.values()):
                break
            idx = np.nonzero(fr == f)[0]
            if not any(need.get(int(y[i]), 0) > 0 for i in idx):
                continue
            used.add(int(f))
            for i in rng.permutation(idx):
                if need.get(int(y[i]), 0) > 0:
                    chosen.append(int(i))
                    need[int(y[i])] -= 1
        test = ~np.isin(fr, list(used)) & (y != UNSURE_CLASS)
        adapt_from_crops(clf, X[chosen], [CLASSES[i] for i in y[chosen]])
        pred = _pred_classes(clf, clf.probabilities(desc[test]))
        occ = test & (y > 0)
        yt = y[test]
        res.append(((pred == yt).mean(), (pred[y[test] > 0] == yt[yt > 0]).mean()))
        del occ
        clf.reset()
    r = np.array(res)
    return {"set": piece_set, "shots": shots, "cells_right": round(float(r[:, 0].mean()), 4),
            "kind_colour": round(float(r[:, 1].mean()), 4)}


def board_frames(seed: int, split: str, piece_sets: list[str] | None = None,
                 positions: int = 3, procedural: bool = False) -> list[tuple]:
    """One random scene's tables as `data.frame_crops` renders them (the same scene, tables and
    arms over them), each as (image, camera, {cell: label}): every cell with a card or a unit
    whose crop and centre on the table lie in the frame (the scanner reads a cell cut off at
    its centre unsure), labelled `unsure` where an arm covers its crop, and left out where it
    half does."""
    from models.pieces.data import (
        _hand_mask,
        label_of,
        random_hands,
        random_position,
        under_hand,
    )
    from models.renderer import Scene, render_scene
    from models.renderer.scene import sub_seed
    from scanner.piece_crops import CELLS, as_board_camera, cell_centre, crop_quad, off_frame

    if procedural:
        piece_sets = [f"proc-{seed}"]
    scene = Scene.random(seed, split=split, piece_sets=piece_sets)
    out = []
    for k in range(positions):
        rng = np.random.default_rng(sub_seed("pieces-data", split, seed, k))
        pos = random_position(rng)
        hands = random_hands(rng) if rng.random() < 0.25 else None
        res = render_scene(pos, scene, hands=hands, frame=k)
        cam = as_board_camera(res.truth["camera"], res.image.shape)
        hmask = _hand_mask(res.truth, res.image.shape)
        h, w = res.image.shape[:2]
        labels = {}
        for cell in CELLS:
            st = pos["board"].get(cell)
            if st is None:
                continue
            x, y = cell_centre(cell)
            quad = crop_quad(cam, x, y)
            c = quad.mean(0)
            if not (0 <= c[0] < w and 0 <= c[1] < h) or off_frame(cam, (h, w), [cell]):
                continue
            label = under_hand(hmask, quad, label_of(st.get("unit")))
            if label is not None:
                labels[cell] = label
        out.append((res.image, cam, labels, scene.piece_set))
    return out


def _board_worker(args) -> list[dict]:
    seeds, split, piece_sets, procedural, turned = args
    from scanner.token_reader import PATCH, TokenReader

    tokens = TokenReader()
    rows = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        for image, cam, labels, pset in board_frames(seed, split, piece_sets,
                                                     procedural=procedural):
            for cell, view in tokens.top_views(image, cam, list(labels)).items():
                label = labels[cell]
                if turned:  # a token as a player lays it, turned any way
                    M = cv2.getRotationMatrix2D((PATCH / 2, PATCH / 2),
                                                float(rng.uniform(-turned, turned)), 1.0)
                    view = cv2.warpAffine(view, M, (PATCH, PATCH), flags=cv2.INTER_LINEAR,
                                          borderMode=cv2.BORDER_REPLICATE)
                m = tokens.match(view)
                rows.append({"set": pset, "label": CLASSES[label], "piece": m.piece,
                             "score": m.score, "margin": m.margin,
                             "p": m.probs[(m.side, m.kind)],
                             "log_probs": [float(np.log(m.probs[k] + 1e-300))
                                        for k in tokens._keys]})
    return rows


def token_views(seeds: list[int], split: str, piece_sets: list[str] | None = None,
                procedural: bool = False, workers: int = 1, turned: float = 0.0
                ) -> list[dict]:
    """The token reader's best glyph on every labelled cell of the scenes' tables (`turned`:
    each top view turned at random up to that many degrees either way, as players lay tokens;
    the renderer lays them facing their owner): what its thresholds are calibrated on
    (training renders)."""
    chunks = [(seeds[i::workers], split, piece_sets, procedural, turned)
              for i in range(workers)]
    if workers == 1:
        return _board_worker(chunks[0])
    import multiprocessing as mp

    with mp.get_context("fork").Pool(workers) as pool:
        return [r for part in pool.map(_board_worker, chunks) for r in part]


def board_metrics(clf: PieceClassifier, seeds: list[int], split: str = "heldout",
                  piece_sets: list[str] | None = None) -> dict:
    """The piece stage as the scanner runs it (`PieceClassifier.read`: the classifier and, for
    tokens, the token reader) on whole rendered frames, cells at their centres: kind and colour
    of occupied cells, occupancy, confident errors, per piece set. Frames are read as in a game
    past its set-up view: the token set's as printed tokens (`TokenReader.printed_set`), 3D
    sets' with the token reader resting."""
    per: dict[str, list[int]] = {}
    tokens = clf.tokens
    printed_set = tokens is not None and tokens.printed_set
    for seed in seeds:
        for image, cam, labels, pset in board_frames(seed, split, piece_sets):
            if tokens is not None:
                # as in a game, once its set-up view was seen: a game of printed tokens reads
                # bare cells by the print, a game of 3D pieces rests the token reader
                tokens.printed_set = pset == "paper-token"
                clf.tokens = tokens if pset == "paper-token" else None
            try:
                got = clf.read(image, cam, list(labels))
            finally:
                clf.tokens = tokens
                if tokens is not None:
                    tokens.printed_set = printed_set
            s = per.setdefault(pset, [0] * 6)
            for cell, label in labels.items():
                r = got[cell]
                if label == UNSURE_CLASS:
                    continue
                truth = CLASSES[label]
                s[0] += truth != "empty"
                s[1] += truth != "empty" and r.piece == truth
                s[2] += 1
                s[3] += (r.occupied is not None) and (r.occupied == (truth != "empty"))
                s[4] += r.piece is not None and r.piece != truth
                s[5] += truth == "empty" and r.occupied is True
    return {name: {"occupied_cells": s[0], "kind_colour": round(s[1] / max(s[0], 1), 4),
                   "cells": s[2], "occupancy": round(s[3] / max(s[2], 1), 4),
                   "confident_errors": s[4], "pieces_on_bare_cards": s[5]}
            for name, s in sorted(per.items())}
