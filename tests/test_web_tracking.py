"""The table page's camera game: the scan CLI's tracker, restarted from the players' game."""

from __future__ import annotations

import pytest

from engines.royal_battles import parse_action
from engines.royal_battles.position import to_json
from scanner.detections import PieceReading
from tests.tracker_sim import reading_of
from tests.web_helpers import SETUP, TO_ROUND_2_MOVE, WHITE_MOVE
from webui.table.game import GameSetup, Table
from webui.table.journal import Journal
from webui.table.proposals import propose
from webui.table.tracking import CameraGame


@pytest.fixture
def table(tmp_path):
    t = Table(Journal(tmp_path / "journal.sqlite"))
    t.new_game(GameSetup.from_json(SETUP))
    for text in TO_ROUND_2_MOVE:
        t.act(text)
    return t


def _after(table: Table, text: str) -> dict:
    """The table as it looks once `text` is played on the players' game (not entered)."""
    state = table.state.copy()
    state.apply(parse_action(text))
    return to_json(state)


def _kinds_unread(reading, cells=("c3",)):
    """The camera sees a unit of the right side on `cells` but cannot say which kind."""
    for name in cells:
        side = reading.cells[name].piece.piece.split("-")[0]
        reading.cells[name].piece = PieceReading(None, 0.9, occupied=True, seen_side=side)
    return reading


def test_a_move_whose_unit_kind_is_unread_is_proposed_once_settled(table):
    game = CameraGame()
    game.follow(table.version, table.state)
    seen = [_kinds_unread(reading_of(_after(table, WHITE_MOVE), i)) for i in range(5)]
    # one reading alone proposes nothing (a change is believed once the table has settled),
    game.update(seen[0])
    assert game.proposals(table.version) == []
    for r in seen[1:]:
        game.update(r)
    got = game.proposals(table.version)
    assert [p["text"] for p in got] == [WHITE_MOVE] and got[0]["kind"] == "action"
    # where the one-reading proposals need the kind read
    assert not any(p["kind"] == "action" for p in propose(table.state, seen[-1]))
    # a game the players changed since: nothing from the old one
    assert game.proposals(table.version + 1) == []


def test_a_restart_replays_the_recent_readings(table):
    game = CameraGame()
    game.follow(table.version, table.state)
    for i in range(5):
        game.update(_kinds_unread(reading_of(_after(table, WHITE_MOVE), i)))
    table.act(WHITE_MOVE)  # the players accept it: the table shows their game now
    game.follow(table.version, table.state)
    assert game.proposals(table.version) == []
    table.undo()  # taken back: the camera still shows it, and proposes it again at once
    game.follow(table.version, table.state)
    assert [p["text"] for p in game.proposals(table.version)] == [WHITE_MOVE]


def test_hands_over_the_board_and_a_due_attack_propose_nothing(table):
    game = CameraGame()
    game.follow(table.version, table.state)
    for i in range(6):
        game.update(reading_of(_after(table, WHITE_MOVE), i, occluded=True))
    assert game.proposals(table.version) == []
    # the move entered, its attack not: the next round's cards seen are not the players' next
    table.act(WHITE_MOVE)
    game.follow(table.version, table.state)
    later = table.state.copy()
    for text in ("white no-attack", "black take-draw", "black draw ?", "black move c4-d4 6S",
                 "white initiative 9H"):
        later.apply(parse_action(text))
    for i in range(6):
        game.update(reading_of(to_json(later), 10 + i))
    assert game.proposals(table.version) == []


def test_no_game_and_a_finished_one_are_followed_quietly(table):
    game = CameraGame()
    game.follow(0, None)
    game.update(reading_of(to_json(table.state), 0))
    assert game.proposals(0) == [] and game.note == "no game"


def test_the_proposals_route_offers_the_camera_game_first(tmp_path):
    from tests.test_web_routes import Page, make_app
    from webui.table.page import ctx

    app = make_app(tmp_path)
    page = Page(app)
    page.post("/api/game", SETUP)
    for text in TO_ROUND_2_MOVE:
        assert page.post("/api/action", {"action": text}).status_code == 200
    with app.app_context():
        camera, table = ctx().camera, ctx().table
    seen = [_kinds_unread(reading_of(_after(table, WHITE_MOVE), i)) for i in range(5)]
    for r in seen:
        camera.game.update(r)
    camera.reading = seen[-1]
    data = page.get("/api/proposals").get_json()
    assert [p["text"] for p in data["proposals"]] == [WHITE_MOVE]
    assert data["proposals"][0]["why"].startswith("the camera's game")
    v = page.post("/api/action", {"action": WHITE_MOVE}).get_json()
    assert v["version"] == table.version
    assert page.get("/api/proposals").get_json()["proposals"] == []


