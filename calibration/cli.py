"""`royal-table calibrate ...`: fit the board (and optionally the lens), write a profile JSON."""

from __future__ import annotations

import argparse
import json
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np


class CliError(Exception):
    pass


def _read_image(path: str) -> np.ndarray:
    import cv2

    if not Path(path).is_file():
        raise CliError(f"no such image: {path}")
    img = cv2.imread(path, cv2.IMREAD_COLOR)
    if img is None:
        raise CliError(f"cannot read image: {path}")
    return img


@lru_cache(maxsize=4)
def _read_intrinsics(path: str) -> tuple[np.ndarray, np.ndarray]:
    """The camera matrix and distortion in a saved intrinsics file (read once per run)."""
    from .intrinsics import load_intrinsics

    try:
        K, dist, _ = load_intrinsics(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CliError(f"cannot read intrinsics {path}: {exc}") from None
    return K, dist


def _with_intrinsics(profile, args):
    if not getattr(args, "intrinsics", None):
        return profile
    profile.K, profile.dist = _read_intrinsics(args.intrinsics)
    return profile


def _undistort_quads(quads, args):
    if not getattr(args, "intrinsics", None):
        return quads
    import cv2

    K, dist = _read_intrinsics(args.intrinsics)
    return [cv2.undistortPoints(q.reshape(-1, 1, 2).astype(np.float64), K, dist, P=K)
            .reshape(4, 2).astype(np.float32) for q in quads]


def _finish(profile, image, args) -> int:
    from .signature import signature

    profile.signature = signature(image, profile)
    try:
        profile.save(args.out)
    except OSError as exc:
        raise CliError(f"cannot write {args.out}: {exc.strerror}") from None
    print(f"wrote {args.out}: method {profile.method}, fit residual {profile.residual_px:.2f} px, "
          f"card {profile.card_size[0]:.3f} x {profile.card_size[1]:.3f} cells, pitch ratio "
          f"{profile.pitch_ratio:.3f}, board {100 * profile.board_in_frame():.0f}% in frame")
    from .profile import zone_name

    cut = [zone_name(z) for z in profile.out_of_view()]
    if cut:  # the profile is kept: a camera moved a little is still better than none
        print(f"warning: {', '.join(cut)} {'lies' if len(cut) == 1 else 'lie'} partly out of "
              "the frame: the scanner reads what lies there as unsure (turn or raise the camera "
              "until the whole board and both initiative piles are in view)", file=sys.stderr)
    return 0


def _board(args) -> int:
    from scanner.card_presence import CardPresence, find_setup_cards

    from .register import RegistrationError, register_from_cards

    image = _read_image(args.image)
    h, w = image.shape[:2]
    presence = CardPresence.default()  # loaded once for both looks
    try:
        profile = register_from_cards(
            _undistort_quads(find_setup_cards(image, presence=presence), args), (w, h),
            args.white_edge)
    except RegistrationError:
        # small cards far away: look again at full resolution before giving up
        profile = register_from_cards(
            _undistort_quads(find_setup_cards(image, max_side=4096, presence=presence), args),
            (w, h), args.white_edge)
    return _finish(_with_intrinsics(profile, args), image, args)


def _parse_point(text: str) -> tuple[float, float]:
    try:
        x, y = (float(v) for v in text.split(","))
    except ValueError:
        raise CliError(f"not a point x,y: {text!r}") from None
    return x, y


def _corners(args) -> int:
    from .register import register_from_corners

    image = _read_image(args.image)
    if len(args.corners) != 4:
        raise CliError("--corners needs 4 points x,y: a1 g1 g5 a5 (outer board corners)")
    pts = np.array([_parse_point(p) for p in args.corners])
    pts = _undistort_quads([pts.astype(np.float32)], args)[0]
    h, w = image.shape[:2]
    return _finish(_with_intrinsics(register_from_corners(pts, (w, h)), args), image, args)


def _markers(args) -> int:
    from .register import register_from_markers

    image = _read_image(args.image)
    return _finish(_with_intrinsics(register_from_markers(image), args), image, args)


def _target(args) -> int:
    import cv2

    from .intrinsics import target_image

    if not 50 <= args.dpi <= 1200:
        raise CliError("--dpi must be between 50 and 1200")
    if not cv2.imwrite(args.out, target_image(args.dpi)):
        raise CliError(f"cannot write {args.out}")
    print(f"wrote {args.out}: print at 100 % scale (A4 landscape), glue flat, photograph it "
          "from 10-20 angles, then `royal-table calibrate intrinsics PHOTOS... --out FILE`")
    return 0


def _marker_sheet(args) -> int:
    import cv2

    from .register import ARUCO_DICT

    d = cv2.aruco.getPredefinedDictionary(ARUCO_DICT)
    tiles = []
    for i in range(4):
        m = cv2.aruco.generateImageMarker(d, i, 300)
        m = cv2.copyMakeBorder(m, 40, 80, 40, 40, cv2.BORDER_CONSTANT, value=255)
        cv2.putText(m, f"{i}: beside {['a1', 'g1', 'g5', 'a5'][i]}", (40, 410),
                    cv2.FONT_HERSHEY_SIMPLEX, 1.0, 0, 2)
        tiles.append(m)
    sheet = np.vstack([np.hstack(tiles[:2]), np.hstack(tiles[2:])])
    if not cv2.imwrite(args.out, sheet):
        raise CliError(f"cannot write {args.out}")
    print(f"wrote {args.out}: lay marker 0 diagonally outside a1, 1 outside g1, 2 outside g5, "
          "3 outside a5, about one cell out")
    return 0


def _intrinsics(args) -> int:
    from .intrinsics import calibrate

    images = [_read_image(p) for p in args.images]
    try:
        result = calibrate(images)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    except OSError as exc:
        raise CliError(f"cannot write {args.out}: {exc.strerror}") from None
    print(f"wrote {args.out}: {result['views']} views, reprojection RMS {result['rms_px']:.2f} px")
    return 0


def _check(args) -> int:
    from scanner.card_finder import find_cards

    from .profile import Profile
    from .register import check_registration

    profile = Profile.load(args.profile)
    image = _read_image(args.image)
    status = check_registration(profile, find_cards(image))
    print(status)
    return 0 if status == "ok" else 1


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="how", metavar="HOW")

    def add(name, func, help_text):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=lambda a, f=func: _run(f, a))
        return p

    p = add("board", _board, "register the board from the 8 set-up cards in a photo")
    p.add_argument("image")
    p.add_argument("--out", default="profile.json")
    p.add_argument("--white-edge", default="auto",
                   choices=["auto", "bottom", "top", "left", "right"],
                   help="image edge white sits at (auto: initiative cards, else bottom)")
    p.add_argument("--intrinsics", help="lens JSON from `calibrate intrinsics`")
    p = add("corners", _corners, "manual fallback: the board's 4 outer corners")
    p.add_argument("image")
    p.add_argument("--corners", nargs="+", required=True, metavar="X,Y",
                   help="outer corners of a1, g1, g5, a5 in image pixels")
    p.add_argument("--out", default="profile.json")
    p.add_argument("--intrinsics")
    p = add("markers", _markers, "register from ArUco markers 0-3 beside a1, g1, g5, a5")
    p.add_argument("image")
    p.add_argument("--out", default="profile.json")
    p.add_argument("--intrinsics")
    p = add("marker-sheet", _marker_sheet, "write the printable sheet of the 4 corner markers")
    p.add_argument("--out", default="markers.png")
    p = add("target", _target, "write the printable ChArUco lens target")
    p.add_argument("--out", default="charuco-target.png")
    p.add_argument("--dpi", type=int, default=200)
    p = add("intrinsics", _intrinsics, "camera intrinsics from photos of the ChArUco target")
    p.add_argument("images", nargs="+")
    p.add_argument("--out", default="intrinsics.json")
    p = add("check", _check, "is a profile still right for this frame? (ok / moved / unknown)")
    p.add_argument("profile")
    p.add_argument("image")
    parser.set_defaults(handler=lambda a: (parser.print_help(), 2)[1])


def _run(func, args) -> int:
    from .profile import ProfileError
    from .register import RegistrationError

    try:
        return func(args)
    except (CliError, RegistrationError, ProfileError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
