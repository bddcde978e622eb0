"""Calibration geometry on synthetic quadrilaterals, and the profile's JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calibration.geometry import (
    apply_h,
    card_board_corners,
    cell_at,
    cell_xy,
    fit_homography,
    order_quad,
    orientation_sign,
    quad_centre,
)
from calibration.profile import Profile, ProfileError


def random_h(rng: np.random.Generator) -> np.ndarray:
    """A camera-like homography: scale, turn, shift and some perspective (not mirrored)."""
    a = rng.uniform(0, 2 * np.pi)
    s = rng.uniform(40, 120)
    H = np.array([[s * np.cos(a), -s * np.sin(a), rng.uniform(300, 900)],
                  [s * np.sin(a), s * np.cos(a), rng.uniform(200, 500)],
                  [rng.uniform(-0.03, 0.03), rng.uniform(-0.03, 0.03), 1.0]])
    return H @ np.diag([1.0, -1.0, 1.0])  # board y up -> image y down


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000))
def test_quad_centre_is_the_projected_centre(seed):
    rng = np.random.default_rng(seed)
    H = random_h(rng)
    c = rng.uniform(0, 6, 2)
    rect = card_board_corners(tuple(c), (0.84, 0.88))
    got = quad_centre(apply_h(H, rect))
    assert np.allclose(got, apply_h(H, c[None])[0], atol=1e-6)
    # the mean of the corners is not, under perspective (why quad_centre exists)
    if abs(H[2, 0]) + abs(H[2, 1]) > 0.02:
        assert not np.allclose(apply_h(H, rect).mean(0), got, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(st.permutations(range(4)), st.floats(0, 2 * np.pi))
def test_order_quad_is_clockwise_from_top_left(perm, angle):
    base = np.array([[0, 0], [60, 0], [60, 90], [0, 90]], np.float64) + 100
    R = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]]) * 0.2
    q = (base - 130) @ R.T * 5 + 300  # any rotation
    got = order_quad(q[list(perm)])
    # clockwise on screen: positive signed area with y down
    x, y = got[:, 0], got[:, 1]
    assert float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) > 0
    assert int(np.argmin(got.sum(1))) == 0
    # the same four corners
    d = np.linalg.norm(got[:, None, :] - q[None, :, :], axis=2)
    assert np.all(d.min(1) < 1e-3) and np.all(d.min(0) < 1e-3)


def test_fit_homography_recovers_it_and_rejects_degenerate():
    rng = np.random.default_rng(1)
    H = random_h(rng)
    src = rng.uniform(-1, 7, (12, 2))
    got = fit_homography(src, apply_h(H, src))
    assert np.allclose(got, H / H[2, 2], atol=1e-6)
    assert fit_homography(src[:3], apply_h(H, src[:3])) is None
    assert orientation_sign(H) < 0  # a camera looking down
    assert orientation_sign(H @ np.diag([-1.0, 1, 1])) > 0  # a mirror view


def test_cells():
    assert cell_xy("a1") == (0.0, 0.0)
    assert cell_xy("g5") == (6.0, 4.0)
    assert cell_at(3.2, 1.8) == "d3"
    assert cell_at(-0.7, 0) is None
    with pytest.raises(ValueError):
        cell_xy("h1")


def test_profile_round_trip(tmp_path):
    rng = np.random.default_rng(2)
    p = Profile(H=random_h(rng), image_size=(1280, 720), card_size=(0.8, 0.9),
                K=np.array([[900.0, 0, 640], [0, 900, 360], [0, 0, 1]]),
                dist=np.array([-0.1, 0.02, 0, 0, 0]), residual_px=1.5, signature=[0.1, -0.2])
    path = tmp_path / "profile.json"
    p.save(path)
    q = Profile.load(path)
    assert np.allclose(q.H, p.H) and q.image_size == (1280, 720)
    assert np.allclose(q.K, p.K) and np.allclose(q.dist, p.dist)
    assert q.initiative == p.initiative
    assert abs(q.pitch_ratio - (88 / 63) * 0.8 / 0.9) < 1e-3
    pts = np.array([[0.0, 0.0], [6.0, 4.0], [3.0, 2.0]])
    assert np.allclose(q.image_to_board(q.board_to_image(pts)), pts, atol=1e-4)


def test_profile_errors(tmp_path):
    with pytest.raises(ProfileError, match="cannot read"):
        Profile.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ProfileError, match="not JSON"):
        Profile.load(bad)
    bad.write_text(json.dumps({"homography": [[1, 0], [0, 1]], "image_size": [10, 10]}))
    with pytest.raises(ProfileError, match="3x3"):
        Profile.load(bad)
    bad.write_text(json.dumps({"image_size": [10, 10]}))
    with pytest.raises(ProfileError, match="malformed profile: no 'homography'"):
        Profile.load(bad)
    bad.write_text(json.dumps({"homography": np.eye(3).tolist(), "image_size": "wide"}))
    with pytest.raises(ProfileError, match="malformed profile: invalid literal"):
        Profile.load(bad)
    bad.write_text("[1, 2]")
    with pytest.raises(ProfileError, match="object"):
        Profile.load(bad)