def _recorded(seed: int, kinds_read: bool = True):
    """A recorded engine game as the scanner would see it (perfect readings, hands over the
    board before each visible step) and its truth rows, as `render game` writes them."""
    from engines.royal_battles import GameState, Side
    from engines.royal_battles.selfplay import record_game
    from tests.tracker_sim import VISIBLE

    steps = record_game(seed)
    empty = to_json(GameState.new({Side(k): v for k, v in steps[0][1]["armies"].items()}))
    rows: list[dict] = [{"actions": [], "position": empty}]
    readings = [reading_of(empty, 0)]
    last = empty
    for action, pos in steps:
        if action.split()[1] not in VISIBLE:  # (hidden draws, attacks: on the last frame)
            rows[-1]["actions"].append(action)
            rows[-1]["position"] = last = pos
            continue
        for k in range(6):
            rows.append({"actions": [action] if k == 0 else [], "position": pos})
            reading = reading_of(last if k < 2 else pos, len(readings), occluded=k < 2)
            if not kinds_read and k >= 2 and pos["phase"] not in ("setup", "place"):
                for cell in reading.cells.values():
                    if cell.piece is not None and cell.piece.piece not in (None, "empty"):
                        side = cell.piece.piece.split("-")[0]
                        cell.piece = PieceReading(None, 0.9, occupied=True, seen_side=side)
            readings.append(reading)
        last = pos
    return readings, rows


def test_offered_events_counts_what_each_way_would_propose():
    from webui.table.tracking import offered_events

    readings, rows = _recorded(3)
    sure = offered_events(readings, rows)
    assert sure["events"] > 40
    # (the tracker places a side's units once all of them stand: a restarted one waits for
    # the other side's last unit before it offers this side's last placement)
    assert sure["camera_game"] >= sure["events"] - 2 and sure["camera_game_wrong"] == 0
    assert sure["one_reading"] >= 0.9 * sure["events"]
    # once placed, units are seen by their side only: one reading can't name the mover
    readings, rows = _recorded(3, kinds_read=False)
    sides = offered_events(readings, rows)
    assert sides["camera_game"] == sure["camera_game"] and sides["camera_game_wrong"] == 0
    assert sides["one_reading"] < sure["one_reading"] - 20  # (the moves: 93 -> 61 of 93)


def test_a_change_is_believed_after_as_many_readings_as_span_the_scan_s_settle_time():
    from models.renderer.video import FPS
    from scanner.tracker import SETTLE_FRAMES
    from webui.table.camera import SCAN_INTERVAL_S, LiveCamera
    from webui.table.tracking import RECORDED_FPS, settle_readings

    assert RECORDED_FPS == FPS  # (the renderer is not imported at run time)
    assert settle_readings(1 / FPS) == SETTLE_FRAMES  # every frame: as `royal-table scan`
    assert settle_readings(1 / 30) == 9 and settle_readings(0.2) == 2
    assert settle_readings(SCAN_INTERVAL_S) == SETTLE_FRAMES  # the page: the recordings' rate
    assert LiveCamera(None).game.settle_frames == settle_readings(SCAN_INTERVAL_S)


def test_the_camera_s_game_says_what_it_waits_for(tmp_path):
    from tests.test_web_routes import Page, make_app
    from webui.table.page import ctx

    app = make_app(tmp_path)
    page = Page(app)
    page.post("/api/game", SETUP)
    with app.app_context():
        camera, table = ctx().camera, ctx().table
    game = camera.game
    assert game.waiting(table.version) == ""
    # an ace on white's first set-up card: the rules shuffle it back, nothing to propose
    bad = to_json(table.state)
    bad["board"] = {"a1": {"cards": ["AS"]}}
    for i in range(5):
        game.update(reading_of(bad, i))
    assert "a1" in game.waiting(table.version) and game.waiting(table.version + 1) == ""
    data = page.get("/api/proposals").get_json()
    assert data["proposals"] == [] and "a1" in data["waiting"]
