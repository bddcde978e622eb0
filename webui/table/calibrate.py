"""Calibration from the set-up cards, from the page: the latest frame, the 8 cards, a profile.

Uses the calibration package (`royal-table calibrate board` does the same from a photo): find
every card, fit the board lattice to the 8 set-up cards, save the profile in the data dir, and
hand it to the live camera (grid overlay, scanner). Until that package is installed the page
says so and the players calibrate with the command.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

WHITE_EDGES = ("auto", "bottom", "top", "left", "right")


class CalibrationError(ValueError):
    """Calibration could not be done: the message says why, in the players' words."""


def calibrate_from_frame(image: np.ndarray | None, out: Path, white_edge: str = "auto") -> dict:
    """Fit the board to the set-up cards in `image`, save the profile to `out`, report it."""
    if white_edge not in WHITE_EDGES:
        raise CalibrationError(f"white_edge must be one of {', '.join(WHITE_EDGES)}")
    if image is None:
        raise CalibrationError("no picture to calibrate from: start serve with a camera")
    try:
        from calibration.profile import zone_name
        from calibration.register import RegistrationError, register_from_cards
        from calibration.signature import signature
        from scanner.card_presence import find_setup_cards
    except ImportError:
        raise CalibrationError("board calibration is not installed yet: calibrate with "
                               "'royal-table calibrate' and start serve with --profile") from None
    h, w = image.shape[:2]
    try:
        profile = register_from_cards(find_setup_cards(image), (w, h), white_edge)
    except (RegistrationError, ValueError) as exc:
        raise CalibrationError(f"the board was not found: {exc}") from None
    check_fit(np.asarray(profile.H, np.float64))
    profile.signature = signature(image, profile)
    out.parent.mkdir(parents=True, exist_ok=True)
    profile.save(out)
    return {"profile": str(out), "method": profile.method,
            "residual_px": round(float(profile.residual_px), 2),
            "board_in_frame": round(float(profile.board_in_frame()), 3),
            "out_of_view": [zone_name(z) for z in profile.out_of_view()]}


def check_fit(H: np.ndarray) -> None:
    """Refuse a lattice that folds the board through the horizon: every cell centre (and the
    board's outer corners) must lie in front of the camera, and the board must not be mirrored.
    A fit to the wrong cards can pass a residual test and still be such a fold."""
    pts = np.array([(f, r) for f in (-0.5, *range(7), 6.5) for r in (-0.5, *range(5), 4.5)],
                   np.float64)
    w = pts @ H[2, :2] + H[2, 2]
    if not (np.all(w > 0) or np.all(w < 0)):
        raise CalibrationError("the board was not found: the cards found do not fit one flat "
                               "board (are all 8 set-up cards in view, with no hands over them?)")
