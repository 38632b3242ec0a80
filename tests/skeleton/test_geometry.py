import numpy as np
import pytest

from dtmr.skeleton import (
    bone_directions,
    bone_lengths,
    forward_kinematics,
    get_topology,
    mean_pose,
    mean_pose_bone_lengths,
    root_centred,
)


def random_clip(rng, topology="ntu25", frames=30):
    t = get_topology(topology)
    return rng.normal(size=(frames, t.num_joints, 3)).astype(np.float32)


@pytest.mark.parametrize("name", ["ntu25", "kinect_v1_20", "uiprmd22", "coco17"])
def test_forward_kinematics_rebuilds_the_clip_and_keeps_bone_lengths(rng, name):
    clip = random_clip(rng, name)
    lengths = bone_lengths(clip, name)
    rebuilt = forward_kinematics(clip[:, get_topology(name).root], bone_directions(clip, name), lengths, name)
    np.testing.assert_allclose(rebuilt, clip, atol=1e-5)

    new_lengths = rng.uniform(0.05, 0.5, size=get_topology(name).num_bones)
    retargeted = forward_kinematics(clip[:, 0], bone_directions(clip, name), new_lengths, name)
    np.testing.assert_allclose(bone_lengths(retargeted, name), np.broadcast_to(new_lengths, (30, len(new_lengths))), atol=1e-5)
    np.testing.assert_allclose(bone_directions(retargeted, name), bone_directions(clip, name), atol=1e-5)


def test_bone_lengths_of_a_hand_made_chain():
    t = get_topology("kinect_v1_20")
    pose = np.zeros((20, 3), dtype=np.float32)
    pose[1] = [0, 0.3, 0]  # spine above hip centre
    pose[2] = [0, 0.6, 0]
    pose[3] = [0, 0.8, 0]
    lengths = bone_lengths(pose, t)
    bone_of_child = {c: b for b, (_, c) in enumerate(t.bones)}
    assert lengths[bone_of_child[1]] == pytest.approx(0.3)
    assert lengths[bone_of_child[3]] == pytest.approx(0.2)


def test_mean_pose_is_root_centred_time_average_and_ignores_missing_frames(rng):
    clip = random_clip(rng)
    clip[3, 7] = np.nan
    pose = mean_pose(clip, "ntu25")
    centred = root_centred(clip, "ntu25")
    np.testing.assert_allclose(np.delete(pose, 7, axis=0), np.delete(centred.mean(axis=0), 7, axis=0), atol=1e-5)
    np.testing.assert_allclose(pose[7], np.delete(centred[:, 7], 3, axis=0).mean(axis=0), atol=1e-5)
    assert np.isfinite(pose).all()
    np.testing.assert_allclose(pose[0], 0.0)


def test_bone_lengths_come_from_the_mean_pose_not_per_frame_average():
    # an arm that swings: per-frame lengths are 1, the mean pose's forearm is shorter
    t = get_topology("ntu25")
    clip = np.zeros((2, 25, 3), dtype=np.float32)
    clip[:, 6] = [[1, 0, 0], [-1, 0, 0]]  # left wrist around the elbow (joint 5 at origin)
    mean_of_lengths = bone_lengths(clip, t).mean(axis=0)
    from_mean_pose = mean_pose_bone_lengths(clip, t)
    bone = [b for b, (_, c) in enumerate(t.bones) if c == 6][0]
    assert mean_of_lengths[bone] == pytest.approx(1.0)
    assert from_mean_pose[bone] == pytest.approx(0.0)


def test_bone_direction_of_a_missing_joint_is_nan_and_of_a_zero_bone_is_zero():
    pose = np.zeros((20, 3), dtype=np.float32)
    pose[1] = [0, 1, 0]
    pose[3] = np.nan
    d = bone_directions(pose, "kinect_v1_20")
    t = get_topology("kinect_v1_20")
    bone_of_child = {c: b for b, (_, c) in enumerate(t.bones)}
    np.testing.assert_allclose(d[bone_of_child[1]], [0, 1, 0])
    assert np.isnan(d[bone_of_child[3]]).all()
    np.testing.assert_allclose(d[bone_of_child[4]], 0.0)  # zero-length bone


def test_motion_amplitude_ignores_body_size_and_placement_and_falls_when_motions_are_averaged():
    from dtmr.io.library import ClipLibrary
    from dtmr.resources import resource_path
    from dtmr.skeleton.geometry import motion_amplitude

    with ClipLibrary(resource_path("demo/demo_library.h5")) as lib:
        a, b = lib.read(0), lib.read(40)
    still = np.repeat(a.joints[:1], 10, axis=0)
    assert motion_amplitude(still, a.topology) == pytest.approx(0.0, abs=1e-9)
    amp = motion_amplitude(a.joints, a.topology)
    assert 0.0 < amp <= 1.0
    turned = a.joints @ np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0]], np.float32).T * 1.3 + 2.0
    assert motion_amplitude(turned, a.topology) == pytest.approx(amp, rel=1e-5)
    n = min(a.num_frames, b.num_frames)
    averaged = (a.joints[:n] + b.joints[:n]) / 2
    assert motion_amplitude(averaged, a.topology) < (amp + motion_amplitude(b.joints, b.topology)) / 2
    assert np.isnan(motion_amplitude(np.full((5, a.num_joints, 3), np.nan), a.topology))
