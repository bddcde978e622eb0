"""Camera model: projection, distortion and the padded canvas agree; framing holds."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from models.renderer import Scene
from models.renderer.geometry import CELLS, INITIATIVE_POS, card_corners, cell_centre


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=10_000))
def test_ideal_canvas_and_distorted_image_agree(seed):
    cam = Scene.random(seed).camera()
    pts = np.array([[x, y, 0.0] for x in np.linspace(-25, 25, 5) for y in np.linspace(-20, 20, 5)])
    direct = cam.project(pts)
    via_canvas = cam.distort_ideal(cam.project_ideal(pts))
    assert np.abs(direct - via_canvas).max() < 0.05
    # the remap maps send each final pixel back to where the ideal canvas has it
    import cv2

    inside = (direct[:, 0] > 1) & (direct[:, 0] < cam.width - 2) & (direct[:, 1] > 1) & \
        (direct[:, 1] < cam.height - 2)
    if np.any(cam.dist) and inside.any():
        m1, m2 = cam.distortion_maps()
        mx, my = cv2.convertMaps(m1, m2, cv2.CV_32FC1)
        ideal = cam.project_ideal(pts)[inside]
        for (u, v), (iu, iv) in zip(direct[inside], ideal, strict=True):
            x, y = int(round(u)), int(round(v))
            assert abs(mx[y, x] - iu) < 1.5 and abs(my[y, x] - iv) < 1.5


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=10_000), st.sampled_from(["train", "heldout"]))
def test_whole_board_scenes_show_every_cell_and_initiative_card(seed, split):
    sc = Scene.random(seed, split=split, whole_board=True)
    cam = sc.camera()
    assert 30 <= sc.elevation <= 90
    for cell in CELLS:
        for u, v in cam.project(card_corners(*cell_centre(cell), 0.0)):
            assert -2 <= u <= sc.width + 2 and -2 <= v <= sc.height + 2, cell
    for side in ("white", "black"):
        uv = cam.project(np.array([[*INITIATIVE_POS[side], 0.0]]))[0]
        assert 0 <= uv[0] <= sc.width and 0 <= uv[1] <= sc.height


@settings(max_examples=25, deadline=None)
@given(st.integers(min_value=0, max_value=10_000))
def test_a_scene_from_above_keeps_everything_but_its_elevation(seed):
    """`elevation` narrows the camera's range and nothing else: the default range gives the
    scenes it always gave (the caches of rendered crops key on seeds)."""
    plain = Scene.random(seed)
    above = Scene.random(seed, elevation=(70.0, 90.0))
    assert 70 <= above.elevation <= 90
    assert Scene.random(seed, elevation=(30.0, 90.0)) == plain
    assert dataclasses.replace(above, elevation=plain.elevation) == plain
