import numpy as np
import pytest

from dtmr.render.camera import NEAR, PRESETS, Camera, clip_to_near, fit_camera

SIZE = (200, 100)  # width, height
TARGET = (0.0, 1.0, 3.0)


def focal(camera):
    return 0.5 * SIZE[1] / np.tan(np.radians(camera.fov) / 2)


def test_front_preset_looks_along_plus_z_like_the_sensor():
    cam = Camera.preset("front", distance=2.0, target=TARGET)
    np.testing.assert_allclose(cam.eye, [0.0, 1.0, 1.0], atol=1e-12)
    f = focal(cam)
    px = cam.project(np.array([[0.0, 1.0, 3.0], [0.5, 1.0, 3.0], [0.0, 1.5, 3.0], [0.0, 1.0, 4.0]]), SIZE)
    np.testing.assert_allclose(px[0], [100.0, 50.0])
    np.testing.assert_allclose(px[1], [100.0 - f * 0.5 / 2.0, 50.0])  # +x (sensor's left) is image left
    np.testing.assert_allclose(px[2], [100.0, 50.0 - f * 0.5 / 2.0])  # +y is image up
    np.testing.assert_allclose(px[3], [100.0, 50.0])  # straight behind the target along the view axis


def test_side_preset_sees_depth_across_the_image():
    cam = Camera.preset("side", distance=2.0, target=TARGET)
    np.testing.assert_allclose(cam.eye, [2.0, 1.0, 3.0], atol=1e-12)
    f = focal(cam)
    px = cam.project(np.array([[0.0, 1.0, 3.5], [0.0, 1.2, 3.0]]), SIZE)
    np.testing.assert_allclose(px[0], [100.0 - f * 0.5 / 2.0, 50.0])  # away from the sensor: image left
    np.testing.assert_allclose(px[1], [100.0, 50.0 - f * 0.2 / 2.0])


def test_top_preset_looks_straight_down():
    cam = Camera.preset("top", distance=3.0, target=TARGET)
    np.testing.assert_allclose(cam.eye, [0.0, 4.0, 3.0], atol=1e-12)
    f = focal(cam)
    px = cam.project(np.array([[0.0, 1.0, 3.6], [0.3, 1.0, 3.0], [0.0, 2.5, 3.0]]), SIZE)
    np.testing.assert_allclose(px[0], [100.0, 50.0 - f * 0.6 / 3.0])  # +z is image up
    np.testing.assert_allclose(px[1], [100.0 - f * 0.3 / 3.0, 50.0])  # +x is image left
    np.testing.assert_allclose(px[2], [100.0, 50.0])


def test_projection_is_vectorized_over_leading_axes():
    cam = Camera.preset("oblique", distance=4.0, target=TARGET)
    points = np.random.default_rng(0).normal(TARGET, 0.3, size=(5, 7, 3))
    batched = cam.project(points, SIZE)
    assert batched.shape == (5, 7, 2)
    np.testing.assert_allclose(batched[3, 4], cam.project(points[3, 4], SIZE))


def test_missing_points_and_points_behind_the_eye_are_nan():
    cam = Camera.preset("front", distance=2.0, target=TARGET)
    px = cam.project(np.array([[np.nan, 1.0, 3.0], [0.0, 1.0, 0.5], [0.0, 1.0, 1.0 + NEAR / 2]]), SIZE)
    assert np.isnan(px).all()


def test_camera_rejects_bad_parameters():
    with pytest.raises(ValueError, match="preset"):
        Camera.preset("isometric")
    with pytest.raises(ValueError, match="elevation"):
        Camera(elevation=91.0)
    with pytest.raises(ValueError, match="distance"):
        Camera(distance=0.0)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_fit_camera_frames_every_clip_inside_the_margin(preset):
    rng = np.random.default_rng(1)
    near = rng.uniform([-0.4, 0.0, 2.5], [0.4, 1.8, 3.0], size=(20, 25, 3))
    far = near + [1.5, 0.0, 1.0]  # a second clip elsewhere: one framing must hold both
    azimuth, elevation = PRESETS[preset]
    cam = fit_camera([near, far], aspect=2.0, azimuth=azimuth, elevation=elevation, margin=0.1)
    px = cam.project(np.concatenate([near, far]), SIZE).reshape(-1, 2)
    assert np.isfinite(px).all()
    assert (px[:, 0] >= 0).all() and (px[:, 0] <= SIZE[0]).all()
    assert (px[:, 1] >= 0).all() and (px[:, 1] <= SIZE[1]).all()
    # tight: the framing uses most of the panel in at least one direction
    spread = (px.max(axis=0) - px.min(axis=0)) / np.array(SIZE)
    assert spread.max() > 0.5


def test_fit_camera_ignores_missing_joints_and_handles_empty_clips():
    clip = np.full((3, 25, 3), np.nan)
    assert fit_camera([clip]) == Camera()
    clip[:, 0] = [0.0, 1.0, 3.0]
    cam = fit_camera([clip])
    np.testing.assert_allclose(cam.target, [0.0, 1.0, 3.0])


def test_clip_to_near_cuts_segments_at_the_near_plane():
    segments = np.array([
        [[0.0, 0.0, -1.0], [0.0, 2.0, 1.0]],  # crosses the plane
        [[0.0, 0.0, 1.0], [1.0, 0.0, 2.0]],  # in front
        [[0.0, 0.0, -1.0], [1.0, 0.0, -2.0]],  # behind
    ])
    out = clip_to_near(segments)
    np.testing.assert_allclose(out[0, 0], [0.0, 1.0 + NEAR, NEAR])
    np.testing.assert_allclose(out[0, 1], segments[0, 1])
    np.testing.assert_allclose(out[1], segments[1])
    assert np.isnan(out[2]).all()
