"""The table-side page as a Flask blueprint: HTML, JSON API, Server-Sent Events and MJPEG.

Mount it at "/" (`webui.table_page`). Its state lives in `app.extensions["royal_table"]`: the
`Table` (game + journal) and the `LiveCamera`. `serve` installs both; a bare app (tests) gets a
journal in `TABLE_DATA_DIR` and no camera on first use.

Safety: every POST needs the session's CSRF token in the `X-CSRF-Token` header (403 otherwise);
bodies are JSON, size-limited by create_app's MAX_CONTENT_LENGTH; errors are JSON
`{"error": message}` with 400, never a traceback.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    jsonify,
    render_template,
    request,
    session,
    stream_with_context,
)
from werkzeug.exceptions import HTTPException

from engines.errors import RulesError
from engines.royal_battles import CELL_NAMES, Phase
from engines.royal_battles.position import to_json

from .calibrate import CalibrationError, calibrate_from_frame
from .camera import LiveCamera
from .game import (
    GameSetup,
    InputError,
    Table,
    key_cells,
    legal_moves,
    parse_hand,
    planner_options,
    view,
)
from .journal import Journal
from .proposals import propose

DEFAULT_DATA_DIR = Path("~/.local/share/royal-table").expanduser()
JOURNAL_NAME = "journal.sqlite"
PROFILE_NAME = "profile.json"  # written by the page's calibration
SSE_KEEPALIVE_S = 15.0
MJPEG_FPS = 5.0
OVERLAYS = ("grid", "cells", "unsure", "keys")
UNSAFE_METHODS = ("POST", "PUT", "PATCH", "DELETE")

blueprint = Blueprint("royal_table", __name__, template_folder="templates",
                      static_folder="static", static_url_path="/static/table")


@dataclass
class TableContext:
    table: Table
    camera: LiveCamera
    data_dir: Path


def data_dir_of(config) -> Path:
    return Path(config.get("TABLE_DATA_DIR") or DEFAULT_DATA_DIR).expanduser()


def secret_key(data_dir: Path) -> bytes:
    """A per-installation key kept in the data dir, so sessions survive a restart."""
    path = data_dir / "secret.key"
    data_dir.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.stat().st_size >= 32:
        return path.read_bytes()
    key = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(key)
    return key


@blueprint.record_once
def _configure(state) -> None:
    app = state.app
    if not app.secret_key:
        app.secret_key = secret_key(data_dir_of(app.config))
    # Flask's defaults hold these keys already, so setdefault would not take
    if not app.config.get("SESSION_COOKIE_SAMESITE"):
        app.config["SESSION_COOKIE_SAMESITE"] = "Strict"
    app.config["SESSION_COOKIE_HTTPONLY"] = True


def install(app, table: Table, camera: LiveCamera, data_dir: Path) -> TableContext:
    ctx = TableContext(table, camera, data_dir)
    if table.state is not None:  # a resumed game: its key cells for the camera overlay
        camera.key_cells = key_cells(table.state)
    tell_camera_the_game(table, camera)
    app.extensions["royal_table"] = ctx
    return ctx


def tell_camera_the_game(table: Table, camera: LiveCamera) -> None:
    """The game as the players entered it: the camera's tracker restarts from it
    (`tracking.CameraGame`), and once every unit is placed the camera's piece classifier
    learns their own set from a view of them (`LiveCamera.learn_set`)."""
    # (a copy taken under the table's lock: another request may be entering the next event)
    with table.lock:
        game_id, version = table.game_id, table.version
        game = table.state.copy() if table.state is not None else None
    placed = game is not None and game.phase not in (Phase.SETUP, Phase.PLACE)
    camera.learn_set(game_id, {CELL_NAMES[c]: f"{u.side.value}-{u.kind}"
                               for c, u in game.units.items()} if placed else None)
    camera.game.follow(version, game)


_CTX_LOCK = threading.Lock()  # two first requests must not open two journals


def ctx() -> TableContext:
    found = current_app.extensions.get("royal_table")
    if found is None:
        with _CTX_LOCK:
            found = current_app.extensions.get("royal_table")
            if found is None:
                data_dir = data_dir_of(current_app.config)
                table = Table(Journal(data_dir / JOURNAL_NAME))
                found = install(current_app, table, LiveCamera(None), data_dir)
    return found


# --------------------------------------------------------------------------- safety


def csrf_token() -> str:
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(32)
    return token


@blueprint.before_request
def _check_csrf():
    if request.method in UNSAFE_METHODS:
        sent = request.headers.get("X-CSRF-Token", "")
        token = session.get("csrf")
        if not token or not hmac.compare_digest(sent, token):
            return jsonify(error="missing or wrong CSRF token: reload the page"), 403
    return None


@blueprint.after_request
def _headers(response: Response) -> Response:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("X-Frame-Options", "DENY")
    response.headers.setdefault(
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'")
    response.headers.setdefault("Cache-Control", "no-store")
    return response


@blueprint.errorhandler(CalibrationError)
@blueprint.errorhandler(InputError)
@blueprint.errorhandler(RulesError)
def _bad_input(exc):
    return jsonify(error=str(exc)), 400


@blueprint.errorhandler(sqlite3.Error)
def _journal_error(exc):
    # the event was not committed, so it was not applied either: the game is as before
    return jsonify(error=f"the journal could not be written ({exc}); nothing was changed"), 503


@blueprint.errorhandler(HTTPException)
def _http_error(exc: HTTPException):
    if exc.code == 413:
        return jsonify(error="request too large"), 413
    return jsonify(error=exc.description), exc.code


def body() -> dict:
    if not request.is_json:
        raise InputError("send the request body as JSON (Content-Type: application/json)")
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        raise InputError("the request body must be a JSON object")
    return data


def text_field(data: dict, name: str, limit: int = 200) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"'{name}' is required (text)")
    if len(value) > limit:
        raise InputError(f"'{name}' is too long ({len(value)} > {limit} characters)")
    return value.strip()


def changed() -> Response:
    """After a change: the whole new view, so the page that asked redraws at once."""
    c = ctx()
    c.camera.key_cells = key_cells(c.table.state) if c.table.state is not None else []
    tell_camera_the_game(c.table, c.camera)
    return jsonify(view(c.table))


def need_state():
    state = ctx().table.state
    if state is None:
        raise InputError("no game yet: start a new game first")
    return state


# --------------------------------------------------------------------------- pages


@blueprint.get("/")
def index():
    return render_template("royal_table.html", csrf=csrf_token())


@blueprint.get("/api/csrf")
def api_csrf():
    return jsonify(csrf=csrf_token())


@blueprint.get("/api/view")
def api_view():
    return jsonify(view(ctx().table))


@blueprint.get("/api/state")
def api_state():
    with ctx().table.lock:
        return jsonify(to_json(need_state()))


@blueprint.get("/api/plan")
def api_plan():
    hand = parse_hand(request.args.get("cards"))
    with ctx().table.lock:
        return jsonify(planner_options(need_state(), hand))


@blueprint.get("/api/moves")
def api_moves():
    hand = parse_hand(request.args.get("cards"))
    with ctx().table.lock:
        return jsonify(legal_moves(need_state(), hand))


@blueprint.get("/api/export")
def api_export():
    data = ctx().table.export()
    resp = Response(json.dumps(data, indent=1), mimetype="application/json")
    resp.headers["Content-Disposition"] = (f'attachment; filename="royal-battles-'
                                           f'{ctx().table.game_id}.json"')
    return resp


@blueprint.post("/api/game")
def api_new_game():
    ctx().table.new_game(GameSetup.from_json(body()))
    return changed()


@blueprint.post("/api/action")
def api_action():
    ctx().table.act(text_field(body(), "action"))
    return changed()


@blueprint.post("/api/correct")
def api_correct():
    data = body()
    if "text" in data:
        text = text_field(data, "text")
    else:
        cell = text_field(data, "cell", 2).lower()
        fields = [k for k in ("card", "piece", "injury") if k in data]
        if len(fields) != 1:
            raise InputError("give exactly one of card, piece or injury for the cell")
        value = data[fields[0]]
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            raise InputError(f"'{fields[0]}' needs a value (use 'none' to take it away)")
        text = f"set {cell} {fields[0]} {value}"
    ctx().table.correct(text)
    return changed()


@blueprint.post("/api/undo")
def api_undo():
    ctx().table.undo()
    return changed()


@blueprint.post("/api/import")
def api_import():
    ctx().table.import_game(body())
    return changed()


# --------------------------------------------------------------------------- live feeds


@blueprint.get("/api/events")
def api_events():
    """Server-Sent Events: the new view each time the game changes (and a keep-alive)."""
    table = ctx().table
    once = request.args.get("once") == "1"  # for clients (and tests) that want one message

    def stream():
        version = -1
        while True:
            if table.version != version:
                data = view(table)
                version = data["version"]
                yield f"event: view\nid: {version}\ndata: {json.dumps(data)}\n\n"
                if once:
                    return
            else:
                yield ": keep-alive\n\n"
            table.wait_change(version, SSE_KEEPALIVE_S)

    resp = Response(stream_with_context(stream()), mimetype="text/event-stream")
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


@blueprint.get("/api/camera")
def api_camera():
    return jsonify(ctx().camera.describe())


@blueprint.get("/api/proposals")
def api_proposals():
    """Events the camera's latest reading suggests (empty until a scanner is plugged in)."""
    c = ctx()
    reading = c.camera.reading
    with c.table.lock:
        version = c.table.version
        # what the camera's tracker followed first, then what this reading alone shows
        items = c.camera.game.proposals(version)
        offered = {p["text"] for p in items}
        # (its corrections only where the camera's game explains nothing: a move it saw
        # accounts for the cells one reading alone would want corrected)
        items += [p for p in propose(c.table.state, reading) if p["text"] not in offered
                  and (p["kind"] == "action" or not offered)]
    unsure = sorted(name for name, cr in reading.cells.items() if cr.unsure) \
        if reading is not None and reading.board_found else []
    return jsonify(version=version, scanner=c.camera.reader is not None,
                   frame_index=reading.frame_index if reading is not None else None,
                   board_found=bool(reading and reading.board_found),
                   occluded=bool(reading and reading.occluded),
                   message=reading.message if reading is not None else "",
                   waiting=c.camera.game.waiting(version),
                   unsure=unsure, proposals=items)


