"""Training losses that keep a decoded body anatomical: hinge limits of elbows and knees, and limbs that do
not pass through each other or the torso. The limits and the capsules are the plausibility score's
(`dtmr.skeleton.joint_limits`, `dtmr.eval.plausibility`), so the model is trained on what it is judged by.

Both are zero for a plausible body and grow with the square of the violation; neither needs the target.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..skeleton.joint_limits import (
    ELBOW_MAX_FLEXION,
    KNEE_HYPEREXTENSION,
    KNEE_MAX_FLEXION,
    capsule_depths,
    limbs,
)
from ..skeleton.topology import Topology, get_topology
from .losses import at_least_float32

#: keeps the angle's and the distance's gradients finite at a straight limb or touching segments
_EPS = 1e-12


def hinge_excess(joints: torch.Tensor, topology: str | Topology) -> torch.Tensor:
    """(..., J, 3) -> (..., 4) radians beyond the hinge limits of left arm, right arm, left leg, right leg
    (0 within): `dtmr.skeleton.joint_limits.hinge_violations` in torch."""
    topo = get_topology(topology)
    lateral = joints[..., topo.left_hip, :] - joints[..., topo.right_hip, :]
    out = []
    for limb in limbs(topo):
        upper = joints[..., limb.hinge, :] - joints[..., limb.upper, :]
        lower = joints[..., limb.lower, :] - joints[..., limb.hinge, :]
        normal = torch.linalg.cross(upper, lower, dim=-1)
        flexion = torch.atan2(torch.sqrt(normal.pow(2).sum(-1) + _EPS), (upper * lower).sum(-1))
        if limb.kind == "leg":  # signed: negative when the shank turns backwards about the hip line
            flexion = torch.where((normal * lateral).sum(-1) < 0, -flexion, flexion)
            excess = torch.maximum(-flexion - math.radians(KNEE_HYPEREXTENSION),
                                   flexion - math.radians(KNEE_MAX_FLEXION))
        else:
            excess = flexion - math.radians(ELBOW_MAX_FLEXION)
        out.append(F.relu(excess))
    return torch.stack(out, -1)


def joint_angle_loss(prediction: torch.Tensor, topology: str | Topology) -> torch.Tensor:
    """mean over (B, T, 4 hinges) of (radians beyond the hinge limit)²: a knee bent 10° past its limit on
    every frame gives 0.03."""
    # float32: under bf16 autocast the cross product and atan2 of nearly parallel segments lose the angle
    return hinge_excess(at_least_float32(prediction), topology).pow(2).mean()


def limb_overlap_loss(prediction: torch.Tensor, topology: str | Topology) -> torch.Tensor:
    """mean over (B, T, capsule pairs) of (metres of overlap)²: a forearm 2 cm inside the torso on every
    frame gives 4e-4 / 5 pairs."""
    # float32: overlaps of centimetres between segments a metre from the origin (bfloat16: 8 mm steps there)
    return F.relu(capsule_depths(at_least_float32(prediction), topology, torch, _EPS)).pow(2).mean()
