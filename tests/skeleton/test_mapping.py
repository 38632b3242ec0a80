import numpy as np
import pytest

from dtmr.skeleton import NTU25, get_topology, mapping_matrix, to_ntu25


@pytest.mark.parametrize("name", ["kinect_v1_20", "uiprmd22", "coco17", "ntu25"])
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
