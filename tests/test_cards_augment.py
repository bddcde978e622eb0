"""The index reader's training augmentation (needs the 'train' extra; skipped without torch)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the training extra: pip install torch==2.13.0")


def test_augmentation_is_seeded_and_changes_every_crop():
    from models.cards.train import augment_index

    x = torch.randn(64, 3, 52, 32)
    a = augment_index(torch.Generator().manual_seed(3))(x.clone())
    b = augment_index(torch.Generator().manual_seed(3))(x.clone())
    c = augment_index(torch.Generator().manual_seed(4))(x.clone())
    assert a.shape == x.shape and torch.isfinite(a).all()
    assert torch.equal(a, b) and not torch.equal(a, c)  # the seed alone decides the looks
    assert ((a - x).abs().flatten(1).mean(1) > 0.05).all()  # no crop passes through untouched
