"""`royal-table render ...` is wired into the dispatcher and writes stills with truth."""

from __future__ import annotations

import json

import cv2

from webui.cli import main


def test_render_still_writes_image_and_truth(tmp_path):
    assert main(["render", "still", "--seed", "5", "--count", "1", "--split", "heldout",
                 "--width", "640", "--height", "360", "--out", str(tmp_path)]) == 0
    img = cv2.imread(str(tmp_path / "still_00005.jpg"))
    truth = json.loads((tmp_path / "still_00005.json").read_text())
    assert img.shape == (360, 640, 3)
    assert truth["width"] == 640 and len(truth["cells"]) == 35
    assert truth["position"]["board"]


def test_token_sheet_command(tmp_path):
    out = tmp_path / "tokens.svg"
    assert main(["render", "token-sheet", "--out", str(out)]) == 0
    assert out.read_text().startswith("<?xml")
