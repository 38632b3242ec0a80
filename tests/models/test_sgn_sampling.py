import numpy as np
import pytest

from dtmr import Clip
from dtmr.models.recognizers import prepare_sequence, segment_bounds, segment_indices, sgn_batch, window_indices
from dtmr.skeleton import get_topology, to_ntu25


@pytest.mark.parametrize("frames", [1, 7, 20, 64, 75, 301])
def test_random_draws_take_one_frame_inside_each_segment(frames):
    rng = np.random.default_rng(0)
    starts, stops = segment_bounds(frames, 20)
    assert starts[0] == 0 and stops[-1] == max(frames, 1) and (stops > starts).all()
    draws = segment_indices(frames, 20, rng, samples=200)
    assert draws.shape == (200, 20) and draws.dtype.kind == "i"
    assert ((draws >= starts) & (draws < stops)).all()
    assert (np.diff(draws, axis=1) >= 0).all()
    # every frame of the clip is reachable (upstream SGN never samples the last T mod 20 frames)
    assert set(np.unique(draws)) == set(range(frames))


def test_train_and_test_sampling_and_determinism():
    assert segment_indices(75, 20, np.random.default_rng(3)).shape == (1, 20)
    np.testing.assert_array_equal(segment_indices(75, 20, np.random.default_rng(3), 5),
                                  segment_indices(75, 20, np.random.default_rng(3), 5))
    middles = segment_indices(40, 20, None, samples=2)
    np.testing.assert_array_equal(middles[0], np.arange(0, 40, 2))
    np.testing.assert_array_equal(middles[0], middles[1])
    np.testing.assert_array_equal(segment_indices(10, 20)[0], np.repeat(np.arange(10), 2))
    with pytest.raises(ValueError):
        segment_indices(0, 20)


def hip_and_root(topology, joints):
    topo = get_topology(topology)
    return joints[:, topo.root], joints[:, topo.right_hip] - joints[:, topo.left_hip]


def test_preparation_centres_turns_and_zeroes_missing_joints():
    rng = np.random.default_rng(1)
    joints = rng.normal(size=(30, 25, 3)).astype(np.float32) + np.array([2.0, 0.5, 3.0], dtype=np.float32)
    joints[4, 7] = np.nan
    clip = Clip(joints, topology="ntu25")
    prepared = prepare_sequence(clip)
    root, hips = hip_and_root("ntu25", prepared)
    np.testing.assert_allclose(root[0], 0.0, atol=1e-6)
    assert hips[0, 0] > 0 and abs(hips[0, 2]) < 1e-5
    np.testing.assert_array_equal(prepared[4, 7], 0.0)
    assert prepared.shape == (30, 25, 3) and np.isfinite(prepared).all()
    # rigid: distances between joints are kept
    np.testing.assert_allclose(np.linalg.norm(prepared[10, 3] - prepared[10, 9]),
                               np.linalg.norm(joints[10, 3] - joints[10, 9]), rtol=1e-5)
    np.testing.assert_array_equal(prepare_sequence(joints, "ntu25"), prepared)


def test_other_joint_sets_are_mapped_to_an_ntu25_recognizer():
    rng = np.random.default_rng(2)
    joints = rng.normal(size=(12, 20, 3)).astype(np.float32)
    clip = Clip(joints, topology="kinect_v1_20")
    mapped = prepare_sequence(clip, "ntu25")
    np.testing.assert_allclose(mapped, prepare_sequence(to_ntu25(joints, "kinect_v1_20"), "ntu25"), atol=1e-6)
    with pytest.raises(ValueError, match="cannot read"):
        prepare_sequence(clip, "uiprmd22")


def test_sgn_batch_shapes():
    rng = np.random.default_rng(4)
    clips = [rng.normal(size=(n, 22, 3)).astype(np.float32) for n in (5, 40, 90)]
    train = sgn_batch(clips, 20, rng, train=True, topology="uiprmd22")
    test = sgn_batch(clips, 20, rng, train=False, samples=5, topology="uiprmd22")
    assert train.shape == (3, 20, 22, 3) and test.shape == (15, 20, 22, 3)
    # samples of a clip are consecutive: the first five rows all come from the 5-frame clip
    short = prepare_sequence(clips[0], "uiprmd22")
    frames = test[:5].numpy().reshape(-1, 22, 3)
    assert all(any(np.array_equal(f, s) for s in short) for f in frames)


def test_window_indices_stay_inside_the_clip_and_centre_on_the_frame():
    idx = window_indices(100, 20, 32, np.arange(100))
    assert idx.shape == (100, 20) and idx.min() == 0 and idx.max() >= 98 and idx.max() <= 99
    np.testing.assert_array_equal(idx[50] - idx[50, 0], segment_indices(32, 20)[0])
    assert idx[50, 0] == 50 - 16 and idx[0, 0] == 0 and idx[99, -1] <= 99
    short = window_indices(10, 20, 32, np.arange(10))
    assert (short == short[0]).all() and short.max() == 9
