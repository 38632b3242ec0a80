import numpy as np
import pytest

from dtmr.skeleton import (
    NTU25,
    Topology,
    get_topology,
    topology_for_joint_count,
    topology_names,
)
from dtmr.skeleton.topology import CENTRE, LEFT, RIGHT

ALL = ["ntu25", "kinect_v1_20", "uiprmd22", "coco17", "h36m17", "mediapipe33"]


def test_registry_holds_the_six_joint_sets():
    assert topology_names() == sorted(ALL)
    assert [get_topology(n).num_joints for n in ALL] == [25, 20, 22, 17, 17, 33]
    assert topology_for_joint_count(20).name == "kinect_v1_20"
    assert topology_for_joint_count(33).name == "mediapipe33"
    # COCO-17 and Human3.6M-17 share a joint count: a bare count names neither
    assert topology_for_joint_count(17) is None


def test_unknown_topology_names_the_known_ones():
    with pytest.raises(KeyError, match="ntu25"):
        get_topology("smpl24")


@pytest.mark.parametrize("name", ALL)
def test_every_topology_is_a_tree_with_consistent_maps(name):
    t = get_topology(name)
    assert len(t.bones) == t.num_joints - 1
    seen = set()
    for j in t.order:  # parents before children
        assert t.parents[j] < 0 or t.parents[j] in seen
        seen.add(j)
    # the mirror map is an involution that swaps sides
    for j, m in enumerate(t.mirror):
        assert t.mirror[m] == j
        assert t.sides[m] == -t.sides[j]
    assert t.sides[t.left_hip] == LEFT and t.sides[t.right_hip] == RIGHT
    assert np.array_equal(t.adjacency, t.adjacency.T)


def test_ntu25_matches_the_pelvis_rooted_convention():
    # SPEC_NOTES §5.2 convention B, 1-based parents turned 0-based
    one_based = [0, 1, 21, 3, 21, 5, 6, 7, 21, 9, 10, 11, 1, 13, 14, 15, 1, 17, 18, 19, 2, 8, 8, 12, 12]
    assert NTU25.parents == tuple(p - 1 for p in one_based)
    assert NTU25.end_effectors == (19, 15, 23, 24, 21, 22, 3)
    assert NTU25.contact_joints == (14, 15, 18, 19)
    assert NTU25.sides[20] == CENTRE and NTU25.mirror[21] == 23


def test_h36m17_is_mmposes_order_with_the_pelvis_as_root():
    h36m = get_topology("h36m17")
    assert h36m.joint_names[:4] == ("root", "right_hip", "right_knee", "right_foot")
    assert h36m.joint_names[8:11] == ("thorax", "neck_base", "head")
    assert h36m.root == 0 and h36m.left_hip == 4 and h36m.right_hip == 1
    assert h36m.mirror[h36m.index("left_wrist")] == h36m.index("right_wrist")
    # VideoPose3D's left and right joint lists
    assert [j for j in range(17) if h36m.sides[j] == LEFT] == [4, 5, 6, 11, 12, 13]
    assert [j for j in range(17) if h36m.sides[j] == RIGHT] == [1, 2, 3, 14, 15, 16]


def test_mediapipe33_follows_the_landmark_enum():
    mp = get_topology("mediapipe33")
    assert mp.joint_names[0] == "nose" and mp.joint_names[11] == "left_shoulder"
    assert mp.joint_names[23:25] == ("left_hip", "right_hip") and mp.joint_names[-1] == "right_foot_index"
    assert mp.sides[mp.index("mouth_left")] == LEFT
    assert mp.mirror[mp.index("mouth_left")] == mp.index("mouth_right")
    assert mp.mirror[mp.index("left_eye_inner")] == mp.index("right_eye_inner")
    assert mp.contact_joints == (27, 29, 31, 28, 30, 32)


def test_invalid_topologies_are_refused():
    with pytest.raises(ValueError, match="root"):
        Topology("bad", ("a", "b"), (-1, -1), (), ((1,),), 0, 1)
    with pytest.raises(ValueError, match="cycle"):
        Topology("bad", ("a", "b", "c"), (-1, 2, 1), (), ((1,),), 1, 2)
