"""`royal-table cards bench`: the figures the model card records, measured, never assumed.

1. Held-out card designs, rendered stills (random positions, random camera, light and table):
   per visible card, read right / answered / answered right; the profile comes from the true
   camera so this measures the reader, not the registration.
2. Registration: set-up stills (held-out designs) registered from the finder's quads, compared
   with the true camera.
3. Real photographs (real-cards-dev): recall and precision of `cards`, matching the YOLO boxes.
4. Speed: median scan of a 1280x720 frame (board check + 35 cells + 2 initiative cards) and of
   `cards` on a 640x640 photo, one core.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from pathlib import Path

import numpy as np

from calibration.geometry import CELLS, SETUP_CELLS, cell_xy
from calibration.profile import Profile

REAL_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "real-cards-dev"
PITCH = (7.5, 10.0)  # the renderer's cell pitch in cm


def truth_profile(truth: dict) -> Profile:
    """The exact profile of a rendered still, from its camera."""
    cam = truth["camera"]
    K = np.array(cam["K"])
    R = np.array(cam["R"])
    t = np.array(cam["t"])
    S = np.array([[PITCH[0], 0, -3 * PITCH[0]], [0, PITCH[1], -2 * PITCH[1]], [0, 0, 1]])
    H = K @ np.column_stack([R[:, 0], R[:, 1], t]) @ S
    dist = np.array(cam["dist"], np.float64)
    return Profile(H=H / H[2, 2], image_size=(truth["width"], truth["height"]),
                   card_size=(6.3 / PITCH[0], 8.8 / PITCH[1]),
                   K=K if np.any(dist) else None, dist=dist if np.any(dist) else None,
                   method="truth")


def random_position(rng: np.random.Generator, fill: float = 0.85) -> dict:
    from models.renderer.assets import ALL_CODES

    board = {}
    for cell in CELLS:
        if rng.random() < fill:
            n = 1 + int(rng.random() < 0.2)
            board[cell] = {"cards": [str(rng.choice(ALL_CODES)) for _ in range(n)],
                           "orientation": "landscape" if rng.random() < 0.2 else "portrait"}
    return {"board": board, "initiative": {"white": str(rng.choice(ALL_CODES)),
                                           "black": str(rng.choice(ALL_CODES))}}


def setup_position(rng: np.random.Generator) -> dict:
    from models.renderer.assets import ALL_CODES

    codes = [c for c in ALL_CODES if not c.startswith("A") and c != "JK"]
    return {"board": {c: {"cards": [str(rng.choice(codes))]} for c in SETUP_CELLS},
            "initiative": {"white": str(rng.choice(codes)), "black": str(rng.choice(codes))}}


TIMED_READS = 5  # reads of each still timed for the speed figure


def heldout_stills(n: int, seed: int, size: tuple[int, int] = (1280, 720),
                   designs: list[str] | None = None):
    """The bench's rendered stills of the held-out card designs (or of `designs`), in order:
    (scene, render) for a random position each."""
    from models.renderer import Scene, render_scene

    rng = np.random.default_rng(seed)
    for i in range(n):
        scene = Scene.random(seed * 1000 + i, split="heldout", width=size[0], height=size[1],
                             designs=designs)
        yield scene, render_scene(random_position(rng), scene)


def bench_stills(n: int, seed: int, log=print, size: tuple[int, int] = (1280, 720),
                 models: Path | None = None, designs: list[str] | None = None) -> dict:
    """Rendered stills of the held-out card designs (or of `designs`), each board read once:
    the reader's figures per visible card, empty cells and initiative cards, and its speed."""
    from .card_presence import CardPresence
    from .card_reader import reader_in
    from .pipeline import TableScanner

    reader = reader_in(models)
    presence = CardPresence.default()  # one model for every still, as one reader
    visible = right = answered = answered_right = 0
    empty_ok = empty_n = false_cards = init_n = init_right = 0
    times, cpu = [], []
    for i, (scene, res) in enumerate(heldout_stills(n, seed, size, designs)):
        profile = truth_profile(res.truth)
        scanner = TableScanner(profile, reader, presence=presence)
        # the first read is scored; every read is timed (a camera shows the scanner the same
        # board frame after frame, and one read per still is too few for a steady median on a
        # shared machine)
        for k in range(TIMED_READS):
            t, c = time.perf_counter(), time.process_time()
            read = scanner.scan(res.image)
            times.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
            if k == 0:
                reading = read
        for cell, tr in res.truth["cells"].items():
            got = reading.cells.get(cell)
            if tr["card"] is None:
                empty_n += 1
                if got is not None and got.empty:
                    empty_ok += 1
                elif got is not None and got.card is not None and got.card.card is not None:
                    false_cards += 1
                continue
            if tr.get("in_frame", 0) < 1.0 or tr.get("visible_fraction", 0) < 0.5:
                continue
            visible += 1
            card = got.card.card if got is not None and got.card is not None else None
            if card is not None:
                answered += 1
                answered_right += card == tr["card"]
            right += card == tr["card"]
        for side, tr in res.truth["initiative"].items():
            if tr is None:
                continue
            uv = np.array(tr["corners"])
            if not ((uv >= 0).all() and (uv[:, 0] < res.truth["width"]).all()
                    and (uv[:, 1] < res.truth["height"]).all()):
                continue
            init_n += 1
            got = reading.initiative.get(side)
            init_right += got is not None and got.card == tr["card"]
        log(f"  still {i + 1}/{n}: {scene.design_white}/{scene.design_black}, "
            f"{reading.timings_ms.get('total', 0):.0f} ms")
    return {"stills": n, "visible_cards": visible, "read_right": right,
            "accuracy": right / max(visible, 1), "answered": answered,
            "answered_precision": answered_right / max(answered, 1),
            "empty_cells": empty_n, "empty_right": empty_ok, "false_cards_on_empty": false_cards,
            "initiative_visible": init_n, "initiative_right": init_right,
            "scan_ms_median": statistics.median(times) if times else math.nan,
            "scan_cpu_ms_median": statistics.median(cpu) if cpu else math.nan,
            "timed_reads": len(cpu)}


