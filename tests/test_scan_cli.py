"""`royal-table scan` end to end on a fixture video (a short stretch: the figures come from the
full run, see scanner/README.md)."""

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.register import register_from_corners
from scanner.evaluate import read_truth
from webui.cli import main

VIDEO = (Path(__file__).parent / "fixtures" / "render" / "videos"
         / "game-s16-paris-tokens")


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Path:
    """A profile from the board's 4 outer corners, as a player would click them."""
    rows = list(read_truth(VIDEO / "truth.jsonl.gz"))
    row = next(r for r in rows if len(r["cells"]) >= 8 and r["settled"])
    quads = {c: np.array(row["cells"][c]["corners"]) for c in ("a1", "g1", "g5", "a5")}
    centre = np.mean([q.mean(0) for q in quads.values()], axis=0)
    corners = np.array([q[np.argmax(((q - centre) ** 2).sum(1))] for q in quads.values()])
    capture = cv2.VideoCapture(str(VIDEO / "game.mp4"))
    ok, image = capture.read()
    assert ok
    h, w = image.shape[:2]
    path = tmp_path_factory.mktemp("profile") / "profile.json"
    register_from_corners(corners.astype(np.float32), (w, h)).save(path)
    return path


def test_scan_with_truth_prints_the_comparison(profile, capsys):
    code = main(["scan", str(VIDEO / "game.mp4"), "--profile", str(profile), "--truth",
                 str(VIDEO / "truth.jsonl.gz"), "--json", "--max-frames", "40"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("moves", "moves_recovered", "spurious_events", "settled_frames",
                "settled_frames_right", "latency_ms_p50", "latency_ms_p95"):
        assert key in out
    assert out["frames"] == 40 and out["moves"] > 0
    assert 0 <= out["settled_frames_tracked_right"] <= out["settled_frames"]
    assert 0 <= out["settled_frames_recorded_right"] <= out["settled_frames"]
    assert out["spurious_events"] == 0  # unsure readings may delay events, never invent them


def test_scan_text_output_and_saved_log(profile, tmp_path, capsys):
    log = tmp_path / "log.json"
    assert main(["scan", str(VIDEO / "game.mp4"), "--profile", str(profile),
                 "--max-frames", "20", "--save-log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "20 frames" in out and "final position" in out
    saved = json.loads(log.read_text())
    assert saved["game"] == "royal-battles" and "journal" in saved


@pytest.mark.parametrize("argv,message", [
    (["scan", "no-such-video.mp4"], "no-such-video.mp4"),
    (["scan", str(VIDEO / "game.mp4"), "--profile", "missing.json"], "cannot load profile"),
    (["scan", str(VIDEO / "game.mp4"), "--truth", "missing.jsonl"], "cannot read truth"),
    (["scan", str(VIDEO / "game.mp4"), "--armies", "pawn,dragon", "king"], "dragon"),
])
def test_bad_input_is_a_clear_error(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_video_no_frame_of_which_decodes_is_a_clear_error(profile, tmp_path, capsys):
    cut = tmp_path / "cut.mp4"
    cut.write_bytes((VIDEO / "game.mp4").read_bytes()[:20000])  # the header, no whole frame
    assert main(["scan", str(cut), "--profile", str(profile)]) == 2
    err = capsys.readouterr().err
    assert "no frame read" in err and "cut short" in err and "Traceback" not in err


def _armies(video: Path = VIDEO) -> list[str]:
    armies = next(read_truth(video / "truth.jsonl.gz"))["position"]["armies"]
    return [",".join(armies["white"]), ",".join(armies["black"])]


def _to_setup(video: Path) -> tuple[list[str], int]:
    """`scan` of `video` with its own profile and armies (as `scan fixtures` runs it), up to
    40 frames past the first with all 8 units on the table."""
    rows = list(read_truth(video / "truth.jsonl.gz"))
    placed = next(i for i, r in enumerate(rows)
                  if sum(bool(c.get("unit")) for c in r["cells"].values()) == 8)
    return ["scan", str(video / "game.mp4"), "--profile", str(video / "profile.json"), "--json",
            "--armies", *_armies(video), "--max-frames", str(placed + 40)], placed


def test_scan_adapts_the_piece_classifier_once_the_armies_stand(capsys):
    """With the armies given, the set-up view (every unit on its set-up card) teaches the
    classifier the players' set; the run says when, from how many units, and how long it took
    (issue: at most 30 s on one core), and the token reader rests with no unit a paper token.
    On a held-out 3D set (lathe pieces) whose placement the stage-9 model reads right."""
    argv, placed = _to_setup(VIDEO.parent / "game-s42-heldout-plastic-lathe")
    assert main(argv) == 0
    note = json.loads(capsys.readouterr().out)["piece_adaptation"]
    assert note.startswith("at frame "), note
    assert int(note.split()[2]) >= placed  # not before the units stood there
    assert "from 8 units" in note
    import re

    assert float(re.search(r" in ([0-9.]+) s", note).group(1)) < 30.0
    assert note.endswith("the token reader rests, no unit being a paper token"), note
    assert main(argv + ["--no-adapt"]) == 0
    assert json.loads(capsys.readouterr().out)["piece_adaptation"] == "none: --no-adapt"


def test_scan_does_not_adapt_to_paper_tokens_read_by_their_print(capsys):
    """The fixture's units are paper tokens, read by their print and never adapted to; the
    note says so even where a unit's kind is still asked at the set-up view (with the
    stage-9 model one black bishop token reads as a pawn there, and black's placement is a
    question)."""
    argv, placed = _to_setup(VIDEO)
    assert main(argv) == 0
    note = json.loads(capsys.readouterr().out)["piece_adaptation"]
    assert "units were paper tokens read by their print" in note, note
    assert int(note.split()[3]) >= placed
    assert int(note.split()[4]) > int(note.split()[6]) / 2  # "N of M units": most of them
    # every unit a token by its print: a cell whose print shows no token reads bare
    assert note.endswith("; a cell whose print shows no token reads bare"), note


def test_scan_without_armies_does_not_adapt_on_its_own_guesses(profile, capsys):
    assert main(["scan", str(VIDEO / "game.mp4"), "--profile", str(profile), "--json",
                 "--max-frames", "5"]) == 0
    assert json.loads(capsys.readouterr().out)["piece_adaptation"] == \
        "none: the armies were not given"


def test_scan_fixtures_prints_each_video_and_the_totals(capsys):
    """`scan fixtures` scans every committed fixture video (here a stand-in for the scan, which
    takes minutes per video) and adds the moves up; a video that fails says so and makes the
    exit code 2."""
    import argparse

    from scanner.scan_cli import fixtures

    def fake(folder, models, page=False):
        if folder.name.startswith("game-s4-"):
            return {"fixture": folder.name, "error": "cannot load profile"}
        n = int(folder.name.split("-")[1][1:])
        return {"fixture": folder.name, "moves_recovered": n, "moves": 100,
                "spurious_events": 1, "open_question_events": 2,
                "open_question_events_likeliest_right": 1, "table_re_reads": 0,
                "settled_frames_right": 5, "settled_frames": 9,
                "settled_frames_recorded_right": 8, "cpu_ms_p50": 7.5, "cpu_ms_p95": 12.0,
                "piece_adaptation": "at frame 192 from 8 units (white-pawn) in 0.1 s" if n == 16
                else "at frame 191 from 6 units (white-pawn) in 0.1 s, 2 whose kind is still a "
                "question left out (a5, c5); the token reader rests" if n == 31
                else "none: at frame 192 a side's placement was still a question"}

    args = argparse.Namespace(jobs=2, models=None, json=False)
    assert fixtures(args, scan=fake) == 2
    out = capsys.readouterr().out.splitlines()
    assert "game-s16-paris-tokens: moves 16/100, spurious 1" in out[0]
    assert out[0].endswith("; the set learnt at frame 192")
    assert out[1].endswith("; the set learnt at frame 191 (2 whose kind is still a question "
                           "left out (a5, c5))")
    assert out[3].startswith("game-s42-") and out[3].endswith(
        "; the set not learnt (at frame 192 a side's placement was still a question)")
    assert any(line.startswith("game-s4-anglo-brutalchess: failed: cannot load profile")
               for line in out)
    assert out[-1] == f"all: moves {16 + 31 + 42 + 51 + 64}/500, spurious 5"
    args.json = True
    fixtures(args, scan=fake)
    assert json.loads(capsys.readouterr().out)["totals"]["moves"] == 500
    # --page: each line and the totals say how the page would offer the events

    def with_offers(folder, models, page=False):
        row = fake(folder, models)
        if page and "error" not in row:
            row["page_offers"] = {"events": 10, "one_reading": 6, "camera_game": 9,
                                  "camera_game_wrong": 1}
        return row

    args.json, args.page = False, True
    fixtures(args, scan=with_offers)
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("; the page would offer 6 of 10 events from one reading, 9 from "
                           "the camera's game (1 first offers wrong)")
    assert out[-1].endswith("; the page would offer 30 of 50 events from one reading, 45 "
                            "from the camera's game (5 first offers wrong)")


def test_scan_validation_films_each_game_once_and_scans_them_all(monkeypatch, tmp_path, capsys):
    """`scan validation` films the tracker's validation games into the cache (here a stand-in
    for the renderer) and scans each; the committed fixtures are not among them."""
    import argparse

    from models.renderer.fixtures import VALIDATION_GAMES, VALIDATION_SETS
    from scanner import scan_cli

    filmed = []
    monkeypatch.setenv("ROYAL_TABLE_CACHE", str(tmp_path / "assets"))
    monkeypatch.setattr(scan_cli, "_filmed", lambda out, seed, *rest: filmed.append(
        (out, seed, rest[2])))

    def fake(folder, models, page=False):
        return {"fixture": folder.name, "moves_recovered": 3, "moves": 4, "spurious_events": 1,
                "open_question_events": 0, "open_question_events_likeliest_right": 0,
                "table_re_reads": 0, "settled_frames_right": 0, "settled_frames": 1,
                "settled_frames_recorded_right": 1, "cpu_ms_p50": 1.0, "cpu_ms_p95": 2.0}

    args = argparse.Namespace(jobs=1, models=None, json=False)
    assert scan_cli.validation(args, scan=fake) == 0
    assert [f[0].name for f in filmed] == list(VALIDATION_GAMES)
    assert all(f[0].parent == tmp_path / "scan-validation" for f in filmed)
    # the card readers' validation decks, never the held-out ones the fixtures test
    assert {f[2] for f in filmed} <= {"gnome-berlin", "gnome-orell", "kde-nicu-white"}
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"all: moves {3 * len(filmed)}/{4 * len(filmed)}, spurious {len(filmed)}"
    # the other sets: other games on the same decks, each into a cache folder of its own
    assert VALIDATION_SETS[1][0] is VALIDATION_GAMES and len(VALIDATION_SETS) >= 4
    seen = set(VALIDATION_GAMES)
    for number, (games, _) in sorted(VALIDATION_SETS.items())[1:]:
        filmed.clear()
        assert scan_cli.validation(args, scan=fake, number=number) == 0
        assert [f[0].name for f in filmed] == list(games)
        assert all(f[0].parent == tmp_path / f"scan-validation-{number}" for f in filmed)
        assert {f[2] for f in filmed} <= {"gnome-berlin", "gnome-orell", "kde-nicu-white"}
        assert not set(games) & seen
        seen |= set(games)
    seeds = [v[0] for g, _ in VALIDATION_SETS.values() for v in g.values()]
    assert len(set(seeds)) == len(seeds)  # no engine game filmed twice


def test_a_fixture_whose_scan_fails_reports_the_error(tmp_path):
    import shutil

    from scanner.scan_cli import _scan_fixture

    folder = tmp_path / "game-broken"
    folder.mkdir()
    shutil.copy(VIDEO / "truth.jsonl.gz", folder / "truth.jsonl.gz")
    (folder / "game.mp4").write_bytes(b"not a video")
    row = _scan_fixture(folder, None)
    assert row["fixture"] == "game-broken" and "cannot open video" in row["error"]


def test_recorded_readings_replay_to_the_same_game(profile, tmp_path, capsys):
    """`--record` keeps what the tracker was fed; `--replay` runs the tracker on it alone and
    must reach the very game the scan did (events, position, comparison), with the recorded
    scan's armies when none are given."""
    rec = tmp_path / "readings.pkl.gz"
    common = ["--truth", str(VIDEO / "truth.jsonl.gz"), "--json"]
    armies = ["--armies", "knight,bishop,bishop,knight", "bishop,rook,bishop,pawn"]
    assert main(["scan", str(VIDEO / "game.mp4"), "--profile", str(profile), *common,
                 *armies, "--max-frames", "260", "--record", "--record-to", str(rec)]) == 0
    live = json.loads(capsys.readouterr().out)
    assert main(["scan", str(rec), "--replay", *common]) == 0
    again = json.loads(capsys.readouterr().out)
    assert live["frames"] == again["frames"] == 260
    assert any(" place " in e["event"] for e in live["events"])  # a real stretch
    for key in ("events", "position", "open_questions", "moves_recovered", "spurious_events",
                "settled_frames_right", "settled_frames_tracked_right",
                "settled_frames_recorded_right", "latency_ms_p50", "piece_adaptation"):
        assert again[key] == live[key], key
    assert again["source_state"] == "replayed"
    # the table page's offers come from the replayed readings as from the scanned ones
    assert main(["scan", str(rec), "--replay", *common, "--page"]) == 0
    offers = json.loads(capsys.readouterr().out)["page_offers"]
    assert main(["scan", str(VIDEO / "game.mp4"), "--profile", str(profile), *common, *armies,
                 "--max-frames", "260", "--page"]) == 0
    assert offers == json.loads(capsys.readouterr().out)["page_offers"]
    # other armies make another game from the same readings: the replay runs the tracker
    assert main(["scan", str(rec), "--replay", *common, "--armies",
                 "pawn,pawn,pawn,pawn", "pawn,pawn,pawn,pawn"]) == 0
    assert json.loads(capsys.readouterr().out)["events"] != live["events"]


@pytest.mark.parametrize("content", [
    b"not a recording",
    {"version": -1, "stream": b""},  # another version
    {"version": 1, "readings": []},  # this version's number, an earlier draft's keys
    # the keys, but a stream of something else, or cut short
    {"version": 1, "source": "x", "registration": "", "piece_adaptation": "", "frames": 3,
     "stream": b"\x80\x05N.", "latencies_ms": [0.0] * 3, "cpu_ms": [0.0] * 3},
    {"version": 1, "source": "x", "registration": "", "piece_adaptation": "", "frames": 3,
     "stream": b"", "latencies_ms": [0.0] * 3, "cpu_ms": [0.0] * 3},
])
def test_replaying_what_is_no_recording_is_a_clear_error(content, tmp_path, capsys):
    import gzip
    import pickle

    path = tmp_path / "readings.pkl.gz"
    if isinstance(content, dict):
        with gzip.open(path, "wb") as f:
            pickle.dump(content, f)
    else:
        path.write_bytes(content)
    assert main(["scan", str(path), "--replay"]) == 2
    err = capsys.readouterr().err
    assert "cannot replay" in err and "Traceback" not in err


def test_record_without_a_place_to_write_is_a_clear_error(capsys):
    assert main(["scan", str(VIDEO / "game.mp4"), "--record"]) == 2
    assert "--record-to" in capsys.readouterr().err


def test_fixtures_pass_record_and_replay_to_each_scan(monkeypatch, tmp_path, capsys):
    """`scan validation --replay` films nothing and asks each game's scan for a replay;
    `--record` asks each to keep its readings."""
    import argparse

    from scanner import scan_cli

    monkeypatch.setenv("ROYAL_TABLE_CACHE", str(tmp_path / "assets"))
    filmed = []
    monkeypatch.setattr(scan_cli, "_filmed", lambda out, *rest: filmed.append(out))
    asked = []

    def fake(folder, models, page=False, **flags):
        asked.append(flags)
        return {"fixture": folder.name, "moves_recovered": 1, "moves": 1, "spurious_events": 0,
                "open_question_events": 0, "open_question_events_likeliest_right": 0,
                "table_re_reads": 0, "settled_frames_right": 0, "settled_frames": 1,
                "settled_frames_recorded_right": 1, "cpu_ms_p50": 1.0, "cpu_ms_p95": 2.0}

    args = argparse.Namespace(jobs=1, models=None, json=False, replay=True, record=False)
    assert scan_cli.validation(args, scan=fake) == 0
    assert filmed == [] and asked and all(a == {"replay": True} for a in asked)
    asked.clear()
    args.replay, args.record = False, True
    assert scan_cli.validation(args, scan=fake) == 0
    assert len(filmed) == len(asked) and all(a == {"record": True} for a in asked)


def test_a_fixture_scan_records_and_replays_its_readings(tmp_path):
    """`_scan_fixture` with `record` keeps the readings in the game's folder, and with `replay`
    reads them back to the same comparison."""
    import shutil

    folder = tmp_path / "game-s16-short"
    folder.mkdir()
    for name in ("profile.json", "truth.jsonl.gz"):
        shutil.copy(VIDEO / name, folder / name)
    # a short video: the first 40 frames of the fixture
    capture = cv2.VideoCapture(str(VIDEO / "game.mp4"))
    writer = None
    for _ in range(40):
        ok, image = capture.read()
        assert ok
        if writer is None:
            h, w = image.shape[:2]
            writer = cv2.VideoWriter(str(folder / "game.mp4"),
                                     cv2.VideoWriter_fourcc(*"mp4v"), 10, (w, h))
        writer.write(image)
    writer.release()
    from scanner.scan_cli import READINGS_FILE, _scan_fixture

    live = _scan_fixture(folder, None, record=True)
    assert "error" not in live, live
    assert (folder / READINGS_FILE).exists()
    again = _scan_fixture(folder, None, replay=True)
    for key in ("moves_recovered", "spurious_events", "settled_frames_tracked_right", "frames"):
        assert again[key] == live[key], key


def test_every_validation_set_is_a_source_by_its_number(monkeypatch):
    """`scan validation`, `validation2` ... name the sets of `VALIDATION_SETS`; any other name
    is a video path as before."""
    import argparse

    from models.renderer.fixtures import VALIDATION_SETS
    from scanner import scan_cli

    asked = []
    monkeypatch.setattr(scan_cli, "validation", lambda args, number: asked.append(number) or 0)
    for number in VALIDATION_SETS:
        name = "validation" if number == 1 else f"validation{number}"
        assert scan_cli.run(argparse.Namespace(source=name)) == 0
    assert asked == sorted(VALIDATION_SETS)
    asked.clear()
    for other in ("validation99", "validationx"):
        # taken as a video path: the scan then wants the options this bare namespace lacks
        with pytest.raises(AttributeError, match="armies"):
            scan_cli.run(argparse.Namespace(source=other))
    assert asked == []


def test_scan_recorded_lists_every_game_with_readings_set_by_set(monkeypatch, tmp_path):
    """`scan recorded` finds the recorded games of every validation set in the cache, then
    the fixtures', and leaves out games never recorded."""
    from models.renderer import fixtures as fx
    from scanner import scan_cli

    monkeypatch.setenv("ROYAL_TABLE_CACHE", str(tmp_path / "assets"))
    monkeypatch.setattr(fx, "ROOT", tmp_path / "committed")
    first = next(iter(fx.VALIDATION_GAMES_2))
    last = list(fx.VALIDATION_GAMES)[-1]
    for folder in (tmp_path / "scan-validation-2" / first, tmp_path / "scan-validation" / last,
                   tmp_path / "committed" / "videos" / "game-s1-x",
                   tmp_path / "scan-validation" / "never-recorded"):
        folder.mkdir(parents=True)
        if folder.name != "never-recorded":
            (folder / scan_cli.READINGS_FILE).write_bytes(b"")
    (tmp_path / "committed" / "videos" / "game-s2-not-recorded").mkdir()
    assert [(name, f.name) for name, f in scan_cli.recorded_games()] == [
        ("validation", last), ("validation2", first), ("fixtures", "game-s1-x")]


def test_scan_recorded_replays_adds_up_per_set_and_names_games_that_changed(monkeypatch,
                                                                             tmp_path, capsys):
    import argparse

    from scanner import scan_cli

    games = [("validation", tmp_path / "a"), ("validation", tmp_path / "b"),
             ("fixtures", tmp_path / "c")]
    monkeypatch.setattr(scan_cli, "recorded_games", lambda: games)
    events = {"a": ["white setup a1 2C"], "b": ["black setup a5 3D"], "c": ["white setup a1 4H"]}
    asked = []

    def fake(folder, models, replay=False, **kw):
        asked.append((folder.name, replay, kw.get("events")))
        return {"fixture": folder.name, "moves_recovered": 3, "moves": 4,
                "spurious_events": int(folder.name == "b"), "events": events[folder.name],
                "position": {"round": 1}}

    args = argparse.Namespace(jobs=1, models=None, json=True, replay=False, against=None)
    assert scan_cli.recorded(args, scan=fake) == 2  # only replays: the videos are long
    assert "add --replay" in capsys.readouterr().err and not asked
    args.replay = True
    assert scan_cli.recorded(args, scan=fake) == 0
    assert sorted(asked) == [("a", True, True), ("b", True, True), ("c", True, True)]
    out = json.loads(capsys.readouterr().out)
    assert out["sets"]["validation"] == {"games": 2, "failed": 0, "moves_recovered": 6,
                                         "moves": 8, "spurious_events": 1}
    assert out["totals"]["moves"] == 12 and out["totals"]["games"] == 3
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps(out))
    # a tracker change that moves one game: named, with its figures before and after
    events["b"] = ["black setup a5 3H"]
    args.json, args.against = False, str(earlier)
    assert scan_cli.recorded(args, scan=fake) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:3] == ["validation: moves 6/8, spurious 1 (2 games)",
                         "fixtures: moves 3/4, spurious 0 (1 game)",
                         "all: moves 9/12, spurious 1 (3 games)"]
    assert lines[3:] == ["differs: b: 3/4, spurious 1 -> 3/4, spurious 1",
                         f"against {earlier}: 2 of 3 games replay to the same events and "
                         "final position"]
    # an --against file that is no such output is an error, not a crash
    earlier.write_text("{}")
    assert scan_cli.recorded(args, scan=fake) == 2
    assert "not a `scan recorded --json` output" in capsys.readouterr().err


def test_a_set_learnt_after_the_set_up_view_is_said_so_on_the_fixture_line():
    """A game whose set-up view could not teach the set learns it once the placement is
    settled (`scan_cli._units_settled_in_view`); its line says when, and why so late."""
    from scanner.scan_cli import _adaptation_said

    first = "none: at frame 191 a side's placement was still a question"
    assert _adaptation_said(first) == f"; the set not learnt ({first[6:]})"
    assert _adaptation_said(f"{first}; then at frame 417 from 6 units (white-pawn) in 0.3 s") \
        == "; the set learnt at frame 417 (after the set-up view's placement was settled)"
    refused = "none: at frame 417 the look learnt from 6 units read 2 bare cells as units"
    assert _adaptation_said(f"{first}; then {refused}") == f"; the set not learnt ({refused[6:]})"
