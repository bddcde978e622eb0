"""The piece stage of the scanner: per cell, empty or which piece (side and kind), or unsure.

One small ONNX model (`models/pieces/piece_classifier.onnx`, run with onnxruntime on one
thread) reads every cell's perspective-aware crop (`scanner.piece_crops`). Its last layer is a
cosine classifier: logits = scale * embedding . prototype, so adapting to the players' own set
(`scanner.piece_adapt`) only swaps the class prototypes for the means of that set's embeddings.

Never a guess: a cell is reported unsure (`PieceReading(piece=None)`) when the model's best
class is "unsure" (trained on pieces knocked over and hands over the cell) or its probability is
below the threshold.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from .detections import PieceReading
from .piece_crops import CROP_H, CROP_W, as_board_camera, cell_crops, frame_single

KINDS = ("pawn", "rook", "knight", "bishop", "queen", "king")
CLASSES = ["empty"] + [f"{s}-{k}" for s in ("white", "black") for k in KINDS] + ["unsure"]
PIECES = CLASSES[1:13]
UNSURE_CLASS = CLASSES.index("unsure")
COSINE_SCALE = 16.0  # as trained (models/pieces/net.py)
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "pieces" / \
    "piece_classifier.onnx"
DEFAULT_THRESHOLD = 0.6


class ModelError(RuntimeError):
    """The model file is missing or unreadable."""


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def to_input(crops: np.ndarray) -> np.ndarray:
    """N x H x W x 3 uint8 BGR crops -> the model's N x 3 x H x W float32 in 0..1."""
    crops = np.asarray(crops)
    if crops.ndim == 3:
        crops = crops[None]
    if crops.shape[1:] != (CROP_H, CROP_W, 3):
        raise ValueError(f"crops must be N x {CROP_H} x {CROP_W} x 3, got {crops.shape}")
    return np.ascontiguousarray(crops.transpose(0, 3, 1, 2), np.float32) * (1.0 / 255)


class PieceClassifier:
    """The piece stage: `read(image, camera_or_homography, cells) -> {cell: PieceReading}`."""

    def __init__(self, model_path: str | Path = DEFAULT_MODEL,
                 threshold: float = DEFAULT_THRESHOLD, threads: int = 1):
        import onnxruntime as ort

        path = Path(model_path)
        if not path.is_file():
            raise ModelError(f"piece model not found: {path}")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        try:
            self.session = ort.InferenceSession(str(path), opts,
                                                providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own types for a bad file
            raise ModelError(f"cannot load piece model {path}: {exc}") from exc
        self.model_path = path
        self.threshold = threshold
        _, _, protos = self.session.run(None, {"crops": np.zeros((1, 3, CROP_H, CROP_W),
                                                                  np.float32)})
        self.base_prototypes = protos.astype(np.float32)
        self.prototypes = self.base_prototypes.copy()
        self.scale = COSINE_SCALE  # adaptation may refit it (prototypes closer together)
        self.last_timings_ms: dict[str, float] = {}

    # --- the model -----------------------------------------------------------------------
    def embed(self, crops: np.ndarray) -> np.ndarray:
        """L2-normalised embeddings (N x D) of crops (N x H x W x 3 uint8)."""
        if len(crops) == 0:
            return np.zeros((0, self.prototypes.shape[1]), np.float32)
        _, emb, _ = self.session.run(None, {"crops": to_input(crops)})
        return emb

    def probabilities(self, emb: np.ndarray) -> np.ndarray:
        return _softmax(self.scale * emb @ self.prototypes.T)

    def reset(self) -> None:
        """Forget any adaptation: back to the trained prototypes."""
        self.prototypes = self.base_prototypes.copy()
        self.scale = COSINE_SCALE

    def readings(self, probs: np.ndarray) -> list[PieceReading]:
        out = []
        for p in probs:
            k = int(p.argmax())
            conf = float(p[k])
            if k == UNSURE_CLASS or conf < self.threshold:
                out.append(PieceReading(None, conf))
            else:
                out.append(PieceReading(CLASSES[k], conf))
        return out

    def classify_crops(self, crops: np.ndarray) -> list[PieceReading]:
        return self.readings(self.probabilities(self.embed(crops)))

    # --- the stage -----------------------------------------------------------------------
    def read(self, image: np.ndarray, camera, cells: list[str]) -> dict[str, PieceReading]:
        """Which piece stands on each of `cells` in a BGR frame. `camera`: a calibration
        profile, a camera (K, R, t[, dist]) or a board homography (board cm -> pixels)."""
        if image is None or getattr(image, "ndim", 0) != 3:
            raise ValueError("image must be a BGR array")
        t0 = time.perf_counter()
        cam = as_board_camera(camera, image.shape)
        crops = cell_crops(image, cam, list(cells))
        t1 = time.perf_counter()
        readings = self.classify_crops(crops)
        t2 = time.perf_counter()
        self.last_timings_ms = {"piece_crops": (t1 - t0) * 1e3, "piece_model": (t2 - t1) * 1e3}
        return dict(zip(cells, readings, strict=True))

    def classify_image(self, image: np.ndarray,
                       box: tuple[float, float, float, float] | None = None) -> PieceReading:
        """One photo showing one piece (or none); `box` bounds the piece if known."""
        return self.classify_crops(frame_single(image, box)[None])[0]


# the name the card helper's TableScanner looks for
PieceStage = PieceClassifier
