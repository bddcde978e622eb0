"""The GPU recipe of the piece classifier (`models.pieces.gpu_train`), checked on the CPU: the
pack decodes to the renderer's cache byte for byte and holds no held-out asset, a training
scene renders from it alone as from the cache, two workers make the same crops from a chunk,
the device's augmentation is the CPU recipe's, and a tiny run exports a model the scanner
reads (needs the 'train' extra; skipped without torch)."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the training extra: pip install torch==2.13.0")
pytest.importorskip("onnx", reason="the training extra: pip install onnx")

PACK_DESIGN, PACK_SET = "gnome-anglo", "dreamchess"


@pytest.fixture(scope="module")
def small_pack(tmp_path_factory):
    """One training design and one training set, packed and unpacked."""
    from models.pieces.gpu_train import pack, unpack

    root = tmp_path_factory.mktemp("gpu-pack")
    manifest = pack(root / "pack", [PACK_DESIGN], [PACK_SET], log=lambda *_: None)
    n = unpack(root / "pack", root / "cache")
    return root, manifest, n


def test_augmentation_on_the_device_draws_as_the_cpu_recipe():
    from models.pieces.gpu_train import augment_gpu
    from models.pieces.train import _augment

    x = torch.rand(256, 3, 96, 64) * 0.6 + 0.2
    for defocus in (0.0, 0.5):
        a = augment_gpu(x.clone(), torch.Generator().manual_seed(3), defocus)
        assert torch.allclose(a, _augment(x.clone(), torch.Generator().manual_seed(3), defocus),
                              atol=1e-5)
        assert not torch.equal(a, augment_gpu(x.clone(), torch.Generator().manual_seed(4),
                                              defocus))
        assert ((a - x).abs().flatten(1).mean(1) > 0.01).all()


def test_chunks_begin_with_the_cpu_recipes_scenes_and_stay_clear_of_held_out_seeds():
    from models.pieces.gpu_train import VAL_SEED0, chunks, part_shares, val_chunks
    from models.pieces.train import HELDOUT_SEED0, PROC_SEED0, TOP_DOWN, TOP_DOWN_SEED0

    todo = chunks(4000)
    seeds = [s for c in todo for s in c.seeds]
    assert len(seeds) == len(set(seeds)) == 4000
    assert max(seeds) < VAL_SEED0 < HELDOUT_SEED0
    first = {}
    for c in todo:
        first.setdefault(c.part, c)
    assert first["sets"].seeds == (0, 1) and not first["sets"].procedural
    assert first["proc"].seeds == (PROC_SEED0, PROC_SEED0 + 1) and first["proc"].procedural
    assert first["sets-above"].seeds[0] == TOP_DOWN_SEED0
    assert first["sets-above"].elevation == first["proc-above"].elevation == TOP_DOWN
    early = todo[:len(todo) // 10]  # whatever is made first is a mix in the parts' shares
    for part, share in part_shares(0.65, 0.3).items():
        assert sum(c.part == part for c in early) / len(early) == pytest.approx(share, abs=0.02)
    val = [s for c in val_chunks(60) for s in c.seeds]
    assert len(val) == 60 and not set(val) & set(seeds)
    assert VAL_SEED0 <= min(val) and max(val) < HELDOUT_SEED0
    with pytest.raises(ValueError):  # seeds would run into the next part's
        chunks(400_000)


def test_a_run_that_goes_on_from_another_sees_new_scenes_only():
    from models.pieces.gpu_train import PARTS, chunks

    first = {s for c in chunks(4000) for s in c.seeds}
    later = chunks(4000, skip=4000)
    seeds = [s for c in later for s in c.seeds]
    assert len(seeds) == 4000 and not set(seeds) & first
    start = {p.name: p.seed0 for p in PARTS}
    for c in later:  # each part goes on right after the first run's share of its seeds
        assert c.seeds[0] >= start[c.part] + len([s for d in chunks(4000) if d.part == c.part
                                                  for s in d.seeds])
    with pytest.raises(ValueError):
        chunks(4000, skip=390_000)


def test_the_pack_decodes_to_the_cache_byte_for_byte(small_pack):
    import cv2

    from models.renderer.assets import cache_dir

    root, manifest, n = small_pack
    images = manifest["images"]
    assert n == images[f"cards/{PACK_DESIGN}"] + images[f"pieces/{PACK_SET}"]
    assert images[f"pieces/{PACK_SET}"] == 728 and images[f"cards/{PACK_DESIGN}"] == 55
    for kind, name in (("cards", PACK_DESIGN), ("pieces", PACK_SET)):
        mine = sorted((root / "cache" / kind / name).glob("*.png"))
        assert len(mine) == manifest["images"][f"{kind}/{name}"]
        for f in mine:
            ref = cache_dir() / kind / name / f.name
            assert np.array_equal(cv2.imread(str(f), cv2.IMREAD_UNCHANGED),
                                  cv2.imread(str(ref), cv2.IMREAD_UNCHANGED)), f.name
            if kind == "pieces":  # the anchors, as written
                assert f.with_suffix(".txt").read_text() == ref.with_suffix(".txt").read_text()


def test_the_pack_holds_training_assets_only(small_pack, tmp_path):
    from models.pieces.gpu_train import pack, pack_contents
    from models.renderer.assets import split

    sp = split()
    designs, sets = pack_contents()
    assert designs == sp["cards"]["train"] and sets == sp["pieces"]["train"]
    assert not set(designs) & set(sp["cards"]["heldout"]) and "lathe" not in sets
    for bad in ({"designs": ["gnome-tango"]}, {"designs": ["gnome-anglo_modern_4_color"]},
                {"sets": ["lathe"]}, {"sets": ["proc-500000"]}):
        with pytest.raises(ValueError):
            pack(tmp_path / "no", **{"designs": [], "sets": [], **bad}, log=lambda *_: None)
    root = small_pack[0]
    names = {p.name for p in (root / "pack").rglob("*")} | \
        {p.name for p in (root / "cache").rglob("*")}
    assert not names & set(sp["cards"]["heldout"] + sp["pieces"]["heldout"])


def test_a_training_scene_renders_from_the_pack_alone(small_pack, monkeypatch):
    """The device has no Debian package: no rsvg, no card SVGs, no mesh files."""
    from models.pieces.gpu_train import FULL, Chunk, render_chunk
    from models.renderer import Scene, assets, pieces

    seed = next(s for s in range(20000) if (lambda sc: sc.piece_set == PACK_SET and {
        sc.design_white, sc.design_black} == {PACK_DESIGN})(Scene.random(s, "train")))
    chunk = Chunk("sets", (seed,), False, FULL, distractors=0.12)
    here, _ = render_chunk(chunk)

    def clear():
        for f in (assets.card_image, pieces.sprite, pieces.load_set, pieces.height,
                  pieces.base_radius):
            f.cache_clear()

    root = small_pack[0]
    monkeypatch.setenv("ROYAL_TABLE_CACHE", str(root / "cache"))
    monkeypatch.setattr(assets.shutil, "which", lambda *_: None)
    monkeypatch.setitem(assets.split()["cards"]["designs"][PACK_DESIGN], "svg", "/nonexistent")
    monkeypatch.setitem(pieces.PIECE_SETS, PACK_SET,
                        {**pieces.PIECE_SETS[PACK_SET], "dir": "/nonexistent"})
    clear()
    try:
        there, _ = render_chunk(chunk)
    finally:
        monkeypatch.undo()
        clear()
    assert len(there.y) > 20 and (there.piece_set == "distractor").any()
    assert np.array_equal(there.X, here.X) and np.array_equal(there.y, here.y)


def test_two_workers_make_the_same_crops_from_a_chunk(tmp_path):
    import multiprocessing as mp
    import shutil
    from concurrent.futures import ProcessPoolExecutor

    from models.pieces.data import generate
    from models.pieces.gpu_train import FULL, REAL_TOLERANCE, Chunk, encode_real, render_chunk
    from models.pieces.train import PROC_SEED0
    from models.renderer.assets import cache_dir

    seed = PROC_SEED0 + 99_001  # a procedural set built afresh by both workers at once
    shutil.rmtree(cache_dir() / "pieces" / f"proc-{seed}", ignore_errors=True)
    chunk = Chunk("proc", (seed,), True, FULL, distractors=0.12)
    with ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        (a, _), (b, _) = ex.map(render_chunk, [chunk, chunk])
    assert len(a.y) > 20
    for f in ("X", "y", "piece_set", "frame", "elevation"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    cpu = generate([seed], "train", procedural=True)  # the CPU recipe's crops of that scene
    assert np.array_equal(a.X[:len(cpu.y)], cpu.X) and np.array_equal(a.y[:len(cpu.y)], cpu.y)
    assert (a.piece_set == "distractor").sum() == round(0.12 * len(cpu.y))
    assert (a.y[len(cpu.y):] == 0).all()
    # the real crops' lossy codec keeps to its stated tolerance on crops like these
    import cv2

    for x in a.X[:40]:
        back = cv2.imdecode(encode_real(x), cv2.IMREAD_COLOR)
        assert np.abs(back.astype(np.int16) - x).mean() <= REAL_TOLERANCE


def test_only_the_trainable_half_of_real_photos_is_packed(tmp_path):
    import cv2

    from models.pieces.gpu_train import load_real, pack_real
    from models.real_photos import fit_source

    root = tmp_path / "real"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    (root / "classes.yaml").write_text("nc: 2\nnames: ['white-king', 'black-pawn']\n")
    names = [f"src{i}" for i in range(12)]
    fit = [n for n in names if fit_source(n)]
    assert 0 < len(fit) < len(names)
    rng = np.random.default_rng(0)
    for n in names:
        photo = cv2.GaussianBlur(rng.integers(0, 256, (240, 240, 3), dtype=np.uint8), (0, 0), 4)
        cv2.imwrite(str(root / "images" / f"{n}_jpg.rf.1.jpg"), photo)
        (root / "labels" / f"{n}_jpg.rf.1.txt").write_text("0 0.5 0.5 0.3 0.6\n1 0.3 0.4 0.2 0.4\n")
    (tmp_path / "pack").mkdir()
    info = pack_real(tmp_path / "pack", root)
    assert info["crops"] == 2 * len(fit) and info["of_crops"] == 2 * len(names)
    X, y = load_real(tmp_path / "pack")
    assert X.shape == (2 * len(fit), 96, 64, 3) and sorted(set(y.tolist())) == [6, 7]
    src = np.load(tmp_path / "pack" / "real.npz")["source"]
    assert set(src.tolist()) == set(fit)


def test_a_tiny_cpu_run_exports_a_model_the_scanner_reads(tmp_path, monkeypatch):
    from models.pieces.gpu_train import main
    from scanner.piece_classifier import CLASSES, PieceClassifier

    monkeypatch.setenv("OUT", str(tmp_path / "out"))
    assert main(["train", "--workers", "1", "--gen-only", "3", "--train", "3", "--stop-gen", "5",
                 "--val-scenes", "2", "--scenes-per-chunk", "1", "--batch", "16",
                 "--eval-every", "1", "--max-scenes", "40", "--device", "cpu"]) == 0
    out = tmp_path / "out"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] > 0 and summary["scenes"] > 0 and summary["crops"] > 20
    assert summary["val_crops"] > 0 and 0 <= summary["val"]["top1"] <= 1
    assert summary["losses"] and "generation stopped" in (out / "log.txt").read_text()
    assert main(["export", str(out / "pieces.pt"), str(tmp_path / "model"),
                 str(out / "summary.json")]) == 0
    clf = PieceClassifier(tmp_path / "model" / "piece_classifier.onnx")
    assert clf.has_features and clf.base_prototypes.shape == (len(CLASSES), 64)
    crop = np.random.default_rng(1).integers(0, 256, (1, 96, 64, 3), dtype=np.uint8)
    reading = clf.classify_crops(crop)[0]
    assert reading.piece is None or reading.piece in CLASSES
    assert json.loads((tmp_path / "model" / "gpu_run.json").read_text())["steps"] == \
        summary["steps"]
    # a second run goes on from the first's weights: before its first step it reads as they do
    import torch

    monkeypatch.setenv("OUT", str(tmp_path / "out2"))
    assert main(["train", "--workers", "1", "--gen-only", "3", "--train", "0", "--stop-gen", "5",
                 "--val-scenes", "2", "--scenes-per-chunk", "1", "--batch", "16",
                 "--max-scenes", "40", "--skip-scenes", "40", "--device", "cpu",
                 "--init", str(out / "pieces.pt")]) == 0
    again = json.loads((tmp_path / "out2" / "summary.json").read_text())
    assert again["steps"] == 0 and again["init"] == str(out / "pieces.pt")
    assert again["val"] == summary["val"]
    a, b = (torch.load(d / "pieces.pt", weights_only=True) for d in (out, tmp_path / "out2"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
