"""The live picture: a background thread reads the frame source and keeps the latest frame.

The MJPEG endpoint draws the overlays a viewer asked for on the latest frame and sends it a few
times a second; old frames are dropped rather than queued, so the picture never lags behind the
table. Overlays come from the latest `TableReading` when a scanner is plugged in (`reader`), and
the grid from a calibration profile when one is given; otherwise they are off. With a profile
and the scanner installed, a second thread reads the latest frame up to 10 times a second and
feeds each reading to the camera's tracker (`tracking.CameraGame`), whose proposals the page
shows first.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from scanner.detections import TableReading, units_in_view
from scanner.occlusion import OcclusionDetector
from scanner.sources import FrameSource, SourceError, SourceState, open_source

from .tracking import CameraGame, settle_readings

FILES, RANKS = "abcdefg", "12345"
JPEG_QUALITY = 75
MAX_WIDTH = 960  # larger frames are scaled down before they are sent
# the scanner reads up to 10 frames a second, beside the picture: its hand check compares each
# reading with the one before, and at 5 a second (one frame in two of the 10-frame recordings)
# it took 252 of val-s23's 268 settled frames read for hands (at every frame 69 of 536)
SCAN_INTERVAL_S = 0.1


class ProfileError(ValueError):
    """A calibration profile that cannot be used."""


class BoardGrid:
    """Where each cell lies in the image, from a calibration profile (`royal-table calibrate`):
    `homography` maps the board plane in cell units (a1's centre at (0, 0), x along the files,
    y along the ranks) to undistorted pixels; `camera_matrix` + `distortion`, when present,
    distort the points after it (as `calibration.profile.Profile.board_to_image`)."""

    def __init__(self, homography: np.ndarray, camera_matrix: np.ndarray | None = None,
                 distortion: np.ndarray | None = None) -> None:
        self.H = homography
        self.K = camera_matrix
        self.dist = distortion

    def to_image(self, pts: np.ndarray) -> np.ndarray:
        uv = cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(-1, 1, 2), self.H)
        uv = uv.reshape(-1, 2)
        if self.K is None or self.dist is None:
            return uv
        rays = np.hstack([uv, np.ones((len(uv), 1))]) @ np.linalg.inv(self.K).T
        out, _ = cv2.projectPoints(rays, np.zeros(3), np.zeros(3), self.K, self.dist)
        return out.reshape(-1, 2)

    def cell_polygon(self, cell: str) -> np.ndarray:
        f, r = FILES.index(cell[0]), RANKS.index(cell[1])
        corners = np.array([(f - 0.5, r + 0.5), (f + 0.5, r + 0.5), (f + 0.5, r - 0.5),
                            (f - 0.5, r - 0.5)])
        # four points a side, so a distorted edge bends as it should
        edge = [a + (b - a) * t for a, b in zip(corners, np.roll(corners, -1, axis=0),
                                                 strict=True) for t in (0, 0.25, 0.5, 0.75)]
        return self.to_image(np.array(edge))


def load_profile(path: str | Path) -> BoardGrid:
    """The board grid of a calibration profile JSON (ProfileError if it has none usable)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ProfileError(f"cannot read profile {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ProfileError(f"profile {path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise ProfileError(f"profile {path} is not a JSON object")
    try:
        H = np.asarray(data.get("homography"), dtype=np.float64)
        K = data.get("camera_matrix")
        dist = data.get("distortion")
        K = None if K is None else np.asarray(K, np.float64).reshape(3, 3)
        dist = None if dist is None else np.asarray(dist, np.float64).ravel()
    except (TypeError, ValueError):
        raise ProfileError(f"profile {path} has a malformed homography or camera") from None
    if H.shape != (3, 3) or not np.isfinite(H).all() or abs(np.linalg.det(H)) < 1e-12:
        raise ProfileError(f"profile {path} has no usable 'homography' "
                           "(3x3, board cells -> image pixels)")
    return BoardGrid(H, K, dist)


def load_pieces():
    """The piece classifier (`scanner.piece_classifier`) and, where it cannot be loaded, why:
    the cards are still read, the pieces then left unsure."""
    try:
        from scanner.piece_classifier import PieceClassifier

        return PieceClassifier(), ""
    except Exception as exc:  # noqa: BLE001 - a missing or broken model file: cards only
        return None, f"pieces unsure: {exc}"


def profile_scanner(path: str | Path, pieces=None) -> Callable[[np.ndarray], TableReading] | None:
    """The scanner for this profile, once the scanner and calibration packages are installed
    (`scanner.incremental.IncrementalScanner`), reading pieces with `pieces` where given; None
    until then, and the page is entered by hand."""
    try:
        from calibration.profile import Profile
        from scanner.following import FollowingScanner
        from scanner.incremental import IncrementalScanner
    except ImportError:
        return None
    # only zones whose picture changed are read, none while hands are over the board; a
    # camera or board bumped during the game is followed (`scanner.following`)
    return FollowingScanner(Profile.load(path), lambda p: (
        IncrementalScanner.for_profile(p, pieces=pieces), None)).scan


class LiveCamera:
    """Reads `spec` in a thread; `loop` rewinds videos and folders at their end."""

    def __init__(self, spec: str | None, loop: bool = False, grid: BoardGrid | None = None,
                 reader: Callable[[np.ndarray], TableReading] | None = None,
                 max_fps: float = 10.0, scan_interval: float = SCAN_INTERVAL_S,
                 pieces=None) -> None:
        self.spec = spec
        self.loop = loop
        self.grid = grid
        self.scan_interval = scan_interval
        self.reader = reader
        self.max_fps = max_fps
        self.source: FrameSource | None = None
        self.state = "off" if spec is None else "starting"
        self.message = "no camera or video" if spec is None else ""
        self.frame: np.ndarray | None = None
        self.frame_index = -1
        self.frames_read = 0
        self.reading: TableReading | None = None
        self.key_cells: list[str] = []  # set by the page from the game state
        self.scanner_note = ""  # why there is no scanner, when one was asked for
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._scan_thread: threading.Thread | None = None
        self._jpeg_cache: dict[tuple, bytes] = {}
        # hands over the board: such readings are marked occluded and propose nothing
        self.occlusion = OcclusionDetector()
        self._followed = None  # the profile the scanner last read with, where it follows one
        self._watched = None  # the profile whose board the occlusion check watches
        # the players' own set: the classifier the scanner reads pieces with, the game it
        # learnt (or is to learn) the set for, the units to learn it from, and what happened
        self.pieces = pieces
        self.set_note = ""
        self._set_game: int | None = None
        self._set_units: dict[str, str] | None = None
        self._set_learnt = False
        self._set_forget = False
        # the game as the scan CLI's tracker follows it from every reading (`tracking.py`)
        self.game = CameraGame(settle_frames=settle_readings(scan_interval))

    def start(self) -> LiveCamera:
        """Open the source (raises SourceError at once if it can't be) and start reading."""
        if self.spec is None:
            return self
        self.source = open_source(self.spec)
        self.state = "open"
        self._thread = threading.Thread(target=self._run, name="live-camera", daemon=True)
        self._thread.start()
        if self.reader is not None:
            self._scan_thread = threading.Thread(target=self._scan_loop, name="table-scanner",
                                                 daemon=True)
            self._scan_thread.start()
        return self

    def use_profile(self, path: str | Path) -> None:
        """Switch to a new calibration profile: its grid at once, its scanner if installed."""
        grid = load_profile(path)
        reader, note = None, ""
        if self.pieces is None:
            self.pieces, note = load_pieces()
        try:
            reader = profile_scanner(path, self.pieces)
        except Exception as exc:  # noqa: BLE001 - the scanner's own errors: run without it
            note = f"scanner off: {exc}"
        with self._cond:
            self.grid = grid
            self.scanner_note = note
            self.reading = None
            self._jpeg_cache.clear()
            start_scanner = reader is not None and self._scan_thread is None
            self.reader = reader
        if start_scanner and self._thread is not None:
            self._scan_thread = threading.Thread(target=self._scan_loop, name="table-scanner",
                                                 daemon=True)
            self._scan_thread.start()

    def learn_set(self, game: int | None, units: dict[str, str] | None) -> None:
        """The page's game and, once every unit is placed, where each stands as the players
        entered it (cell -> "white-knight"; None before). Once a game, the piece classifier
        learns the players' own set from the next clear view that shows those units
        (`scanner.piece_adapt.learn_set`); a new game, or an undo back into the placement,
        forgets it."""
        with self._cond:
            if self.pieces is None:
                return
            # a new game, or this one taken back into its placement (undo): learnt again
            if game != self._set_game or (units is None and
                                          (self._set_learnt or self._set_units is not None)):
                self._set_game = game
                self._set_forget, self._set_learnt, self._set_units = True, False, None
                self.set_note = ""
            if units and not self._set_learnt and self._set_units is None:
                self._set_units = dict(units)
                self.set_note = "waiting for a clear view of every unit to learn the set"

    def _learn_set_from(self, image: np.ndarray, index: int, reading: TableReading,
                        profile) -> None:
        """In the scanner's thread (the classifier is the scanner's): forget a finished game's
        set, or learn this game's from this reading's view once it shows every unit, through
        the scanner's `profile` (None: a scanner that knows no board)."""
        with self._cond:
            forget, units = self._set_forget, self._set_units
            self._set_forget = False
        if forget:
            self.pieces.new_set()
        if not units or not units_in_view(reading, units):
            return
        if profile is None:
            note = "the set is not learnt: the scanner has no calibration profile"
        else:
            from scanner.piece_adapt import learn_set

            learning = learn_set(self.pieces, image, profile, units, list(units),
                                 f"at frame {index}")
            note = f"set learnt {learning.note}" if learning.learnt \
                else f"set not learnt: {learning.note.removeprefix('none: ')}"
        with self._cond:
            if self._set_units is units:  # not a new game meanwhile
                self._set_units, self._set_learnt, self.set_note = None, True, note

    def latest(self) -> np.ndarray | None:
        with self._cond:
            return None if self.frame is None else self.frame.copy()

    def stop(self) -> None:
        self._stop.set()
        for thread in (self._thread, self._scan_thread):
            if thread is not None:
                thread.join(timeout=2)
        if self.source is not None:
            self.source.close()

    def describe(self) -> dict:
        return {"state": self.state, "message": self.message, "spec": self.spec,
                "frame_index": self.frame_index, "frames_read": self.frames_read,
                "grid": self.grid is not None, "scanner": self.reader is not None,
                "scanner_note": self.scanner_note, "set_note": self.set_note,
                "reading": self.reading.to_json() if self.reading is not None else None}

    def _run(self) -> None:
        src = self.source
        # Videos and folders play at their own pace, in real time: faster than max_fps, every
        # `step`-th frame is kept (a game recorded at 30 frames a second played at 10 was
        # three times slower than it was played); a camera paces itself.
        step, pace = 1, 0.0
        if src.kind in ("video", "folder") and src.fps:
            step = max(1, round(src.fps / self.max_fps))
            pace = step / src.fps
        next_at = time.monotonic()
        while not self._stop.is_set():
            try:
                frame = src.read()
                for _ in range(step - 1):  # the newest of `step` frames (an end shows next)
                    newer = src.read() if frame is not None else None
                    if newer is None:
                        break
                    frame = newer
            except (cv2.error, OSError) as exc:  # a driver error is a lost camera, not a crash
                self._set_state("gone", f"the source failed: {exc}")
                return
            if frame is None:
                if src.state is SourceState.ENDED and self.loop and src.rewind():
                    continue
                if src.state is not SourceState.OPEN:
                    self._set_state(src.state.value, src.message)
                    return
                time.sleep(0.05)
                continue
            with self._cond:
                self.frame = frame.image
                self.frame_index = frame.index
                self.frames_read += 1
                self._jpeg_cache.clear()
                self.state = "open"
                self._cond.notify_all()
            if pace:
                next_at += pace
                delay = next_at - time.monotonic()
                if delay > 0:
                    self._stop.wait(delay)
                else:
                    next_at = time.monotonic()

    def _scan_loop(self) -> None:
        """Read the latest frame with the scanner, beside the picture: a slow scan delays
        the overlays and proposals, never the live picture."""
        scanned = -1
        while not self._stop.is_set():
            with self._cond:
                image, count, index = self.frame, self.frames_read, self.frame_index
            if image is None or count == scanned:
                self._stop.wait(0.05)
                continue
            started = time.monotonic()
            reader = self.reader
            if reader is None:  # switched off by a new profile without a scanner
                self._stop.wait(0.2)
                continue
            try:
                reading = reader(image)
                # a scanner that knows the board (`scanner.following`, even after following a
                # bumped board): hands are looked for over the board and its initiative zones
                # only, so players moving beside the table cover nothing
                followed = getattr(getattr(reader, "__self__", None), "profile", None)
                if followed is not None and followed is not self._watched:
                    from scanner.incremental import board_region

                    self.occlusion = OcclusionDetector(region=board_region(followed))
                    self._watched = followed
                reading.occluded = reading.occluded or self.occlusion.update(image)
                if self.pieces is not None:
                    self._learn_set_from(image, index, reading, followed)
                self.game.update(reading)
            except Exception as exc:  # noqa: BLE001 - a scanner bug must not stop the page
                reading = TableReading(message=f"scanner failed: {exc}")
                followed = None
            # the grid drawn over the picture follows a followed board too
            with self._cond:
                if followed is not None and followed is not self._followed:
                    if self._followed is not None:
                        self.grid = BoardGrid(followed.H, followed.K, followed.dist)
                    self._followed = followed
                self.reading = reading
                self._jpeg_cache.clear()
            scanned = count
            self._stop.wait(max(0.0, self.scan_interval - (time.monotonic() - started)))

    def _set_state(self, state: str, message: str) -> None:
        with self._cond:
            self.state = state
            self.message = message
            self._cond.notify_all()

    def wait_frame(self, after: int, timeout: float) -> int:
        """Wait until a frame newer than `after` (by count read) is there; returns the count."""
        with self._cond:
            self._cond.wait_for(lambda: self.frames_read != after or self.state not in
                                ("open", "starting"), timeout=timeout)
            return self.frames_read

    def jpeg(self, overlays: frozenset[str] = frozenset()) -> bytes | None:
        """The latest frame as JPEG with the asked overlays (cached per frame and overlay set)."""
        with self._cond:
            if self.frame is None:
                return None
            key = (self.frames_read, overlays, tuple(self.key_cells))
            cached = self._jpeg_cache.get(key)
            if cached is not None:
                return cached
            image, reading = self.frame, self.reading
        image = draw_overlays(image, overlays, self.grid, reading, self.key_cells)
        h, w = image.shape[:2]
        if w > MAX_WIDTH:
            image = cv2.resize(image, (MAX_WIDTH, round(h * MAX_WIDTH / w)),
                               interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        data = buf.tobytes() if ok else None
        if data is not None:
            with self._cond:
                if len(self._jpeg_cache) > 8:
                    self._jpeg_cache.clear()
                self._jpeg_cache[key] = data
        return data


def draw_overlays(image: np.ndarray, overlays: frozenset[str], grid: BoardGrid | None,
                  reading: TableReading | None, key_cells: list[str]) -> np.ndarray:
    if not overlays or (grid is None and reading is None):
        return image
    out = image.copy()
    if grid is not None and "grid" in overlays:
        for cell in (f + r for r in RANKS for f in FILES):
            poly = grid.cell_polygon(cell).astype(np.int32)
            cv2.polylines(out, [poly], True, (255, 220, 0), 1, cv2.LINE_AA)
            x, y = poly.min(axis=0)
            cv2.putText(out, cell, (int(x) + 3, int(y) + 14), cv2.FONT_HERSHEY_SIMPLEX, 0.4,
                        (255, 220, 0), 1, cv2.LINE_AA)
    if grid is not None and "keys" in overlays:
        for cell in key_cells:
            poly = grid.cell_polygon(cell).astype(np.int32)
            cv2.polylines(out, [poly], True, (0, 215, 255), 3, cv2.LINE_AA)
    if reading is not None:
        for name, cr in reading.cells.items():
            corners = cr.card.corners if cr.card is not None else None
            if corners is None and grid is not None:
                corners = grid.cell_polygon(name)
            if corners is None:
                continue
            poly = np.asarray(corners, np.float64).astype(np.int32)
            if "unsure" in overlays and cr.unsure:
                cv2.polylines(out, [poly], True, (0, 0, 255), 3, cv2.LINE_AA)
            if "cells" in overlays and not cr.empty:
                label = (cr.card.card if cr.card and cr.card.card else "?")
                if cr.piece is not None and cr.piece.piece not in (None, "empty"):
                    label += " " + cr.piece.piece
                x, y = poly.mean(axis=0)
                cv2.putText(out, label, (int(x) - 30, int(y)), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                            (0, 0, 0), 3, cv2.LINE_AA)
                cv2.putText(out, label, (int(x) - 30, int(y)), cv2.FONT_HERSHEY_SIMPLEX, 0.5,
                            (255, 255, 255), 1, cv2.LINE_AA)
    return out


def open_camera(spec: str | None, loop: bool, profile: str | None = None) -> LiveCamera:
    """Build and start the live camera; SourceError / ProfileError for bad input."""
    grid = load_profile(profile) if profile else None
    reader, note, pieces = None, "", None
    if profile and spec is not None:
        pieces, note = load_pieces()
        try:
            reader = profile_scanner(profile, pieces)
        except Exception as exc:  # noqa: BLE001 - the scanner's own profile or model errors
            # the page still works without it: the players enter events by hand
            note = f"scanner off: {exc}"
    camera = LiveCamera(spec, loop=loop, grid=grid, reader=reader, pieces=pieces)
    camera.scanner_note = note
    return camera.start()


__all__ = ["BoardGrid", "LiveCamera", "ProfileError", "SourceError", "draw_overlays",
           "load_profile", "open_camera"]
