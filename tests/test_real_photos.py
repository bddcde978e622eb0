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


def test_an_unread_outline_never_takes_the_label_of_the_card_an_answer_names(tmp_path,
                                                                              monkeypatch):
    """An unread outline spanning a read card and part of its neighbour (IMG_..._171913: 7C)
    came first and took the 7C's labelled box, and the right answer counted as wrong: the
    bench matches answers first, surest first."""
    import cv2
    import numpy as np

    from scanner import card_corners, card_reader
    from scanner.detections import CardReading

    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "IMG_1.jpg"), np.zeros((640, 640, 3), np.uint8))
    (tmp_path / "classes.yaml").write_text("names: ['7 of clubs', '8 of clubs']\n")
    # the 7C's box: x 488-582, y 109-359 of 640 x 640
    (tmp_path / "labels" / "IMG_1.txt").write_text("0 0.8359 0.3672 0.1469 0.3906\n")

    def quad(x0, y0, x1, y1):
        return np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])

    monkeypatch.setattr(card_reader, "reader_in", lambda models: None)
    monkeypatch.setattr(card_corners, "cards_in_photo", lambda img, reader, by_corners: [
        CardReading(quad(420, 94, 586, 365), None, confidence=0.36),  # unread, wider
        CardReading(quad(488, 109, 582, 359), "7C", confidence=1.0)])
    r = bench_real(tmp_path, limit=None, log=lambda *_: None)["all_sources"]
    assert r["read_right"] == 1 and r["wrong"] == 0 and r["precision"] == 1.0
