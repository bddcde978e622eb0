"""`royal-table render ...`: build the asset cache, render stills, film games, benchmark."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def _assets(args) -> int:
    from . import build_assets
    from .tokens import write_token_sheet

    n = build_assets()
    p = write_token_sheet(Path(__file__).resolve().parent / "token-sheet.svg")
    print(f"{n} assets in the cache; token sheet {p}")
    return 0


def _still(args) -> int:
    from .stills import write_stills

    seeds = list(range(args.seed, args.seed + args.count))
    paths = write_stills(Path(args.out), seeds, split=args.split, width=args.width,
                         height=args.height, whole_board=not args.partial)
    print(f"{len(paths)} stills in {args.out}")
    return 0


def _game(args) -> int:
    from .scene import Scene
    from .video import record_video

    scene = None
    if args.design or args.piece_set:
        scene = Scene.random(args.seed, split=args.split, width=args.width,
                             height=args.height, whole_board=True,
                             designs=[args.design] if args.design else None,
                             piece_sets=[args.piece_set] if args.piece_set else None)
        scene.motion, scene.jpeg = 0.0, 100
    meta = record_video(args.seed, Path(args.out), scene=scene, split=args.split,
                        max_rounds=args.max_rounds, width=args.width, height=args.height)
    print(json.dumps({k: v for k, v in meta.items() if k != "scene"}))
    return 0


def _bench(args) -> int:
    from .stills import bench

    print(json.dumps(bench(args.frames)))
    return 0


def _tokens(args) -> int:
    from .tokens import write_token_sheet

    print(write_token_sheet(Path(args.out)))
    return 0


def _contact(args) -> int:
    from .stills import contact_sheet

    dirs = [SHARED / "real-cards-dev" / "images", SHARED / "real-pieces-dev" / "images"]
    print(contact_sheet(Path(args.out), [d for d in dirs if d.exists()]))
    return 0


def _fixtures(args) -> int:
    from .fixtures import build_fixtures

    build_fixtures(videos=not args.stills_only, stills=not args.videos_only)
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="render_command", metavar="WHAT")
    p = sub.add_parser("assets", help="rasterise card decks and piece sprites into the cache")
    p.set_defaults(handler=_assets)
    p = sub.add_parser("still", help="render still frames with truth JSON")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--split", choices=["train", "heldout"], default="train")
    p.add_argument("--out", required=True)
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=720)
    p.add_argument("--partial", action="store_true", help="allow the board to leave the frame")
    p.set_defaults(handler=_still)
    p = sub.add_parser("game", help="film a seeded engine game: game.mp4 + truth.jsonl.gz")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--split", choices=["train", "heldout"], default="train")
    p.add_argument("--design", help="card design for both decks")
    p.add_argument("--piece-set", help="brutalchess, dreamchess, lathe or paper-token")
    p.add_argument("--max-rounds", type=int, default=12)
    p.add_argument("--width", type=int, default=960)
    p.add_argument("--height", type=int, default=540)
    p.set_defaults(handler=_game)
    p = sub.add_parser("bench", help="median ms per 1280x720 frame")
    p.add_argument("--frames", type=int, default=20)
    p.set_defaults(handler=_bench)
    p = sub.add_parser("token-sheet", help="write the printable paper-token sheet (SVG)")
    p.add_argument("--out", default="token-sheet.svg")
    p.set_defaults(handler=_tokens)
    p = sub.add_parser("fixtures", help="rebuild tests/fixtures/render (videos and stills)")
    p.add_argument("--videos-only", action="store_true")
    p.add_argument("--stills-only", action="store_true")
    p.set_defaults(handler=_fixtures)
    p = sub.add_parser("contact-sheet", help="renders beside real photographs (PNG)")
    p.add_argument("--out", default="models/renderer/contact-sheet.png")
    p.set_defaults(handler=_contact)
