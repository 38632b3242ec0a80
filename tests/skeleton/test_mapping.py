import numpy as np
import pytest

from dtmr.data import generate_clips
from dtmr.data.clip import Clip
from dtmr.skeleton import (
    NTU25,
    get_topology,
    joint_provenance,
    mapping_matrix,
    synthesized_joints,
    to_ntu25,
)

SIDES = ("left", "right")
LIMBS = [f"{s}_{p}" for s in SIDES for p in ("shoulder", "elbow", "wrist", "hip", "knee")]
#: source joint -> the NTU-25 joint it is, written out by hand for each joint set; every other NTU joint is
#: synthesized
OBSERVED = {
    "kinect_v1_20": {
        **{n: n for n in LIMBS + [f"{s}_{p}" for s in SIDES for p in ("ankle", "hand", "foot")] + ["head"]},
        "hip_center": "spine_base", "spine": "spine_mid", "shoulder_center": "spine_shoulder",
    },
    "uiprmd22": {
        "waist": "spine_base", "spine": "spine_mid", "chest": "spine_shoulder", "neck": "neck",
        **{f"{s}_{ui}": f"{s}_{ntu}" for s in SIDES for ui, ntu in (
            ("upper_arm", "shoulder"), ("forearm", "elbow"), ("hand", "wrist"), ("upper_leg", "hip"),
            ("lower_leg", "knee"), ("foot", "ankle"), ("leg_toes", "foot"))},
    },
    "coco17": {n: n for n in LIMBS + ["left_ankle", "right_ankle"]},
    "h36m17": {
        **{n: n for n in LIMBS}, "root": "spine_base", "spine": "spine_mid", "thorax": "spine_shoulder",
        "left_foot": "left_ankle", "right_foot": "right_ankle",
    },
    "mediapipe33": {
        **{n: n for n in LIMBS + ["left_ankle", "right_ankle", "left_thumb", "right_thumb"]},
        "left_foot_index": "left_foot", "right_foot_index": "right_foot",
    },
    "ntu25": {n: n for n in NTU25.joint_names},
}


def _from_ntu25(ntu: np.ndarray, name: str, rng: np.random.Generator) -> np.ndarray:
    """A (T, J, 3) clip of joint set `name` whose observed joints are taken from the NTU-25 clip `ntu`; the
    joints NTU-25 does not have (eyes, head top, heels...) are random."""
    topo = get_topology(name)
    out = rng.normal(size=ntu.shape[:1] + (topo.num_joints, 3)).astype(np.float32)
    for source, target in OBSERVED[name].items():
        out[:, topo.index(source)] = ntu[:, NTU25.index(target)]
    return out


@pytest.fixture(scope="module")
def ntu_clip() -> np.ndarray:
    return generate_clips(subjects=1, actions=1, repetitions=1, seed=3)[0].joints


@pytest.mark.parametrize("name", sorted(OBSERVED))
def test_observed_joints_come_back_exactly_and_the_rest_are_synthesized(ntu_clip, rng, name):
    clip = _from_ntu25(ntu_clip, name, rng)
    out = to_ntu25(clip, name)
    assert out.shape == ntu_clip.shape and out.dtype == np.float32 and np.isfinite(out).all()
    observed = [NTU25.index(n) for n in OBSERVED[name].values()]
    np.testing.assert_array_equal(out[:, observed], ntu_clip[:, observed])
    expected = tuple(n for n in NTU25.joint_names if n not in OBSERVED[name].values())
    assert synthesized_joints(name) == expected
    assert synthesized_joints(get_topology(name)) == expected


def _stand_in(joint: str) -> str:
    """The NTU-25 joint nearest to a joint NTU-25 lacks (an eye, the head top, a heel...)."""
    side = next((s for s in SIDES if s in joint), None)
    if joint in ("head", "head_tip") or any(part in joint for part in ("eye", "ear", "mouth", "nose")):
        return "head"
    if joint == "neck_base":
        return "neck"
    if "collar" in joint:
        return "spine_shoulder"
    part = next(v for k, v in (("pinky", "hand"), ("index", "hand_tip"), ("heel", "ankle")) if k in joint)
    return f"{side}_{part}"


@pytest.mark.parametrize("name", sorted(OBSERVED))
def test_synthesized_joints_stay_near_the_skeleton(ntu_clip, rng, name):
    """Synthesized joints are estimates, not copies: within 25 cm of the NTU joint they stand for, on an NTU
    body whose extra joints are put at their nearest NTU joint."""
    clip = _from_ntu25(ntu_clip, name, rng)
    topo = get_topology(name)
    for j, joint in enumerate(topo.joint_names):
        if joint not in OBSERVED[name]:
            clip[:, j] = ntu_clip[:, NTU25.index(_stand_in(joint))]
    error = np.linalg.norm(to_ntu25(clip, name) - ntu_clip, axis=-1).max(axis=0)
    assert (error < 0.25).all(), dict(zip(NTU25.joint_names, error.round(3)))


