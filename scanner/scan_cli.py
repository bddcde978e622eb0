"""`royal-table scan SOURCE`: follow a Royal Battles game from a camera, video, images or URL.

Per frame: the board is located (a saved profile, or registration from the 8 set-up cards once
they lie still), every cell and initiative card is read, occlusion is checked, and the tracker
turns settled changes into events. Prints the event log and the final position; with
`--truth` it scores the run against a recorded fixture.
"""

from __future__ import annotations

import argparse
import io
import json
import pickle
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engines.royal_battles import Phase, Side

if TYPE_CHECKING:
    from .detections import TableReading
    from .piece_adapt import SetLearning

RECORDING_VERSION = 1  # bump when TableReading changes shape: old recordings are refused
READINGS_FILE = "readings.pkl.gz"  # a game's recorded readings, in its fixture folder
RECORDING_KEYS = frozenset({"source", "registration", "piece_adaptation", "frames", "stream",
                            "latencies_ms", "cpu_ms"})


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", help="webcam index, video file, folder of images or stream URL; "
                        "'bench' renders a 1280x720 game and scans it with its truth; "
                        "'fixtures' scans every committed fixture video against its truth; "
                        "'validation' films (once) and scans the games tracker changes are "
                        "tuned on; 'validation2' to 'validation12' eleven more sets of six such "
                        "games; 'recorded' (with --replay) every game whose readings were "
                        "recorded, set by set")
    parser.add_argument("--profile", help="calibration profile JSON (default: register from the "
                        "set-up cards when they appear)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--truth", help="a fixture's truth (truth.jsonl[.gz]) to compare with")
    parser.add_argument("--armies", nargs=2, metavar=("WHITE", "BLACK"),
                        help="the armies, e.g. pawn,knight,bishop,king rook,rook,queen,king "
                        "(default: inferred from the units placed)")
    parser.add_argument("--models", help="folder with the card models to use instead of the "
                        "committed ones (card_index.onnx/.json, card_face.onnx/.json, and "
                        "card_pips.onnx/.json: without it the pips are not read)")
    parser.add_argument("--max-frames", type=int, default=0, help="stop after N frames")
    parser.add_argument("--every-zone", action="store_true",
                        help="read all 37 zones on every frame (default: only zones whose "
                        "picture changed, and none while hands are over the board)")
    parser.add_argument("--no-adapt", action="store_true",
                        help="keep the trained piece classifier; by default, once the armies "
                        "given stand on their set-up cards with every kind settled, it adapts "
                        "to the players' set from that view")
    parser.add_argument("--save-log", help="write the event log (JSON) here; "
                        "replay with scanner.tracker.replay_journal")
    parser.add_argument("--page", action="store_true",
                        help="with --truth (or `fixtures`, `validation`): also count how the "
                        "table page would offer each event, from one reading against the "
                        "camera's tracker (`webui.table.tracking.offered_events`)")
    parser.add_argument("--record", action="store_true",
                        help="also save every frame's reading (what the tracker is fed) beside the "
                        "run: to --record-to, or for `fixtures` and `validation*` into each game's "
                        "folder (readings.pkl.gz); `--replay` then re-runs the tracker on them "
                        "without the video or the models. A tool for recorded games: the "
                        "readings are held in memory and written when the source ends")
    parser.add_argument("--record-to", help="where --record writes a single source's readings")
    parser.add_argument("--replay", action="store_true",
                        help="SOURCE is a readings file --record wrote (for `fixtures` and "
                        "`validation*`: replay each game's recorded readings); the tracker runs "
                        "on them alone, so a tracker change is measured in seconds. The "
                        "latencies printed are those recorded with the readings")
    parser.add_argument("--jobs", type=int, default=2,
                        help="`scan fixtures`: videos scanned at once (one process each)")
    parser.add_argument("--against", help="`scan recorded --replay`: the --json of an earlier "
                        "replay, to name the games whose events or final position differ")
    g = parser.add_argument_group("bench options (`scan bench`)")
    g.add_argument("--seed", type=int, default=31, help="the engine game to film")
    g.add_argument("--scene-seed", type=int, default=303, help="camera, light and table")
    g.add_argument("--size", default="1280x720", help="frame size WxH")
    g.add_argument("--rounds", type=int, default=6, help="rounds filmed (the set-up, then N)")
    g.add_argument("--design", default="gnome-tango", help="card design (default held out)")
    g.add_argument("--piece-set", default="lathe", help="piece set (default held out)")
    parser.set_defaults(handler=run)


