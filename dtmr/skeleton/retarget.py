"""Naive kinematic retargeting: the source's bone directions on the reference's bone lengths.

Every bone keeps its direction from the source, frame by frame, and gets the length of the same bone in
the reference's **mean pose** (`mean_pose_bone_lengths`: root-centre every frame, average over time, then
measure). The skeleton is rebuilt by forward kinematics from the source's root trajectory. It has no
parameters: the motion is untouched, only the proportions change. It is the naive baseline of DESIGN §5
(`dtmr.models.baselines.naive`) and the residual of DisentangledTMR's naive-residual variant
(`dtmr.models.anonymizer`), so it lives here, below both.

Missing joints: a bone whose parent or child is NaN in a source frame has no direction, so that joint
and its whole subtree are NaN in that frame of the output; a bone missing in every reference frame has
no length and leaves its subtree NaN throughout.
"""

from __future__ import annotations

import numpy as np

from .geometry import bone_directions, bone_vectors, forward_kinematics, mean_pose_bone_lengths
from .topology import Topology, get_topology

#: bones shorter than this have no direction (zero vector)
EPS = 1e-8


def naive_retarget(joints: np.ndarray, reference: np.ndarray, topology: str | Topology) -> np.ndarray:
    """(T, J, 3) source and (T', J, 3) reference of the same topology -> (T, J, 3) retargeted joints."""
    topo = get_topology(topology)
    joints = np.asarray(joints, dtype=np.float32)
    directions = bone_directions(joints, topo, eps=EPS)
    missing = ~np.isfinite(bone_vectors(joints, topo)).all(axis=-1)
    directions[missing] = np.nan
    lengths = mean_pose_bone_lengths(reference, topo)
    return forward_kinematics(joints[:, topo.root], directions, lengths, topo).astype(np.float32)
