"""The calibration profile: everything `scan` and `serve` need to know where the board is.

Saved as JSON. The homography maps board-plane cell units (see `geometry`) to undistorted image
pixels; with intrinsics present, points are distorted after it (so the frame itself is never
remapped, which would cost a full-frame pass per frame).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from .geometry import (
    CARD_ASPECT,
    CELLS,
    DEFAULT_CARD_CELLS,
    apply_h,
    card_board_corners,
    cell_xy,
)

PROFILE_VERSION = 1
# Initiative cards lie beside file g, level with each home rank (the renderer puts them 9.75 cm
# past g's centre on a 7.5 cm pitch = 1.3 cells).
DEFAULT_INITIATIVE = {"white": (7.3, 0.0), "black": (7.3, 4.0)}


def zone_name(zone: str) -> str:
    """A zone key as players say it: a cell's name, or "white's initiative pile"."""
    return f"{zone.split('/')[1]}'s initiative pile" if zone.startswith("init/") else zone


class ProfileError(ValueError):
    """A profile file that is missing, unreadable or malformed."""


@dataclass
class Profile:
    H: np.ndarray  # 3x3 board (cell units) -> undistorted image pixels
    image_size: tuple[int, int]  # width, height
    card_size: tuple[float, float] = DEFAULT_CARD_CELLS  # card w, h in cell units (portrait)
    K: np.ndarray | None = None  # optional camera matrix
    dist: np.ndarray | None = None  # optional distortion k1 k2 p1 p2 k3
    initiative: dict[str, tuple[float, float]] = field(
        default_factory=lambda: dict(DEFAULT_INITIATIVE))
    method: str = "cards"  # how it was registered: cards | corners | markers
    residual_px: float = 0.0  # RMS fit error of the registration
    signature: list[float] = field(default_factory=list)  # board appearance, see `signature`

    # -- geometry ---------------------------------------------------------------------------
    @property
    def pitch_ratio(self) -> float:
        """Rank pitch / file pitch, measured from the cards' known 88:63 shape."""
        w, h = self.card_size
        return float(CARD_ASPECT * w / h) if h > 0 else 0.0

    def _distort(self, uv: np.ndarray) -> np.ndarray:
        if self.K is None or self.dist is None:
            return uv
        rays = np.hstack([uv, np.ones((len(uv), 1))]) @ np.linalg.inv(self.K).T
        out, _ = cv2.projectPoints(rays, np.zeros(3), np.zeros(3), self.K, self.dist)
        return out.reshape(-1, 2)

    def undistort(self, uv: np.ndarray) -> np.ndarray:
        uv = np.asarray(uv, np.float64).reshape(-1, 2)
        if self.K is None or self.dist is None:
            return uv
        return cv2.undistortPoints(uv.reshape(-1, 1, 2), self.K, self.dist, P=self.K).reshape(
            -1, 2)

    def board_to_image(self, pts: np.ndarray) -> np.ndarray:
        return self._distort(apply_h(self.H, pts))

    def image_to_board(self, uv: np.ndarray) -> np.ndarray:
        return apply_h(np.linalg.inv(self.H), self.undistort(uv))

    def cell_card_quad(self, cell: str, landscape: bool = False) -> np.ndarray:
        """Image corners where a card squarely on `cell` would lie (white's view order)."""
        return self.board_to_image(card_board_corners(cell_xy(cell), self.card_size,
                                                      landscape)).astype(np.float32)

    def initiative_quad(self, side: str) -> np.ndarray:
        return self.board_to_image(card_board_corners(self.initiative[side],
                                                      self.card_size)).astype(np.float32)

    def cell_pixels(self) -> float:
        """Rough size of one cell in pixels (the mean file pitch), for scale-aware thresholds."""
        c = self.board_to_image(np.array([[3.0, 2.0], [4.0, 2.0]]))
        return float(np.linalg.norm(c[1] - c[0]))

    def zones(self) -> list[tuple[str, tuple[float, float]]]:
        """Where cards lie, by key and board-plane centre: the 35 cells, then `init/<side>`
        for each initiative pile."""
        return [(c, cell_xy(c)) for c in CELLS] + [
            (f"init/{side}", xy) for side, xy in self.initiative.items()]

    def _in_frame(self, uv: np.ndarray) -> np.ndarray:
        """Which image points lie inside the frame."""
        w, h = self.image_size
        return (uv[:, 0] >= 0) & (uv[:, 0] < w) & (uv[:, 1] >= 0) & (uv[:, 1] < h)

    def out_of_view(self) -> list[str]:
        """Zones (`zones`) where a card laid squarely, portrait or landscape, would not lie
        wholly inside the frame: the camera cannot tell whether a card lies there when it
        finds none, nor read a piece whose cell is cut off."""
        out = []
        for name, xy in self.zones():
            corners = np.vstack([card_board_corners(xy, self.card_size, land)
                                 for land in (False, True)])
            if not self._in_frame(self.board_to_image(corners)).all():
                out.append(name)
        return out

    def board_in_frame(self) -> float:
        """Fraction of the 35 cell centres inside the image."""
        uv = self.board_to_image(np.array([cell_xy(c) for c in CELLS]))
        return float(self._in_frame(uv).mean())

    # -- JSON -------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {
            "version": PROFILE_VERSION,
            "homography": np.asarray(self.H, np.float64).tolist(),
            "image_size": list(self.image_size),
            "card_size_cells": [round(float(v), 5) for v in self.card_size],
            "pitch_ratio": round(self.pitch_ratio, 4),
            "camera_matrix": None if self.K is None else np.asarray(self.K).tolist(),
            "distortion": None if self.dist is None else np.asarray(self.dist).ravel().tolist(),
            "initiative_zones": {k: [round(float(x), 4) for x in v]
                                 for k, v in self.initiative.items()},
            "method": self.method,
            "residual_px": round(float(self.residual_px), 3),
            "signature": [round(float(v), 4) for v in self.signature],
        }

    @classmethod
    def from_json(cls, d: dict) -> Profile:
        try:
            H = np.array(d["homography"], np.float64)
            if H.shape != (3, 3) or not np.all(np.isfinite(H)):
                raise ProfileError("homography must be a finite 3x3 matrix")
            w, h = (int(v) for v in d["image_size"])
            K = d.get("camera_matrix")
            dist = d.get("distortion")
            init = d.get("initiative_zones") or DEFAULT_INITIATIVE
            return cls(
                H=H, image_size=(w, h),
                card_size=tuple(float(v) for v in d.get("card_size_cells",
                                                         DEFAULT_CARD_CELLS)),
                K=None if K is None else np.array(K, np.float64).reshape(3, 3),
                dist=None if dist is None else np.array(dist, np.float64).ravel(),
                initiative={k: (float(v[0]), float(v[1])) for k, v in init.items()},
                method=str(d.get("method", "cards")),
                residual_px=float(d.get("residual_px", 0.0)),
                signature=[float(v) for v in d.get("signature", [])],
            )
        except ProfileError:
            raise
        except KeyError as exc:
            raise ProfileError(f"malformed profile: no {exc.args[0]!r} (a profile that "
                               "`royal-table calibrate` writes has it)") from None
        except (TypeError, ValueError, IndexError) as exc:
            raise ProfileError(f"malformed profile: {exc}") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        try:
            data = json.loads(Path(path).read_text())
        except OSError as exc:
            raise ProfileError(f"cannot read profile {path}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise ProfileError(f"profile {path} is not JSON: {exc.msg} (line {exc.lineno})") \
                from None
        if not isinstance(data, dict):
            raise ProfileError(f"profile {path} is not a JSON object")
        return cls.from_json(data)