def bench(args: argparse.Namespace) -> int:
    """Film a game at the asked size (cached) and scan it against its truth: the latency and
    accuracy figures the issue's bars name, on a held-out design and piece set by default."""
    from models.renderer.assets import cache_dir

    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
    except ValueError:
        return _fail(f"--size must be WxH, not {args.size!r}")
    split = "heldout" if args.design in ("gnome-plastic", "gnome-simplistic", "gnome-tango") \
        else "train"
    out = cache_dir().parent / "scan-bench" / (
        f"s{args.seed}-{args.scene_seed}-{args.design}-{args.piece_set}-{w}x{h}-r{args.rounds}")
    _filmed(out, args.seed, args.scene_seed, split, args.design, args.piece_set, (w, h),
            args.rounds)
    if not args.armies:  # the new-game form names them; the fixture's truth knows them
        args.armies = _truth_armies(out / "truth.jsonl.gz")
    args.source = str(out / "game.mp4")
    args.profile = str(out / "profile.json")
    args.truth = str(out / "truth.jsonl.gz")
    return run(args)


def _filmed(out: Path, seed: int, scene_seed: int, split: str, design: str, piece_set: str,
            size: tuple[int, int], rounds: int) -> None:
    """Film engine game `seed` into `out` once (cached), with the profile a player makes by
    clicking the 4 board corners (whole pixels, no lens model) beside it."""
    from calibration.register import BOARD_CORNERS_XY, register_from_corners
    from models.renderer.fixtures import game_scene
    from models.renderer.scene import Scene
    from models.renderer.video import record_video

    from .cards_bench import truth_profile

    if not (out / "scene.json").exists():
        print(f"rendering game {seed} at {size[0]}x{size[1]} into {out} (once) ...",
              file=sys.stderr)
        scene = game_scene(scene_seed, split, design, piece_set, *size)
        record_video(seed, out, scene=scene, max_rounds=rounds,
                     log=lambda m: print(m, file=sys.stderr))
    meta = json.loads((out / "scene.json").read_text())
    cam = Scene.from_dict(meta["scene"]).camera()
    exact = truth_profile({"camera": cam.as_dict(), "width": cam.width, "height": cam.height})
    clicked = np.rint(exact.board_to_image(np.asarray(BOARD_CORNERS_XY, float)))
    register_from_corners(clicked, size).save(out / "profile.json")


def _adapt_to_set(pieces, image: np.ndarray, scanner, tracker, frame_no: int
                  ) -> SetLearning:
    """Adapt the piece classifier to the set in view from the units the game has placed
    (`piece_adapt.learn_set`: only when every unit's kind is settled). Says what it did."""
    from engines.royal_battles import CELL_NAMES

    from .piece_adapt import learn_set

    cells = [CELL_NAMES[c] for c in tracker.state.units]
    return learn_set(pieces, image, scanner.profile, tracker.placed_units(), cells,
                     f"at frame {frame_no}")


def _units_settled_in_view(reading: TableReading, tracker) -> bool:
    """Whether this frame may teach the piece classifier the players' set after the set-up
    view could not (its placement was still a question): the game has since settled enough
    units' kinds (`piece_adapt.enough_to_learn`), the table is believed to show the engine's
    position, and this very frame sees every unit standing, of its side, on its cell (a
    belief lags a frame or two behind a unit lifted)."""
    from engines.royal_battles import CELL_NAMES

    from .detections import units_in_view
    from .piece_adapt import enough_to_learn

    if not reading.board_found or tracker.state.is_terminal() or not tracker.table_agrees():
        return False
    sides = {CELL_NAMES[c]: u.side.value for c, u in tracker.state.units.items()}
    return units_in_view(reading, sides) and enough_to_learn(tracker.placed_units(), list(sides))


def _fail(message: str) -> int:
    print(f"royal-table scan: {message}", file=sys.stderr)
    return 2


def _armies(args) -> dict[Side, list[str]] | None:
    if not args.armies:
        return None
    from engines.royal_battles import parse_kind

    return {side: [parse_kind(k).name for k in text.split(",")]
            for side, text in zip(Side, args.armies, strict=True)}


