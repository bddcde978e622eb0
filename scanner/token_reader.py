"""Read the paper tokens flat on their cards, by their known print, from the board's top view.

The rulebook lets players use paper tokens instead of chess pieces; Royal Table prints them
(`models/renderer/tokens.py`, `royal-table render tokens`). A token lies flat on the table, so
the board's homography undoes the camera exactly: seen from straight above, a token is its
printed disc again, at a known size, turned to face its owner. Its glyph is then found by
normalised cross-correlation with the 12 printed glyphs, turned as a player lays a token
facing them (within MAX_TURN: white's upright in the view, black's upside down), which no
rendered training set can teach as well: the piece classifier, trained on billboard
crops of tokens seen at a slant, reads 84.4 % of the tokens in held-out rendered frames right;
with this reader beside it the piece stage reads 95.5 %, and the reader names 92-94 % of
held-out tokens turned up to 40 degrees, none wrongly (session 24, `royal-table pieces bench`,
`heldout_frames`; models/pieces/MODEL_CARD.md).

A token reading is only offered where the correlation says a token is there (`MIN_SCORE`: a
3D piece or a bare card correlates less with every glyph, measured on training renders); it
names the token only where the best glyph beats the next (`MIN_MARGIN`), and otherwise says
what it knows: occupied, and the side where the glyphs that come close agree. The piece stage
takes it over the classifier's own reading of the cell, unless the classifier read a bare card
surely (`DOUBTED_EMPTY`) and the correlation is short of certain (`CERTAIN_SCORE`).

Far from the camera the print blurs and the correlation cannot tell a pawn from a bishop; the
glyph reader (`GlyphReader`, `models/pieces/token_glyph.onnx`, a small CNN over the same top
views) then names the token: where installed, side, kind and sureness are its, the correlation
confirming (session 41: held-out frames' tokens 97.5 -> 99.0 % right).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from .onnx_session import one_core_session
from .piece_crops import BoardCamera, cell_centre, off_frame

KINDS = ("pawn", "knight", "bishop", "rook", "queen", "king")
SIDES = ("white", "black")
PX_PER_CM = 10.0  # the top view's scale
HALF_CM = 2.6  # the top view spans the cell centre +- this: a token 1.8 cm in radius, off by
# up to 0.8 cm
PATCH = int(round(2 * HALF_CM * PX_PER_CM))
GLYPH_SHARE = 0.68  # the template: the middle of the disc, inside its rim however turned
ANGLE_STEP = 15.0  # degrees between the coarse search's turns
MAX_TURN = 45.0  # a player lays a token facing them, give or take this (degrees)
PRINT_SCALES = (0.88, 0.92, 0.96, 1.0, 1.04)  # printed sizes tried at set-up (share of 36 mm)
PRINT_SCALE_GAIN = 0.02  # how much better another print scale must fit than the sheet's own
TEMPLATE_BLUR = 0.7  # px: the camera and the resampling to the top view soften the print
TOKEN_HEIGHT_CM = 0.03  # paper on a card
TOKEN_CM = 3.6  # the printed disc's diameter (models/renderer/tokens.py: TOKEN_MM)
# Chosen on training renders (`models.pieces.evaluate.token_views`, split "train"; session 24):
# 3,626 token cells (seeds 0-149), 4,429 cells of 3D pieces (brutalchess seeds 150-209,
# dreamchess 210-269, 60 procedural sets) and 11,864 bare cards. At these, 90.3 % of the tokens
# were sure, all right, and 95.4 % present; no 3D piece (their best correlation: 0.891) and 23
# bare cards (0.19 %: the classifier's own "empty" keeps those) were present. (The template
# blur too: 0.5 px named 2 tokens wrong at these, 1.0 and 1.4 px let 3D pieces through.)
MIN_SCORE = 0.90
MIN_MARGIN = 0.02
# above this a token stands there even where the classifier read a bare card: higher than any
# bare card's best correlation in those renders (0.911); 86 % of the tokens reach it
CERTAIN_SCORE = 0.93
# a present token stands against the classifier's "empty" read below this confidence: on 100
# training token scenes and 30 of procedural sets, where a token was present and the classifier
# read the card bare, the bare cards were read so at 0.941-0.959, the tokens at 0.64-0.94
DOUBTED_EMPTY = 0.9
# the 12 correlations -> probabilities, softmax(score / TEMPERATURE): the likeliest on those
# 3,626 token cells
TEMPERATURE = 0.008


@dataclass
class GlyphLook:
    """The glyph reader's view of a cell (`GlyphReader`): its best token, that token's
    probability, P(no token) and the thresholds its card gives."""

    piece: str
    p: float
    p_none: float
    sure_at: float
    certain_at: float


@dataclass
class TokenMatch:
    """The best printed glyph in a cell's top view: side, kind, its correlation (`score`), how
    far it beat the next glyph (`margin`) and the 12 glyphs' probabilities. Where the glyph
    reader looked too (`glyph`), side, kind and probabilities are its own: it names far tokens
    the correlation cannot (models/pieces/MODEL_CARD.md, session 41)."""

    side: str
    kind: str
    score: float
    margin: float
    probs: dict[tuple[str, str], float]
    angle: float = 0.0  # how the token lies turned in the top view (deg, counter-clockwise)
    glyph: GlyphLook | None = None
    ncc_piece: str | None = None  # the correlation's best glyph, where the glyph reader's won

    @property
    def piece(self) -> str:
        return f"{self.side}-{self.kind}"

    @property
    def present(self) -> bool:
        """A token lies there (which one may still be unsure: a pawn and a bishop differ by
        a few pixels of a far cell)."""
        # the glyph reader alone where it is sure of a token: one of the 4,429 3D pieces of
        # its validation renders reaches that (0.86), no held-out lathe piece (at most 0.75);
        # a bare card that does is the classifier's to rule out
        g = self.glyph
        return self.score >= MIN_SCORE or (g is not None and g.p >= g.sure_at) or self.certain

    @property
    def sure(self) -> bool:
        """A token lies there and its glyph is known: the glyph reader sure of it, or the
        correlation sure of the glyph the reader names."""
        ncc_sure = self.score >= MIN_SCORE and self.margin >= MIN_MARGIN
        g = self.glyph
        if g is None:
            return ncc_sure
        return g.p >= g.sure_at or (ncc_sure and (self.ncc_piece or self.piece) == g.piece)

    @property
    def certain(self) -> bool:
        """A token lies there beyond doubt: enough to stand against the classifier's reading
        of a bare card."""
        g = self.glyph
        return self.score >= CERTAIN_SCORE or (g is not None and g.p >= g.certain_at)

    def kind_shares(self) -> list[tuple[str, float]]:
        """Each kind's probability, both sides pooled, best first (as `PieceReading.kinds`)."""
        shares = {k: 0.0 for k in KINDS}
        for (_, kind), p in self.probs.items():
            shares[kind] += p
        return sorted(((k, round(v, 4)) for k, v in shares.items()), key=lambda kp: -kp[1])


