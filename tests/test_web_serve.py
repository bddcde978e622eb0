"""`royal-table serve`: clear errors for bad input, and a killed server loses nothing."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.web_helpers import SETUP, TO_ROUND_2_MOVE, WHITE_MOVE
from webui.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_help_works(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--camera" in out and "--resume" in out and "127.0.0.1" in out


@pytest.mark.parametrize("argv, words", [
    (["--video", "/no/such/video.mp4"], "no such file"),
    (["--source", "/dev/null/x"], "no such file"),
    (["--no-camera", "--port", "70000"], "port must be"),
    (["--camera", "-1"], "camera index"),
])
def test_bad_input_is_one_line_and_exit_code_2(argv, words, tmp_path, capsys):
    code = main(["serve", "--data-dir", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert code == 2 and words in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_bad_profile_is_refused(tmp_path, capsys):
    profile = tmp_path / "p.json"
    profile.write_text('{"homography": [[1, 0], [0, 1]]}')
    code = main(["serve", "--no-camera", "--profile", str(profile), "--data-dir", str(tmp_path)])
    assert code == 2 and "no usable 'homography'" in capsys.readouterr().err
    profile.write_text("{oops")
    code = main(["serve", "--no-camera", "--profile", str(profile), "--data-dir", str(tmp_path)])
    assert code == 2 and "not JSON" in capsys.readouterr().err


class Server:
    def __init__(self, data_dir: Path, *extra: str) -> None:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "webui.cli", "serve", "--no-camera", "--port", "0",
             "--data-dir", str(data_dir), *extra],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        line = ""
        for _ in range(20):
            line = self.proc.stdout.readline()
            if "Royal Table on" in line:
                break
        match = re.search(r"http://[\d.]+:\d+/", line)
        assert match, f"server did not start: {line!r}"
        self.url = match.group(0)
        jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        self.token = self.get("api/csrf")["csrf"]

    def get(self, path: str) -> dict:
        with self.opener.open(self.url + path, timeout=10) as resp:
            return json.loads(resp.read())

    def post(self, path: str, data: dict) -> dict:
        req = urllib.request.Request(self.url + path, data=json.dumps(data).encode(),
                                     headers={"Content-Type": "application/json",
                                              "X-CSRF-Token": self.token})
        with self.opener.open(req, timeout=10) as resp:
            return json.loads(resp.read())

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)
        self.proc.stdout.close()


def test_killing_the_server_loses_nothing_and_resume_continues(tmp_path):
    first = Server(tmp_path)
    try:
        assert first.url.startswith("http://127.0.0.1:")  # bound to this machine only
        first.post("api/game", SETUP)
        for text in TO_ROUND_2_MOVE + [WHITE_MOVE]:
            first.post("api/action", {"action": text})
        state = first.get("api/state")
    finally:
        first.kill()
    second = Server(tmp_path, "--resume")
    try:
        assert second.get("api/state") == state
        v = second.get("api/view")
        assert v["phase"] == "attack" and v["log"][-1]["text"] == WHITE_MOVE
    finally:
        second.kill()


def test_a_broken_bundled_video_falls_back_to_no_picture(tmp_path, monkeypatch, capsys):
    import webui.serve_cli as serve_cli

    broken = tmp_path / "game.mp4"
    broken.write_bytes(b"\0" * 48)
    monkeypatch.setattr(serve_cli, "bundled_video", lambda: broken)

    def no_server(*args, **kwargs):
        raise OSError(98, "Address already in use")

    monkeypatch.setattr("werkzeug.serving.make_server", no_server)
    code = main(["serve", "--data-dir", str(tmp_path / "data")])
    err = capsys.readouterr().err
    assert "running without a picture" in err  # the broken fixture did not stop it
    assert code == 2 and "cannot listen" in err  # the port did, in one line


def test_one_server_per_data_dir_and_a_journal_error_changes_nothing(tmp_path, capsys):
    first = Server(tmp_path)
    try:
        code = main(["serve", "--no-camera", "--port", "0", "--data-dir", str(tmp_path)])
        err = capsys.readouterr().err
        assert code == 2 and "another royal-table serve is using" in err
    finally:
        first.kill()
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "journal.sqlite").write_bytes(b"this is not a database" * 100)
    code = main(["serve", "--no-camera", "--data-dir", str(tmp_path / "junk")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot open the journal" in err and "Traceback" not in err


def test_a_failed_journal_write_is_a_503_and_the_game_is_unchanged(tmp_path):
    import sqlite3

    from tests.test_web_routes import Page, make_app
    from webui.table.page import ctx

    app = make_app(tmp_path)
    page = Page(app)
    page.post("/api/game", SETUP)
    with app.app_context():
        journal = ctx().table.journal

    def full_disk(*args, **kwargs):
        raise sqlite3.OperationalError("database or disk is full")

    journal.append = full_disk
    resp = page.post("/api/action", {"action": "white setup a1 2H"})
    assert resp.status_code == 503 and "nothing was changed" in resp.get_json()["error"]
    assert page.get("/api/state").get_json()["board"] == {}
    assert page.get("/api/view").get_json()["log"] == []


def test_resume_of_a_journal_that_no_longer_replays_is_one_line(tmp_path, capsys):
    from webui.table.game import GameSetup, Table
    from webui.table.journal import Journal

    journal = Journal(tmp_path / "journal.sqlite")
    table = Table(journal)
    table.new_game(GameSetup.from_json(SETUP))
    journal.append(table.game_id, [("action", "white setup a1 AS")])  # aces go back: illegal
    journal.close()
    code = main(["serve", "--no-camera", "--resume", "--data-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "cannot resume the last game: event 1 (white setup a1 AS)" in err
    assert err.count("\n") == 1