def _truth_armies(truth: Path) -> list[str]:
    """The armies a fixture's truth starts with, as `--armies` takes them."""
    from .evaluate import read_truth

    armies = next(read_truth(truth))["position"]["armies"]
    return [",".join(armies["white"]), ",".join(armies["black"])]


def _scan_fixture(folder: Path, models: str | None, page: bool = False, record: bool = False,
                  replay: bool = False, events: bool = False) -> dict:
    """One fixture video scanned in its own process (onnxruntime and OpenCV each on one core)
    against its truth, with its profile and armies: the comparison, or the error. `record`:
    keep its readings in the folder; `replay`: the tracker over the readings kept there;
    `events`: keep the event texts and the final position too."""
    import subprocess

    source = folder / (READINGS_FILE if replay else "game.mp4")
    cmd = [sys.executable, "-m", "webui.cli", "scan", str(source),
           "--profile", str(folder / "profile.json"), "--truth", str(folder / "truth.jsonl.gz"),
           "--armies", *_truth_armies(folder / "truth.jsonl.gz"), "--json"]
    if replay:
        cmd += ["--replay"]
    elif record:
        cmd += ["--record", "--record-to", str(folder / READINGS_FILE)]
    if models:
        cmd += ["--models", models]
    if page:
        cmd += ["--page"]
    done = subprocess.run(cmd, capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        return {"fixture": folder.name, "error": done.stderr.strip()[-500:]}
    out = json.loads(done.stdout)  # (with --json the comparison's keys are at the top)
    row = {"fixture": folder.name, **{k: v for k, v in out.items()
                                      if k not in ("events", "position", "open_questions")}}
    if events:
        row["events"] = [e["event"] for e in out.get("events", [])]
        row["position"] = out.get("position")
    return row


def _adaptation_said(note: str | None) -> str:
    """The piece adaptation of a fixture's scan, short, for its line (the whole chain's
    figures hang on whether and when the classifier learnt the set)."""
    if not note:
        return ""
    then = note.partition("; then ")[2]
    if then:  # tried again once the set-up view's placement was settled
        said = _adaptation_said(then)
        return said + " (after the set-up view's placement was settled)" \
            if said.startswith("; the set learnt") else said
    if note.startswith("at frame "):
        left = note.split(" s, ", 1)[1].split(";")[0] if " left out (" in note else ""
        return f"; the set learnt at frame {note.split()[2]}" + (f" ({left})" if left else "")
    return f"; the set not learnt ({note.removeprefix('none: ')})"


def _offers_said(offers: dict | None) -> str:
    """`--page`'s counts, short, for a fixture's line."""
    if not offers:
        return ""
    return (f"; the page would offer {offers['one_reading']} of {offers['events']} events "
            f"from one reading, {offers['camera_game']} from the camera's game "
            f"({offers['camera_game_wrong']} first offers wrong)")


def validation(args: argparse.Namespace, scan=_scan_fixture, number: int = 1) -> int:
    """The tracker's validation games (`models.renderer.fixtures.VALIDATION_GAMES`: the card
    readers' validation decks), filmed once into the cache at the fixtures' size, scanned as
    `fixtures` are: what tracker changes are chosen by, so the held-out fixtures stay a test.
    `number`: which set of six (`VALIDATION_SETS`: 1 to 12)."""
    from models.renderer.assets import cache_dir
    from models.renderer.fixtures import MAX_ROUNDS, VALIDATION_SETS

    games, folder = VALIDATION_SETS[number]
    root = cache_dir().parent / folder
    for name, (seed, scene_seed, design, piece_set) in games.items():
        if getattr(args, "replay", False):
            continue  # the recorded readings stand in for the films
        _filmed(root / name, seed, scene_seed, "train", design, piece_set, (960, 540),
                MAX_ROUNDS)
    return fixtures(args, scan, [root / name for name in games])


SCORE_KEYS = ("moves_recovered", "moves", "spurious_events")  # what a game's scan adds up to


def _scan_each(args: argparse.Namespace, scan, folders: list[Path], *extra, **flags
               ) -> list[dict]:
    """`scan` of each game folder, `--jobs` at a time (each scan is its own process)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        return list(pool.map(lambda f: scan(f, args.models, *extra, **flags), folders))


def fixtures(args: argparse.Namespace, scan=_scan_fixture, folders: list[Path] | None = None
             ) -> int:
    """Every committed fixture video (or the videos in `folders`) against its truth, `--jobs`
    at a time: the table the README's whole-chain row quotes, and the totals."""
    from models.renderer.fixtures import ROOT

    if folders is None:
        folders = sorted(p for p in (ROOT / "videos").glob("game-*")
                         if (p / "game.mp4").exists())
    if not folders:
        return _fail(f"no fixture videos under {ROOT / 'videos'}")
    page = getattr(args, "page", False)
    # (only the flags asked for are passed: a stand-in scan need not know them)
    keep = {k: True for k in ("record", "replay") if getattr(args, k, False)}
    rows = _scan_each(args, scan, folders, page, **keep)
    good = [r for r in rows if "error" not in r]
    totals = {k: sum(r[k] for r in good) for k in SCORE_KEYS}
    offers = [r["page_offers"] for r in good if r.get("page_offers")]
    if offers:
        totals["page_offers"] = {k: sum(o[k] for o in offers) for k in offers[0]}
    if args.json:
        print(json.dumps({"fixtures": rows, "totals": totals}, indent=1))
    else:
        for r in rows:
            if "error" in r:
                print(f"{r['fixture']}: failed: {r['error']}")
                continue
            print(f"{r['fixture']}: moves {r['moves_recovered']}/{r['moves']}, spurious "
                  f"{r['spurious_events']}, open questions {r['open_question_events']} "
                  f"(likeliest right {r['open_question_events_likeliest_right']}), re-reads "
                  f"{r['table_re_reads']}, settled frames fully right "
                  f"{r['settled_frames_right']}/{r['settled_frames']} (game's record "
                  f"{r['settled_frames_recorded_right']}), CPU p50 {r['cpu_ms_p50']} ms, "
                  f"p95 {r['cpu_ms_p95']} ms{_adaptation_said(r.get('piece_adaptation'))}"
                  f"{_offers_said(r.get('page_offers'))}")
        print(f"all: moves {totals['moves_recovered']}/{totals['moves']}, spurious "
              f"{totals['spurious_events']}{_offers_said(totals.get('page_offers'))}")
    return 0 if len(good) == len(rows) else 2


def recorded_games() -> list[tuple[str, Path]]:
    """Every game whose readings were recorded (`--record`), as (set, folder): the validation
    sets in the cache, then the committed fixtures."""
    from models.renderer.assets import cache_dir
    from models.renderer.fixtures import ROOT, VALIDATION_SETS

    out = []
    for number, (games, folder) in sorted(VALIDATION_SETS.items()):
        name = "validation" + (str(number) if number > 1 else "")
        out += [(name, cache_dir().parent / folder / g) for g in games]
    out += [("fixtures", p) for p in sorted((ROOT / "videos").glob("game-*"))]
    return [(name, folder) for name, folder in out if (folder / READINGS_FILE).exists()]


def recorded(args: argparse.Namespace, scan=_scan_fixture) -> int:
    """`scan recorded --replay`: the tracker over every recorded game, set by set, in seconds a
    game; what a tracker change is judged by (a rule made from one game must not cost the
    others). With `--against` an earlier run's --json, the games whose events or final
    position differ from it are named (a change meant to leave the games alone, such as a
    refactor, must name none)."""
    if not getattr(args, "replay", False):
        return _fail("'recorded' replays the recorded games: add --replay (to scan their "
                     "videos again, use `fixtures` and `validation*` with --record)")
    earlier = None
    if getattr(args, "against", None):
        try:
            earlier = json.loads(Path(args.against).read_text())["games"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return _fail(f"--against {args.against}: not a `scan recorded --json` output ({exc})")
    games = recorded_games()
    if not games:
        return _fail("no recorded games: record some with `scan fixtures --record` or "
                     "`scan validation --record`")
    rows = _scan_each(args, scan, [folder for _name, folder in games], replay=True,
                      events=True)
    sets: dict[str, dict] = {}
    for (name, _folder), r in zip(games, rows, strict=True):
        t = sets.setdefault(name, {"games": 0, "failed": 0, **dict.fromkeys(SCORE_KEYS, 0)})
        t["games"] += 1
        if "error" in r:
            t["failed"] += 1
            continue
        for k in SCORE_KEYS:
            t[k] += r[k]
    totals = {k: sum(t[k] for t in sets.values()) for k in ("games", "failed", *SCORE_KEYS)}
    changed = []
    if earlier is not None:
        for r in rows:
            before = earlier.get(r["fixture"])
            if before is None or "error" in r or "error" in before \
                    or (before["events"], before["position"]) != (r["events"], r["position"]):
                changed.append((r["fixture"], before, r))
    if args.json:
        print(json.dumps({"games": {r["fixture"]: r for r in rows}, "sets": sets,
                          "totals": totals}, indent=1))
        return 0 if not totals["failed"] else 2
    for r in rows:
        if "error" in r:
            print(f"{r['fixture']}: failed: {r['error']}")
    for name, t in sets.items():
        print(f"{name}: moves {t['moves_recovered']}/{t['moves']}, spurious "
              f"{t['spurious_events']} ({t['games']} game{'s' * (t['games'] != 1)}"
              + (f", {t['failed']} failed)" if t["failed"] else ")"))
    print(f"all: moves {totals['moves_recovered']}/{totals['moves']}, spurious "
          f"{totals['spurious_events']} ({totals['games']} games)")
    if earlier is not None:
        def said(r: dict | None) -> str:
            if r is None:
                return "not in it"
            if "error" in r:
                return "failed"
            return f"{r['moves_recovered']}/{r['moves']}, spurious {r['spurious_events']}"

        for name, before, r in changed:
            print(f"differs: {name}: {said(before)} -> {said(r)}")
        print(f"against {args.against}: {len(rows) - len(changed)} of {len(rows)} games "
              "replay to the same events and final position")
    return 0 if not totals["failed"] else 2


class TrackedRun:
    """One run of the tracker over a game's frames, with what `--truth` compares and what
    `--record` keeps: the same object for a live scan and for the replay of a recording, so
    both score alike."""

    def __init__(self, armies, truth_rows: list[dict], page: bool, record: bool) -> None:
        from .evaluate import SettledFrames
        from .tracker import GameTracker

        self.tracker = GameTracker(armies)
        self.truth_rows = truth_rows
        self.page = page
        self.readings: list = []  # for --page
        # --record: one pickle stream over the frames, so a reading an incremental scanner
        # repeats unchanged is the same object again on replay (the tracker counts a read
        # once by its identity)
        self._stream = io.BytesIO() if record else None
        self._pickler = pickle.Pickler(self._stream, protocol=pickle.HIGHEST_PROTOCOL) \
            if record else None
        self.latencies: list[float] = []
        self.cpu_times: list[float] = []
        self.settled = SettledFrames()
        self.frames = 0

    @property
    def recording(self) -> bool:
        return self._pickler is not None

    def update(self, reading) -> float:
        """Feed one frame's reading to the tracker; returns the seconds spent keeping it for
        --record (pickled before the tracker sees it), which the caller leaves out of the
        frame's latency."""
        spent = 0.0
        if self._pickler is not None:
            t = time.perf_counter()
            self._pickler.dump(reading)
            spent = time.perf_counter() - t
        self.tracker.update(reading)
        if self.page:
            self.readings.append(reading)
        return spent

    def close_frame(self, reading, latency_ms: float, cpu_ms: float) -> None:
        """After the frame: its timing, and its settled-frame comparison with the truth."""
        from .evaluate import reading_table, truth_table
        from .tracker import visible_table

        self.latencies.append(latency_ms)
        self.cpu_times.append(cpu_ms)
        rows, n = self.truth_rows, self.frames
        if rows and n < len(rows) and rows[n].get("settled"):
            self.settled.settled(truth_table(rows[n]), reading_table(reading),
                                 visible_table(self.tracker.state))
        else:
            self.settled.unsettled()
        self.frames += 1

    def save(self, path: Path, meta: dict) -> None:
        """Write the recorded readings (pickles of this code's TableReading: replay them with
        the same version of the scanner's types; re-record after changing them)."""
        import gzip

        with gzip.open(path, "wb", compresslevel=3) as f:
            pickle.dump({"version": RECORDING_VERSION, **meta, "frames": self.frames,
                         "stream": self._stream.getvalue(), "latencies_ms": self.latencies,
                         "cpu_ms": self.cpu_times}, f, protocol=pickle.HIGHEST_PROTOCOL)

    def result(self, source: str, source_state, source_message: str, registration: str,
               adaptation: str) -> dict:
        """The event log, final position and, with a truth, the comparison."""
        from engines.royal_battles.position import to_json

        from .evaluate import summary, truth_events

        self.settled.unsettled()
        tracker = self.tracker
        result = {
            "source": source,
            "frames": self.frames,
            "source_state": source_state,
            "source_message": source_message,
            "registration": registration,
            "piece_adaptation": adaptation,
            "events": [e.to_json() for e in tracker.events],
            "holding": tracker.holding,
            "open_questions": tracker.open_questions(),
            "position": to_json(tracker.state),
        }
        if self.truth_rows:
            # an open question's event is the likeliest reading, not a claim: counted apart
            want = truth_events(self.truth_rows)
            # a re-read is no game event: it is counted apart too
            asserted = [e.text for e in tracker.events
                        if e.question is None and e.kind != "re-read"]
            asked = [e.text for e in tracker.events if e.question is not None]
            s = self.settled
            c = summary(asserted, want, s.frames, s.read_right, self.latencies,
                        s.tracked_right, self.cpu_times, s.recorded_right)
            c["open_question_events"] = len(asked)
            c["table_re_reads"] = sum(e.kind == "re-read" for e in tracker.events)
            c["open_question_events_likeliest_right"] = sum(a in want for a in asked)
            if self.page:
                from webui.table.tracking import offered_events

                # (every frame's reading: the page reads the recordings at their own rate)
                c["page_offers"] = offered_events(self.readings, self.truth_rows)
            result["comparison"] = c
        elif self.latencies:
            result["comparison"] = None
            result["latency_ms_p50"] = summary([], [], 0, 0, self.latencies)["latency_ms_p50"]
        return result


def run(args: argparse.Namespace) -> int:
    if args.source == "bench":
        return bench(args)
    if args.source == "fixtures":
        return fixtures(args)
    if args.source == "recorded":
        return recorded(args)
    number = args.source.removeprefix("validation")
    if number != args.source and (number == "" or number.isdigit()):
        from models.renderer.fixtures import VALIDATION_SETS

        if int(number or 1) in VALIDATION_SETS:
            return validation(args, number=int(number or 1))
    from engines.errors import RulesError

    from .evaluate import read_truth

    try:
        armies = _armies(args)
    except RulesError as exc:
        return _fail(str(exc))
    truth_rows: list[dict] = []
    if args.truth:
        try:
            truth_rows = list(read_truth(args.truth))
        except (OSError, ValueError) as exc:
            return _fail(f"cannot read truth {args.truth}: {exc}")
    if getattr(args, "replay", False):
        return _replay(args, armies, truth_rows)
    if getattr(args, "record", False) and not getattr(args, "record_to", None):
        return _fail("--record needs --record-to FILE for a single source")
    return _scan(args, armies, truth_rows)


def load_recording(path: str | Path) -> dict:
    """A readings recording `--record` wrote (its frames' readings: `recorded_readings`);
    ValueError if it is none or of another version."""
    import gzip

    try:
        with gzip.open(path, "rb") as f:
            rec = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError) as exc:
        raise ValueError(f"not a readings recording: {exc}") from exc
    if not isinstance(rec, dict) or rec.get("version") != RECORDING_VERSION:
        raise ValueError(f"a readings recording of another version (this scanner reads "
                         f"version {RECORDING_VERSION}): record it again")
    missing = sorted(RECORDING_KEYS - set(rec))
    if missing:
        raise ValueError(f"a readings recording without {', '.join(missing)}: record it again")
    return rec


def recorded_readings(rec: dict) -> Iterator:
    """The readings of a recording, frame by frame, shared objects shared again; ValueError
    where the stream holds something else."""
    from .detections import TableReading

    stream = pickle.Unpickler(io.BytesIO(rec["stream"]))
    for n in range(rec["frames"]):
        reading = stream.load()
        if not isinstance(reading, TableReading):
            raise ValueError(f"frame {n} is no table reading")
        yield reading


def _replay(args: argparse.Namespace, armies, truth_rows: list[dict]) -> int:
    """The tracker over a recording's readings: the same scoring as the scan it was made by,
    in seconds (the frames' recorded latencies are reported, not the replay's). Without
    --armies, the armies the recorded scan was given."""
    try:
        rec = load_recording(args.source)
    except (OSError, ValueError) as exc:
        return _fail(f"cannot replay {args.source}: {exc}")
    if armies is None and rec.get("armies"):  # the armies the recorded scan was given
        args.armies = rec["armies"]
        armies = _armies(args)
    tracked = TrackedRun(armies, truth_rows, args.page, record=False)
    try:
        for n, reading in enumerate(recorded_readings(rec)):
            if args.max_frames and n >= args.max_frames:
                break
            tracked.update(reading)
            tracked.close_frame(reading, rec["latencies_ms"][n], rec["cpu_ms"][n])
    except (EOFError, IndexError, ValueError, pickle.UnpicklingError) as exc:  # damaged
        return _fail(f"cannot replay {args.source}: its readings end early or are damaged "
                     f"({exc.__class__.__name__}: {exc}); record it again")
    result = tracked.result(rec["source"], "replayed", f"recorded readings of {rec['source']}",
                           rec["registration"], rec["piece_adaptation"])
    return _report(args, result, tracked)


def _scan(args: argparse.Namespace, armies, truth_rows: list[dict]) -> int:
    """Frames from the source through the scanner into the tracker."""
    try:
        from calibration.profile import Profile, ProfileError
        from calibration.register import RegistrationError, register_from_cards

        from .card_presence import CardPresence, find_setup_cards
        from .card_reader import reader_in
        from .detections import TableReading
        from .following import FollowingScanner
        from .incremental import IncrementalScanner, board_region
        from .occlusion import OcclusionDetector
        from .pipeline import TableScanner
        from .sources import SourceError, open_source
    except ImportError as exc:  # pragma: no cover - a broken install
        return _fail(f"the scanner is not available: {exc}")
    try:
        source = open_source(args.source)
    except SourceError as exc:
        return _fail(str(exc))

    profile = None
    if args.profile:
        try:
            profile = Profile.load(args.profile)
        except (OSError, ProfileError, ValueError) as exc:
            return _fail(f"cannot load profile {args.profile}: {exc}")
    try:
        reader = reader_in(args.models)
    except Exception as exc:  # the model file is missing or unreadable
        return _fail(f"cannot load the card model: {exc}")
    try:
        from .piece_classifier import PieceClassifier

        pieces = PieceClassifier()  # reads cells through the profile (cell units and K)
    except Exception as exc:
        print(f"royal-table scan: no piece classifier ({exc}); pieces are unsure",
              file=sys.stderr)
        pieces = None

    tracked = TrackedRun(armies, truth_rows, args.page, getattr(args, "record", False))
    tracker = tracked.tracker
    # the set-up view teaches the classifier the players' own set; with the armies inferred
    # from the classifier's own reads it would only learn what it already thought
    adapt_pending = pieces is not None and armies is not None and not args.no_adapt
    adapt_later = False  # the set-up view's placement was in question: learn once it is settled
    adaptation_note = "" if adapt_pending else "none: " + (
        "no piece classifier" if pieces is None else "--no-adapt" if args.no_adapt
        else "the armies were not given")

    # one presence model serves registration from the set-up cards and the board's scanner
    presence = CardPresence.default()

    def frame_reader(profile):
        """The per-frame loop's scanner and occlusion detector for a registered board."""
        if args.every_zone:
            return (TableScanner(profile, reader=reader, pieces=pieces, presence=presence),
                    OcclusionDetector(region=board_region(profile)))
        return IncrementalScanner.for_profile(profile, reader, pieces, presence), None

    # a bumped camera or board mid-game is followed (`scanner.following`)
    scanner = FollowingScanner(profile, frame_reader) if profile else None
    occlusion = None if profile else OcclusionDetector()  # until the board is registered
    registration_note = ""
    frame_no = 0
    with source:
        while True:
            if args.max_frames and frame_no >= args.max_frames:
                break
            frame = source.read()
            if frame is None:
                break
            image = frame.image
            t0 = time.perf_counter()
            c0 = time.process_time()
            occluded = occlusion.update(image) if occlusion is not None else False
            if scanner is None:
                reading = TableReading(frame_index=frame_no, occluded=occluded,
                                       message="board not registered yet")
                if not occluded:
                    try:
                        h, w = image.shape[:2]
                        profile = register_from_cards(
                            find_setup_cards(image, presence=presence), (w, h))
                        scanner, occlusion = FollowingScanner(profile, frame_reader), None
                        registration_note = f"registered from the set-up cards at frame " \
                                            f"{frame_no}"
                    except RegistrationError as exc:
                        reading.message = str(exc)
            if scanner is not None:
                reading = scanner.scan(image, frame_no)
                reading.frame_index = frame_no
            kept = tracked.update(reading)
            if adapt_pending and scanner is not None and not reading.occluded \
                    and tracker.state.phase not in (Phase.SETUP, Phase.PLACE):
                adapt_pending = False
                learning = _adapt_to_set(pieces, image, scanner, tracker, frame_no)
                adaptation_note, adapt_later = learning.note, learning.too_few_settled
            elif adapt_later and scanner is not None and _units_settled_in_view(reading, tracker):
                adapt_later = False
                adaptation_note += "; then " + _adapt_to_set(pieces, image, scanner, tracker,
                                                             frame_no).note
            tracked.close_frame(reading, (time.perf_counter() - t0 - kept) * 1000,
                               (time.process_time() - c0 - kept) * 1000)
            frame_no += 1
        source_state = source.state.value if hasattr(source.state, "value") else source.state
        source_message = getattr(source, "message", "")
    if frame_no == 0:
        return _fail(f"no frame read from {args.source}"
                     + (f": {source_message}" if source_message else ""))
    registration = (registration_note or ("profile " + args.profile if args.profile
                                          else "board never found")) \
        + "".join(f"; {f}" for f in (scanner.followed if scanner is not None else []))
    result = tracked.result(args.source, source_state, source_message, registration,
                           adaptation_note or "never: the armies were not all placed")
    if tracked.recording:
        tracked.save(Path(args.record_to), {**{k: result[k] for k in (
            "source", "registration", "piece_adaptation")}, "armies": args.armies})
    return _report(args, result, tracked)


def _report(args: argparse.Namespace, result: dict, tracked: TrackedRun) -> int:
    """Print the run (and save its event log where asked)."""
    tracker = tracked.tracker
    if args.save_log:
        Path(args.save_log).write_text(json.dumps(tracker.log_json(), indent=1))
    if args.json:
        # with --truth the comparison's keys stand at the top level, beside the event log
        out = {**result.pop("comparison"), **result} if tracked.truth_rows else result
        print(json.dumps(out, indent=1))
        return 0
    said = f": {result['source_message']}" if result["source_message"] else ""
    print(f"{result['frames']} frames from {result['source']} ({result['source_state']}{said}); "
          f"{result['registration']}")
    print(f"piece classifier adapted to the set: {result['piece_adaptation']}")
    for e in tracker.events:
        flags = f"   [{'; '.join(e.flags)}]" if e.flags else ""
        asked = f"   [open: {e.question}]" if e.question else ""
        print(f"frame {e.frame:>5} {'?' if e.question else ' '} {e.text}{flags}{asked}")
    if tracker.holding:
        print(f"waiting for a player: {tracker.holding}")
    print("final position:", json.dumps(result["position"]))
    if tracked.truth_rows:
        c = result["comparison"]
        print(f"moves recovered in order {c['moves_recovered']}/{c['moves']}, spurious events "
              f"{c['spurious_events']}, settled frames fully right {c['settled_frames_right']}/"
              f"{c['settled_frames']} (tracked game right: "
              f"{c['settled_frames_tracked_right']} live, "
              f"{c['settled_frames_recorded_right']} recorded), "
              f"latency p50 {c['latency_ms_p50']} ms, p95 {c['latency_ms_p95']} ms (CPU "
              f"{c['cpu_ms_p50']} / {c['cpu_ms_p95']} ms); open questions: "
              f"{c['open_question_events']} events, likeliest right "
              f"{c['open_question_events_likeliest_right']}{_offers_said(c.get('page_offers'))}")
    return 0