def bench_registration(n: int, seed: int, log=print) -> dict:
    from calibration.register import RegistrationError, register_from_cards
    from models.renderer import Scene, render_scene

    from .card_presence import CardPresence, find_setup_cards

    presence = CardPresence.default()  # one model for every still
    rng = np.random.default_rng(seed + 17)
    ok = found = in_view = found_in_view = flipped = 0
    errs, times = [], []
    for i in range(n):
        scene = Scene.random(seed * 1000 + 500 + i, split="heldout")
        res = render_scene(setup_position(rng), scene)
        all_in = all(res.truth["cells"][c].get("in_frame", 0) == 1.0 for c in SETUP_CELLS)
        in_view += all_in
        t = time.perf_counter()
        try:
            try:
                prof = register_from_cards(find_setup_cards(res.image, presence=presence),
                                           (scene.width, scene.height))
            except RegistrationError:  # as `calibrate board` does: again at full resolution
                prof = register_from_cards(
                    find_setup_cards(res.image, max_side=4096, presence=presence),
                    (scene.width, scene.height))
        except RegistrationError:
            times.append((time.perf_counter() - t) * 1000)
            continue
        times.append((time.perf_counter() - t) * 1000)
        found += 1
        found_in_view += all_in
        truth = truth_profile(res.truth)
        pts = np.array([cell_xy(c) for c in CELLS])
        pitch = np.linalg.norm(np.diff(truth.board_to_image(np.array([[3, 2], [4, 2]])), axis=0))
        e = np.linalg.norm(prof.board_to_image(pts) - truth.board_to_image(pts), axis=1)
        worst = float(e.max() / pitch)
        e180 = np.linalg.norm(prof.board_to_image(pts) - truth.board_to_image([6, 4] - pts), axis=1)
        flipped += float(e180.max() / pitch) < 0.15
        errs.append(worst)
        ok += worst < 0.15
    return {"setup_stills": n, "all_setup_cards_in_frame": in_view,
            "registered_of_those": found_in_view, "registered": found, "right": ok,
            "turned_180": flipped,
            "worst_cell_error_median": statistics.median(errs) if errs else math.nan,
            "register_ms_median": statistics.median(times) if times else math.nan}


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[2], b[2]), min(a[3], b[3])
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / ua if ua > 0 else 0.0


