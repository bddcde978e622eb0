"""`royal-table train ...`: rebuild the recognition models (needs the 'train' extra)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _cards(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        print("error: training needs torch: pip install torch==2.13.0 onnx", file=sys.stderr)
        return 2
    # fine-tuning (--scenes) starts from trained weights: fewer epochs, a gentler rate
    if args.epochs is None:
        args.epochs = 4 if args.scenes else 8 if args.pips else 12
    if args.lr is None:
        args.lr = 1e-3 if args.scenes else 3e-3
    if args.cards < 100 or args.epochs < 0 or (args.epochs == 0 and not args.init
                                                and not args.recalibrate):
        print("error: --cards must be >= 100 and --epochs >= 1 (0 only with --init: export "
              "those weights)", file=sys.stderr)
        return 2
    from models.cards.train import recalibrate, train

    if args.scenes:
        from models.cards import finetune

        finetune.finetune(stills=args.scenes, val_stills=args.val_stills, epochs=args.epochs,
                          face_epochs=args.epochs, lr=args.lr,
                          seed=args.seed, workers=args.workers, threads=args.threads,
                          out=Path(args.out), start=Path(args.start),
                          index=not args.keep_index, face=not args.keep_face,
                          augment=args.augment)
        return 0
    if args.pips:
        from models.cards import pips

        if args.marks:
            pips.measure_marks(Path(args.out), workers=args.workers)
            return 0
        pips.train(seed=args.seed, epochs=args.epochs, workers=args.workers,
                   threads=args.threads, out=Path(args.out))
        return 0
    if args.presence:
        from models.cards import presence

        presence.train(seed=args.seed, stills=args.stills, val_stills=args.val_stills,
                       epochs=args.epochs, workers=args.workers, threads=args.threads,
                       out=Path(args.out))
        return 0
    if args.face:
        from models.cards import face

        if args.recalibrate:
            face.calibrate(out=Path(args.out), n_val=args.val_cards, threads=args.threads)
            return 0
        face.train(seed=args.seed, n_cards=args.cards, n_val=args.val_cards,
                   epochs=args.epochs, threads=args.threads, out=Path(args.out), lr=args.lr,
                   init=args.init, workers=args.workers, augment=args.augment)
        return 0
    if args.recalibrate:
        recalibrate(seed=args.seed, n_val=args.val_cards, workers=args.workers,
                    out=Path(args.out))
        return 0
    train(seed=args.seed, n_cards=args.cards, n_val=args.val_cards, epochs=args.epochs,
          workers=args.workers, threads=args.threads, out=Path(args.out), init=args.init,
          lr=args.lr, none_share=args.none_share, augment=args.augment)
    return 0


def _tokens(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        print("error: training needs torch: pip install torch==2.13.0 onnx", file=sys.stderr)
        return 2
    if args.epochs < 1:
        print("error: --epochs must be >= 1", file=sys.stderr)
        return 2
    from models.pieces.token_glyph import run

    run(epochs=args.epochs, seed=args.seed, workers=args.workers, threads=args.threads,
        cache=args.cache, out=args.out)
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="model", metavar="MODEL")
    p = sub.add_parser("cards", help="the card index classifier (ONNX) from rendered designs",
                       description="Train the card index classifier on the renderer's training "
                       "designs and export it to ONNX with its temperature and threshold.")
    p.add_argument("--face", action="store_true",
                   help="train the whole-card model (card_face.onnx) instead, and calibrate it "
                   "with the index model beside it")
    p.add_argument("--presence", action="store_true",
                   help="train the card-presence check (card_presence.onnx) instead: is there "
                   "a card under a quad the board finder found, or cloth?")
    p.add_argument("--pips", action="store_true",
                   help="train the pip reader (card_pips.onnx) instead: the suit of a number "
                   "card from the shapes of its pips (models/cards/pips.py; default 8 epochs)")
    p.add_argument("--marks", action="store_true",
                   help="with --pips: only measure how the pip reader in --out names the index "
                   "marks of the validation decks' court cards, and write it into its meta")
    p.add_argument("--scenes", type=int, default=0, metavar="N",
                   help="fine-tune the index and whole-card readers in --start on N rendered "
                   "table stills cut by the board finder (models/cards/finetune.py); "
                   "--val-stills picks thresholds")
    p.add_argument("--keep-index", action="store_true",
                   help="--scenes: fine-tune only the whole-card reader; the index reader is "
                   "copied from --start as it is")
    p.add_argument("--keep-face", action="store_true",
                   help="--scenes: fine-tune only the index reader; the whole-card reader is "
                   "copied from --start and only its fused threshold picked again")
    p.add_argument("--start", default=str(Path(__file__).resolve().parent / "cards"),
                   help="--scenes: folder of the card_index/card_face models to start from")
    p.add_argument("--stills", type=int, default=1200,
                   help="--presence: rendered training stills (every quad the finder accepts)")
    p.add_argument("--val-stills", type=int, default=200,
                   help="--presence, --scenes: rendered stills of other seeds that pick the "
                   "threshold")
    p.add_argument("--seed", type=int, default=7,
                   help="data seed (the committed index reader: 7; the pip reader: 11)")
    p.add_argument("--cards", type=int, default=24000,
                   help="training cards of the decks (4 crops each; the mix adds small cards "
                   "and procedural faces in proportion)")
    p.add_argument("--val-cards", type=int, default=3000, help="validation cards")
    p.add_argument("--epochs", type=int,
                   help="training epochs (default 12; 4 with --scenes, 8 with --pips)")
    p.add_argument("--none-share", type=float, default=0.35,
                   help="share of blank-corner crops seen per epoch")
    p.add_argument("--augment", action="store_true",
                   help="index reader (from scratch, or --scenes): a fresh shift, scale, turn, "
                        "blur, light and erased patch for each crop every epoch "
                        "(models/cards/train.py: augment_index)")
    p.add_argument("--workers", type=int, default=2, help="processes generating data")
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--lr", type=float,
                   help="peak learning rate (default 3e-3; 1e-3 with --scenes)")
    p.add_argument("--init", help="start from these torch weights (.pt) instead of scratch")
    p.add_argument("--recalibrate", action="store_true",
                   help="only re-pick temperature and threshold of the model in --out")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "cards"),
                   help="folder for the model files (card_index, card_face or card_presence)")
    p.set_defaults(handler=_cards)

    from models.pieces import train as pieces_train

    p = sub.add_parser("pieces", help="the piece classifier (ONNX) from rendered piece sets",
                       description="Train the piece classifier on the renderer's training piece "
                       "sets and tokens and export it to ONNX (python -m models.pieces.train).")
    pieces_train.register(p)
    p.set_defaults(handler=pieces_train.run)

    p = sub.add_parser("tokens", help="the paper-token glyph reader (ONNX) from rendered tables",
                       description="Train the token glyph reader (models/pieces/token_glyph.py) "
                       "on the top views of rendered training tables, pick its thresholds on "
                       "other training renders and export it to ONNX.")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=2, help="processes rendering views")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--cache", type=Path, default=Path("data/pieces"),
                   help="where rendered views are kept (npz per part)")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "pieces",
                   help="folder for token_glyph.onnx and token_glyph.json")
    p.set_defaults(handler=_tokens)
    parser.set_defaults(handler=lambda a: (parser.print_help(), 2)[1])
