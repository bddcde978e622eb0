"""Read the paper tokens flat on their cards, by their known print, from the board's top view.

The rulebook lets players use paper tokens instead of chess pieces; Royal Table prints them
(`models/renderer/tokens.py`, `royal-table render tokens`). A token lies flat on the table, so
the board's homography undoes the camera exactly: seen from straight above, a token is its
printed disc again, at a known size, turned to face its owner. Its glyph is then found by
normalised cross-correlation with the 12 printed glyphs (white upright, black turned 180°),
which no rendered training set can teach as well: the piece classifier, trained on billboard
crops of tokens seen at a slant, reads 84.4 % of the tokens in held-out rendered frames right;
with this reader beside it the piece stage reads 96.7 % (session 24, `royal-table pieces bench`,
`heldout_frames`; models/pieces/MODEL_CARD.md).

A token reading is only offered where the correlation says a token is there (`MIN_SCORE`: a
3D piece or a bare card correlates less with every glyph, measured on training renders); it
names the token only where the best glyph beats the next (`MIN_MARGIN`), and otherwise says
what it knows: occupied, and the side where the glyphs that come close agree. The piece stage
takes it over the classifier's own reading of the cell, unless the classifier read a bare card
and the correlation is short of certain (`CERTAIN_SCORE`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .piece_crops import BoardCamera, cell_centre

KINDS = ("pawn", "knight", "bishop", "rook", "queen", "king")
SIDES = ("white", "black")
PX_PER_CM = 10.0  # the top view's scale
HALF_CM = 2.6  # the top view spans the cell centre +- this: a token 1.8 cm in radius, off by
# up to 0.8 cm
PATCH = int(round(2 * HALF_CM * PX_PER_CM))
GLYPH_SHARE = 0.72  # the template: the middle of the disc, glyph and a ring of the disc
TEMPLATE_BLUR = 1.0  # px: the top view is resampled from a webcam frame; the print is sharp
TOKEN_HEIGHT_CM = 0.03  # paper on a card
# Chosen on training renders (`models.pieces.evaluate.token_views`, split "train"; session 24):
# 3,626 token cells (seeds 0-149), 4,429 cells of 3D pieces (brutalchess seeds 150-209,
# dreamchess 210-269, 60 procedural sets) and 11,864 bare cards. At these, 92.4 % of the tokens
# were answered, all right; no 3D piece and 19 bare cards (0.16 %) passed (the classifier's
# own "empty" keeps those); a bare card's best correlation reached 0.897, a 3D piece's 0.862.
MIN_SCORE = 0.88
MIN_MARGIN = 0.012
# above this a token stands there even where the classifier read a bare card: higher than any
# bare card's (0.897) or 3D piece's (0.862) best correlation in those renders; 80 % of the
# tokens reach it
CERTAIN_SCORE = 0.92
# the 12 correlations -> probabilities, softmax(score / TEMPERATURE): the likeliest on 952
# token cells of 40 other training scenes (seeds 300-339)
TEMPERATURE = 0.007


@dataclass
class TokenMatch:
    """The best printed glyph in a cell's top view: side, kind, its correlation (`score`), how
    far it beat the next glyph (`margin`) and the 12 glyphs' probabilities."""

    side: str
    kind: str
    score: float
    margin: float
    probs: dict[tuple[str, str], float]

    @property
    def piece(self) -> str:
        return f"{self.side}-{self.kind}"

    @property
    def present(self) -> bool:
        """A token lies there (which one may still be unsure: a pawn and a bishop differ by
        a few pixels of a far cell)."""
        return self.score >= MIN_SCORE

    @property
    def sure(self) -> bool:
        """A token lies there and its glyph is known."""
        return self.present and self.margin >= MIN_MARGIN

    @property
    def certain(self) -> bool:
        """A token lies there beyond doubt: enough to stand against the classifier's reading
        of a bare card."""
        return self.score >= CERTAIN_SCORE

    def kind_shares(self) -> list[tuple[str, float]]:
        """Each kind's probability, both sides pooled, best first (as `PieceReading.kinds`)."""
        shares = {k: 0.0 for k in KINDS}
        for (_, kind), p in self.probs.items():
            shares[kind] += p
        return sorted(((k, round(v, 4)) for k, v in shares.items()), key=lambda kp: -kp[1])


def _templates() -> dict[tuple[str, str], np.ndarray]:
    """The printed glyphs as the top view shows them (grey, blurred, middle of the disc)."""
    from models.renderer.tokens import TOKEN_MM, token_image

    d = int(round(TOKEN_MM / 10 * PX_PER_CM))
    h = int(d * GLYPH_SHARE) // 2
    out = {}
    for side in SIDES:
        for kind in KINDS:
            img = token_image(kind, side, d)
            if side == "black":  # laid upright for its owner, across the board
                img = img[::-1, ::-1]
            g = cv2.cvtColor(np.ascontiguousarray(img[:, :, :3]), cv2.COLOR_BGR2GRAY)
            g = cv2.GaussianBlur(g.astype(np.float32), (0, 0), TEMPLATE_BLUR)
            c = d // 2
            out[(side, kind)] = np.ascontiguousarray(g[c - h:c + h + 1, c - h:c + h + 1])
    return out


class TokenReader:
    """`read(image, camera, cells) -> {cell: TokenMatch}` for cells whose top view lies in the
    frame. About 0.25 ms a cell on one core."""

    def __init__(self) -> None:
        self.templates = _templates()
        self._keys = list(self.templates)
        self._dst = np.float32([[0, 0], [PATCH, 0], [PATCH, PATCH], [0, PATCH]])

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
        """The best glyph in one top view."""
        scores = np.array([float(cv2.matchTemplate(view, self.templates[k],
                                                   cv2.TM_CCOEFF_NORMED).max())
                           for k in self._keys])
        scores = np.nan_to_num(scores, nan=-1.0)  # a flat view correlates with nothing
        order = np.argsort(-scores)
        z = (scores - scores.max()) / TEMPERATURE
        p = np.exp(z) / np.exp(z).sum()
        side, kind = self._keys[int(order[0])]
        return TokenMatch(side, kind, float(scores[order[0]]),
                          float(scores[order[0]] - scores[order[1]]),
                          {k: float(v) for k, v in zip(self._keys, p, strict=True)})

    def read(self, image: np.ndarray, cam: BoardCamera, cells: list[str]
             ) -> dict[str, TokenMatch]:
        h, w = image.shape[:2]
        out: dict[str, TokenMatch] = {}
        for cell in cells:
            x, y = cell_centre(cell, cam.pitch)
            c = cam.project(np.array([[x, y, 0.0]]))[0]
            if not (0 <= c[0] < w and 0 <= c[1] < h):
                continue
            out[cell] = self.match(self.top_view(image, cam, x, y))
        return out