def _yolo_code(name: str) -> str:
    rank, suit = name.replace("  ", " ").split(" of ")
    r = {"ace": "A", "jack": "J", "queen": "Q", "king": "K"}.get(rank, rank)
    return r + suit[0].upper()


def bench_real(folder: Path, limit: int | None, log=print, models: Path | None = None,
               by_corners: bool = True) -> dict:
    """Recall and precision of `cards` on the real photographs. The headline figures are on
    the source photos training may never use (`models.real_photos.fit_source`); the same
    figures over every photo are under `all_sources` (the figure recorded before session 19),
    and those of the photos choices are made on under `fit_sources`. `by_corners`: also the
    cards only a corner of which shows (`card_corners.cards_in_photo`)."""
    import cv2

    from models.real_photos import fit_source, source_of

    from .card_corners import cards_in_photo
    from .card_reader import reader_in

    names = _class_names(folder / "classes.yaml")
    reader = reader_in(models)
    files = sorted((folder / "images").glob("*.jpg"))
    if limit:
        files = files[:limit]
    counts = {half: dict.fromkeys(("images", "labelled", "found", "answered", "right",
                                   "wrong", "stray"), 0) for half in ("measured", "fit", "all")}
    sources: dict[str, set] = {"measured": set(), "fit": set(), "all": set()}
    diag_votes = {"nw-se": 0, "ne-sw": 0}
    times, cpu = [], []
    for f in files:
        img = cv2.imread(str(f))
        if img is None:
            continue
        source = source_of(f.name)
        halves = ("all", "fit") if fit_source(source) else ("all", "measured")
        h, w = img.shape[:2]
        boxes = []
        lab = folder / "labels" / (f.stem + ".txt")
        for line in lab.read_text().split("\n") if lab.exists() else []:
            p = line.split()
            if len(p) == 5:
                k, cx, cy, bw, bh = int(p[0]), *map(float, p[1:])
                boxes.append((_yolo_code(names[k]), np.array([(cx - bw / 2) * w, (cy - bh / 2) * h,
                                                              (cx + bw / 2) * w,
                                                              (cy + bh / 2) * h])))
        t, c = time.perf_counter(), time.process_time()
        readings = cards_in_photo(img, reader, by_corners)
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        n = dict.fromkeys(("found", "answered", "right", "wrong", "stray"), 0)
        used = set()
        # answers first, surest first (as detections are matched by confidence): an unread
        # outline must not take the label of the card an answer names
        for r in sorted(readings, key=lambda r: (r.card is None, -r.confidence)):
            q = r.corners
            bb = np.array([q[:, 0].min(), q[:, 1].min(), q[:, 0].max(), q[:, 1].max()])
            best, bi = 0.0, -1
            for j, (_, b) in enumerate(boxes):
                v = _iou(bb, b)
                if v > best and j not in used:
                    best, bi = v, j
            if r.card is None and max((_iou(bb, b) for _, b in boxes), default=0.0) < 0.1:
                n["stray"] += 1  # an unread card reported where none is labelled
            if r.card is not None:
                n["answered"] += 1
                if r.digit_corners and r.orientation:
                    diag_votes[r.digit_corners] += 1
            if best >= 0.5:
                used.add(bi)
                n["found"] += 1
                if r.card is not None:
                    n["right" if r.card == boxes[bi][0] else "wrong"] += 1
            elif r.card is not None:
                n["wrong"] += 1  # a card answer where no labelled card is
        for half in halves:
            sources[half].add(source)
            counts[half]["images"] += 1
            counts[half]["labelled"] += len(boxes)
            for k, v in n.items():
                counts[half][k] += v

    def figures(half: str) -> dict:
        c = counts[half]
        return {"images": c["images"], "sources": len(sources[half]),
                "labelled_cards": c["labelled"], "found": c["found"],
                "answered": c["answered"], "read_right": c["right"], "wrong": c["wrong"],
                "unread_where_no_card": c["stray"],
                "detection_recall": c["found"] / max(c["labelled"], 1),
                "recall": c["right"] / max(c["labelled"], 1),
                "precision": c["right"] / max(c["right"] + c["wrong"], 1)}

    return {**figures("measured"), "all_sources": figures("all"), "fit_sources": figures("fit"),
            "index_diagonal_votes": diag_votes,
            "cards_ms_median": statistics.median(times) if times else math.nan,
            "cards_cpu_ms_median": statistics.median(cpu) if cpu else math.nan}


