"""`royal-table serve`: the table-side web page on a camera, a video, or no source at all.

With no source it plays the first bundled fixture video in a loop (so a fresh machine shows a
whole game), or runs without a picture when there is none. Binds 127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURE_DIRS = (REPO_ROOT / "tests" / "fixtures", Path(__file__).resolve().parent / "fixtures")
VIDEO_SUFFIXES = (".mp4", ".avi", ".mkv", ".webm", ".mov")


def bundled_video() -> Path | None:
    """The first fixture video (sorted by path), if the checkout has one."""
    for folder in FIXTURE_DIRS:
        if folder.is_dir():
            videos = sorted(p for p in folder.rglob("*")
                            if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)
            if videos:
                return videos[0]
    return None


def register(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group()
    src.add_argument("--camera", metavar="N", type=int, help="webcam index (0 = the first)")
    src.add_argument("--video", metavar="FILE", help="a recorded video (played in a loop)")
    src.add_argument("--source", metavar="SPEC",
                     help="any frame source: a folder of images or a stream URL")
    src.add_argument("--no-camera", action="store_true",
                     help="no picture at all: the game is entered by hand")
    parser.add_argument("--profile", metavar="P",
                        help="calibration profile JSON (its homography draws the grid overlay)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8765,
                        help="port (default 8765; 0 picks a free one)")
    parser.add_argument("--data-dir", metavar="DIR", default="~/.local/share/royal-table",
                        help="where the game journal lives (default ~/.local/share/royal-table)")
    parser.add_argument("--resume", action="store_true", help="continue the last game")
    parser.set_defaults(handler=cmd_serve)


def _lock_data_dir(data_dir: Path):
    """An exclusive lock on the data dir for this process's life: two servers on one journal
    would each keep their own idea of the game. Returns the open lock file, or None if taken."""
    import fcntl

    handle = open(data_dir / "serve.lock", "w")  # held (open) until the server stops
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


def fail(message: str) -> int:
    print(f"royal-table serve: {message}", file=sys.stderr)
    return 2


def cmd_serve(args: argparse.Namespace) -> int:
    from webui.table.journal import Journal
    from webui.table.page import JOURNAL_NAME

    if not 0 <= args.port < 65536:
        return fail(f"port must be 0 (any free port) to 65535, got {args.port}")
    spec, loop, bundled = None, False, False
    if args.camera is not None:
        if args.camera < 0:
            return fail(f"camera index must be 0 or more, got {args.camera}")
        spec = str(args.camera)
    elif args.video:
        spec, loop = args.video, True
    elif args.source:
        spec, loop = args.source, True
    elif not args.no_camera:
        found = bundled_video()
        if found is not None:
            spec, loop, bundled = str(found), True, True
    data_dir = Path(args.data_dir).expanduser()
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        lock = _lock_data_dir(data_dir)
    except OSError as exc:
        return fail(f"cannot use data dir {data_dir}: {exc.strerror or exc}")
    if lock is None:
        return fail(f"another royal-table serve is using {data_dir} (one server per journal)")
    try:
        journal = Journal(data_dir / JOURNAL_NAME)
    except Exception as exc:  # noqa: BLE001 - sqlite3/OS errors alike: one clear line
        lock.close()
        return fail(f"cannot open the journal in {data_dir}: {exc}")
    try:
        return _serve(args, journal, spec, loop, bundled, data_dir)
    finally:
        lock.close()
        journal.close()


def _serve(args, journal, spec, loop, bundled, data_dir: Path) -> int:
    from werkzeug.serving import make_server

    from scanner.sources import SourceError
    from webui.app import create_app
    from webui.table.camera import ProfileError, open_camera
    from webui.table.page import JOURNAL_NAME, blueprint, install

    from .table.game import Table

    table = Table(journal)
    from engines.errors import RulesError

    from .table.game import InputError

    try:
        resumed = table.resume() if args.resume else True
    except (RulesError, InputError) as exc:  # a journal the rules no longer accept
        return fail(f"cannot resume the last game: {exc} (export it or start a new one)")
    if not resumed:
        print("royal-table serve: no game to resume; starting with the new-game form",
              file=sys.stderr)
    try:
        camera = open_camera(spec, loop=loop, profile=args.profile)
    except SourceError as exc:
        if not bundled:
            return fail(str(exc))
        # the fixture is only a demo picture: a broken one must not stop the page
        print(f"royal-table serve: {exc}; running without a picture", file=sys.stderr)
        spec = None
        camera = open_camera(None, loop=False, profile=args.profile)
    except ProfileError as exc:
        return fail(str(exc))
    if camera.scanner_note:
        print(f"royal-table serve: {camera.scanner_note}", file=sys.stderr)
    app = create_app({"TABLE_DATA_DIR": str(data_dir)})
    if "royal_table" not in app.blueprints:  # until webui.app mounts it
        app.register_blueprint(blueprint, url_prefix="/")
    install(app, table, camera, data_dir)
    try:
        server = make_server(args.host, args.port, app, threaded=True)
    except OSError as exc:
        camera.stop()
        return fail(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}")
    where = spec if spec is not None else "no camera"
    print(f"Royal Table on http://{args.host}:{server.server_port}/  (picture: {where}; "
          f"journal: {data_dir / JOURNAL_NAME})", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        camera.stop()
    return 0
