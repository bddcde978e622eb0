"""Every route of the table page through Flask's test client."""

from __future__ import annotations

import json
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.web_helpers import SETUP, TO_ROUND_2_MOVE, WHITE_ATTACK, WHITE_MOVE
from webui.app import create_app
from webui.table.camera import BoardGrid, LiveCamera
from webui.table.page import blueprint, ctx


def make_app(tmp_path):
    app = create_app({"TABLE_DATA_DIR": str(tmp_path / "data"), "TESTING": True})
    if "royal_table" not in app.blueprints:
        app.register_blueprint(blueprint, url_prefix="/")
    return app


@pytest.fixture
def app(tmp_path):
    return make_app(tmp_path)


class Page:
    """A test client that behaves like the page: it sends the session's CSRF token."""

    def __init__(self, app) -> None:
        self.client = app.test_client()
        self.token = self.client.get("/api/csrf").get_json()["csrf"]

    def get(self, url, **kw):
        return self.client.get(url, **kw)

    def post(self, url, data=None, **kw):
        headers = {"X-CSRF-Token": self.token, **kw.pop("headers", {})}
        if data is not None:
            kw["json"] = data
        return self.client.post(url, headers=headers, **kw)


@pytest.fixture
def page(app):
    return Page(app)


def play(page: Page, actions) -> dict:
    for text in actions:
        resp = page.post("/api/action", {"action": text})
        assert resp.status_code == 200, resp.get_json()
    return resp.get_json()


def test_index_serves_the_page_with_a_csrf_token_and_safe_headers(app):
    client = app.test_client()
    resp = client.get("/")
    assert resp.status_code == 200
    html = resp.get_data(as_text=True)
    assert 'name="csrf-token"' in html and "table.js" in html and "New game" in html
    assert "script-src 'self'" in resp.headers["Content-Security-Policy"]
    assert "SameSite=Strict" in resp.headers["Set-Cookie"]
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert not app.debug
    for name in ("table.js", "table.css"):
        static = client.get(f"/static/table/{name}")
        assert static.status_code == 200 and len(static.data) > 1000


def test_state_changing_requests_need_the_csrf_token(app, page):
    client = app.test_client()
    for url in ("/api/game", "/api/action", "/api/correct", "/api/undo", "/api/import"):
        assert client.post(url, json={}).status_code == 403
        assert client.post(url, json={}, headers={"X-CSRF-Token": "guess"}).status_code == 403
    # the token of one session is no good in another
    other = app.test_client()
    other.get("/api/csrf")
    resp = other.post("/api/game", json=SETUP, headers={"X-CSRF-Token": page.token})
    assert resp.status_code == 403 and "CSRF" in resp.get_json()["error"]


def test_before_a_game_reads_say_so_clearly(page):
    assert page.get("/api/view").get_json() == {"version": 0, "game": None}
    for url in ("/api/state", "/api/plan", "/api/moves", "/api/export"):
        resp = page.get(url)
        assert resp.status_code == 400 and "no game yet" in resp.get_json()["error"]
    resp = page.post("/api/action", {"action": "white pass"})
    assert resp.status_code == 400 and "no game yet" in resp.get_json()["error"]


def test_new_game_validation_and_json_bodies(page):
    resp = page.post("/api/game", {"armies": {"white": ["pawn"], "black": []}})
    assert resp.status_code == 400 and "choose exactly 4" in resp.get_json()["error"]
    resp = page.client.post(
        "/api/game", data="armies", headers={"X-CSRF-Token": page.token})
    assert resp.status_code == 400 and "JSON" in resp.get_json()["error"]
    resp = page.client.post("/api/game", data="{not json", content_type="application/json",
                            headers={"X-CSRF-Token": page.token})
    assert resp.status_code == 400 and "JSON object" in resp.get_json()["error"]
    resp = page.post("/api/game", SETUP)
    assert resp.status_code == 200
    v = resp.get_json()
    assert v["game"]["names"] == {"white": "Ann", "black": "Bob"} and v["phase"] == "setup"


def test_requests_over_the_size_limit_are_refused(page):
    big = {"text": "x" * 1_100_000}
    resp = page.post("/api/import", big)
    assert resp.status_code == 413 and "too large" in resp.get_json()["error"]