def test_provenance_tells_interpolated_from_extrapolated():
    kinds = dict(zip(NTU25.joint_names, joint_provenance("h36m17")))
    assert kinds["neck"] == "interpolated" and kinds["left_hand_tip"] == "extrapolated"
    assert kinds["spine_base"] == "observed"
    assert set(joint_provenance("ntu25")) == {"observed"} and synthesized_joints("ntu25") == ()


def test_h36m_neck_and_head_lie_between_its_own_joints(rng):
    h36m = get_topology("h36m17")
    clip = rng.normal(size=(4, 17, 3)).astype(np.float32)
    out = to_ntu25(clip, "h36m17")
    thorax, chin, top = (clip[:, h36m.index(n)] for n in ("thorax", "neck_base", "head"))
    np.testing.assert_allclose(out[:, NTU25.index("neck")], (thorax + chin) / 2, atol=1e-6)
    np.testing.assert_allclose(out[:, NTU25.index("head")], (chin + top) / 2, atol=1e-6)


def test_mediapipe_face_landmarks_missing_spoil_nothing_but_the_head():
    clip = np.ones((2, 33, 3), dtype=np.float32)
    mp = get_topology("mediapipe33")
    for n in ("nose", "left_eye", "right_eye_outer", "mouth_left", "left_heel"):
        clip[:, mp.index(n)] = np.nan
    assert np.isfinite(to_ntu25(clip, "mediapipe33")).all()
    clip[:, mp.index("left_ear")] = np.nan
    nan_joints = {NTU25.joint_names[j] for j in np.flatnonzero(np.isnan(to_ntu25(clip, "mediapipe33")[0]).any(-1))}
    assert nan_joints == {"head", "neck"}


@pytest.mark.parametrize("name", ["h36m17", "mediapipe33", "coco17"])
def test_an_ntu25_model_takes_the_new_joint_sets(ntu_clip, rng, name):
    """The training and recognition input paths map any registered joint set to NTU-25 through `to_ntu25`."""
    from dtmr.models.recognizers.preprocessing import prepare_sequence
    from dtmr.train.data import prepare_clips

    joints = _from_ntu25(ntu_clip, name, rng)
    clip = Clip(joints=joints, topology=name)
    prepared = prepare_clips([clip], "ntu25")
    assert prepared.joints.shape == (1, 64, 25, 3) and np.isfinite(prepared.joints).all()
    sequence = prepare_sequence(clip, "ntu25")
    assert sequence.shape == (len(joints), 25, 3) and np.isfinite(sequence).all()


def test_a_mediapipe_clip_maps_to_ntu25_shape(rng):
    out = to_ntu25(rng.normal(size=(7, 33, 3)), "mediapipe33")
    assert out.shape == (7, 25, 3)


@pytest.mark.parametrize("name", ["kinect_v1_20", "uiprmd22", "coco17", "h36m17", "mediapipe33", "ntu25"])
def test_mapping_is_affine_and_commutes_with_rigid_motion(rng, name):
    t = get_topology(name)
    m = mapping_matrix(name)
    assert m.shape == (25, t.num_joints)
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-6)
    clip = rng.normal(size=(5, t.num_joints, 3)).astype(np.float32)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    shift = rng.normal(size=3)
    np.testing.assert_allclose(to_ntu25(clip @ q.T + shift, name), to_ntu25(clip, name) @ q.T + shift, atol=1e-4)


def test_shared_joints_map_directly():
    clip = np.random.default_rng(0).normal(size=(3, 20, 3)).astype(np.float32)
    out = to_ntu25(clip, "kinect_v1_20")
    src = get_topology("kinect_v1_20")
    for name in ("head", "left_elbow", "right_knee", "left_foot"):
        np.testing.assert_allclose(out[:, NTU25.index(name)], clip[:, src.index(name)])
    # the neck is synthesized halfway between shoulder centre and head
    np.testing.assert_allclose(out[:, NTU25.index("neck")], (clip[:, 2] + clip[:, 3]) / 2, atol=1e-6)


def test_missing_joint_only_spoils_the_joints_that_use_it():
    clip = np.ones((1, 20, 3), dtype=np.float32)
    clip[0, 3] = np.nan  # head
    out = to_ntu25(clip, "kinect_v1_20")
    nan_joints = {NTU25.joint_names[j] for j in np.flatnonzero(np.isnan(out[0]).any(-1))}
    assert nan_joints == {"head", "neck"}


def test_wrong_joint_count_is_refused():
    with pytest.raises(ValueError, match="20 joints"):
        to_ntu25(np.zeros((2, 22, 3)), "kinect_v1_20")
