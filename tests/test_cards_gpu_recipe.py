"""The GPU recipe of the index reader (`models.cards.gpu_index`), checked on the CPU: its
augmentation is the CPU recipe's, its schedule torch's one-cycle, and the packed rasters decode
to the renderer's cache byte for byte (needs the 'train' extra; skipped without torch)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the training extra: pip install torch==2.13.0")


def test_gpu_augmentation_is_seeded_and_looks_like_the_cpu_one():
    from models.cards.gpu_index import augment_gpu
    from models.cards.train import augment_index

    x = torch.randn(2048, 3, 52, 32)
    a = augment_gpu(x.clone(), torch.Generator().manual_seed(3))
    b = augment_gpu(x.clone(), torch.Generator().manual_seed(3))
    c = augment_gpu(x.clone(), torch.Generator().manual_seed(4))
    assert a.shape == x.shape and torch.isfinite(a).all()
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert ((a - x).abs().flatten(1).mean(1) > 0.05).all()
    ref = augment_index(torch.Generator().manual_seed(3))(x.clone())
    change, ref_change = (a - x).abs().mean(), (ref - x).abs().mean()
    assert abs(float(change / ref_change) - 1) < 0.05
    assert abs(float(a.std() / ref.std()) - 1) < 0.05


def test_one_cycle_is_torchs_schedule():
    from models.cards.gpu_index import one_cycle

    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.AdamW([p], lr=3e-3)
    steps = 1000
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    for i in range(steps):
        if i % 97 == 0:
            lr, beta1 = one_cycle(i / (steps - 1), 3e-3)
            assert lr == pytest.approx(opt.param_groups[0]["lr"], rel=0.02, abs=1e-7)
            assert beta1 == pytest.approx(opt.param_groups[0]["betas"][0], abs=0.005)
        opt.step()
        sched.step()


def test_packed_rasters_decode_to_the_cache_byte_for_byte(tmp_path):
    import cv2
    import numpy as np

    from models.cards.gpu_index import _unpack_deck, pack
    from models.renderer.assets import cache_dir

    pack(tmp_path / "pack", ["gnome-anglo"], fonts=False)
    cached = sorted((cache_dir() / "cards" / "gnome-anglo").glob("*.png"))
    n = _unpack_deck((str(tmp_path / "pack"), str(tmp_path / "cache"), "gnome-anglo"))
    assert n == len(cached) >= 53
    for f in cached[:12]:
        mine = cv2.imread(str(tmp_path / "cache" / "cards" / "gnome-anglo" / f.name),
                          cv2.IMREAD_UNCHANGED)
        assert np.array_equal(mine, cv2.imread(str(f), cv2.IMREAD_UNCHANGED))
    with pytest.raises(ValueError):
        pack(tmp_path / "no", ["gnome-plastic"], fonts=False)


def test_normalise_on_the_device_is_the_readers():
    import numpy as np

    from models.cards.gpu_index import normalise_gpu
    from scanner.rectify import normalise

    x = np.random.default_rng(0).integers(0, 256, (64, 42, 30, 3), dtype=np.uint8)
    assert np.allclose(normalise_gpu(torch.from_numpy(x)).numpy(), normalise(x), atol=1e-5)


def test_whole_cards_either_end_up_as_face_py():
    from models.cards.gpu_index import either_end_up_gpu, face_looks

    x = torch.randn(1000, 3, 42, 30)
    a = either_end_up_gpu(x, torch.Generator().manual_seed(5))
    assert torch.equal(a, either_end_up_gpu(x, torch.Generator().manual_seed(5)))
    turned = (a == x.flip(2, 3)).flatten(1).all(1)
    assert torch.equal(turned | (a == x).flatten(1).all(1), torch.ones(1000, dtype=torch.bool))
    assert 400 < int(turned.sum()) < 600
    looks = face_looks(["plain", "photo"], torch.Generator().manual_seed(5))
    assert torch.equal(looks["plain"](x), x)
    y = looks["photo"](x.clone())
    assert y.shape == x.shape and not torch.equal(y, x)
    with pytest.raises(ValueError):
        face_looks(["sharp"], torch.Generator())


def test_whole_card_chunks_start_with_the_cpu_recipes_data():
    from models.cards.dataset import PROCEDURAL
    from models.cards.face import FACE_SIZE, WIDTHS
    from models.cards.gpu_index import face_chunks
    from models.cards.train import seeded_chunks

    decks = ["gnome-anglo", "gnome-paris"]
    chunks = face_chunks(11, 40000, decks)
    cpu = seeded_chunks(11, 40000, tuple(decks), WIDTHS, FACE_SIZE) + \
        seeded_chunks(111, 20000, (PROCEDURAL,), WIDTHS, FACE_SIZE)
    assert sorted(chunks) == sorted(cpu)
    assert [c[2] for c in chunks[:3]] == [tuple(decks), (PROCEDURAL,), tuple(decks)]
    bigger = face_chunks(11, 400000, decks)
    assert set(cpu) <= set(bigger)
    first = bigger[:len(bigger) // 10]  # whatever is made first is a mix, 2 deck cards : 1
    assert sum(c[2] == (PROCEDURAL,) for c in first) / len(first) == pytest.approx(1 / 3, abs=0.01)
    with pytest.raises(ValueError):  # chunk seeds would reach the validation set's (12000+)
        face_chunks(11, 600000, decks)


def test_an_ensemble_of_index_readers_reads_as_one_with_the_mean_of_their_scores(tmp_path):
    import numpy as np
    import onnxruntime as ort

    from models.cards.gpu_index import ensemble
    from models.cards.train import export_onnx, make_model

    nets = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        nets.append(make_model().eval())
    x = torch.randn(5, 3, 52, 32)
    with torch.no_grad():
        a, b = nets[0](x), nets[1](x)
        both = ensemble(nets).eval()(x)
    assert not torch.allclose(a, b, atol=1e-3)
    assert torch.allclose(both, (a + b) / 2, atol=1e-5)
    pytest.importorskip("onnx", reason="the training extra: pip install onnx")
    export_onnx(ensemble(nets), (52, 32), tmp_path / "card_index.onnx", "crops")
    sess = ort.InferenceSession(str(tmp_path / "card_index.onnx"),
                                providers=["CPUExecutionProvider"])
    out = sess.run(None, {"crops": x.numpy()})[0]
    assert out.shape == (5, 55) and np.allclose(out, both.numpy(), atol=1e-4)
