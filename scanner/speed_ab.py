"""`royal-table cards bench --against DIR`: this checkout's reading speed against another's,
on the same frames, read in turn.

A shared machine's speed wanders by more than most changes save (sessions 45-46: runs of the
same code minutes apart differed by 10 ms), so two benches run one after the other compare
the machine, not the code. Here each checkout loads its own readers once in a worker process
of its own (its own `scanner`, `calibration` and `models` on its path), and the two take turns
reading the same set of photos or board frames, which one first turning round by round: both
see the same machine within seconds, and the paired differences (the same frame, the same
round) give the change's cost. The worker is given only long-standing calls (`cards_in_photo`,
`reader_in`, `TableScanner`, `CardPresence.default`, `Profile.load`), so an older checkout can
be measured.
"""

from __future__ import annotations

import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

# the worker, run with the checkout's root first on its path: reads `frames.pkl` (photos, and
# board frames with their profile files), then answers "photo I" / "frame I" with the CPU ms
_WORKER = r"""
import pickle, sys, time
import cv2
cv2.setNumThreads(1)
from calibration.profile import Profile
from scanner.card_corners import cards_in_photo
from scanner.card_presence import CardPresence
from scanner.card_reader import reader_in
from scanner.pipeline import TableScanner
photos, frames = pickle.load(open(sys.argv[1], "rb"))
reader = reader_in(None)
presence = CardPresence.default()
scanners = [TableScanner(Profile.load(p), reader, presence=presence) for _, p in frames]
for im in photos[:1]:
    cards_in_photo(im, reader)
for (im, _), sc in zip(frames, scanners):
    sc.scan(im)  # the first read fills the scanner's kept maps, as a camera's first frame
print("ready", flush=True)
for line in sys.stdin:
    what, i = line.split()
    i = int(i)
    t = time.process_time()
    if what == "photo":
        cards_in_photo(photos[i], reader)
    else:
        scanners[i].scan(frames[i][0])
    print(f"{(time.process_time() - t) * 1000:.4f}", flush=True)
"""


class _Worker:
    def __init__(self, root: Path, frames_file: Path):
        self.root = root
        env = dict(os.environ, PYTHONPATH=str(root), OMP_NUM_THREADS="1")
        self.proc = subprocess.Popen([sys.executable, "-c", _WORKER, str(frames_file)],
                                     cwd=root, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        ready = self.proc.stdout.readline().strip()
        if ready != "ready":
            self.close()
            raise RuntimeError(f"the readers of {root} did not load (see the error above)")

    def read(self, what: str, i: int) -> float:
        try:
            self.proc.stdin.write(f"{what} {i}\n")
            self.proc.stdin.flush()
            return float(self.proc.stdout.readline())
        except (BrokenPipeError, ValueError):  # it failed on this one (its error above)
            raise RuntimeError(f"the readers of {self.root} failed on {what} {i}") from None

    def close(self) -> None:
        try:
            if self.proc.stdin:
                self.proc.stdin.close()
        except BrokenPipeError:  # it has already gone
            pass
        self.proc.wait(timeout=60)


def _paired(mine: list[float], theirs: list[float]) -> dict:
    return {"this_ms_median": round(statistics.median(mine), 2),
            "other_ms_median": round(statistics.median(theirs), 2),
            "paired_difference_ms_median": round(
                statistics.median(a - b for a, b in zip(mine, theirs, strict=True)), 2),
            "reads": len(mine)}


def compare(other: Path, photos: list[np.ndarray], frames: list[tuple[np.ndarray, object]],
            rounds: int = 2, this: Path | None = None) -> dict:
    """Median CPU ms of this checkout (`this`, default the one running) and of `other` on each
    photo (`cards_in_photo`) and board frame (`TableScanner.scan`, frames given with their
    `Profile`), each read `rounds` times by both, alternately, and the median of the paired
    differences (this minus other: negative is faster)."""
    this = this or Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as tmp:
        framed = []
        for k, (image, profile) in enumerate(frames):
            path = Path(tmp) / f"profile-{k}.json"
            profile.save(path)
            framed.append((image, str(path)))
        data = Path(tmp) / "frames.pkl"
        data.write_bytes(pickle.dumps((photos, framed)))
        workers: list[_Worker] = []
        try:
            for root in (this, other):
                workers.append(_Worker(root, data))
            out = {}
            for what, n in (("photo", len(photos)), ("frame", len(frames))):
                mine, theirs = [], []
                for r in range(rounds):
                    # each reads the whole set in turn, who first turning round by round: a
                    # read right after the other process's has cold caches, which cost the
                    # checkout with the larger working set more (2-3 ms a frame here)
                    t = {w: [workers[w].read(what, i) for i in range(n)]
                         for w in ((0, 1) if r % 2 == 0 else (1, 0))}
                    mine += t[0]
                    theirs += t[1]
                if n:
                    out[what] = _paired(mine, theirs)
        finally:
            for w in workers:
                w.close()
    return out


def report(result: dict, other: Path, log=print) -> None:
    names = {"photo": "cards on a 640x640 photo", "frame": "full read of a board frame"}
    for what, r in result.items():
        log(f"  {names[what]}: this checkout {r['this_ms_median']:.2f} ms, {other} "
            f"{r['other_ms_median']:.2f} ms median CPU; paired difference "
            f"{r['paired_difference_ms_median']:+.2f} ms ({r['reads']} reads each, alternately)")
