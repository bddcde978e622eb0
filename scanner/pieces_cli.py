"""`royal-table pieces`: classify photos of single pieces, and measure the piece classifier.

    royal-table pieces IMAGE... [--json]     one line per image: piece (e.g. white-knight,
                                             empty; unsure, null in JSON), confidence, and
                                             what is sure when the piece is not (occupied,
                                             side)
    royal-table pieces bench                 the bars: held-out renders, real photos, speed
    royal-table pieces heights [--clips N]   the height gauge on N filmed set-ups: pairs of
                                             units ordered right (king above queen, ...)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "pieces"


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("images", nargs="*", metavar="IMAGE",
                        help="photos each showing one piece (or none); or the word 'bench'")
    parser.add_argument("--json", action="store_true", help="print JSON lines")
    parser.add_argument("--box", metavar="X0,Y0,X1,Y1",
                        help="the piece's box in pixels (default: the whole image)")
    parser.add_argument("--model", type=Path, default=None, help="ONNX model (default: shipped)")
    parser.add_argument("--threshold", type=float, default=None,
                        help="below this probability a reading is unsure (default 0.6)")
    b = parser.add_argument_group("bench")
    b.add_argument("--scenes", type=int, default=60,
                   help="held-out scenes to render (3 tables each; 0 skips)")
    b.add_argument("--frame-scenes", type=int, default=360,
                   help="held-out scenes whose whole frames the piece stage reads as the "
                        "scanner does (60 scenes put tokens at 99.1 %%, 300 more at 97.2 %%)")
    b.add_argument("--real", type=Path, default=None,
                   help="real-photo set with YOLO piece boxes (default "
                        "../shared/data/real-pieces-dev; 'none' skips); measured on the half "
                        "of its source photos that training never uses")
    b.add_argument("--shots", type=int, default=10, help="crops per class to adapt from")
    b.add_argument("--cache", type=Path, default=Path("data/pieces"),
                   help="where rendered held-out crops are kept")
    parser.add_argument("--clips", type=int, default=90,
                        help="`pieces heights`: set-ups to film (cached) and gauge")
    parser.set_defaults(handler=run)


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def _classifier(args):
    from .piece_classifier import DEFAULT_MODEL, DEFAULT_THRESHOLD, PieceClassifier

    thr = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    if not 0.0 <= thr <= 1.0:
        raise ValueError("--threshold must be between 0 and 1")
    return PieceClassifier(args.model or DEFAULT_MODEL, threshold=thr)


def run(args) -> int:
    from .piece_classifier import ModelError

    if not args.images:
        return _fail("give IMAGE files to classify, or 'bench' (see --help)")
    if args.images == ["heights"] and not Path("heights").is_file():
        from .heights_bench import run as heights

        if args.clips < 1:
            return _fail("--clips must be at least 1")
        return heights(args.clips, args.json)
    try:
        clf = _classifier(args)
    except (ModelError, ValueError) as exc:
        return _fail(str(exc))
    if args.images[0] == "bench" and not Path("bench").is_file():
        return bench(clf, args)
    return classify(clf, args)


def classify(clf, args) -> int:
    import cv2

    box = None
    if args.box:
        try:
            box = tuple(float(v) for v in args.box.split(","))
            if len(box) != 4 or box[2] <= box[0] or box[3] <= box[1]:
                raise ValueError
        except ValueError:
            return _fail(f"--box wants X0,Y0,X1,Y1 with X1>X0 and Y1>Y0, got {args.box!r}")
    import numpy as np

    status = 0
    for name in args.images:
        img = None
        if Path(name).is_file():
            # imdecode: a clear message of our own instead of OpenCV's warning on stderr
            img = cv2.imdecode(np.fromfile(name, np.uint8), cv2.IMREAD_COLOR)
        if img is None:
            print(f"error: cannot read image {name}", file=sys.stderr)
            status = 2
            continue
        r = clf.classify_image(img, box)
        if args.json:  # piece null: unsure (as in the scanner's readings)
            print(json.dumps({"image": name, **r.to_json()}))
        else:
            what = r.piece
            if what is None:  # say what is sure: occupied, maybe the side
                what = (f"{r.side} piece, kind unsure" if r.side else
                        "a piece, side and kind unsure") if r.occupied else "unsure"
            print(f"{name}: {what} ({r.confidence:.2f})")
    return status


def speed(clf, runs: int = 60) -> dict:
    """Time one 1280x720 frame's occupied cells (the fixture still with 8 pieces), one thread:
    crops and model together, as the scanner calls it."""
    import cv2
    import numpy as np

    still = FIXTURES / "setup-lathe.jpg"
    truth = json.loads(still.with_suffix(".json").read_text())
    img = cv2.imread(str(still))
    cells = [c for c, lab in truth["labels"].items() if lab not in ("empty",)][:8]
    clf.read(img, truth["camera"], cells)  # warm up
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        clf.read(img, truth["camera"], cells)
        times.append((time.perf_counter() - t0) * 1e3)
    all_cells = list(truth["labels"])
    t_all = []
    for _ in range(max(10, runs // 4)):
        t0 = time.perf_counter()
        clf.read(img, truth["camera"], all_cells)
        t_all.append((time.perf_counter() - t0) * 1e3)
    return {"frame": f"{img.shape[1]}x{img.shape[0]}", "cells": len(cells),
            "median_ms": round(float(np.median(times)), 2),
            "p90_ms": round(float(np.percentile(times, 90)), 2),
            f"median_ms_{len(all_cells)}_cells": round(float(np.median(t_all)), 2),
            "threads": 1}


def bench(clf, args) -> int:
    from models.pieces.evaluate import (
        REAL_PIECES,
        real_crops,
        real_metrics,
        rendered_adaptation,
        rendered_metrics,
    )

    out: dict = {"model": str(clf.model_path), "threshold": clf.threshold}
    if args.scenes > 0:
        try:
            from models.pieces.train import HELDOUT_SEED0, crops_for
        except ImportError as exc:
            return _fail(f"rendering held-out scenes needs the renderer: {exc}")
        try:
            cs = crops_for("heldout", list(range(HELDOUT_SEED0, HELDOUT_SEED0 + args.scenes)),
                           1, args.cache, log=lambda m: print(m, file=sys.stderr))
        except RuntimeError as exc:
            return _fail(f"cannot render held-out scenes: {exc}")
        out["heldout_renders"] = rendered_metrics(clf, cs)
        out["heldout_renders"]["bars"] = {"occupancy": 0.998, "kind_colour_3d": 0.99,
                                          "kind_colour_tokens": 0.995}
        out["heldout_adapted"] = [rendered_adaptation(clf, cs, s, shots=args.shots)
                                  for s in ("lathe", "paper-token")]
        # the stage as the scanner runs it on whole frames: the crops above are the
        # classifier's alone; here the token reader joins it (and, for comparison, not)
        from models.pieces.evaluate import board_metrics

        seeds = list(range(HELDOUT_SEED0, HELDOUT_SEED0 + max(args.frame_scenes, 1)))
        out["heldout_frames"] = board_metrics(clf, seeds)
        out["heldout_frames_scenes"] = len(seeds)
        tokens, clf.tokens = clf.tokens, None
        out["heldout_frames_classifier_alone"] = board_metrics(clf, seeds)
        clf.tokens = tokens
    real = args.real or REAL_PIECES
    if str(real) != "none":
        if not (real / "labels").is_dir():
            return _fail(f"no real-photo set at {real} (labels/ missing)")
        X, y, src = real_crops(real)
        out["real_photos"] = real_metrics(clf, X, y, src, shots=args.shots)
        out["real_photos"]["aim_after_adapting"] = 0.95
    out["speed"] = speed(clf)
    out["speed"]["bar_ms"] = 20.0
    print(json.dumps(out, indent=1))
    return 0