@blueprint.post("/api/calibrate")
def api_calibrate():
    """Fit the board to the set-up cards in the latest frame; the grid and scanner follow."""
    data = body()
    c = ctx()
    result = calibrate_from_frame(c.camera.latest(), c.data_dir / PROFILE_NAME,
                                  str(data.get("white_edge", "auto")))
    c.camera.use_profile(result["profile"])
    return jsonify(result=result, camera=c.camera.describe())


def overlay_set() -> frozenset[str]:
    raw = request.args.get("overlays", "")
    asked = {o for o in raw.split(",") if o}
    unknown = asked - set(OVERLAYS)
    if unknown:
        raise InputError(f"unknown overlay(s) {sorted(unknown)} (known: {', '.join(OVERLAYS)})")
    return frozenset(asked)


@blueprint.get("/snapshot.jpg")
def snapshot():
    data = ctx().camera.jpeg(overlay_set())
    if data is None:
        abort(503, description=f"no picture: {ctx().camera.message or ctx().camera.state}")
    return Response(data, mimetype="image/jpeg")


@blueprint.get("/video.mjpg")
def video():
    """MJPEG: the latest frame a few times a second; frames in between are dropped."""
    camera = ctx().camera
    overlays = overlay_set()
    if camera.spec is None:
        abort(503, description="no camera or video")
    frames_arg = request.args.get("frames", "0")  # stop after N frames (tests, stills)
    if not frames_arg.isdigit():
        raise InputError("frames must be a whole number")
    frames = int(frames_arg)

    def stream():
        seen, sent = -1, 0
        while True:
            seen = camera.wait_frame(seen, 2.0)
            data = camera.jpeg(overlays)
            if data is None:
                if camera.state not in ("open", "starting"):
                    return
                continue
            yield (b"--frame\r\nContent-Type: image/jpeg\r\nContent-Length: "
                   + str(len(data)).encode() + b"\r\n\r\n" + data + b"\r\n")
            sent += 1
            if frames and sent >= frames:
                return
            time.sleep(1.0 / MJPEG_FPS)

    return Response(stream(), mimetype="multipart/x-mixed-replace; boundary=frame")