def test_a_game_through_the_api(page):
    page.post("/api/game", SETUP)
    v = play(page, TO_ROUND_2_MOVE)
    assert v["phase"] == "movement" and v["to_move"] == "white"
    state = page.get("/api/state").get_json()
    assert state["game"] == "royal-battles" and state["hands"] == {"white": None, "black": None}
    assert state["board"]["c4"]["unit"]["kind"] == "knight"

    moves = page.get("/api/moves").get_json()
    assert not moves["exact"] and {m["colour"] for m in moves["moves"]} == {"red", "black", "joker"}
    exact = page.get("/api/moves?cards=JC").get_json()
    assert exact["exact"] and WHITE_MOVE in {m["action"] for m in exact["moves"]}
    bad = page.get("/api/moves?cards=JC,XX")
    assert bad.status_code == 400 and "unknown card code" in bad.get_json()["error"]

    plan = page.get("/api/plan").get_json()
    assert not plan["exact"] and plan["options"][0]["known_trumps"] is not None
    plan = page.get("/api/plan?cards=JC").get_json()
    assert plan["exact"] and any(o["action"] == WHITE_MOVE and o["hit"] for o in plan["options"])

    illegal = page.post("/api/action", {"action": "white move c2-c3 4H"})
    assert illegal.status_code == 400 and "standing card" in illegal.get_json()["error"]
    assert page.post("/api/action", {"action": ""}).status_code == 400
    assert page.post("/api/action", {"action": "x" * 500}).status_code == 400

    v = play(page, [WHITE_MOVE])
    assert v["phase"] == "attack" and "c4" in v["key_cells"]
    risky = [a for a in v["attacks"] if a["style"] == "risky"][0]
    assert risky["action"] == WHITE_ATTACK and risky["hit"]
    v = play(page, [WHITE_ATTACK])
    knight = [u for u in v["tallies"]["black"] if u["kind"] == "knight"][0]
    assert knight["injury"] == 3 and knight["life_left"] == 5

    v = page.post("/api/undo").get_json()
    assert v["phase"] == "attack" and v["log"][-1]["text"] == WHITE_MOVE


def test_corrections_through_the_api(page):
    page.post("/api/game", SETUP)
    play(page, TO_ROUND_2_MOVE)
    v = page.post("/api/correct", {"cell": "c2", "injury": 2}).get_json()
    assert v["board"]["c2"]["unit"]["injury"] == 2
    v = page.post("/api/correct", {"cell": "D3", "card": "8D"}).get_json()
    assert v["board"]["d3"]["card"] == "8D" and v["log"][-1]["kind"] == "correction"
    v = page.post("/api/correct", {"text": "set initiative white KD"}).get_json()
    assert v["initiative"]["white"] == "KD"
    for body, words in (({"cell": "c2"}, "exactly one of"),
                        ({"cell": "c2", "injury": 2, "card": "8D"}, "exactly one of"),
                        ({"cell": "c2", "injury": 99}, "injury must be"),
                        ({"cell": "c2", "card": ""}, "needs a value"),
                        ({"cell": "zz", "card": "8D"}, "off the 7 x 5 board"),
                        ({"text": "make it so"}, "not a correction")):
        resp = page.post("/api/correct", body)
        assert resp.status_code == 400 and words in resp.get_json()["error"], body


def test_export_and_import(page):
    page.post("/api/game", SETUP)
    play(page, TO_ROUND_2_MOVE + [WHITE_MOVE])
    resp = page.get("/api/export")
    assert resp.status_code == 200 and "attachment" in resp.headers["Content-Disposition"]
    data = json.loads(resp.data)
    state = page.get("/api/state").get_json()
    page.post("/api/game", SETUP)  # a fresh game, then the old one comes back
    v = page.post("/api/import", data).get_json()
    assert v["phase"] == "attack" and page.get("/api/state").get_json() == state
    resp = page.post("/api/import", {"format": "something else"})
    assert resp.status_code == 400 and "not an exported game" in resp.get_json()["error"]