def _glyph(kind: str, side: str, angle: float, scale: float = 1.0) -> np.ndarray:
    """One printed disc turned by `angle` degrees (counter-clockwise in the top view), printed
    at `scale` times its size, as the top view shows it: grey, blurred, the middle of the disc
    (inside its rim at any angle)."""
    from models.renderer.tokens import token_image

    big = 256
    img = token_image(kind, side, big)
    g = cv2.cvtColor(np.ascontiguousarray(img[:, :, :3]), cv2.COLOR_BGR2GRAY)
    if angle:
        M = cv2.getRotationMatrix2D((big / 2 - 0.5, big / 2 - 0.5), angle, 1.0)
        g = cv2.warpAffine(g, M, (big, big), flags=cv2.INTER_LINEAR)
    d = int(round(TOKEN_CM * PX_PER_CM * scale))
    g = cv2.resize(g, (d, d), interpolation=cv2.INTER_AREA).astype(np.float32)
    g = cv2.GaussianBlur(g, (0, 0), TEMPLATE_BLUR)
    c, h = d // 2, int(d * GLYPH_SHARE) // 2
    return np.ascontiguousarray(g[c - h:c + h + 1, c - h:c + h + 1])


def _half(a: np.ndarray) -> np.ndarray:
    return cv2.resize(a, (a.shape[1] // 2, a.shape[0] // 2), interpolation=cv2.INTER_AREA)


def _ncc(view: np.ndarray, template: np.ndarray) -> float:
    """The best normalised correlation of `template` anywhere in `view` (-1 for a flat view,
    which correlates with nothing)."""
    v = float(cv2.matchTemplate(view, template, cv2.TM_CCOEFF_NORMED).max())
    return v if np.isfinite(v) else -1.0


class TokenReader:
    """`read(image, camera, cells) -> {cell: TokenMatch}` for cells whose top view lies in the
    frame. A token may lie turned any way: a coarse search at half size over ANGLE_STEP turns
    with each side's mean glyph finds how, then the 12 glyphs are matched at that turn, and
    the likeliest three half a step either side too. About 0.5 ms a cell on one core."""

    def __init__(self, print_scale: float = 1.0,
                 glyphs: GlyphReader | None | str = "default") -> None:
        # "default": the committed glyph reader where it is installed; None: correlation only
        self.glyphs = GlyphReader.default() if glyphs == "default" else glyphs
        self._keys = [(side, kind) for side in SIDES for kind in KINDS]
        self._angles = np.arange(0.0, 360.0, ANGLE_STEP / 2)  # the fine turns
        # the coarse search's turns: every other fine turn within MAX_TURN of facing the
        # owner (white's upright in the view, black's upside down)
        facing = {"white": 0.0, "black": 180.0}
        self._coarse_turns = {
            side: [a for a in self._angles[::2]
                   if abs((a - facing[side] + 180.0) % 360.0 - 180.0) <= MAX_TURN + 1e-6]
            for side in SIDES}
        self._printed: dict[float, tuple[dict, dict]] = {}
        self._dst = np.float32([[0, 0], [PATCH, 0], [PATCH, PATCH], [0, PATCH]])
        self.print_scale = print_scale
        # every unit of the set-up view was a printed token (`piece_adapt.learn_set`): a cell
        # whose print surely shows no token is then read bare (`piece_classifier.bare_print`)
        self.printed_set = False

    @property
    def print_scale(self) -> float:
        """How large the players printed their tokens, as a share of the sheet's 36 mm."""
        return self._scale

    @print_scale.setter
    def print_scale(self, scale: float) -> None:
        self._scale = float(scale)
        self._glyphs, self._coarse = self._templates(self._scale)

    def _templates(self, scale: float) -> tuple[dict, dict]:
        """The glyphs at every fine turn, and each side's six averaged for the coarse search,
        for tokens printed at `scale` (made once per scale)."""
        if scale not in self._printed:
            glyphs = {(k, a): _glyph(k[1], k[0], a, scale)
                      for k in self._keys for a in self._angles}
            coarse = {(side, a): _half(np.mean([glyphs[((side, kind), a)] for kind in KINDS],
                                               axis=0))
                      for side in SIDES for a in self._coarse_turns[side]}
            self._printed[scale] = (glyphs, coarse)
        return self._printed[scale]

    def fit_print_scale(self, views: list[np.ndarray]) -> float:
        """Take the print scale (of PRINT_SCALES) under which the top views of cells known to
        hold units correlate best, on average, with the glyphs: printers shrink a sheet to fit
        the page, and a token printed at 90 % of its size is named less than half as often.
        Kept only where the units look like tokens at all (mean best correlation MIN_SCORE);
        returns the scale in use."""
        if not views:
            return self._scale
        means = {}
        for scale in PRINT_SCALES:
            glyphs, coarse = self._templates(scale)
            means[scale] = float(np.mean([self._match(v, glyphs, coarse).score for v in views]))
        best = max(means, key=means.get)
        # the sheet's own size unless another is clearly better (the thresholds were chosen
        # at it; at 1.0 the best other scale came within 0.015 of it on training renders)
        if means[best] >= MIN_SCORE and means[best] >= means.get(1.0, -1.0) + PRINT_SCALE_GAIN:
            self.print_scale = best
        elif means.get(1.0, -1.0) >= MIN_SCORE:
            self.print_scale = 1.0
        return self._scale

    def top_view(self, image: np.ndarray, cam: BoardCamera, x: float, y: float) -> np.ndarray:
        """The board around (x, y) cm seen from straight above: PATCH x PATCH, +y up (white's
        view), grey float32."""
        z = TOKEN_HEIGHT_CM
        pts = np.array([[x - HALF_CM, y + HALF_CM, z], [x + HALF_CM, y + HALF_CM, z],
                        [x + HALF_CM, y - HALF_CM, z], [x - HALF_CM, y - HALF_CM, z]])
        q = cam.project(pts).astype(np.float32)
        M = cv2.getPerspectiveTransform(q, self._dst)
        grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        return cv2.warpPerspective(grey, M, (PATCH, PATCH), flags=cv2.INTER_AREA,
                                   borderMode=cv2.BORDER_REPLICATE).astype(np.float32)

    def match(self, view: np.ndarray) -> TokenMatch:
        """The best glyph in one top view, at whatever turn it lies."""
        return self._match(view, self._glyphs, self._coarse)

    def _match(self, view: np.ndarray, glyphs: dict, coarse: dict) -> TokenMatch:
        small = _half(view)
        turn = {}
        for side in SIDES:  # each side's likeliest turn
            best = max(self._coarse_turns[side],
                       key=lambda a: _ncc(small, coarse[(side, a)]))
            turn[side] = best
        n = len(self._angles)
        angles = np.array([turn[side] for side, _ in self._keys])
        scores = np.array([_ncc(view, glyphs[(key, a)])
                           for key, a in zip(self._keys, angles, strict=True)])
        for i in np.argsort(-scores)[:3]:  # the likeliest three, half a step either side too
            k = int(np.searchsorted(self._angles, angles[i]))
            for a in (self._angles[(k - 1) % n], self._angles[(k + 1) % n]):
                v = _ncc(view, glyphs[(self._keys[i], a)])
                if v > scores[i]:
                    scores[i], angles[i] = v, a
        order = np.argsort(-scores)
        z = (scores - scores.max()) / TEMPERATURE
        p = np.exp(z) / np.exp(z).sum()
        side, kind = self._keys[int(order[0])]
        return TokenMatch(side, kind, float(scores[order[0]]),
                          float(scores[order[0]] - scores[order[1]]),
                          {k: float(v) for k, v in zip(self._keys, p, strict=True)},
                          float(angles[order[0]]))

    def top_views(self, image: np.ndarray, cam: BoardCamera, cells: list[str]
                  ) -> dict[str, np.ndarray]:
        """The top view of each of `cells` whose centre lies in the frame (one with its centre
        out of view shows half a token at best)."""
        cut = set(off_frame(cam, image.shape, cells))
        todo = [cell for cell in cells if cell not in cut]
        if todo and image.ndim == 3:  # the frame's grey once, not once a cell (0.2 ms each)
            image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        return {cell: self.top_view(image, cam, *cell_centre(cell, cam.pitch)) for cell in todo}

    def read(self, image: np.ndarray, cam: BoardCamera, cells: list[str]
             ) -> dict[str, TokenMatch]:
        views = self.top_views(image, cam, cells)
        out = {cell: self.match(view) for cell, view in views.items()}
        if self.glyphs is not None and views:
            for cell, p in zip(views, self.glyphs.probs(list(views.values())), strict=True):
                out[cell] = self.glyphs.looked(out[cell], p)
        return out


class GlyphReader:
    """The glyph reader (`models/pieces/token_glyph.onnx`, onnxruntime, one thread): 13
    probabilities per top view, the 12 tokens and none; its card's thresholds say when it is
    sure of a token and when certain one is there."""

    _default: GlyphReader | None = None

    def __init__(self, path: Path | None = None) -> None:
        import json

        from models.pieces.token_glyph import KEYS, META_FILE, MODEL_FILE

        path = Path(path) if path else MODEL_FILE
        meta = json.loads((path.parent / META_FILE.name).read_text())
        th = meta["thresholds"]
        self.sure_at, self.certain_at = float(th["sure"]), float(th["certain"])
        self.turns = tuple(float(a) for a in meta.get("turns", [0.0]))  # looks pooled a view
        self.keys = [tuple(k.split("-")) for k in KEYS]
        self.session = one_core_session(path, quiet=True)

    @classmethod
    def default(cls) -> GlyphReader | None:
        """The committed reader, loaded once; None where it is not installed."""
        from models.pieces.token_glyph import MODEL_FILE

        if cls._default is None and MODEL_FILE.exists():
            cls._default = cls()
        return cls._default

    def probs(self, views: list[np.ndarray]) -> np.ndarray:
        """13 probabilities per top view: the view read at each of the card's turns, all in
        one run, and the looks pooled as the thresholds were picked."""
        from models.pieces.token_glyph import normalise, pooled, turned

        n = len(views)
        stack = np.stack(views)
        x = np.concatenate([normalise(turned(stack, a)) for a in self.turns])
        logits = self.session.run(None, {"views": x[:, None].astype(np.float32)})[0]
        logits = logits.astype(np.float64)
        e = np.exp(logits - logits.max(1, keepdims=True))
        p = e / e.sum(1, keepdims=True)
        return pooled([p[k * n:(k + 1) * n] for k in range(len(self.turns))])

    def looked(self, m: TokenMatch, p: np.ndarray) -> TokenMatch:
        """The correlation's match `m` with this reader's probabilities `p` (13) over it."""
        tokens = p[:len(self.keys)]
        best = int(tokens.argmax())
        side, kind = self.keys[best]
        share = tokens / max(float(tokens.sum()), 1e-12)
        look = GlyphLook(f"{side}-{kind}", float(tokens[best]), float(p[-1]), self.sure_at,
                         self.certain_at)
        return TokenMatch(side, kind, m.score, m.margin,
                          {k: float(v) for k, v in zip(self.keys, share, strict=True)},
                          m.angle, look, m.piece)
