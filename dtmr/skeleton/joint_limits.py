"""Anatomical limits of a body, one home for training losses and plausibility measures.

* `BONE_LENGTH_BAND`: the `joint_range` training loss (`dtmr.train.losses.joint_range_loss`) penalises a
  bone shorter than 0.8 or longer than 1.2 times the target's; joint positions alone cannot carry
  per-joint rotation ranges, so that loss is a bone-length band.
* Hinge limits of the elbows and knees, read from the three joints of each limb (found by joint names,
  so every registered topology has them): a knee bends backwards by at most `KNEE_HYPEREXTENSION`
  (the sign of the bend about the hip line) and flexes by
  at most `KNEE_MAX_FLEXION`; an elbow flexes by at most `ELBOW_MAX_FLEXION` (its backward bending
  depends on the upper arm's axial rotation, which three joints do not show, so only folding the forearm
  through the upper arm is caught).
* Limb capsules (`capsule_pairs`): the pairs of body segments that must not pass through each other, each
  segment a capsule of `LIMB_RADIUS` (the torso: `TORSO_RADIUS`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .topology import LEFT, RIGHT, Topology, get_topology

BONE_LENGTH_BAND = (0.8, 1.2)  # fraction of the reference's bone length
KNEE_HYPEREXTENSION = 10.0  # degrees of backward bending
KNEE_MAX_FLEXION = 160.0  # degrees
ELBOW_MAX_FLEXION = 150.0  # degrees
LIMB_RADIUS = 0.03  # m, half the thickness of a forearm or a shin, less a margin for tracking noise
TORSO_RADIUS = 0.08  # m, half the depth of a torso, less the same margin
#: a segment of `capsule_pairs`: two joints, or this name for mid-hips -> mid-shoulders
TORSO = "torso"

_ELBOW_NAMES = ("elbow", "forearm")
_KNEE_NAMES = ("knee", "lower_leg")


@dataclass(frozen=True)
class Limb:
    """Three joints upper -> hinge -> lower (shoulder-elbow-wrist, hip-knee-ankle) of one side."""

    kind: str  # "arm" or "leg"
    side: int  # LEFT or RIGHT
    upper: int
    hinge: int
    lower: int


def _hinge(topo: Topology, side: int, names: tuple[str, ...]) -> int:
    found = [j for j, n in enumerate(topo.joint_names) if topo.sides[j] == side and any(k in n for k in names)]
    if len(found) != 1:
        raise ValueError(f"topology {topo.name}: cannot tell its {'/'.join(names)} joint from its names")
    return found[0]


def limbs(topology: str | Topology) -> tuple[Limb, ...]:
    """Left arm, right arm, left leg, right leg of `topology`."""
    topo = get_topology(topology)
    out = []
    for kind, names in (("arm", _ELBOW_NAMES), ("leg", _KNEE_NAMES)):
        for side in (LEFT, RIGHT):
            hinge = _hinge(topo, side, names)
            children = [j for j, p in enumerate(topo.parents) if p == hinge]
            if len(children) != 1:
                raise ValueError(f"topology {topo.name}: joint {topo.joint_names[hinge]} needs one child")
            out.append(Limb(kind, side, topo.parents[hinge], hinge, children[0]))
    return tuple(out)


def _unit(v: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return v / np.linalg.norm(v, axis=-1, keepdims=True)


def flexion_angles(joints: np.ndarray, limb: Limb, lateral: np.ndarray | None = None) -> np.ndarray:
    """(T,) flexion of a limb's hinge in degrees: 0 straight, positive bent. With `lateral` ((T, 3), the
    body's left-minus-right hip line) the angle is signed: negative when the lower segment turns the wrong
    way about the lateral axis (a knee bent backwards). Right-handed coordinates, y up: for a standing
    leg, (thigh × shank)·lateral > 0 when the shank swings backwards, the way a knee flexes."""
    joints = np.asarray(joints, dtype=np.float64)
    upper = joints[:, limb.hinge] - joints[:, limb.upper]
    lower = joints[:, limb.lower] - joints[:, limb.hinge]
    cos = np.clip(np.sum(_unit(upper) * _unit(lower), axis=-1), -1.0, 1.0)
    angle = np.degrees(np.arccos(cos))
    if lateral is None:
        return angle
    return np.where(np.sum(np.cross(upper, lower) * lateral, axis=-1) < 0, -angle, angle)


def hinge_violations(joints: np.ndarray, topology: str | Topology) -> np.ndarray:
    """(T, 4) degrees beyond the hinge limits of left arm, right arm, left leg, right leg (0 within)."""
    topo = get_topology(topology)
    joints = np.asarray(joints, dtype=np.float64)
    lateral = joints[:, topo.left_hip] - joints[:, topo.right_hip]
    out = []
    for limb in limbs(topo):
        if limb.kind == "leg":
            flexion = flexion_angles(joints, limb, lateral)
            excess = np.maximum(-flexion - KNEE_HYPEREXTENSION, flexion - KNEE_MAX_FLEXION)
        else:
            excess = flexion_angles(joints, limb) - ELBOW_MAX_FLEXION
        with np.errstate(invalid="ignore"):
            out.append(np.maximum(excess, 0.0))
    return np.stack(out, axis=-1)


def capsule_pairs(topology: str | Topology) -> list[tuple[tuple[int, int] | str, tuple[int, int] | str, float]]:
    """(segment, segment, radius sum) of the segments that must not overlap: each forearm against the torso,
    the two shins, each thigh against the other shin. A segment is (joint, joint) or `TORSO`."""
    left_arm, right_arm, left_leg, right_leg = limbs(topology)
    forearm = [(arm.hinge, arm.lower) for arm in (left_arm, right_arm)]
    shin = [(leg.hinge, leg.lower) for leg in (left_leg, right_leg)]
    thigh = [(leg.upper, leg.hinge) for leg in (left_leg, right_leg)]
    pairs = [(f, TORSO, LIMB_RADIUS + TORSO_RADIUS) for f in forearm]
    pairs.append((shin[0], shin[1], 2 * LIMB_RADIUS))
    pairs += [(thigh[0], shin[1], 2 * LIMB_RADIUS), (thigh[1], shin[0], 2 * LIMB_RADIUS)]
    return pairs


def _segment_distances(p0, p1, q0, q1, xp, eps: float):
    """(...,) closest distance between segments p0-p1 and q0-q1, all (..., 3) arrays of namespace `xp`
    (numpy or torch: the same arithmetic serves the metric and the training loss). `eps` inside the root
    keeps a gradient where two segments touch."""
    d1, d2, r = p1 - p0, q1 - q0, p0 - q0
    a, e = xp.sum(d1 * d1, -1), xp.sum(d2 * d2, -1)
    b, c, f = xp.sum(d1 * d2, -1), xp.sum(d1 * r, -1), xp.sum(d2 * r, -1)
    denom = a * e - b * b
    # every division by a safe value: a branch `where` leaves out still gets a (zero) gradient in torch, and
    # 0 · ∞ would make it NaN (parallel segments: denom = 0)
    ok_denom, ok_a, ok_e = denom > 1e-12, a > 1e-12, e > 1e-12
    denom, a_safe, e_safe = xp.where(ok_denom, denom, 1.0), xp.where(ok_a, a, 1.0), xp.where(ok_e, e, 1.0)
    s = xp.where(ok_denom, xp.clip((b * f - c * e) / denom, 0.0, 1.0), 0.0)
    t = xp.where(ok_e, (b * s + f) / e_safe, 0.0)
    s_low = xp.where(ok_a, xp.clip(-c / a_safe, 0.0, 1.0), 0.0)
    s_high = xp.where(ok_a, xp.clip((b - c) / a_safe, 0.0, 1.0), 0.0)
    s = xp.where(t < 0, s_low, xp.where(t > 1, s_high, s))
    t = xp.clip(t, 0.0, 1.0)
    gap = p0 + d1 * s[..., None] - q0 - d2 * t[..., None]
    return xp.sqrt(xp.sum(gap * gap, -1) + eps)


def capsule_depths(joints, topology: str | Topology, xp, eps: float = 0.0):
    """(..., J, 3) joints (numpy or torch, namespace `xp`) -> (..., len(capsule_pairs)) how deep each pair's
    capsules overlap in metres (negative: the gap between them)."""
    topo = get_topology(topology)
    left_arm, right_arm, left_leg, right_leg = limbs(topo)
    ends = {TORSO: ((joints[..., left_leg.upper, :] + joints[..., right_leg.upper, :]) / 2,
                    (joints[..., left_arm.upper, :] + joints[..., right_arm.upper, :]) / 2)}
    depths = []
    for first, second, radii in capsule_pairs(topo):
        p0, p1 = ends[first] if first == TORSO else (joints[..., first[0], :], joints[..., first[1], :])
        q0, q1 = ends[second] if second == TORSO else (joints[..., second[0], :], joints[..., second[1], :])
        depths.append(radii - _segment_distances(p0, p1, q0, q1, xp, eps))
    return xp.stack(depths, -1)
