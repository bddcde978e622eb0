"""scanner.sources: one interface for camera, video, folder and URL; ends are states."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from scanner.sources import FolderSource, SourceError, SourceState, open_source


def write_video(path, frames: int = 6, size=(64, 48)) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 5.0, size)
    for i in range(frames):
        img = np.full((size[1], size[0], 3), i * 40, np.uint8)
        writer.write(img)
    writer.release()


def test_video_reads_every_frame_then_reports_end(tmp_path):
    path = tmp_path / "game.avi"
    write_video(path, frames=6)
    src = open_source(str(path))
    assert src.kind == "video"
    frames = []
    while (frame := src.read()) is not None:
        frames.append(frame)
    assert [f.index for f in frames] == list(range(6))
    assert frames[0].image.shape == (48, 64, 3)
    assert frames[1].timestamp == pytest.approx(0.2, abs=0.01)
    # the brightness ramp survives: frames come in order
    means = [float(f.image.mean()) for f in frames]
    assert means == sorted(means)
    assert src.state is SourceState.ENDED
    assert src.read() is None  # still no exception after the end
    assert src.rewind() and src.read().index == 0
    src.close()
    assert src.state is SourceState.CLOSED and src.read() is None


def test_folder_is_sorted_and_skips_unreadable_files(tmp_path):
    for name, value in (("b.png", 100), ("a.png", 50), ("c.jpg", 200)):
        cv2.imwrite(str(tmp_path / name), np.full((10, 12, 3), value, np.uint8))
    (tmp_path / "broken.png").write_bytes(b"not an image")
    (tmp_path / "notes.txt").write_text("ignored")
    with open_source(tmp_path) as src:
        assert isinstance(src, FolderSource)
        got = []
        while (frame := src.read()) is not None:
            got.append(int(frame.image.mean()))
        assert got[:2] == [50, 100] and abs(got[2] - 200) <= 2
        assert src.skipped == ["broken.png"]
        assert src.state is SourceState.ENDED and "unreadable" in src.message


def test_single_image_is_a_one_frame_source(tmp_path):
    path = tmp_path / "still.png"
    cv2.imwrite(str(path), np.zeros((8, 8, 3), np.uint8))
    src = open_source(path)
    assert src.read() is not None and src.read() is None


@pytest.mark.parametrize("spec, words", [
    ("", "empty source"),
    ("/no/such/file.mp4", "no such file"),
    ("99", "cannot open camera"),
])
def test_bad_sources_raise_a_clear_source_error(spec, words):
    with pytest.raises(SourceError, match=words):
        open_source(spec)


def test_empty_folder_and_garbage_video_are_source_errors(tmp_path):
    with pytest.raises(SourceError, match="no images"):
        open_source(tmp_path)
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\0" * 100)
    with pytest.raises(SourceError, match="cannot open video"):
        open_source(bad)


def test_the_page_plays_a_video_faster_than_its_frame_cap_in_real_time(tmp_path):
    """A video of 30 frames a second on a page capped at 10: every third frame is shown, each
    a tenth of a second later (it used to play every frame, three times slower)."""
    import time

    from webui.table.camera import LiveCamera

    path = tmp_path / "game.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (64, 48))
    for i in range(90):
        writer.write(np.full((48, 64, 3), i, np.uint8))
    writer.release()
    camera = LiveCamera(str(path), max_fps=10).start()
    seen = []
    try:
        deadline = time.monotonic() + 10
        while len({s for s in seen if s[0]}) < 4 and time.monotonic() < deadline:
            with camera._cond:
                seen.append((camera.frames_read, camera.frame_index))
            time.sleep(0.02)
    finally:
        camera.stop()
    shown = sorted({s for s in seen if s[0]})
    assert len(shown) >= 4
    # the k-th frame shown is the video's frame 3k - 1: the newest of each three read
    assert all(index == 3 * count - 1 for count, index in shown)


FIXTURE_VIDEO = Path(__file__).parent / "fixtures" / "render" / "videos" / "game-s16-paris-tokens" \
    / "game.mp4"


@pytest.mark.parametrize("keep,said", [(0.5, "ended after"), (0.02, "no frame could be decoded")])
def test_a_video_cut_short_says_so_at_its_end(tmp_path, keep, said):
    """A file cut short keeps the header that promises all its frames: OpenCV opens it and
    then decodes some frames or none. Its end says which, not a plain 'end of video'."""
    data = FIXTURE_VIDEO.read_bytes()
    path = tmp_path / "cut.mp4"
    path.write_bytes(data[:int(len(data) * keep)])
    src = open_source(str(path))
    while src.read() is not None:
        pass
    assert src.state is SourceState.ENDED and said in src.message