def _class_names(path: Path) -> list[str]:
    for line in path.read_text().splitlines():
        if line.startswith("names:"):
            import ast

            return list(ast.literal_eval(line.split(":", 1)[1].strip()))
    raise ValueError(f"no names in {path}")


def bench_candidates(n: int, seed: int, log=print, models: Path | None = None) -> dict:
    """How far an unsure card's best candidate can be trusted (what the tracker weighs against
    the rules): on validation-design cards the reader left unsure, the share whose top
    candidate is right at each candidate probability, small (22-60 px) and larger cards.
    Needs the 'train' extra's data code only (no torch)."""
    from models.cards.dataset import CLASSES
    from models.cards.face import paired_validation
    from models.cards.train import VAL_DESIGNS

    from .card_reader import reader_in

    reader = reader_in(models)
    out: dict = {}
    for name, widths in (("small", (22.0, 60.0)), ("large", (44.0, 130.0))):
        crops, _labels, faces, classes = paired_validation(seed, n, VAL_DESIGNS, widths)
        corner = reader.classify(crops).reshape(len(faces), 4, -1)
        fuse = reader.face_session is not None and widths[1] <= reader.face_below_px
        whole = reader.classify_faces(faces) if fuse else [None] * len(faces)
        rows = []
        for i in range(len(faces)):
            if classes[i] >= reader.n_cards:
                continue
            card, down, _, _, cands = reader.decide(corner[i], whole[i])
            if card is None and not down and cands:
                truth = CLASSES[classes[i]]
                rows.append((cands[0][1], cands[0][0] == truth, any(c == truth for c, _ in cands)))
        arr = np.array(rows, float).reshape(-1, 3)
        entry = {"unsure": len(arr), "truth_among_candidates": float(arr[:, 2].mean())
                 if len(arr) else 0.0, "top1_right_at": {}}
        for t in (0.5, 0.7, 0.9, 0.95):
            m = arr[:, 0] >= t
            entry["top1_right_at"][t] = (int(m.sum()), float(arr[m, 1].mean()) if m.any() else 0.0)
        out[name] = entry
        log(f"  {name} cards {widths[0]:.0f}-{widths[1]:.0f} px: {entry['unsure']} left unsure, "
            f"truth among the 3 candidates {100 * entry['truth_among_candidates']:.1f} %; top "
            "candidate right: " + ", ".join(f"p >= {t}: {100 * r:.1f} % of {k}" for t, (k, r)
                                            in entry["top1_right_at"].items()))
    return out


