import numpy as np
import pytest

from dtmr.skeleton import get_topology, normalize, resample
from dtmr.skeleton.normalize import canonical_transform, yaw_rotation


def yaw(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]], dtype=np.float32)


def standing_clip(rng, frames, topology="ntu25"):
    t = get_topology(topology)
    clip = rng.normal(scale=0.2, size=(frames, t.num_joints, 3)).astype(np.float32)
    clip[:, t.left_hip] = clip[:, t.root] + [-0.1, 0, 0]
    clip[:, t.right_hip] = clip[:, t.root] + [0.1, 0, 0]
    return clip


@pytest.mark.parametrize("name", ["ntu25", "kinect_v1_20", "uiprmd22"])
def test_normalize_then_invert_is_identity_at_64_frames(rng, name):
    clip = standing_clip(rng, 64, name) @ yaw(1.1).T + np.array([0.5, -0.2, 3.0], dtype=np.float32)
    normed, transform = normalize(clip, name)
    np.testing.assert_allclose(transform.invert(normed), clip, atol=1e-5)


def test_spatial_part_inverts_exactly_for_any_length(rng):
    clip = standing_clip(rng, 37) @ yaw(-2.0).T + 1.5
    transform = canonical_transform(clip, "ntu25")
    np.testing.assert_allclose(transform.invert_spatial(transform.apply_spatial(clip)), clip, atol=1e-5)
    normed, transform = normalize(clip, "ntu25")
    assert normed.shape == (64, 25, 3)
    back = transform.invert(normed)
    assert back.shape == clip.shape
    # resampling up and down keeps the end frames exactly
    np.testing.assert_allclose(back[[0, -1]], clip[[0, -1]], atol=1e-5)


def test_normalized_clip_is_canonical(rng):
    t = get_topology("ntu25")
    clip = standing_clip(rng, 50) @ yaw(0.7).T + [2.0, 0.3, -1.0]
    normed, _ = normalize(clip, t)
    np.testing.assert_allclose(normed[0, t.root], 0.0, atol=1e-6)
    hips = normed[0, t.right_hip] - normed[0, t.left_hip]
    assert hips[0] > 0 and abs(hips[2]) < 1e-5


def test_yaw_rotation_is_a_proper_rotation_about_y(rng):
    for v in rng.normal(size=(20, 3)):
        r = yaw_rotation(v)
        np.testing.assert_allclose(r @ r.T, np.eye(3), atol=1e-6)
        assert np.linalg.det(r) == pytest.approx(1.0, abs=1e-6)
        np.testing.assert_allclose(r @ [0, 1, 0], [0, 1, 0], atol=1e-6)
        out = r @ v
        assert out[0] > 0 and abs(out[2]) < 1e-5


def test_resample_is_linear_and_keeps_ends():
    x = np.arange(5, dtype=np.float32)[:, None]
    np.testing.assert_allclose(resample(x, 9)[:, 0], np.linspace(0, 4, 9), atol=1e-6)
    np.testing.assert_allclose(resample(x, 2)[:, 0], [0, 4])
    np.testing.assert_allclose(resample(x[:1], 4)[:, 0], [0, 0, 0, 0])
    with pytest.raises(ValueError):
        resample(x[:0], 4)


def test_missing_first_frame_pelvis_falls_back_to_first_valid_frame(rng):
    t = get_topology("ntu25")
    clip = standing_clip(rng, 10)
    clip[0, t.root] = np.nan
    transform = canonical_transform(clip, t)
    np.testing.assert_allclose(transform.origin, clip[1, t.root])
