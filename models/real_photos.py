"""The real-photo development sets (`../shared/data/real-*-dev`) are split by source photo:
training may use one half, the benches measure the other. Each set holds 3 augmented copies
of every source photo (file names up to `_jpg` name the source), so the copies go together."""

from __future__ import annotations

import hashlib


def source_of(file_name: str) -> str:
    """The source photo a file of the set was made from."""
    return file_name.split("_jpg")[0]


def fit_source(name: str) -> bool:
    """Whether a source photo may be trained on: half the sources, by a stable hash of the
    name. A figure on the other half is on photos no model saw, though of the same sets,
    tables and cameras as the trained half."""
    return hashlib.sha1(name.encode()).digest()[0] % 2 == 0
