"""The `royal-table` command: one entry point, one subcommand family per part of the product.

Each family lives beside the code it drives and exposes `register(parser)`; the table below is
the only place that knows them all. Families keep heavy imports (onnxruntime, torch) inside
their handlers, so `--help` stays fast and a subcommand loads only what it needs.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# subcommand name -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "rb": ("webui.royal_battles_cli", "Royal Battles: plan, legal moves, self-play, benchmark"),
    "bc": ("webui.battle_cards_cli", "Battle Cards table helper"),
    "rc": ("webui.royal_conquest_cli", "Royal Conquest scoring helper"),
    "rbs": ("webui.royal_bastards_cli", "Royal Bastards contest helper"),
    "wlt": ("webui.war_lord_tourney_cli", "War Lord Tourney move helper"),
    "render": ("models.renderer.cli", "render table stills and recorded-game videos"),
    "train": ("models.train_cli", "train the recognition models (needs the 'train' extra)"),
    "calibrate": ("calibration.cli", "fit the camera and board, write a profile"),
    "cards": ("scanner.cards_cli", "find and read every card in photos"),
    "pieces": ("scanner.pieces_cli", "classify single-piece images"),
    "scan": ("scanner.scan_cli", "track a game from a camera, video or images"),
    "serve": ("webui.serve_cli", "start the table-side web page"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="royal-table",
        description="Camera assistant for Royal Battles and other card-and-piece games.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0 if args.command is None else 2
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
