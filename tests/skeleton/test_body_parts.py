"""`dtmr.skeleton.body_parts`: arms, legs and torso-with-head of every registered joint set, from the names."""

from __future__ import annotations

import pytest

from dtmr.skeleton import get_topology, topology_names
from dtmr.skeleton.body_parts import BodyPart, body_parts, joints_of


def named(topology: str, part: BodyPart) -> set[str]:
    names = get_topology(topology).joint_names
    return {names[j] for j in joints_of(topology, [part]).nonzero()[0]}


@pytest.mark.parametrize("topology", topology_names())
def test_every_side_has_arms_and_legs_and_the_spine_is_torso(topology):
    topo = get_topology(topology)
    parts = body_parts(topology)
    assert len(parts) == topo.num_joints
    assert parts[topo.left_hip] is parts[topo.right_hip] is BodyPart.LEGS
    for part in (BodyPart.ARMS, BodyPart.LEGS):  # as many on the left as on the right
        sides = [topo.sides[j] for j in joints_of(topology, [part]).nonzero()[0]]
        assert sides.count(-1) == sides.count(1) > 0, (topology, part)
    assert BodyPart.TORSO in parts


def test_face_joints_and_the_pelvis_centre_are_head_and_torso():
    assert named("ntu25", BodyPart.ARMS) == {f"{s}_{j}" for s in ("left", "right")
                                             for j in ("shoulder", "elbow", "wrist", "hand", "hand_tip", "thumb")}
    assert named("coco17", BodyPart.TORSO) == {"nose", "left_eye", "right_eye", "left_ear", "right_ear"}
    assert "left_forearm" in named("uiprmd22", BodyPart.ARMS)  # "forearm" holds "ear" but is no face joint
    assert "left_foot_index" in named("mediapipe33", BodyPart.LEGS) and "left_index" in named("mediapipe33",
                                                                                               BodyPart.ARMS)
    assert "hip_center" in named("kinect_v1_20", BodyPart.TORSO)
