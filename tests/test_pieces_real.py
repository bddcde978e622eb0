"""The real-photo set is split by source photo: training may use one half, the bench measures
the other, and the two never share a photo (its augmented copies go together)."""

from __future__ import annotations

import numpy as np
import pytest

from models.pieces.evaluate import REAL_PIECES, real_crops, real_metrics
from models.real_photos import fit_source
from scanner.piece_classifier import PieceClassifier

needs_real = pytest.mark.skipif(not (REAL_PIECES / "labels").is_dir(),
                                reason="real-pieces-dev not beside the repository")


@pytest.fixture(scope="module")
def real():
    return real_crops()


@needs_real
def test_every_source_falls_wholly_on_one_side(real):
    X, y, src = real
    sources = sorted(set(src.tolist()))
    fit = {s for s in sources if fit_source(s)}
    assert 0.35 < len(fit) / len(sources) < 0.65
    # the file names group the 3 augmented copies of a photo under one source name
    assert len(src) > 2 * len(sources)


@needs_real
def test_the_bench_measures_only_sources_training_never_uses(real):
    X, y, src = real
    rng = np.random.default_rng(0)
    pick = rng.choice(len(y), 600, replace=False)
    X, y, src = X[pick], y[pick], src[pick]
    m = real_metrics(PieceClassifier(), X, y, src, shots=2, trials=1)
    measured = {s for s in src.tolist() if not fit_source(s)}
    assert m["sources"] == len(measured)
    assert m["crops"] == sum(not fit_source(s) for s in src.tolist())
    assert 0 <= m["no_adaptation"] <= m["no_adaptation_top1"] <= 1