def test_sse_sends_the_view_and_follows_changes(page):
    resp = page.get("/api/events?once=1")
    assert resp.mimetype == "text/event-stream"
    text = resp.get_data(as_text=True)
    assert text.startswith("event: view\nid: 0\ndata: ")
    page.post("/api/game", SETUP)
    text = page.get("/api/events?once=1").get_data(as_text=True)
    data = json.loads(text.split("data: ", 1)[1])
    assert data["version"] == 1 and data["phase"] == "setup"
    # a live stream: the first message at once, the next after a change
    stream = page.get("/api/events", buffered=False)
    chunks = iter(stream.response)
    first = next(chunks)
    first = first.decode() if isinstance(first, bytes) else first
    assert "id: 1" in first
    page.post("/api/action", {"action": "white setup a1 2H"})
    second = next(chunks)
    second = second.decode() if isinstance(second, bytes) else second
    assert "id: 2" in second and "white setup a1 2H" in second
    stream.close()


def test_camera_routes_without_a_camera(page):
    info = page.get("/api/camera").get_json()
    assert info["state"] == "off" and info["spec"] is None
    assert page.get("/snapshot.jpg").status_code == 503
    resp = page.get("/video.mjpg")
    assert resp.status_code == 503 and "no camera" in resp.get_json()["error"]


def write_video(path, frames=8, size=(160, 120)):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 20.0, size)
    for i in range(frames):
        img = np.zeros((size[1], size[0], 3), np.uint8)
        cv2.circle(img, (20 + i * 15, 60), 12, (0, 200, 255), -1)
        writer.write(img)
    writer.release()


def test_camera_routes_with_a_looping_video_and_a_grid_profile(app, tmp_path):
    video = tmp_path / "tiny.avi"
    write_video(video)
    # board cells -> image px: 20 px a cell, a1's centre at (20, 100), rank 5 toward the top
    grid = BoardGrid(np.array([[20.0, 0, 20], [0, -20.0, 100], [0, 0, 1]]))
    camera = LiveCamera(str(video), loop=True, grid=grid, max_fps=50).start()
    try:
        page = Page(app)
        with app.app_context():  # make the page's context, then give it the camera
            ctx().camera = camera
        assert camera.wait_frame(0, 5.0) > 0
        info = page.get("/api/camera").get_json()
        assert info["state"] == "open" and info["grid"] and not info["scanner"]
        plain = page.get("/snapshot.jpg")
        assert plain.status_code == 200 and plain.mimetype == "image/jpeg"
        img = cv2.imdecode(np.frombuffer(plain.data, np.uint8), cv2.IMREAD_COLOR)
        assert img.shape == (120, 160, 3)
        grid = cv2.imdecode(np.frombuffer(page.get("/snapshot.jpg?overlays=grid").data,
                                          np.uint8), cv2.IMREAD_COLOR)
        # the grid's cyan lines appear where the plain picture is black
        assert grid[:, :, 0].astype(int).sum() > img[:, :, 0].astype(int).sum() + 5000
        bad = page.get("/video.mjpg?overlays=grid,sparkles")
        assert bad.status_code == 400 and "sparkles" in bad.get_json()["error"]
        resp = page.get("/video.mjpg?frames=3&overlays=grid,unsure")
        assert resp.mimetype == "multipart/x-mixed-replace"
        body = resp.get_data()
        assert body.count(b"--frame\r\nContent-Type: image/jpeg") == 3
        assert body.count(b"\xff\xd8") >= 3  # three JPEG starts
        time.sleep(0.6)  # 8 frames at 50 fps: the video ended and looped
        assert camera.describe()["state"] == "open" and camera.frames_read > 8
    finally:
        camera.stop()



def test_proposals_route_follows_the_cameras_reading(app, page):
    from scanner.detections import CardReading, CellReading, TableReading

    assert page.get("/api/proposals").get_json()["proposals"] == []
    page.post("/api/game", SETUP)
    with app.app_context():
        camera = ctx().camera
    camera.reading = TableReading(board_found=True, cells={"a1": CellReading(
        "a1", empty=False, card=CardReading(card="7H", confidence=0.9))})
    data = page.get("/api/proposals").get_json()
    assert [p["text"] for p in data["proposals"]] == ["white setup a1 7H"]
    v = page.post("/api/action", {"action": data["proposals"][0]["text"]}).get_json()
    assert v["board"]["a1"]["card"] == "7H"
    data = page.get("/api/proposals").get_json()
    assert data["proposals"] == [] and data["unsure"] == []  # c1 is next, not read
    camera.reading.cells["c1"] = CellReading("c1", empty=None)
    assert page.get("/api/proposals").get_json()["unsure"] == ["c1"]


