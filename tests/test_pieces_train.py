"""Training the piece classifier with a teacher (needs the 'train' extra; skipped without
torch): the examples the teacher teaches keep its answers, the others learn their labels."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the training extra: pip install torch==2.13.0")
pytest.importorskip("onnx", reason="the training extra: pip install onnx")

FIX = Path(__file__).parent / "fixtures" / "pieces"


def _crops() -> np.ndarray:
    import cv2

    from scanner.piece_crops import as_board_camera, cell_centre, crop_quad, warp_quad

    img = cv2.imread(str(FIX / "setup-lathe.jpg"))
    truth = json.loads((FIX / "setup-lathe.json").read_text())
    cam = as_board_camera(truth["camera"], img.shape)
    return np.array([warp_quad(img, crop_quad(cam, *cell_centre(c, cam.pitch)))
                     for c in truth["labels"]])


def _probs(net, X: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        x = torch.from_numpy(X).permute(0, 3, 1, 2).float() / 255
        return torch.softmax(net.eval()(x)[0], 1).numpy()


def test_taught_examples_keep_the_teachers_answers_and_the_rest_learn_labels():
    from models.pieces.net import from_onnx
    from models.pieces.train import train
    from scanner.piece_classifier import CLASSES, DEFAULT_MODEL

    crops = _crops()
    X = np.concatenate([crops, crops])  # each cell twice: one crop a batch is no signal
    teacher = _probs(from_onnx(DEFAULT_MODEL, len(CLASSES)), X)
    # labels the teacher disagrees with everywhere: learnt from, they move the answers
    y = ((teacher.argmax(1) + 5) % len(CLASSES)).astype(np.int64)
    cell = np.arange(len(X)) % len(crops)
    taught = cell < len(crops) // 2  # the first cells' crops (both copies) are taught

    def run(teach):
        net = train(X, y, epochs=8, seed=0, batch=16, lr=3e-3, init=DEFAULT_MODEL,
                    log=lambda *_: None, teacher=teach, taught=taught)
        after = _probs(net, X)
        drift = np.abs(after[taught] - teacher[taught]).sum(1).mean()
        learnt = (after[~taught].argmax(1) == y[~taught]).mean()
        return drift, learnt

    drift, learnt = run(DEFAULT_MODEL)
    drift_alone, learnt_alone = run(None)
    assert learnt > 0.5 and learnt_alone > 0.5  # both learnt the untaught cells' labels
    assert drift_alone > 0.5  # without the teacher the other cells' answers moved too ...
    assert drift < drift_alone / 2  # ... with it they stayed near the teacher's (0.52 vs 1.84)


def test_defocus_blurs_the_share_asked_and_leaves_the_rest():
    """`--defocus P`: that share of a batch is blurred hard (sigma 1-2.5 px), the rest not."""
    from models.pieces.train import _defocus

    gen = torch.Generator().manual_seed(3)
    x = torch.rand(400, 3, 96, 64)
    assert torch.equal(_defocus(x, gen, 0.0), x)
    y = _defocus(x, gen, 0.5)
    changed = (y - x).abs().flatten(1).amax(1) > 0
    assert 150 < int(changed.sum()) < 250
    # a blur of sigma >= 1 takes most of the pixel noise away
    assert float(y[changed].std()) < 0.5 * float(x.std())
    assert torch.equal(y[~changed], x[~changed])
