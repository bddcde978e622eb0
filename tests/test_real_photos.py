"""The real-photo development sets are split by source photo: training may use one half, the
benches measure the other, and a photo's augmented copies never straddle the two."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.real_photos import fit_source, source_of
from scanner.cards_bench import REAL_DIR, bench_real


def test_fit_source_is_stable_and_splits_names_about_in_half():
    names = [f"IMG_{i:04d}" for i in range(400)]
    fit = [fit_source(n) for n in names]
    assert fit == [fit_source(n) for n in names]  # a hash, not a random draw
    assert 150 < sum(fit) < 250


def test_a_files_source_is_its_name_up_to_jpg():
    a = "IMG_20220316_141410_jpg.rf.a0d38ab70102124718a73b6ba554959a.jpg"
    b = "IMG_20220316_141410_jpg.rf.0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f.jpg"
    assert source_of(a) == source_of(b) == "IMG_20220316_141410"


@pytest.mark.skipif(not (Path(REAL_DIR) / "images").is_dir(),
                    reason="real-cards-dev not beside the repository")
def test_the_cards_bench_measures_the_sources_training_never_uses():
    files = sorted((Path(REAL_DIR) / "images").glob("*.jpg"))[:24]
    measured = [f for f in files if not fit_source(source_of(f.name))]
    assert 0 < len(measured) < len(files)  # both halves among them
    r = bench_real(Path(REAL_DIR), limit=24, log=lambda *_: None)
    assert r["all_sources"]["images"] == len(files)
    assert r["images"] == len(measured)
    assert r["sources"] == len({source_of(f.name) for f in measured})
    assert r["labelled_cards"] < r["all_sources"]["labelled_cards"]
    assert r["read_right"] <= r["all_sources"]["read_right"]
