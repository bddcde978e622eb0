"""A scene: everything about a render except the position, drawn from a seed."""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field

import numpy as np

from . import assets
from .geometry import Camera, make_camera
from .surfaces import SURFACES

PIECE_SETS_3D = ["brutalchess", "dreamchess-classic", "dreamchess-elements"]
TOKEN_SET = "paper-token"


def sub_seed(*parts: object) -> int:
    """A stable 63-bit seed from any values (hash of their text)."""
    h = hashlib.blake2b("|".join(str(p) for p in parts).encode(), digest_size=8).digest()
    return int.from_bytes(h, "little") >> 1


@dataclass
class Scene:
    seed: int = 0
    width: int = 1280
    height: int = 720
    # camera
    elevation: float = 60.0  # degrees above the table plane, 30..90
    azimuth: float = 0.0  # 0 = behind white's edge, 180 = behind black's
    roll: float = 0.0
    hfov: float = 60.0
    board_fraction: float = 0.7  # board width / frame width, 0.40..0.95
    k1: float = 0.0
    k2: float = 0.0
    target: tuple[float, float] = (4.0, 0.0)  # look-at point on the table (cm)
    # assets
    design_white: str = "gnome-anglo"
    design_black: str = "gnome-anglo"
    piece_set: str = "brutalchess"
    surface: str = "wood"
    backdrop: tuple[int, int, int] = (40, 45, 50)  # the floor beyond the table's edge (BGR)
    clutter: bool = True  # mugs, phones, boxes, pens beside the game
    # light
    kelvin: float = 5000.0
    brightness: float = 1.0
    gradient: float = 0.1
    gradient_angle: float = 0.0
    vignette: float = 0.1
    shadow: float = 0.0
    shadow_poly: list = field(default_factory=list)
    shadow_soft: float = 15.0
    light_dir: float = 0.5  # azimuth (rad) of the main light, for piece shadows
    light_elev: float = 1.0  # elevation (rad) of the main light
    glare: float = 0.0
    glare_xy: tuple[float, float] = (0.5, 0.5)
    glare_size: float = 0.05
    # the cards on the table
    card_offset: float = 0.3  # cm, max misalignment in the cell
    card_rotation: float = 3.0  # degrees, max
    card_bend: float = 0.2  # cm, max lift of a card's middle
    # camera effects
    defocus: float = 0.0
    motion: float = 0.0
    motion_angle: float = 0.0
    noise: float = 2.0
    sharpen: float = 0.0  # unsharp-mask amount (webcams over-sharpen)
    chroma: float = 0.0  # lateral chromatic aberration: red channel scale - 1
    jpeg: int = 90
    # hands
    skin: tuple[int, int, int] = (120, 160, 210)  # BGR
    sleeve: tuple[int, int, int] = (90, 60, 40)

    @classmethod
    def random(cls, seed: int, split: str = "train", designs: list[str] | None = None,
               piece_sets: list[str] | None = None, width: int = 1280,
               height: int = 720, whole_board: bool = False,
               elevation: tuple[float, float] = (30.0, 90.0)) -> Scene:
        """A random scene. `split` picks from the committed train or held-out assets unless
        `designs` / `piece_sets` name them. `whole_board`: shrink the board until every cell
        and both initiative cards are inside the frame. `elevation`: the camera's range, in
        degrees above the table (the same draw, so the default gives the scenes it always
        gave)."""
        rng = np.random.default_rng(sub_seed("scene", seed))
        sp = assets.split()
        if designs is None:
            designs = sp["cards"]["train" if split == "train" else "heldout"]
        if piece_sets is None:
            piece_sets = list(sp["pieces"]["train" if split == "train" else "heldout"])
            piece_sets += sp["pieces"]["tokens"]
        dw = str(rng.choice(designs))
        db = dw if rng.random() < 0.6 else str(rng.choice(designs))
        u = rng.uniform
        elev = float(u(*elevation))
        frac = float(u(0.4, 0.95))
        shadow_poly: list = []
        shadow = 0.0
        if rng.random() < 0.35:
            shadow = float(u(0.2, 0.55))
            x0 = u(-0.2, 0.8)
            shadow_poly = [[x0, -0.1], [x0 + u(0.1, 0.6), -0.1], [x0 + u(0.1, 0.8), 1.1],
                           [x0 + u(-0.2, 0.2), 1.1]]
            if rng.random() < 0.5:
                shadow_poly = [[y, x] for x, y in shadow_poly]
        skin_tones = [(120, 160, 210), (95, 130, 185), (70, 100, 150), (50, 70, 105),
                      (140, 175, 225), (85, 115, 160)]
        skin = skin_tones[int(rng.integers(len(skin_tones)))]
        sc = cls(
            seed=seed, width=width, height=height,
            elevation=elev, azimuth=float(u(0, 360)), roll=float(rng.normal(0, 6)),
            hfov=float(u(45, 75)), board_fraction=frac,
            k1=float(u(-0.15, 0.05)), k2=float(u(-0.02, 0.04)),
            target=(float(u(0, 8)), float(u(-3, 3))),
            design_white=dw, design_black=db,
            piece_set=str(rng.choice(piece_sets)),
            surface=str(rng.choice(SURFACES)),
            backdrop=tuple(int(c) for c in rng.integers(15, 110, 3)),
            kelvin=float(u(2700, 6500)), brightness=float(u(0.65, 1.2)),
            gradient=float(u(0, 0.35)), gradient_angle=float(u(0, 2 * math.pi)),
            vignette=float(u(0, 0.35)), shadow=shadow, shadow_poly=shadow_poly,
            shadow_soft=float(u(1, 40)),
            light_dir=float(u(0, 2 * math.pi)), light_elev=float(u(0.5, 1.4)),
            glare=float(u(0.3, 0.9)) if rng.random() < 0.3 else 0.0,
            glare_xy=(float(u(0.2, 0.8)), float(u(0.2, 0.8))), glare_size=float(u(0.02, 0.08)),
            card_offset=float(u(0.0, 0.5)), card_rotation=float(u(0, 4)),
            card_bend=float(u(0, 0.4)),
            defocus=float(u(0, 2.0)) if rng.random() < 0.4 else 0.0,
            motion=float(u(2, 9)) if rng.random() < 0.2 else 0.0,
            motion_angle=float(u(0, 180)),
            noise=float(u(0, 6)), jpeg=int(u(45, 96)),
            sharpen=float(u(0.3, 1.2)) if rng.random() < 0.35 else 0.0,
            chroma=float(u(0.0005, 0.003)) if rng.random() < 0.3 else 0.0,
            skin=skin, sleeve=tuple(int(c) for c in rng.integers(20, 200, 3)),
        )
        if whole_board:
            sc.fit_whole_board()
        return sc

    def fit_whole_board(self, margin: float = 0.02) -> Scene:
        """Shrink board_fraction until every cell and both initiative cards are inside the
        frame (the decks may be cut off; in place; returns self)."""
        from .geometry import BOARD_H, BOARD_W, INITIATIVE_POS

        xs = [-BOARD_W / 2, BOARD_W / 2, INITIATIVE_POS["white"][0] + 4.5]
        ys = [-BOARD_H / 2, BOARD_H / 2]
        pts = np.array([[x, y, 0.0] for x in xs for y in ys])
        # aim at the middle of the whole layout (board, initiative cards, decks)
        self.target = ((xs[0] + xs[2]) / 2 + (self.target[0] - 4.0) / 4, self.target[1])
        for _ in range(40):
            uv = self.camera().project(pts)
            m = margin * self.width
            if (uv[:, 0].min() > m and uv[:, 0].max() < self.width - m and uv[:, 1].min() > m
                    and uv[:, 1].max() < self.height - m):
                break
            self.board_fraction *= 0.95
        return self

    def camera(self) -> Camera:
        return make_camera(self.elevation, self.azimuth, self.roll, self.hfov,
                           self.board_fraction, self.width, self.height,
                           np.array([self.k1, self.k2, 0.0, 0.0, 0.0]), self.target)

    def to_dict(self) -> dict:
        d = asdict(self)
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict) -> Scene:
        kw = dict(d)
        for k in ("target", "glare_xy", "skin", "sleeve", "backdrop"):
            if k in kw:
                kw[k] = tuple(kw[k])
        return cls(**kw)
