"""Bone lengths, bone directions, forward kinematics and the mean pose.

Arrays are (..., J, 3) joint positions; bones follow `Topology.bones` (one per non-root joint, in
joint order), so bone arrays are (..., J - 1) lengths or (..., J - 1, 3) directions.
"""

from __future__ import annotations

import numpy as np

from .topology import Topology, get_topology


def bone_vectors(joints: np.ndarray, topology: str | Topology) -> np.ndarray:
    """(..., J-1, 3) child minus parent for every bone."""
    topo = get_topology(topology)
    joints = np.asarray(joints)
    return joints[..., topo.bone_children, :] - joints[..., topo.bone_parents, :]


def bone_lengths(joints: np.ndarray, topology: str | Topology) -> np.ndarray:
    """(..., J-1) Euclidean length of every bone."""
    return np.linalg.norm(bone_vectors(joints, topology), axis=-1)


def bone_directions(joints: np.ndarray, topology: str | Topology, eps: float = 1e-8) -> np.ndarray:
    """(..., J-1, 3) unit vectors from parent to child: zero for a zero-length bone, NaN for a bone
    with a missing (NaN) end."""
    vec = bone_vectors(joints, topology)
    norm = np.linalg.norm(vec, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        out = vec / np.maximum(norm, eps)
        out = np.where(norm <= eps, 0.0, out)
    return out.astype(np.result_type(vec, np.float32))


def forward_kinematics(
    root: np.ndarray, directions: np.ndarray, lengths: np.ndarray, topology: str | Topology
) -> np.ndarray:
    """Rebuild joints from the root position, per-bone unit directions and bone lengths.

    root: (..., 3); directions: (..., J-1, 3); lengths: (J-1,) or broadcastable to (..., J-1).
    Returns (..., J, 3). Every bone of the result has exactly the given length (for unit directions).
    """
    topo = get_topology(topology)
    directions = np.asarray(directions)
    lengths = np.asarray(lengths)
    offsets = directions * lengths[..., None]
    out = np.empty(directions.shape[:-2] + (topo.num_joints, 3), dtype=np.result_type(offsets, root))
    bone_of = {c: b for b, (_, c) in enumerate(topo.bones)}
    for j in topo.order:
        p = topo.parents[j]
        out[..., j, :] = root if p < 0 else out[..., p, :] + offsets[..., bone_of[j], :]
    return out


def root_centred(joints: np.ndarray, topology: str | Topology) -> np.ndarray:
    """Every frame translated so its root joint is at the origin."""
    topo = get_topology(topology)
    joints = np.asarray(joints)
    return joints - joints[..., topo.root : topo.root + 1, :]


def mean_pose(joints: np.ndarray, topology: str | Topology) -> np.ndarray:
    """(J, 3) time average of the root-centred pose of a (T, J, 3) clip, ignoring missing (NaN) frames."""
    centred = root_centred(joints, topology)
    with np.errstate(invalid="ignore"):
        valid = np.isfinite(centred).all(axis=-1, keepdims=True)
        total = np.where(valid, centred, 0.0).sum(axis=-3)
        count = valid.sum(axis=-3)
        mean = total / np.maximum(count, 1)
    mean[np.broadcast_to(count == 0, mean.shape)] = np.nan
    return mean.astype(np.float32)


def mean_pose_bone_lengths(joints: np.ndarray, topology: str | Topology) -> np.ndarray:
    """Bone lengths of the mean pose (not the mean of per-frame lengths; DESIGN §2.3)."""
    return bone_lengths(mean_pose(joints, topology), topology)


def motion_amplitude(joints: np.ndarray, topology: str | Topology) -> float:
    """How much a (T, J, 3) clip moves, whatever the body's size or where it faces: the mean over bones of
    the spread over time of the bone's unit direction (the square root of the summed per-axis variances; 0
    for a still pose, at most 1). Averaging several people's performances (k-same) lowers it; NaN when no
    bone is ever seen in two frames."""
    directions = bone_directions(np.asarray(joints, dtype=np.float64), topology)  # (T, J-1, 3)
    seen = np.isfinite(directions).all(axis=-1).sum(axis=0) >= 2  # (J-1,)
    if not seen.any():
        return float("nan")
    with np.errstate(invalid="ignore"):
        spread = np.sqrt(np.nanvar(directions[:, seen], axis=0).sum(axis=-1))  # (bones seen,)
    return float(np.mean(spread))
