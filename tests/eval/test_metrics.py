"""Geometric evaluation metrics on hand-made clips, plus a sanity pass over real clips."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.eval import metrics as M
from dtmr.skeleton import foot_sliding_speed, get_topology, mean_pose_bone_lengths

NTU = get_topology("ntu25")


def ntu_clip(rng: np.random.Generator, frames: int) -> np.ndarray:
    return rng.normal(0.0, 0.3, (frames, 25, 3))


def test_identical_clips_score_zero():
    rng = np.random.default_rng(0)
    clips = [ntu_clip(rng, 12), ntu_clip(rng, 30)]
    for metric in (M.mse, M.mpjpe, M.velocity_error):
        assert metric(clips, clips).tolist() == [0.0, 0.0]


def test_mse_and_mpjpe_of_known_offsets_with_ragged_clips():
    rng = np.random.default_rng(1)
    targets = [ntu_clip(rng, 5), ntu_clip(rng, 17), ntu_clip(rng, 2)]
    shifted = [t + 0.01 for t in targets]  # 1 cm on every coordinate
    np.testing.assert_allclose(M.mse(shifted, targets), [1e-4] * 3, rtol=1e-9)
    offset = np.array([0.03, 0.04, 0.0])  # a 5 cm displacement
    np.testing.assert_allclose(M.mpjpe([t + offset for t in targets], targets), [0.05] * 3, rtol=1e-9)
    stacked = np.stack([targets[0], targets[0] + 0.02])  # (N, T, J, 3) stacks work too
    np.testing.assert_allclose(M.mse(stacked, np.stack([targets[0]] * 2)), [0.0, 4e-4], atol=1e-15)
    single = M.mpjpe(targets[1] + offset, targets[1])  # and a single clip
    assert single.shape == (1,) and single[0] == pytest.approx(0.05)


def test_missing_joints_are_left_out():
    rng = np.random.default_rng(2)
    target = ntu_clip(rng, 6)
    pred = target + 0.01
    pred[2, 5] = np.nan
    target[4, 7] = np.nan
    assert M.mse(pred, target)[0] == pytest.approx(1e-4)
    assert M.mpjpe(pred, target)[0] == pytest.approx(np.sqrt(3e-4))
    all_missing = np.full((3, 25, 3), np.nan)
    assert np.isnan(M.mse(all_missing, all_missing)[0])


def test_velocity_error_of_a_drift_and_of_a_one_frame_clip():
    rng = np.random.default_rng(3)
    target = ntu_clip(rng, 8)
    drift = target + np.arange(8)[:, None, None] * np.array([0.0, 0.0, 0.02])  # 2 cm/frame along z
    assert M.velocity_error(drift, target)[0] == pytest.approx(0.02)
    assert M.velocity_error(target + 0.5, target)[0] == pytest.approx(0.0, abs=1e-15)
    values = M.velocity_error([drift, target[:1]], [target, target[:1]])
    assert values[0] == pytest.approx(0.02) and np.isnan(values[1])


def test_smoothness_is_the_mean_acceleration_magnitude():
    still = np.zeros((6, 25, 3))
    steady = still + np.arange(6)[:, None, None] * np.array([0.01, 0.0, 0.0])
    bump = still.copy()
    bump[2, :, 1] = 0.03  # y = 0, 0, a, 0, 0, 0 -> |acc| = a, 2a, a, 0 over the 4 inner frames
    np.testing.assert_allclose(M.smoothness([still, steady, bump]), [0.0, 0.0, 4 * 0.03 / 4], atol=1e-15)
    assert np.isnan(M.smoothness([still[:2]])[0])


def test_bone_length_error_against_the_reference_mean_pose():
    rng = np.random.default_rng(4)
    reference = ntu_clip(rng, 9)
    lengths = mean_pose_bone_lengths(reference, NTU)
    # a prediction built from the reference's mean pose has exactly its bone lengths on every frame
    pose = reference - reference[:, :1]
    pose = pose.mean(axis=0)
    prediction = np.repeat(pose[None], 20, axis=0) + rng.normal(0, 1, (20, 1, 3))  # moves rigidly
    assert M.bone_length_error(prediction, reference, NTU)[0] == pytest.approx(0.0, abs=1e-6)
    grown = prediction * 1.1  # every bone 10 % longer
    assert M.bone_length_error(grown, reference, NTU)[0] == pytest.approx(0.1 * lengths.mean(), rel=1e-5)


def test_vectorized_mean_pose_matches_the_skeleton_definition():
    rng = np.random.default_rng(5)
    clips = [ntu_clip(rng, n) for n in (3, 11, 1, 40)]
    clips[1][4, 6] = np.nan
    clips[3][:, 9] = np.nan  # a joint missing on every frame
    got = M._mean_pose_bone_lengths(M._Stacked(clips, "clips"), NTU)
    expected = np.stack([mean_pose_bone_lengths(c, NTU) for c in clips])
    np.testing.assert_allclose(got, expected, rtol=1e-5, equal_nan=True)


def test_metrics_reject_mismatched_inputs():
    rng = np.random.default_rng(6)
    with pytest.raises(ValueError, match="differ in shape"):
        M.mse(ntu_clip(rng, 5), ntu_clip(rng, 6))
    with pytest.raises(ValueError, match="targets"):
        M.mpjpe([ntu_clip(rng, 5)] * 2, [ntu_clip(rng, 5)])
    with pytest.raises(ValueError, match="joints"):
        M.bone_length_error(rng.normal(size=(4, 20, 3)), rng.normal(size=(4, 20, 3)), NTU)
    with pytest.raises(ValueError, match="no clips"):
        M.smoothness([])
    with pytest.raises(ValueError, match="frame rates"):
        M.foot_sliding([ntu_clip(rng, 5)] * 3, NTU, [30.0, 30.0])


def test_foot_sliding_of_a_sliding_foot_and_per_clip_rates():
    pose = np.zeros((25, 3))
    pose[:, 1] = np.linspace(0.3, 1.7, 25)  # every other joint well above the floor
    pose[list(NTU.contact_joints), 1] = 0.02  # ankles and feet on the floor
    clip = np.repeat(pose[None], 30, axis=0)
    left_foot = NTU.index("left_foot")
    clip[:, left_foot, 0] += 0.5 / 30.0 * np.arange(30)  # 0.5 m/s at 30 fps
    # 4 contact joints, one sliding at 0.5 m/s: mean 0.125 m/s
    values = M.foot_sliding([clip, clip], NTU, [30.0, 60.0])
    np.testing.assert_allclose(values, [0.125, 0.25], rtol=1e-5)
    assert values[0] == pytest.approx(foot_sliding_speed(clip, NTU, 30.0))


def test_summarize():
    assert M.summarize([1.0, 2.0, 3.0]) == {"mean": 2.0, "std": 1.0}
    assert M.summarize(np.array([0.5])) == {"mean": 0.5, "std": 0.0}
    assert M.summarize([1.0, np.nan, 3.0]) == {"mean": 2.0, "std": pytest.approx(np.sqrt(2.0))}
    with pytest.raises(ValueError):
        M.summarize([])
    with pytest.raises(ValueError):
        M.summarize([np.nan])


def test_metrics_on_real_clips(shared_data):
    data = np.load(shared_data / "uiprmd_kinect.npz")
    offsets, fps, joints = data["offsets"], float(data["fps"]), data["joints_flat"]  # each access decompresses
    clips = [joints[offsets[i] : offsets[i + 1]] for i in range(0, 200, 10)]
    topo = get_topology("uiprmd22")
    np.testing.assert_allclose(M.mse(clips, clips), 0.0)
    # a clip against itself keeps a floor: a bone that swings is shorter in the mean pose than on any frame
    floor = M.bone_length_error(clips, clips, topo)
    assert np.all(floor > 0.005) and np.all(floor < 0.05)
    smooth = M.smoothness(clips)
    assert np.all(np.isfinite(smooth)) and np.all(smooth > 0) and np.all(smooth < 0.2)
    sliding = M.foot_sliding(clips, topo, fps)
    assert np.all(sliding >= 0) and np.all(sliding < 1.0)