def test_overlays_draw_read_cells_and_unsure_cells():
    from scanner.detections import CardReading, CellReading, PieceReading, TableReading
    from webui.table.camera import draw_overlays

    image = np.zeros((200, 300, 3), np.uint8)
    corners = np.array([[50, 50], [110, 50], [110, 130], [50, 130]], np.float32)
    sure = CellReading("d3", empty=False, card=CardReading(corners, "8D", confidence=0.9),
                       piece=PieceReading("white-knight", 0.9))
    unsure = CellReading("e3", empty=False, card=CardReading(corners + [120, 0], None))
    reading = TableReading(board_found=True, cells={"d3": sure, "e3": unsure})
    assert draw_overlays(image, frozenset(), None, reading, []) is image  # nothing asked
    red = draw_overlays(image, frozenset({"unsure"}), None, reading, [])
    assert red[:, 160:240, 2].sum() > 0 and red[:, :120, 2].sum() == 0  # only e3 is framed
    labels = draw_overlays(image, frozenset({"cells"}), None, reading, [])
    assert labels[60:120, 40:120].sum() > 0  # d3's label is written over its card
    assert image.sum() == 0  # the frame itself is never drawn on


def test_mounted_at_root_through_create_app_beside_the_other_pages(tmp_path, monkeypatch):
    import webui.app as app_module

    # the one line the lead adds to webui.app.BLUEPRINTS
    monkeypatch.setitem(app_module.BLUEPRINTS, "/", "webui.table_page")
    app = app_module.create_app({"TABLE_DATA_DIR": str(tmp_path / "data")})
    client = app.test_client()
    assert "royal_table" in app.blueprints
    assert b"Royal Battles" in client.get("/").data
    assert client.get("/api/view").get_json()["game"] is None
    for prefix in ("/bc", "/wlt"):  # the families already on main still answer
        if any(bp for p, bp in app_module.BLUEPRINTS.items() if p == prefix):
            assert client.get(prefix + "/").status_code == 200, prefix


def test_profile_in_the_calibration_format_draws_the_grid(tmp_path):
    from webui.table.camera import ProfileError, load_profile

    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({
        "version": 1, "homography": [[20.0, 0, 20], [0, -20.0, 100], [0, 0, 1]],
        "image_size": [160, 120], "camera_matrix": [[150, 0, 80], [0, 150, 60], [0, 0, 1]],
        "distortion": [-0.2, 0, 0, 0, 0], "method": "cards"}))
    grid = load_profile(profile)
    a1 = grid.cell_polygon("a1")
    assert len(a1) == 16
    centre = grid.to_image(np.array([[3.0, 2.0]]))[0]  # d3 sits on the optical axis
    assert np.allclose(centre, (80, 60), atol=0.5)
    corner = grid.to_image(np.array([[-0.5, -0.5]]))[0]
    assert corner[0] > 10 and corner[1] < 110  # barrel distortion pulls the corner inward
    profile.write_text(json.dumps({"homography": "nope"}))
    with pytest.raises(ProfileError, match="homography"):
        load_profile(profile)


