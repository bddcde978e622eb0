"""Scene crops for fine-tuning the card readers (models/cards/scenes.py): labels from geometry."""

from __future__ import annotations

import numpy as np
import pytest

from models.cards import scenes
from models.cards.dataset import CLASSES, NONE
from scanner.card_reader import CardReader


@pytest.fixture(scope="module")
def still() -> dict[str, np.ndarray]:
    return scenes.still_crops(11, ["gnome-anglo", "gnome-paris"])


def test_each_found_card_gives_four_crops_a_thumbnail_and_its_class(still):
    n = len(still["face_labels"])
    assert n >= 8  # a random position lays 20-90 % of 35 cells; most are found
    assert still["crops"].shape == (n, 4, 52, 32, 3)
    assert still["faces"].shape == (n, 42, 30, 3)
    assert set(still["labels"].reshape(-1).tolist()) <= set(still["face_labels"].tolist()) | {
        NONE, scenes.DROP}
    for lab, k in zip(still["labels"], still["face_labels"], strict=True):
        index = [i for i in range(4) if lab[i] == k]
        # the index sits on one diagonal: never two neighbouring corners
        assert index in ([], [0], [1], [2], [3], [0, 2], [1, 3])


def test_labels_agree_with_the_committed_reader(still):
    """A label on the wrong corner would disagree with what the reader sees there: the reader
    names the labelled card on most index crops and 'none' on most blank ones."""
    reader = CardReader()
    x, y = scenes.flat_crops(still)
    pred = reader.classify(x).argmax(1)
    index = y != NONE
    assert index.sum() >= 8
    assert (pred[index] == y[index]).mean() >= 0.6
    assert (pred[~index] == NONE).mean() >= 0.8
    assert CLASSES[NONE] == "none"