def bench_against(other: Path, stills: int, seed: int, real: Path | None, limit: int | None,
                  log=print, size: tuple[int, int] = (1280, 720), rounds: int = 2,
                  designs: list[str] | None = None) -> dict:
    """This checkout's speed against `other`'s on the bench's own stills (`heldout_stills`)
    and real photos (every few of them, `limit` at most), read alternately
    (`scanner.speed_ab`)."""
    import cv2

    from .speed_ab import compare, report

    frames = [(res.image, truth_profile(res.truth))
              for _, res in heldout_stills(stills, seed, size, designs)]
    photos = []
    if real is not None and (real / "images").is_dir():
        files = sorted((real / "images").glob("*.jpg"))
        step = max(1, len(files) // (limit or 100))
        photos = [img for f in files[::step][:limit or 100]
                  if (img := cv2.imread(str(f))) is not None]
    log(f"speed against {other}: {len(frames)} held-out {size[0]}x{size[1]} stills, "
        f"{len(photos)} real photos, each read {rounds} times by both checkouts in turn")
    out = compare(other, photos, frames, rounds)
    report(out, other, log)
    return out


def run(stills: int, setups: int, real: Path | None, limit: int | None, seed: int,
        log=print, size: tuple[int, int] = (1280, 720), models: Path | None = None,
        candidates: int = 0, designs: list[str] | None = None) -> dict:
    import cv2

    cv2.setNumThreads(1)  # the bar is on one core
    out: dict = {}
    log("times: CPU time of this process (one core: OpenCV and onnxruntime single-threaded) and "
        f"wall time; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if stills:
        log(f"{'designs ' + ', '.join(designs) if designs else 'held-out designs'}, {stills} "
            f"rendered {size[0]}x{size[1]} stills:")
        out["stills"] = s = bench_stills(stills, seed, log, size, models, designs)
        log(f"  visible cards {s['visible_cards']}: read right {100 * s['accuracy']:.2f} % "
            f"(bar 99.5 %); answered {s['answered']}, of them right "
            f"{100 * s['answered_precision']:.2f} % (bar 99.9 %)")
        log(f"  empty cells {s['empty_right']}/{s['empty_cells']} seen empty, "
            f"{s['false_cards_on_empty']} card answers on empty cells; initiative "
            f"{s['initiative_right']}/{s['initiative_visible']}")
        log(f"  scan of a {size[0]}x{size[1]} frame (board check + 35 cells + 2 initiative): "
            f"median of {s['timed_reads']} reads "
            f"{s['scan_cpu_ms_median']:.1f} ms CPU on one core, {s['scan_ms_median']:.1f} ms wall "
            "(bar 30 ms)")
    if candidates:
        log(f"unsure cards' candidates, {candidates} validation-design cards per size:")
        out["candidates"] = bench_candidates(candidates, seed, log, models)
    if setups:
        log(f"registration from the set-up cards, {setups} held-out stills:")
        out["registration"] = r = bench_registration(setups, seed, log)
        log(f"  all 8 set-up cards in frame in {r['all_setup_cards_in_frame']}; registered "
            f"{r['registered']}/{r['setup_stills']} ({r['registered_of_those']} of those), right "
            f"(every cell within 0.15 pitch) {r['right']}, turned 180° {r['turned_180']}; "
            "median worst cell error "
            f"{r['worst_cell_error_median']:.3f} pitch; median {r['register_ms_median']:.0f} ms "
            "(find + fit)")
    if real is not None:
        if not (real / "images").is_dir():
            log(f"  (skipped real photographs: {real}/images not found)")
        else:
            log(f"real photographs: {real}")
            out["real"] = r = bench_real(real, limit, log, models)
            for what, f in (("source photos training never uses", r),
                            ("source photos choices are made on", r["fit_sources"]),
                            ("all source photos", r["all_sources"])):
                log(f"  {what}: {f['images']} images from {f['sources']} sources, "
                    f"{f['labelled_cards']} labelled cards: found "
                    f"{100 * f['detection_recall']:.1f} %, recall {100 * f['recall']:.1f} %, "
                    f"precision {100 * f['precision']:.2f} % (aim 98 %); "
                    f"{f['unread_where_no_card']} unread cards reported where none is labelled")
            log(f"  index diagonal of answered cards (image frame; ne-sw = mirrored photo or "
                f"landscape card): {r['index_diagonal_votes']}")
            log(f"  cards on a 640x640 photo: median {r['cards_cpu_ms_median']:.1f} ms CPU on one "
                f"core, {r['cards_ms_median']:.1f} ms wall (bar 50 ms)")
    return out

