"""The piece stage of the scanner: per cell, empty or which piece (side and kind), or unsure.

One small ONNX model (`models/pieces/piece_classifier.onnx`, run with onnxruntime on one
thread) reads every cell's perspective-aware crop (`scanner.piece_crops`). Its last layer is a
cosine classifier: logits = scale * embedding . prototype, so adapting to the players' own set
(`scanner.piece_adapt`) swaps the class prototypes for the means of that set's embeddings; where
the model also gives its pooled mid-level features, the adapted set's kind and colour are read
by a small learnt head (`SetHead`) over the embedding and those features together, which carries
over from renders to a real set far better than the embedding alone.

Never a guess, but no more unsure than needed: the 14 class probabilities are read as three
decisions, each with its own confidence (`decide`):
- occupancy: P(empty) against the summed probability of the 12 pieces; unsure when the
  "unsure" class (a piece knocked over, a hand over the cell) outweighs both, or when the
  winner is below the threshold;
- side (occupied cells): summed white against summed black probability, as a share of the
  pieces' probability;
- kind (occupied cells): the six kinds' probabilities summed over both sides, as a share.
A reading's `piece` is given only when every part is sure; otherwise `occupied` and
`seen_side` still carry what is sure (`scanner.detections.PieceReading`). Splitting the mass
between similar kinds (a bishop or a queen?) no longer makes the cell's occupancy unsure.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .detections import PieceReading
from .piece_crops import CROP_H, CROP_W, as_board_camera, cell_crops, frame_single, off_frame
from .piece_height import HeightGauge
from .token_reader import DOUBTED_EMPTY, TokenMatch, TokenReader

KINDS = ("pawn", "rook", "knight", "bishop", "queen", "king")
CLASSES = ["empty"] + [f"{s}-{k}" for s in ("white", "black") for k in KINDS] + ["unsure"]
PIECES = CLASSES[1:13]
UNSURE_CLASS = CLASSES.index("unsure")
COSINE_SCALE = 16.0  # as trained (models/pieces/net.py)
DEFAULT_MODEL = Path(__file__).resolve().parent.parent / "models" / "pieces" / \
    "piece_classifier.onnx"
DEFAULT_THRESHOLD = 0.6
# In a game of printed tokens every unit is a token, so a cell is read bare where the glyph
# reader is as sure there is no token as it must be to name one (its P(none) at its own sure
# threshold, `GlyphLook.sure_at`: 0.85 for the committed reader), neither reader finds a token
# present, and the classifier does not lean to a hand or a unit knocked over (its unsure class
# under BARE_PRINT_UNSURE). Held-out card designs' pips and
# court pictures leave bare cells doubted by the classifier, or taken for units: in held-out
# frames of seeds 1,000,360-1,000,719 (where these were chosen) 110 such bare cells of token
# scenes read bare, no cell with a token and no cell under an arm
# (models/pieces/MODEL_CARD.md, session 42).
BARE_PRINT_UNSURE = 0.7


def bare_print(probs: np.ndarray, match: TokenMatch) -> bool:
    """Whether a cell (the classifier's 14 probabilities `probs`) reads bare by the token
    reader's `match`, in a game of printed tokens (see BARE_PRINT_UNSURE)."""
    glyph = match.glyph
    return glyph is not None and not match.present and glyph.p_none >= glyph.sure_at \
        and float(probs[UNSURE_CLASS]) < BARE_PRINT_UNSURE


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


def decide(probs: np.ndarray, threshold: float = DEFAULT_THRESHOLD) -> dict[str, np.ndarray]:
    """`PieceClassifier.decide` for a given threshold (numpy, vectorised)."""
    probs = np.asarray(probs, np.float64).reshape(-1, len(CLASSES))
    p_empty = probs[:, 0]
    p_unsure = probs[:, UNSURE_CLASS]
    pieces = probs[:, 1:13].reshape(-1, 2, len(KINDS))  # side x kind
    p_full = pieces.sum((1, 2))
    occ = (p_full > p_empty).astype(np.int64)
    p_occ = np.maximum(p_full, p_empty)
    occ[(p_unsure >= p_occ) | (p_occ < threshold)] = -1
    share = pieces / np.maximum(p_full, 1e-12)[:, None, None]
    side_p = share.sum(2)  # N x 2
    kind_p = share.sum(1)  # N x 6
    side = side_p.argmax(1)
    kind = kind_p.argmax(1)
    p_side = side_p.max(1)
    p_kind = kind_p.max(1)
    side = np.where((occ == 1) & (p_side >= threshold), side, -1)
    kind = np.where((occ == 1) & (p_kind >= threshold), kind, -1)
    piece = np.where(occ == 0, 0, -1)
    whole = (occ == 1) & (side >= 0) & (kind >= 0)
    piece = np.where(whole, 1 + side.clip(0) * len(KINDS) + kind.clip(0), piece)
    p_piece = np.where(occ == 1, p_full * p_side * p_kind, p_empty)
    return {"occupied": occ, "side": side, "kind": kind, "piece": piece, "p_occ": p_occ,
            "p_side": p_side, "p_kind": p_kind, "p_piece": p_piece}


@dataclass
class SetHead:
    """Kind and colour as learnt from the players' own set: a multinomial logistic regression
    over a crop's descriptor (embedding and pooled features, standardised), among the piece
    classes seen while adapting (in a game, the armies on their set-up cards)."""

    classes: np.ndarray  # indices into CLASSES, pieces only
    mean: np.ndarray
    std: np.ndarray
    weights: np.ndarray  # features x classes
    bias: np.ndarray
    # a correction to the model's own answer among the head's classes (its log-probabilities
    # are the head's starting logits), not an answer of its own
    residual: bool = False

    def probabilities(self, desc: np.ndarray, probs: np.ndarray | None = None) -> np.ndarray:
        z = ((desc - self.mean) / self.std) @ self.weights + self.bias
        if self.residual:
            z = z + model_logits(probs, self.classes)
        return _softmax(z)

    def apply(self, probs: np.ndarray, desc: np.ndarray) -> np.ndarray:
        """The trained model's 14 probabilities with the share it gives the head's classes
        handed out among them by this head instead. Occupancy and unsure stay the trained
        model's (learnt from renders of every kind of table, which one set-up view cannot
        teach), and so do the pieces the examples never showed."""
        out = probs.copy()
        seen = probs[:, self.classes].sum(1, keepdims=True)
        out[:, self.classes] = seen * self.probabilities(desc, probs)
        return out


def model_logits(probs: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """The model's log-probabilities among `classes`, renormalised (floored, so that a class
    the model rules out can still be learnt)."""
    p = probs[:, classes]
    return np.log(p / np.maximum(p.sum(1, keepdims=True), 1e-12) + 1e-4)


class PieceClassifier:
    """The piece stage: `read(image, camera_or_homography, cells) -> {cell: PieceReading}`."""

    def __init__(self, model_path: str | Path = DEFAULT_MODEL,
                 threshold: float = DEFAULT_THRESHOLD, threads: int = 1,
                 mirror: bool = True, tokens: bool = True):
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
        # each crop read with its mirror image (`embed`): session 20 measured held-out lathe
        # kind and colour 69.3 -> 72.3 %, tokens 82.2 -> 86.8 %, real photos 95.0 -> 96.1 %
        self.mirror = mirror
        # models exported before session 13 give no pooled features: prototypes alone adapt
        self._outputs = ["embedding"] + (
            ["features"] if any(o.name == "features" for o in self.session.get_outputs()) else [])
        out = self.session.run(["prototypes"] + self._outputs,
                               {"crops": np.zeros((1, 3, CROP_H, CROP_W), np.float32)})
        self.base_prototypes = out[0].astype(np.float32)
        self.embed_dim = self.base_prototypes.shape[1]
        self.descriptor_dim = sum(o.shape[1] for o in out[1:])
        self.prototypes = self.base_prototypes.copy()
        self.scale = COSINE_SCALE  # adaptation may refit it (prototypes closer together)
        self.set_head: SetHead | None = None
        self.last_timings_ms: dict[str, float] = {}
        # the printed paper tokens are read from the board's top view by their print
        # (`scanner.token_reader`): flat and known, they need no learning
        self.tokens = TokenReader() if tokens else None
        self._reads_tokens = tokens
        # a unit's height over its set-up card, seen bare before it stood there: a side's
        # king stands taller than its queen (`scanner.piece_height`)
        self.heights = HeightGauge()

    # --- the model -----------------------------------------------------------------------
    @property
    def has_features(self) -> bool:
        return "features" in self._outputs

    def embed(self, crops: np.ndarray) -> np.ndarray:
        """Descriptors of crops (N x H x W x 3 uint8): N x `descriptor_dim`, the L2-normalised
        embedding in the first `embed_dim` columns, then the pooled features where the model
        gives them. With `mirror`, each crop's descriptor is the mean of its own and its
        mirror image's (a piece looks the same mirrored; the two views' errors differ)."""
        if len(crops) == 0:
            return np.zeros((0, self.descriptor_dim), np.float32)
        crops = np.asarray(crops)
        n = len(crops)
        if self.mirror:
            crops = np.concatenate([crops, crops[:, :, ::-1]])
        out = self.session.run(self._outputs, {"crops": to_input(crops)})
        desc = out[0] if len(out) == 1 else np.concatenate(out, axis=1)
        if self.mirror:
            desc = 0.5 * (desc[:n] + desc[n:])
            emb = desc[:, :self.embed_dim]
            emb /= np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
        return desc

    def probabilities(self, desc: np.ndarray) -> np.ndarray:
        probs = _softmax(self.scale * desc[:, :self.embed_dim] @ self.prototypes.T)
        if self.set_head is not None:
            probs = self.set_head.apply(probs, desc)
        return probs

    def reset(self) -> None:
        """Forget any adaptation: back to the trained prototypes."""
        self.prototypes = self.base_prototypes.copy()
        self.scale = COSINE_SCALE
        self.set_head = None

    def new_set(self) -> None:
        """A new game, perhaps with another set: forget the adaptation, and read tokens again
        at the sheet's print size (a game of 3D pieces rests the token reader)."""
        self.reset()
        self.tokens = TokenReader() if self._reads_tokens else None
        self.heights.reset()

    def decide(self, probs: np.ndarray) -> dict[str, np.ndarray]:
        """The three decisions for N x 14 probabilities (see the module's doc). Returns arrays:
        `occupied` (1, 0, or -1 = unsure), `side` (0 white, 1 black, -1 unsure or empty),
        `kind` (index into KINDS, -1 unsure or empty), `piece` (index into CLASSES of the
        whole answer, -1 = unsure), and the confidences `p_occ`, `p_side`, `p_kind`, `p_piece`."""
        return decide(probs, self.threshold)

    def readings(self, probs: np.ndarray) -> list[PieceReading]:
        d = self.decide(probs)
        # each kind's share of the occupied mass (both sides pooled: the side is decided apart)
        pieces = np.asarray(probs, np.float64)[:, 1:13].reshape(-1, 2, len(KINDS)).sum(1)
        shares = pieces / np.maximum(pieces.sum(1, keepdims=True), 1e-12)
        out = []
        for i in range(len(probs)):
            occ = int(d["occupied"][i])
            kinds = sorted(((KINDS[k], round(float(shares[i, k]), 4)) for k in range(len(KINDS))),
                           key=lambda kp: -kp[1]) if occ == 1 else []
            if d["piece"][i] >= 0:
                r = PieceReading(CLASSES[d["piece"][i]], float(d["p_piece"][i]))
            elif occ < 0:
                r = PieceReading(None, float(d["p_occ"][i]))
            else:  # occupied for sure; the side may be sure, the kind is not
                side = int(d["side"][i])
                r = PieceReading(None, float(d["p_occ"][i]), occupied=True,
                                 seen_side=None if side < 0 else ("white", "black")[side])
            r.kinds = kinds
            out.append(r)
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
        cells = list(cells)
        # a unit on a cell whose centre is out of the frame shows a part at best (held-out
        # stills: read right 8 times in 44, wrongly 18; an empty one read bare 52 in 56)
        cut = set(off_frame(cam, image.shape, cells))
        seen = [cell for cell in cells if cell not in cut]
        crops = cell_crops(image, cam, seen)
        t1 = time.perf_counter()
        probs = self.probabilities(self.embed(crops)) if seen else np.zeros((0, len(CLASSES)))
        readings = dict(zip(seen, self.readings(probs), strict=True))
        t2 = time.perf_counter()
        self.last_timings_ms = {"piece_crops": (t1 - t0) * 1e3, "piece_model": (t2 - t1) * 1e3}
        if self.tokens is not None:
            row = {cell: i for i, cell in enumerate(seen)}
            # a token found by its print stands for the cell's reading where the classifier
            # is not sure the cell is bare, or where the print is certain
            for cell, m in self.tokens.read(image, cam, seen).items():
                r = readings[cell]
                if self.tokens.printed_set and r.piece != "empty" \
                        and bare_print(probs[row[cell]], m):
                    readings[cell] = PieceReading("empty", float(m.glyph.p_none))
                    continue
                bare = r.piece == "empty" and r.confidence >= DOUBTED_EMPTY
                if not (m.certain or (m.present and not bare)):
                    continue
                if not m.sure and r.piece not in (None, "empty") \
                        and m.probs[tuple(r.piece.split("-"))] >= 0.2:
                    continue  # the print hesitates between glyphs; the classifier named one
                readings[cell] = self.token_reading(m)
            self.last_timings_ms["tokens"] = (time.perf_counter() - t2) * 1e3
        readings = {cell: readings.get(cell, PieceReading(None, 0.0)) for cell in cells}
        t3 = time.perf_counter()
        self.heights.look(image, cam, readings)
        self.last_timings_ms["heights"] = (time.perf_counter() - t3) * 1e3
        return readings

    def token_reading(self, m) -> PieceReading:
        """A `token_reader.TokenMatch` as the stage's reading, decided by the same threshold."""
        p_side = {s: sum(p for (side, _), p in m.probs.items() if side == s)
                  for s in ("white", "black")}
        p_piece = m.probs[(m.side, m.kind)]
        if m.sure and p_piece >= self.threshold:
            r = PieceReading(m.piece, p_piece)
        else:
            side = max(p_side, key=p_side.get)
            r = PieceReading(None, max(p_side.values()), occupied=True,
                             seen_side=side if p_side[side] >= self.threshold else None)
        r.kinds = m.kind_shares()
        return r

    def classify_image(self, image: np.ndarray,
                       box: tuple[float, float, float, float] | None = None) -> PieceReading:
        """One photo showing one piece (or none); `box` bounds the piece if known."""
        return self.classify_crops(frame_single(image, box)[None])[0]


# the name the card helper's TableScanner looks for
PieceStage = PieceClassifier