def test_the_scanner_runs_beside_the_picture_and_its_failures_are_shown(tmp_path):
    from scanner.detections import TableReading

    video = tmp_path / "tiny.avi"
    write_video(video, frames=30)
    calls = []

    def slow_reader(image):
        calls.append(image.shape)
        time.sleep(0.05)
        if len(calls) == 2:
            raise RuntimeError("model file missing")
        return TableReading(frame_index=len(calls), board_found=True)

    camera = LiveCamera(str(video), loop=True, reader=slow_reader, max_fps=100,
                        scan_interval=0.1).start()
    try:
        deadline = time.time() + 5
        while len(calls) < 4 and time.time() < deadline:
            time.sleep(0.05)
        assert len(calls) >= 4 and calls[0] == (120, 160, 3)
        assert camera.frames_read > len(calls)  # the picture did not wait for the scanner
        assert camera.describe()["scanner"]
        assert camera.reading is not None and camera.reading.board_found
    finally:
        camera.stop()
    failed = LiveCamera(str(video), reader=lambda image: 1 / 0, scan_interval=0.05).start()
    try:
        deadline = time.time() + 5
        while failed.reading is None and time.time() < deadline:
            time.sleep(0.05)
        assert "scanner failed" in failed.reading.message and not failed.reading.board_found
    finally:
        failed.stop()


def test_the_grid_follows_a_scanner_that_followed_a_bumped_board(tmp_path):
    """`scanner.following.FollowingScanner` rebuilds on a moved profile: the page's grid, drawn
    from the profile it was given, takes the scanner's new one."""
    import numpy as np

    from calibration.profile import Profile
    from scanner.detections import TableReading
    from webui.table.camera import BoardGrid, LiveCamera

    video = tmp_path / "tiny.avi"
    write_video(video, frames=30)
    H0 = np.array([[10.0, 0, 20], [0, -10, 80], [0, 0, 1]])

    class Following:
        profile = Profile(H=H0, image_size=(160, 120))
        reads = 0

        def scan(self, image):
            self.reads += 1
            if self.reads == 3:  # the board was followed
                self.profile = Profile(H=H0 + np.array([[0, 0, 5.0], [0, 0, 0], [0, 0, 0]]),
                                       image_size=(160, 120))
            return TableReading(board_found=True)

    scanner = Following()
    camera = LiveCamera(str(video), loop=True, grid=BoardGrid(H0), reader=scanner.scan,
                        max_fps=100, scan_interval=0.02).start()
    try:
        deadline = time.time() + 5
        while scanner.reads < 5 and time.time() < deadline:
            time.sleep(0.05)
        assert scanner.reads >= 5
        assert camera.grid.H[0, 2] == 25.0  # moved with the scanner's profile
    finally:
        camera.stop()


def test_a_scanner_that_cannot_start_leaves_the_picture_running(tmp_path, monkeypatch):
    import webui.table.camera as camera_module

    def broken(path, pieces=None):
        raise FileNotFoundError("models/cards/card_index.onnx")

    monkeypatch.setattr(camera_module, "profile_scanner", broken)
    video = tmp_path / "tiny.avi"
    write_video(video)
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"homography": [[20.0, 0, 20], [0, -20.0, 100], [0, 0, 1]]}))
    camera = camera_module.open_camera(str(video), loop=False, profile=str(profile))
    try:
        info = camera.describe()
        assert info["grid"] and not info["scanner"]
        assert "scanner off" in info["scanner_note"] and "card_index.onnx" in info["scanner_note"]
        assert camera.wait_frame(0, 5.0) > 0
    finally:
        camera.stop()


def test_calibrate_route_without_picture_or_calibration_package(page, app, tmp_path):
    resp = page.post("/api/calibrate", {})
    assert resp.status_code == 400 and "no picture" in resp.get_json()["error"]
    video = tmp_path / "tiny.avi"
    write_video(video)
    camera = LiveCamera(str(video), loop=True).start()
    try:
        with app.app_context():
            ctx().camera = camera
        camera.wait_frame(0, 5.0)
        resp = page.post("/api/calibrate", {"white_edge": "sideways"})
        assert resp.status_code == 400 and "white_edge" in resp.get_json()["error"]
        resp = page.post("/api/calibrate", {})
        try:
            import calibration.register  # noqa: F401
        except ImportError:  # main, before the calibration package lands
            assert resp.status_code == 400
            assert "royal-table calibrate" in resp.get_json()["error"]
        else:  # a tiny synthetic frame has no set-up cards on it
            assert resp.status_code == 400
            assert "board was not found" in resp.get_json()["error"]
    finally:
        camera.stop()


