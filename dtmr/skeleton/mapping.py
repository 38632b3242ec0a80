"""Mappings from each registered joint set to NTU-25.

Each NTU-25 joint is an affine combination (weights summing to 1) of joints of the source set, so a
mapping is a (25, J) matrix and commutes with translation and rotation. Joints that the source lacks
are synthesized from neighbours: interpolated (the neck between the spine-shoulder and the head) or
extrapolated along a limb (hand, hand tip and thumb along elbow->wrist or wrist->hand). A missing
(NaN) source joint makes every NTU joint that uses it NaN. The tables are in docs/topologies.md.

An NTU joint is *observed* when its row copies one source joint (a single weight of 1), *interpolated* when
it is a combination with no negative weight, and *extrapolated* otherwise; the last two are *synthesized*
(`joint_provenance`, `synthesized_joints`). The provenance is read off the matrix, so it cannot drift from it.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .topologies import NTU25
from .topology import Topology, get_topology

Recipe = dict[str, dict[str, float]]


def _direct(names: list[str]) -> Recipe:
    return {n: {n: 1.0} for n in names}


_LIMBS = [f"{side}_{part}" for side in ("left", "right")
          for part in ("shoulder", "elbow", "wrist", "hip", "knee", "ankle")]

_RECIPES: dict[str, Recipe] = {
    "kinect_v1_20": {
        **_direct(_LIMBS + ["head", "left_hand", "right_hand", "left_foot", "right_foot"]),
        "spine_base": {"hip_center": 1.0},
        "spine_mid": {"spine": 1.0},
        "spine_shoulder": {"shoulder_center": 1.0},
        "neck": {"shoulder_center": 0.5, "head": 0.5},
        **{f"{s}_hand_tip": {f"{s}_hand": 2.0, f"{s}_wrist": -1.0} for s in ("left", "right")},
        **{f"{s}_thumb": {f"{s}_hand": 1.5, f"{s}_wrist": -0.5} for s in ("left", "right")},
    },
    "uiprmd22": {
        "spine_base": {"waist": 1.0},
        "spine_mid": {"spine": 1.0},
        "spine_shoulder": {"chest": 1.0},
        "neck": {"neck": 1.0},
        "head": {"head": 0.5, "head_tip": 0.5},
        **{
            f"{s}_{ntu}": {f"{s}_{ui}": 1.0}
            for s in ("left", "right")
            for ntu, ui in (("shoulder", "upper_arm"), ("elbow", "forearm"), ("wrist", "hand"),
                            ("hip", "upper_leg"), ("knee", "lower_leg"), ("ankle", "foot"),
                            ("foot", "leg_toes"))
        },
        **{
            f"{s}_{ntu}": {f"{s}_hand": 1.0 + k, f"{s}_forearm": -k}
            for s in ("left", "right")
            for ntu, k in (("hand", 0.3), ("hand_tip", 0.6), ("thumb", 0.45))
        },
    },
    "coco17": {
        **_direct(_LIMBS),
        "spine_base": {"left_hip": 0.5, "right_hip": 0.5},
        "spine_shoulder": {"left_shoulder": 0.5, "right_shoulder": 0.5},
        "spine_mid": {"left_hip": 0.25, "right_hip": 0.25, "left_shoulder": 0.25, "right_shoulder": 0.25},
        "head": {"left_ear": 0.5, "right_ear": 0.5},
        "neck": {"left_shoulder": 0.25, "right_shoulder": 0.25, "left_ear": 0.25, "right_ear": 0.25},
        **{
            f"{s}_{ntu}": {f"{s}_wrist": 1.0 + k, f"{s}_elbow": -k}
            for s in ("left", "right")
            for ntu, k in (("hand", 0.3), ("hand_tip", 0.6), ("thumb", 0.45))
        },
        # COCO has no toe: the foot is a stand-in a little below the ankle, along knee->ankle
        **{f"{s}_foot": {f"{s}_ankle": 1.15, f"{s}_knee": -0.15} for s in ("left", "right")},
    },
    "h36m17": {
        **_direct([n for n in _LIMBS if not n.endswith("ankle")]),
        "spine_base": {"root": 1.0},
        "spine_mid": {"spine": 1.0},
        "spine_shoulder": {"thorax": 1.0},
        # H36M's "neck_base" sits at the chin, its "head" at the top of the head
        "neck": {"thorax": 0.5, "neck_base": 0.5},
        "head": {"neck_base": 0.5, "head": 0.5},
        # H36M's "foot" is the ankle
        **{f"{s}_ankle": {f"{s}_foot": 1.0} for s in ("left", "right")},
        **{
            f"{s}_{ntu}": {f"{s}_wrist": 1.0 + k, f"{s}_elbow": -k}
            for s in ("left", "right")
            for ntu, k in (("hand", 0.3), ("hand_tip", 0.6), ("thumb", 0.45))
        },
        **{f"{s}_foot": {f"{s}_foot": 1.15, f"{s}_knee": -0.15} for s in ("left", "right")},
    },
    "mediapipe33": {
        **_direct(_LIMBS),
        "spine_base": {"left_hip": 0.5, "right_hip": 0.5},
        "spine_shoulder": {"left_shoulder": 0.5, "right_shoulder": 0.5},
        "spine_mid": {"left_hip": 0.25, "right_hip": 0.25, "left_shoulder": 0.25, "right_shoulder": 0.25},
        "head": {"left_ear": 0.5, "right_ear": 0.5},
        "neck": {"left_shoulder": 0.25, "right_shoulder": 0.25, "left_ear": 0.25, "right_ear": 0.25},
        # MediaPipe's pinky and index landmarks are the knuckles: the palm centre is halfway from the wrist to
        # their midpoint, the hand tip half a palm beyond it; its thumb and toe landmarks are NTU's own
        **{f"{s}_hand": {f"{s}_wrist": 0.5, f"{s}_pinky": 0.25, f"{s}_index": 0.25} for s in ("left", "right")},
        **{f"{s}_hand_tip": {f"{s}_wrist": -0.5, f"{s}_pinky": 0.75, f"{s}_index": 0.75} for s in ("left", "right")},
        **{f"{s}_thumb": {f"{s}_thumb": 1.0} for s in ("left", "right")},
        **{f"{s}_foot": {f"{s}_foot_index": 1.0} for s in ("left", "right")},
    },
}

OBSERVED, INTERPOLATED, EXTRAPOLATED = "observed", "interpolated", "extrapolated"


@lru_cache(maxsize=None)
def mapping_matrix(source: str) -> np.ndarray:
    """(25, J) float32 matrix M with ntu25_joints = M @ source_joints."""
    src = get_topology(source)
    if src.name == NTU25.name:
        return np.eye(NTU25.num_joints, dtype=np.float32)
    try:
        recipe = _RECIPES[src.name]
    except KeyError:
        raise KeyError(f"no mapping from topology {src.name!r} to ntu25") from None
    m = np.zeros((NTU25.num_joints, src.num_joints), dtype=np.float32)
    for ntu_name, weights in recipe.items():
        row = NTU25.index(ntu_name)
        for name, w in weights.items():
            m[row, src.index(name)] += w
    missing = [NTU25.joint_names[i] for i in range(NTU25.num_joints) if not m[i].any()]
    if missing:
        raise AssertionError(f"mapping {src.name}->ntu25 lacks {missing}")
    m.setflags(write=False)
    return m


def to_ntu25(joints: np.ndarray, source: str | Topology) -> np.ndarray:
    """Map (..., J, 3) joints of `source` to (..., 25, 3) NTU-25 joints."""
    m = mapping_matrix(get_topology(source).name)
    joints = np.asarray(joints, dtype=np.float32)
    if joints.shape[-2] != m.shape[1]:
        raise ValueError(f"expected {m.shape[1]} joints for {source}, got {joints.shape[-2]}")
    # NaN * 0 is NaN, so only combine the joints a row actually uses.
    out = np.zeros(joints.shape[:-2] + (m.shape[0], 3), dtype=np.float32)
    for row in range(m.shape[0]):
        cols = np.flatnonzero(m[row])
        out[..., row, :] = np.tensordot(joints[..., cols, :], m[row, cols], axes=([-2], [0]))
    return out


def joint_provenance(source: str | Topology) -> tuple[str, ...]:
    """OBSERVED, INTERPOLATED or EXTRAPOLATED for each of the 25 NTU joints mapped from `source`."""
    m = mapping_matrix(get_topology(source).name)
    out = []
    for row in m:
        used = row[row != 0]
        if len(used) == 1 and used[0] == 1.0:
            out.append(OBSERVED)
        elif (used > 0).all():
            out.append(INTERPOLATED)
        else:
            out.append(EXTRAPOLATED)
    return tuple(out)


def synthesized_joints(source: str | Topology) -> tuple[str, ...]:
    """Names of the NTU-25 joints that a mapping from `source` synthesizes rather than observes, in NTU order."""
    return tuple(name for name, kind in zip(NTU25.joint_names, joint_provenance(source)) if kind != OBSERVED)
