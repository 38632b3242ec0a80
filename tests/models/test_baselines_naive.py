import numpy as np
import pytest
import torch

from dtmr import Clip, InputError
from dtmr.data.provenance import Provenance
from dtmr.models.baselines import NaiveRetargeter, naive_retarget_clip
from dtmr.models.baselines.naive import ancestor_bones
from dtmr.skeleton import bone_directions, bone_lengths, get_topology, mean_pose_bone_lengths, naive_retarget


def random_joints(rng, topology, frames):
    return rng.normal(scale=0.3, size=(frames, get_topology(topology).num_joints, 3)).astype(np.float32)


@pytest.mark.parametrize("topology", ["ntu25", "kinect_v1_20", "uiprmd22"])
def test_keeps_source_directions_and_root_and_takes_reference_mean_pose_lengths(topology):
    rng = np.random.default_rng(3)
    src, ref = random_joints(rng, topology, 40), random_joints(rng, topology, 55)
    out = naive_retarget(src, ref, topology)
    root = get_topology(topology).root
    assert out.shape == src.shape and out.dtype == np.float32
    np.testing.assert_allclose(bone_directions(out, topology), bone_directions(src, topology), atol=1e-5)
    expected = np.broadcast_to(mean_pose_bone_lengths(ref, topology), (40, get_topology(topology).num_bones))
    np.testing.assert_allclose(bone_lengths(out, topology), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[:, root], src[:, root])
    # the mean pose's lengths, not the mean of per-frame lengths
    assert not np.allclose(expected[0], bone_lengths(ref, topology).mean(axis=0), rtol=1e-3)


def test_torch_module_matches_the_numpy_function_and_has_the_interface():
    rng = np.random.default_rng(4)
    src = np.stack([random_joints(rng, "ntu25", 64) for _ in range(3)])
    ref = np.stack([random_joints(rng, "ntu25", 64) for _ in range(3)])
    model = NaiveRetargeter("ntu25")
    assert model.method == "naive" and model.beta == 1.0 and model.topology.name == "ntu25"
    assert sum(p.numel() for p in model.parameters()) == 0 and model.config_dict() == {}
    out = model.retarget(torch.from_numpy(src), torch.from_numpy(ref)).numpy()
    expected = np.stack([naive_retarget(s, r, "ntu25") for s, r in zip(src, ref)])
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_missing_joints_leave_their_subtree_missing_in_both_implementations():
    rng = np.random.default_rng(5)
    topo = get_topology("kinect_v1_20")
    src, ref = random_joints(rng, topo.name, 64), random_joints(rng, topo.name, 64)
    elbow = topo.index("left_elbow")
    src[10, elbow] = np.nan
    ref[:5, topo.index("right_knee")] = np.nan  # missing in some reference frames only: still measured
    out = naive_retarget(src, ref, topo)
    subtree = {elbow, topo.index("left_wrist"), topo.index("left_hand")}
    assert set(np.flatnonzero(np.isnan(out[10]).any(axis=-1))) == subtree
    assert np.isfinite(np.delete(out, 10, axis=0)).all()
    torch_out = NaiveRetargeter(topo).retarget(torch.from_numpy(src)[None], torch.from_numpy(ref)[None])[0].numpy()
    np.testing.assert_array_equal(np.isnan(torch_out), np.isnan(out))
    np.testing.assert_allclose(torch_out[np.isfinite(out)], out[np.isfinite(out)], atol=1e-5)


def test_ancestor_matrix_rebuilds_forward_kinematics():
    topo = get_topology("uiprmd22")
    a = ancestor_bones(topo)
    assert a.shape == (22, 21) and a[topo.root].sum() == 0
    head_tip = topo.index("head_tip")
    assert a[head_tip].sum() == 5  # waist -> spine -> chest -> neck -> head -> head tip


def test_clip_function_keeps_metadata_and_records_provenance():
    rng = np.random.default_rng(6)
    clip = Clip(random_joints(rng, "kinect_v1_20", 12), topology="kinect_v1_20", subject=3, action=7,
                sample_name="a")
    ref = Clip(random_joints(rng, "kinect_v1_20", 20), topology="kinect_v1_20", subject=9, sample_name="b")
    out = naive_retarget_clip(clip, ref)
    assert (out.subject, out.action, out.num_frames) == (3, 7, 12)
    assert out.extra["method"] == "naive" and out.extra["reference_clip"] == "b"
    assert Provenance.from_clip(out) == Provenance("naive", beta=1.0, source_clip="a", reference_clip="b")
    with pytest.raises(InputError, match="ref.skeleton: reference clip .* topology ntu25"):
        naive_retarget_clip(clip, Clip(random_joints(rng, "ntu25", 5), source_file="ref.skeleton"))