def test_a_new_profile_switches_the_grid_on(tmp_path):
    video = tmp_path / "tiny.avi"
    write_video(video)
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"homography": [[20.0, 0, 20], [0, -20.0, 100], [0, 0, 1]]}))
    camera = LiveCamera(str(video), loop=True).start()
    try:
        camera.wait_frame(0, 5.0)
        assert not camera.describe()["grid"]
        plain = camera.jpeg(frozenset({"grid"}))
        camera.use_profile(profile)
        assert camera.describe()["grid"]
        assert camera.jpeg(frozenset({"grid"})) != plain
        assert camera.latest() is not None and camera.latest() is not camera.frame
    finally:
        camera.stop()


def test_a_fit_that_folds_the_board_through_the_horizon_is_refused():
    from webui.table.calibrate import CalibrationError, check_fit

    good = np.array([[-55.0, -257, 771], [21, -229, 438], [-0.002, -0.05, 1]])
    check_fit(good)
    # a degenerate fit seen on a rendered still with hands over the cards: d3 behind the camera
    folded = np.array([[-55.1, -257.1, 771.6], [20.95, -229.5, 438.7], [-0.00255, -0.5607, 1]])
    with pytest.raises(CalibrationError, match="do not fit one flat board"):
        check_fit(folded)


def test_calibrating_from_a_frame_says_what_lies_out_of_view(tmp_path):
    import cv2

    from webui.table.calibrate import calibrate_from_frame

    still = cv2.imread(str(Path(__file__).parent / "fixtures" / "cards" / "setup-0.jpg"))
    # the frame cut through white's initiative pile (x 973-1078), beside g1 (x 859-963)
    r = calibrate_from_frame(still[:, :1060].copy(), tmp_path / "p.json")
    assert r["board_in_frame"] == 1.0 and r["out_of_view"] == ["white's initiative pile"]


class _SetLearner:
    """Stands in for the piece classifier: counts the games it forgot."""

    def __init__(self) -> None:
        self.new_sets = 0

    def new_set(self) -> None:
        self.new_sets += 1


def _units_reading(units: dict[str, str], occluded: bool = False, empty: str | None = None):
    from scanner.detections import CellReading, PieceReading, TableReading

    reading = TableReading(board_found=True, occluded=occluded)
    for cell, label in units.items():
        reading.cells[cell] = CellReading(cell=cell, empty=False,
                                          piece=PieceReading("empty" if cell == empty else label,
                                                             0.9))
    return reading


def test_units_in_view_needs_every_entered_unit_standing_clear():
    from scanner.detections import PieceReading
    from webui.table.camera import units_in_view

    units = {"a1": "white-pawn", "c5": "black-knight"}
    assert units_in_view(_units_reading(units), units)
    assert not units_in_view(_units_reading(units, occluded=True), units)  # hands over it
    assert not units_in_view(_units_reading(units, empty="c5"), units)  # not put down yet
    reading = _units_reading(units)
    reading.cells["c5"].piece = PieceReading(None, 0.5, occupied=True, seen_side="white")
    assert not units_in_view(reading, units)  # another side's unit stands there
    reading.cells["c5"].piece = PieceReading(None, 0.5, occupied=True)  # kind and side unsure
    assert units_in_view(reading, units)


