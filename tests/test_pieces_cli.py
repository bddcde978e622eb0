"""`royal-table pieces`: single-piece photos in, {piece, confidence} out; clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import cv2

from scanner.piece_crops import as_board_camera, cell_centre, crop_quad
from webui.cli import main

FIX = Path(__file__).parent / "fixtures" / "pieces"


def _piece_photo(tmp_path: Path, cell: str) -> Path:
    """Cut one piece out of a fixture still, as a photo of it would show it."""
    img = cv2.imread(str(FIX / "setup-lathe.jpg"))
    truth = json.loads((FIX / "setup-lathe.json").read_text())
    cam = as_board_camera(truth["camera"], img.shape)
    q = crop_quad(cam, *cell_centre(cell))
    x0, y0 = q.min(0).astype(int)
    x1, y1 = q.max(0).astype(int)
    path = tmp_path / f"{cell}.png"
    cv2.imwrite(str(path), img[max(y0, 0):y1, max(x0, 0):x1])
    return path


def test_help(capsys):
    try:
        main(["pieces", "--help"])
    except SystemExit as exc:
        assert exc.code == 0
    assert "bench" in capsys.readouterr().out


def test_classifies_photos_as_json(tmp_path, capsys):
    photos = [_piece_photo(tmp_path, c) for c in ("c1", "e5")]
    assert main(["pieces", *map(str, photos), "--json"]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["image"] for x in lines] == list(map(str, photos))
    for x in lines:
        assert set(x) == {"image", "piece", "confidence", "occupied", "side"}
        assert 0 <= x["confidence"] <= 1
        assert x["piece"] is None or x["piece"] == "empty" or "-" in x["piece"]


def test_errors_are_one_line_and_exit_2(tmp_path, capsys):
    assert main(["pieces", str(tmp_path / "missing.jpg")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"not an image")
    assert main(["pieces", str(junk)]) == 2
    assert main(["pieces", "--model", str(tmp_path / "none.onnx"), str(junk)]) == 2
    assert main(["pieces", str(junk), "--box", "5,5,1,1"]) == 2
    assert main(["pieces", str(junk), "--threshold", "3"]) == 2
    assert main(["pieces"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5 and all(x.startswith("error:") for x in err)
