"""`royal-table cards IMAGE... [--json]`: find and read every card in arbitrary photos.

`royal-table cards bench` measures the reader (held-out designs, registration, real photos,
speed) and prints the figures the model card records.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _read(args: argparse.Namespace) -> int:
    import cv2

    from .card_corners import cards_in_photo
    from .card_reader import ModelMissingError, reader_in

    try:
        reader = reader_in(args.models)
    except ModelMissingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    results = []
    status = 0
    for path in args.images:
        entry: dict = {"image": path}
        img = cv2.imread(path, cv2.IMREAD_COLOR) if Path(path).is_file() else None
        if img is None:
            entry["error"] = "no such file" if not Path(path).is_file() else "unreadable image"
            print(f"error: {path}: {entry['error']}", file=sys.stderr)
            status = 2
            results.append(entry)
            continue
        entry["cards"] = [{"card": r.card, "face_down": r.face_down,
                           "corners": [[round(float(x), 1), round(float(y), 1)]
                                       for x, y in r.corners],
                           "confidence": round(float(r.confidence), 4),
                           "orientation": r.orientation, "digit_corners": r.digit_corners}
                          for r in cards_in_photo(img, reader)]
        results.append(entry)
    if args.json:
        print(json.dumps(results if len(results) != 1 else results[0], indent=1))
    else:
        for e in results:
            if "error" in e:
                continue
            cards = e["cards"]
            print(f"{e['image']}: {len(cards)} card(s)")
            for c in cards:
                what = c["card"] or ("face down" if c["face_down"] else "unsure")
                cx = sum(p[0] for p in c["corners"]) / 4
                cy = sum(p[1] for p in c["corners"]) / 4
                print(f"  {what:>9}  at ({cx:.0f}, {cy:.0f})  confidence {c['confidence']:.3f}")
    return status


def _bench(args: argparse.Namespace) -> int:
    from .card_reader import ModelMissingError
    from .cards_bench import REAL_DIR, run

    real = None if args.no_real else Path(args.real) if args.real else REAL_DIR
    try:
        try:
            w, h = (int(v) for v in args.still_size.lower().split("x"))
        except ValueError:
            print(f"error: --still-size must be WxH, not {args.still_size!r}", file=sys.stderr)
            return 2
        designs = args.designs.split(",") if args.designs else None
        if designs:
            from models.renderer.assets import design

            try:
                for name in designs:
                    if not (d := design(name)).installed:
                        print(f"error: card design {name} is not installed ({d.svg})",
                              file=sys.stderr)
                        return 2
            except KeyError as exc:
                print(f"error: {exc.args[0]} (see models/renderer/designs.json)",
                      file=sys.stderr)
                return 2
        if args.against:
            from .cards_bench import bench_against

            other = Path(args.against)
            if args.rounds < 1:
                print("error: --rounds must be 1 or more", file=sys.stderr)
                return 2
            if not (other / "scanner" / "card_reader.py").is_file():
                print(f"error: {other} is no Royal Table checkout (no scanner/card_reader.py)",
                      file=sys.stderr)
                return 2
            try:
                out = bench_against(other.resolve(), args.stills, args.seed, real, args.limit,
                                    size=(w, h), rounds=args.rounds, designs=designs)
            except RuntimeError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
        else:
            out = run(args.stills, args.setups, real, args.limit, args.seed, size=(w, h),
                      models=Path(args.models) if args.models else None,
                      candidates=args.candidates, designs=designs)
    except ModelMissingError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json_out:
        try:
            Path(args.json_out).write_text(json.dumps(out, indent=1) + "\n")
        except OSError as exc:
            print(f"error: cannot write {args.json_out}: {exc.strerror}", file=sys.stderr)
            return 2
    return 0


def _dispatch(args: argparse.Namespace) -> int:
    if args.images == ["bench"]:
        return _bench(args)
    if "bench" in args.images[:1]:
        print("error: `cards bench` takes options only (see --help)", file=sys.stderr)
        return 2
    return _read(args)


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Find and read every card in photos: per image a list of {card, "
                          "corners, confidence}; a card found but not read is card: null. "
                          "`cards bench` prints the measured figures.")
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photos, or 'bench'")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--models", help="folder with card_index.onnx/.json (and card_face.*, "
                        "card_pips.*: the board's pip reader, off where absent) to use instead "
                        "of the committed models")
    g = parser.add_argument_group("bench options")
    g.add_argument("--stills", type=int, default=30, help="held-out rendered stills")
    g.add_argument("--designs", metavar="D1,D2",
                   help="render the stills with these card designs instead of the held-out ones "
                   "(e.g. the spare decks no model saw: kde-standard,kde-tigullio-international)")
    g.add_argument("--still-size", default="1280x720", help="rendered still size WxH")
    g.add_argument("--setups", type=int, default=20, help="set-up stills for registration")
    g.add_argument("--real", help="real-cards-dev folder (default ../shared/data/...)")
    g.add_argument("--no-real", action="store_true", help="skip the real photographs")
    g.add_argument("--limit", type=int, help="at most this many real photographs")
    g.add_argument("--seed", type=int, default=2026)
    g.add_argument("--candidates", type=int, default=0, metavar="N",
                   help="also measure how far unsure cards' top candidates can be trusted, on "
                   "N validation-design cards per size (needs the training data code)")
    g.add_argument("--json-out", help="also write the figures as JSON here")
    g.add_argument("--against", metavar="DIR",
                   help="only speed: this checkout against the one in DIR (e.g. a `git "
                        "worktree` of an earlier commit), the same stills and photos read by "
                        "both in turn, and the paired differences (a shared machine's speed "
                        "wanders more than a change saves)")
    g.add_argument("--rounds", type=int, default=4,
                   help="with --against: times each still and photo is read by each checkout")
    parser.set_defaults(handler=_dispatch)