def test_the_camera_learns_the_set_once_a_game_from_a_view_that_shows_the_units(
        tmp_path, monkeypatch):
    """Once the players have entered every unit, the scanner's thread adapts the classifier
    from the first clear reading that shows those units; a new game forgets the set."""
    import numpy as np

    import scanner.piece_adapt as piece_adapt
    from calibration.profile import Profile
    from webui.table.camera import LiveCamera

    learnt = []

    def learn_set(clf, image, camera, units, cells, when):
        learnt.append((dict(units), sorted(cells), camera))
        return piece_adapt.SetLearning(f"{when} from {len(units)} units", learnt=True)

    monkeypatch.setattr(piece_adapt, "learn_set", learn_set)
    video = tmp_path / "tiny.avi"
    write_video(video, frames=30)
    units = {"a1": "white-pawn", "c5": "black-knight"}

    class Scanner:
        profile = Profile(H=np.array([[10.0, 0, 20], [0, -10, 80], [0, 0, 1]]),
                          image_size=(160, 120))
        reads = 0
        shows_units = False

        def scan(self, image):
            self.reads += 1
            return _units_reading(units, empty=None if self.shows_units else "a1")

    scanner, pieces = Scanner(), _SetLearner()
    camera = LiveCamera(str(video), loop=True, reader=scanner.scan, max_fps=100,
                        scan_interval=0.01, pieces=pieces).start()

    def reads_after(n):
        start = scanner.reads
        deadline = time.time() + 5
        while scanner.reads < start + n and time.time() < deadline:
            time.sleep(0.02)

    try:
        camera.learn_set(1, None)  # placing: nothing to learn yet
        reads_after(3)
        assert pieces.new_sets == 1 and not learnt
        camera.learn_set(1, units)
        reads_after(3)
        assert not learnt and "waiting" in camera.describe()["set_note"]  # a1 not put down
        scanner.shows_units = True
        reads_after(3)
        assert len(learnt) == 1 and learnt[0][:2] == (units, ["a1", "c5"])
        assert learnt[0][2] is Scanner.profile
        assert camera.describe()["set_note"].startswith("set learnt at frame ")
        camera.learn_set(1, {**units, "e1": "white-king"})  # later changes: learnt once
        reads_after(3)
        assert len(learnt) == 1
        camera.learn_set(1, None)  # an undo back into the placement forgets it
        reads_after(3)
        assert pieces.new_sets == 2 and camera.describe()["set_note"] == ""
        camera.learn_set(1, units)  # placed again: learnt again
        reads_after(3)
        assert len(learnt) == 2
        camera.learn_set(2, None)  # a new game forgets the set
        reads_after(3)
        assert pieces.new_sets == 3 and camera.describe()["set_note"] == ""
    finally:
        camera.stop()


def test_the_page_tells_the_camera_the_units_once_they_are_placed(app, page, tmp_path):
    from webui.table.camera import LiveCamera

    told = []

    class Camera(LiveCamera):
        def learn_set(self, game, units):
            told.append((game, units))

    page.get("/api/view")  # the page's context, then a camera that listens
    app.extensions["royal_table"].camera = Camera(None)
    page.post("/api/game", SETUP)
    play(page, TO_ROUND_2_MOVE[:15])  # the last unit not yet placed
    assert told and all(units is None for _, units in told)
    play(page, TO_ROUND_2_MOVE[15:16])
    game, units = told[-1]
    assert game is not None and units == {
        "a1": "white-pawn", "c1": "white-knight", "e1": "white-bishop", "g1": "white-king",
        "a5": "black-pawn", "c5": "black-knight", "e5": "black-rook", "g5": "black-queen"}


@pytest.mark.parametrize("where,covered", [("beside", False), ("over", True)])
def test_hands_are_looked_for_over_the_board_once_the_scanner_knows_it(tmp_path, where, covered):
    """With a scanner that knows the board (its profile), something moving beside the table
    covers nothing; moving over the board, it does."""
    import numpy as np

    from calibration.profile import Profile
    from scanner.detections import TableReading
    from webui.table.camera import LiveCamera

    video = tmp_path / "moving.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 20.0, (160, 120))
    for i in range(30):
        img = np.full((120, 160, 3), 90, np.uint8)
        x, y = (125 + (i % 6) * 5, 12) if where == "beside" else (30 + (i % 6) * 8, 60)
        cv2.circle(img, (x, y), 8, (40, 120, 230), -1)
        writer.write(img)
    writer.release()

    class Scanner:  # the board lies at x 16-97, y 36-84 px
        profile = Profile(H=np.array([[10.0, 0, 20], [0, -10, 80], [0, 0, 1]]),
                          image_size=(160, 120))

        def scan(self, image):
            return TableReading(board_found=True)

    scanner = Scanner()
    camera = LiveCamera(str(video), loop=True, reader=scanner.scan, max_fps=100,
                        scan_interval=0.01)
    flags = []
    camera.start()
    try:
        deadline = time.time() + 5
        while len(flags) < 12 and time.time() < deadline:
            reading = camera.reading
            if reading is not None:
                flags.append(reading.occluded)
            time.sleep(0.03)
    finally:
        camera.stop()
    assert len(flags) >= 12
    assert any(flags[2:]) == covered
