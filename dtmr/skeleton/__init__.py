"""Joint sets (topologies), conversions between them, skeleton geometry, normalization and the naive
kinematic retarget."""

from . import topologies as _topologies  # noqa: F401  (registers the built-in joint sets)
from .contact import foot_contacts, foot_sliding_speed, sliding_speeds
from .geometry import (
    bone_directions,
    bone_lengths,
    forward_kinematics,
    mean_pose,
    mean_pose_bone_lengths,
    root_centred,
)
from .mapping import joint_provenance, mapping_matrix, synthesized_joints, to_ntu25
from .normalize import MODEL_FRAMES, Normalization, normalize, resample
from .retarget import naive_retarget
from .topologies import COCO17, H36M17, KINECT_V1_20, MEDIAPIPE33, NTU25, UIPRMD22
from .topology import Topology, get_topology, register_topology, topology_for_joint_count, topology_names

__all__ = [
    "COCO17", "H36M17", "KINECT_V1_20", "MEDIAPIPE33", "MODEL_FRAMES", "NTU25", "UIPRMD22", "Normalization",
    "Topology", "bone_directions", "bone_lengths", "foot_contacts", "foot_sliding_speed", "forward_kinematics",
    "get_topology", "joint_provenance", "mapping_matrix", "mean_pose", "mean_pose_bone_lengths", "naive_retarget",
    "normalize", "register_topology", "resample", "root_centred", "sliding_speeds", "synthesized_joints", "to_ntu25",
    "topology_for_joint_count", "topology_names",
]
