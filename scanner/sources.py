"""Where frames come from: one interface for a webcam, a video file, a folder of images or a URL.

`open_source(spec)` reads the spec the way a player would type it: a number is a webcam index,
an existing folder is a sorted image sequence, an existing file is a video, anything with `://`
is a stream URL. `read()` returns a `Frame`, or None once the source has nothing more to give;
`state` then says why (`ended`, `gone`), so a camera pulled out of its socket is a state the page
can show, not an exception that kills the reader thread. Only opening can fail, with SourceError.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

import cv2
import numpy as np

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")
# A webcam may return a few empty grabs while it wakes up; after this many in a row it is gone.
CAMERA_MISSES_BEFORE_GONE = 30


class SourceError(RuntimeError):
    """The source cannot be opened (no such camera, unreadable file, empty folder …)."""


class SourceState(StrEnum):
    OPEN = "open"
    ENDED = "ended"  # a video or folder reached its end
    GONE = "gone"  # a camera or stream stopped delivering frames
    CLOSED = "closed"


@dataclass
class Frame:
    index: int  # 0, 1, 2 … in reading order (restarts at 0 when a looping source rewinds)
    timestamp: float  # seconds: position in the video, or time since the source was opened
    image: np.ndarray  # BGR, uint8, HxWx3


class FrameSource:
    """Base class: `read()` until it returns None, then look at `state`; `close()` when done."""

    kind = "source"

    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.state = SourceState.OPEN
        self.message = ""
        self.fps: float | None = None
        self._index = 0

    def read(self) -> Frame | None:
        if self.state is not SourceState.OPEN:
            return None
        image, timestamp = self._grab()
        if image is None:
            return None
        frame = Frame(self._index, timestamp, image)
        self._index += 1
        return frame

    def rewind(self) -> bool:
        """Start again from the first frame (videos and folders); False if not possible."""
        return False

    def close(self) -> None:
        self.state = SourceState.CLOSED

    def _grab(self) -> tuple[np.ndarray | None, float]:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> dict:
        return {"kind": self.kind, "spec": self.spec, "state": self.state.value,
                "message": self.message, "fps": self.fps}

    def __enter__(self) -> FrameSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class CaptureSource(FrameSource):
    """A webcam index, a video file or a stream URL, all read through cv2.VideoCapture."""

    def __init__(self, spec: str, target, kind: str) -> None:
        super().__init__(spec)
        self.kind = kind
        self._target = target
        self._cap = cv2.VideoCapture(target)
        if not self._cap.isOpened():
            self._cap.release()
            raise SourceError(f"cannot open {kind} {spec!r}")
        fps = self._cap.get(cv2.CAP_PROP_FPS)
        self.fps = float(fps) if fps and 0 < fps < 1000 else None
        self._opened_at = time.monotonic()
        self._misses = 0

    def _grab(self) -> tuple[np.ndarray | None, float]:
        ok, image = self._cap.read()
        if not ok or image is None:
            if self.kind == "video":
                self.state = SourceState.ENDED
                self.message = self._why_ended()
                return None, 0.0
            self._misses += 1
            if self._misses >= CAMERA_MISSES_BEFORE_GONE:
                self.state = SourceState.GONE
                self.message = f"the {self.kind} stopped delivering frames"
            return None, 0.0
        self._misses = 0
        if image.ndim == 2:
            image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
        if self.kind == "video":
            if self.fps:
                stamp = self._index / self.fps
            else:
                stamp = self._cap.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
        else:
            stamp = time.monotonic() - self._opened_at
        return image, stamp

    def _why_ended(self) -> str:
        """A video's end, told apart from one that could not be read: a file cut short keeps
        the header that promises all its frames, and OpenCV opens it, then decodes none."""
        declared = self._cap.get(cv2.CAP_PROP_FRAME_COUNT)
        if self._index == 0:
            return ("no frame could be decoded: the file is empty, cut short or in a format "
                    "this machine cannot read")
        if declared and 0 < declared < 1e9 and self._index < declared - 1:
            return (f"the video ended after {self._index} of the {int(declared)} frames its "
                    "header declares: cut short or damaged")
        return "end of video"

    def rewind(self) -> bool:
        if self.kind != "video":
            return False
        self._cap.release()
        self._cap = cv2.VideoCapture(self._target)
        if not self._cap.isOpened():
            self.state = SourceState.GONE
            self.message = "the video could not be reopened"
            return False
        self._index = 0
        self.state = SourceState.OPEN
        self.message = ""
        return True

    def close(self) -> None:
        self._cap.release()
        super().close()


class FolderSource(FrameSource):
    """The images of a folder in sorted name order; unreadable files are skipped and counted."""

    kind = "folder"

    def __init__(self, spec: str, files: list[Path], fps: float = 2.0) -> None:
        super().__init__(spec)
        self.files = files
        if not self.files:
            raise SourceError(f"no images ({', '.join(IMAGE_SUFFIXES)}) in folder {spec!r}")
        self.fps = fps
        self.skipped: list[str] = []
        self._pos = 0

    def _grab(self) -> tuple[np.ndarray | None, float]:
        while self._pos < len(self.files):
            path = self.files[self._pos]
            self._pos += 1
            image = cv2.imread(str(path), cv2.IMREAD_COLOR)
            if image is None:
                self.skipped.append(path.name)
                self.message = f"skipped {len(self.skipped)} unreadable image(s)"
                continue
            return image, self._index / self.fps
        self.state = SourceState.ENDED
        self.message = "end of folder" + (f"; {self.message}" if self.skipped else "")
        return None, 0.0

    def rewind(self) -> bool:
        self._pos = 0
        self._index = 0
        self.state = SourceState.OPEN
        return True


def open_source(spec: str | int | Path) -> FrameSource:
    """Open a webcam index ("0"), a folder of images, a video file or a stream URL."""
    text = str(spec).strip()
    if not text:
        raise SourceError("empty source: give a camera index, a video, a folder or a URL")
    if text.isdigit():
        return CaptureSource(text, int(text), "camera")
    if "://" in text:
        return CaptureSource(text, text, "stream")
    path = Path(text).expanduser()
    if path.is_dir():
        files = sorted(p for p in path.iterdir()
                       if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
        return FolderSource(text, files)
    if not path.exists():
        raise SourceError(f"no such file, folder or camera: {text!r}")
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return FolderSource(text, [path])  # a single image is a one-frame folder
    return CaptureSource(text, str(path), "video")

