import numpy as np
import pytest

from dtmr.data.clip import Clip
from dtmr.eval import clip_plausibility
from dtmr.eval.plausibility import COMPONENTS, THRESHOLDS
from dtmr.skeleton import KINECT_V1_20, NTU25, bone_lengths, get_topology, topology_names

# A person standing, facing +z (left = +x, y up), ntu25 joint order.
STAND = {
    "spine_base": (0, 1.0, 0), "spine_mid": (0, 1.25, 0), "neck": (0, 1.5, 0), "head": (0, 1.65, 0),
    "left_shoulder": (0.18, 1.45, 0), "left_elbow": (0.2, 1.18, -0.02), "left_wrist": (0.21, 0.93, 0.03),
    "left_hand": (0.21, 0.86, 0.03), "right_shoulder": (-0.18, 1.45, 0), "right_elbow": (-0.2, 1.18, -0.02),
    "right_wrist": (-0.21, 0.93, 0.03), "right_hand": (-0.21, 0.86, 0.03), "left_hip": (0.1, 0.95, 0),
    "left_knee": (0.1, 0.52, 0.02), "left_ankle": (0.1, 0.08, 0), "left_foot": (0.1, 0.02, 0.12),
    "right_hip": (-0.1, 0.95, 0), "right_knee": (-0.1, 0.52, 0.02), "right_ankle": (-0.1, 0.08, 0),
    "right_foot": (-0.1, 0.02, 0.12), "spine_shoulder": (0, 1.45, 0), "left_hand_tip": (0.21, 0.8, 0.03),
    "left_thumb": (0.23, 0.85, 0.06), "right_hand_tip": (-0.21, 0.8, 0.03), "right_thumb": (-0.23, 0.85, 0.06),
}
FRAMES = 60


def standing(frames=FRAMES):
    """A clip of a person standing and slowly swaying the arms (smooth, planted, within every limit)."""
    pose = np.array([STAND[n] for n in NTU25.joint_names], dtype=np.float64)
    clip = np.repeat(pose[None], frames, axis=0)
    sway = 0.03 * np.sin(np.linspace(0, 2 * np.pi, frames))
    for j in ("left_wrist", "left_hand", "left_hand_tip", "left_thumb"):
        clip[:, NTU25.index(j), 2] += sway
    return clip


def score(joints, body=None):
    return clip_plausibility(Clip(joints.astype(np.float32), "ntu25", 30.0), body)


def test_a_clean_standing_clip_is_plausible_on_every_component():
    result = score(standing())
    for name in COMPONENTS:
        assert getattr(result, name) < 0.2 * THRESHOLDS[name], name
    assert result.score < 0.1
    assert result.frames["jerk"].shape == (FRAMES,)


def test_a_knee_bent_backwards_raises_the_joint_angle_component():
    clip = standing()
    clip[:, NTU25.index("left_knee"), 2] -= 0.15  # knee behind the hip-ankle line: bent the wrong way
    result = score(clip)
    assert result.joint_angle > THRESHOLDS["joint_angle"]
    assert result.score > score(standing()).score


def test_a_forearm_through_the_torso_raises_self_intersection():
    clip = standing()
    clip[:, NTU25.index("left_elbow")] = (0.15, 1.25, 0.25)
    clip[:, NTU25.index("left_wrist")] = (-0.05, 1.25, -0.05)  # through the chest
    assert score(clip).self_intersection > THRESHOLDS["self_intersection"]
    assert score(standing()).self_intersection == 0.0


def test_crossed_shins_raise_self_intersection():
    clip = standing()
    clip[:, NTU25.index("left_ankle"), 0] = -0.15
    clip[:, NTU25.index("right_ankle"), 0] = 0.15
    assert score(clip).self_intersection > THRESHOLDS["self_intersection"]


def test_sliding_feet_raise_foot_sliding():
    clip = standing()
    for j in ("left_ankle", "left_foot", "right_ankle", "right_foot"):
        clip[:, NTU25.index(j), 0] += np.arange(FRAMES) * (0.5 / 30)  # 0.5 m/s along the floor
    assert score(clip).foot_sliding == pytest.approx(0.5, abs=0.02)


def test_feet_below_the_floor_raise_ground_penetration():
    clip = standing()
    clip[20:30, [NTU25.index(j) for j in ("left_ankle", "left_foot")], 1] -= 0.10
    result = score(clip)
    assert result.ground_penetration > 0.01
    assert result.frames["ground_penetration"][25] == pytest.approx(0.08, abs=0.005)
    assert score(standing()).ground_penetration == 0.0


def test_bones_off_by_5_cm_against_the_claimed_body():
    clip = standing()
    body = bone_lengths(clip[0], NTU25) + 0.05
    assert score(clip, body).bone_error == pytest.approx(0.05, abs=1e-3)  # the swaying forearm varies a little
    assert score(clip).bone_error < 1e-3  # against its own mean lengths


def test_without_a_body_stretching_bones_raise_the_bone_error():
    clip = standing()
    clip[::2, NTU25.index("head"), 1] += 0.05  # the neck grows and shrinks by 5 cm every other frame
    assert score(clip).bone_error > 0.025 / NTU25.num_bones


def test_jerky_motion_raises_jerk():
    rng = np.random.default_rng(0)
    noisy = standing() + rng.normal(0, 0.01, (FRAMES, NTU25.num_joints, 3))
    assert score(noisy).jerk > THRESHOLDS["jerk"] > score(standing()).jerk


@pytest.mark.parametrize("name", topology_names())
def test_every_registered_topology_is_scored(name):
    topo = get_topology(name)
    rng = np.random.default_rng(1)
    joints = rng.normal(0, 0.3, (12, topo.num_joints, 3))
    result = clip_plausibility(Clip(joints.astype(np.float32), topo.name, 30.0))
    assert np.isfinite(result.score)


def test_a_body_of_the_wrong_size_is_refused():
    with pytest.raises(ValueError, match="bone lengths"):
        score(standing(), np.ones(KINECT_V1_20.num_bones))


def test_a_clip_without_a_finite_joint_is_refused_not_called_plausible():
    from dtmr.eval.plausibility import joints_plausibility

    with pytest.raises(ValueError, match="no finite joint"):
        joints_plausibility(np.full((5, 25, 3), np.nan), "ntu25", 30.0)
