"""Read cards: rank and suit (or joker, or face down) from their index corners, with ONNX.

Each card is rectified (`scanner.rectify`), its four corner crops are classified in one batch,
and the corners are combined: the index may be hidden under a piece at one corner, so the best
visible index answers, unless another corner confidently says something else. An answer below the
confidence threshold (chosen on validation designs so answers above it are >= 99.9 % right) is
given as `card: None`, never as a guess.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .detections import CardReading
from .rectify import CORNER_NAMES, corner_crops, normalise, portrait_order, rectify

MODEL_DIR = Path(__file__).resolve().parent.parent / "models" / "cards"
MODEL_FILE = MODEL_DIR / "card_index.onnx"
META_FILE = MODEL_DIR / "card_index.json"


class ModelMissingError(RuntimeError):
    pass


def combine(probs: np.ndarray, n_cards: int, back: int) -> tuple[int, bool, int, float]:
    """One card's corner probabilities (corners x classes) -> (card class, face down, corner
    that answered, confidence). Two corners of one diagonal agreeing are two looks at the same
    index: their evidence combines (1 - both wrong); any corner confidently naming another card
    caps the confidence (a conflict is never an answer). Training picks its threshold through
    this same function, so the threshold means what the reader does."""
    pred = probs.argmax(1)
    if (pred == back).sum() >= 2:
        return -1, True, -1, float(probs[:, back].mean())
    cards = probs[:, :n_cards]
    i, k = np.unravel_index(int(cards.argmax()), cards.shape)
    conf = float(cards[i, k])
    n = len(probs)
    if n == 4 or n == 2:
        j = (i + n // 2) % n  # the opposite corner of the same diagonal
        if pred[j] == k:
            conf = 1.0 - (1.0 - conf) * (1.0 - float(probs[j, k]))
    for m in range(n):
        if pred[m] < n_cards and pred[m] != k:
            conf = min(conf, 1.0 - float(probs[m, pred[m]]))
    return int(k), False, int(i), conf


class CardReader:
    def __init__(self, model_path: str | Path = MODEL_FILE, meta_path: str | Path = META_FILE,
                 threshold: float | None = None):
        import onnxruntime as ort

        model_path, meta_path = Path(model_path), Path(meta_path)
        if not model_path.exists() or not meta_path.exists():
            raise ModelMissingError(f"card model missing: {model_path} (rebuild it with "
                                    "`royal-table train cards`)")
        meta = json.loads(meta_path.read_text())
        self.classes: list[str] = meta["classes"]
        self.temperature = float(meta.get("temperature", 1.0))
        self.threshold = float(meta["threshold"] if threshold is None else threshold)
        self.crop = tuple(int(v) for v in meta.get("crop", (48, 30)))  # H, W
        self.n_cards = self.classes.index("back")  # card classes come first
        self.back, self.none = self.classes.index("back"), self.classes.index("none")
        opts = ort.SessionOptions()
        # one core: the scanner runs beside the web page and the piece stage
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model_path), opts,
                                            providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name

    def classify(self, crops: np.ndarray) -> np.ndarray:
        """uint8 crops (N x H x W x 3) -> class probabilities (N x C)."""
        if len(crops) == 0:
            return np.zeros((0, len(self.classes)), np.float32)
        logits = self.session.run(None, {self.input_name: normalise(crops)})[0]
        z = logits / self.temperature
        z = z - z.max(1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(1, keepdims=True)

    def decide(self, probs: np.ndarray) -> tuple[str | None, bool, str | None, float]:
        """Combine one card's 4 corner probabilities (nw, ne, se, sw) into (card, face_down,
        index diagonal of the rectified card, confidence)."""
        k, down, corner, conf = combine(probs, self.n_cards, self.back)
        if down:
            return None, True, None, conf
        diag = "nw-se" if CORNER_NAMES[corner] in ("nw", "se") else "ne-sw"
        card = self.classes[k] if conf >= self.threshold else None
        return card, False, diag, conf

    def _settled(self, p: np.ndarray) -> bool:
        """Both nw and se crops give the same card (or face down) confidently."""
        k, down, _, conf = combine(p[[0, 2]], self.n_cards, self.back)
        return bool(down or conf >= self.threshold)

    def read_quads(self, image: np.ndarray, quads: list[np.ndarray]) -> list[CardReading]:
        """Read each card quadrilateral (image corners, any order around the card). The
        reading's diagonal and orientation are relative to the image (portrait = long side
        nearer vertical)."""
        if not quads:
            return []
        if image.ndim == 2:
            image = np.repeat(image[:, :, None], 3, axis=2)
        ordered = [portrait_order(q) for q in quads]
        # N cards x 4 corners x H x W x 3
        crops = np.stack([corner_crops(rectify(image, q), self.crop) for q in ordered])
        # first the nw-se diagonal, where standard decks print the index; the other diagonal
        # only for cards that diagonal did not settle (half the model work per frame)
        probs = np.zeros((len(quads), 4, len(self.classes)), np.float32)
        probs[:, [1, 3], self.none] = 1.0
        probs[:, [0, 2]] = self.classify(crops[:, [0, 2]].reshape(-1, *crops.shape[2:])) \
            .reshape(len(quads), 2, -1)
        again = [i for i in range(len(quads)) if not self._settled(probs[i])]
        if again:
            probs[again, 1::2] = self.classify(
                crops[again][:, [1, 3]].reshape(-1, *crops.shape[2:])).reshape(len(again), 2, -1)
        out = []
        for q, p in zip(ordered, probs, strict=True):
            card, down, diag, conf = self.decide(p)
            long_axis = (q[3] - q[0]) + (q[2] - q[1])
            portrait = abs(long_axis[1]) >= abs(long_axis[0])
            if diag is not None and not portrait:
                diag = "nw-se" if diag == "ne-sw" else "ne-sw"
            out.append(CardReading(corners=q.astype(np.float32), card=card, face_down=down,
                                   orientation="portrait" if portrait else "landscape",
                                   digit_corners=diag, confidence=conf))
        return out
