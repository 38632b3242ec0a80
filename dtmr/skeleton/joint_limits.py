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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .topology import LEFT, RIGHT, Topology, get_topology

BONE_LENGTH_BAND = (0.8, 1.2)  # fraction of the reference's bone length
KNEE_HYPEREXTENSION = 10.0  # degrees of backward bending
KNEE_MAX_FLEXION = 160.0  # degrees
ELBOW_MAX_FLEXION = 150.0  # degrees

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
