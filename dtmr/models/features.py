"""Input features of the two encoders, in torch (batched, differentiable).

Both take the normalized (B, T, J, 3) clip of `dtmr.skeleton.normalize` (first-frame pelvis at the
origin, hip line along +x), so orientation is already canonical.
"""

from __future__ import annotations

import torch

from ..skeleton import Topology


def motion_features(joints: torch.Tensor) -> torch.Tensor:
    """(B, T, J, 3) -> (B, T, J, 9): position, velocity and acceleration of every joint.

    Velocity is the backward difference x_t - x_{t-1} and acceleration v_t - v_{t-1}; both are 0 where
    the earlier frame does not exist (t = 0, and t <= 1 for acceleration), so they never look ahead.
    """
    velocity = torch.zeros_like(joints)
    velocity[:, 1:] = joints[:, 1:] - joints[:, :-1]
    acceleration = torch.zeros_like(joints)
    acceleration[:, 2:] = velocity[:, 2:] - velocity[:, 1:-1]
    return torch.cat([joints, velocity, acceleration], dim=-1)


def mean_pose(joints: torch.Tensor, topology: Topology) -> torch.Tensor:
    """(B, T, J, 3) -> (B, J, 3): every frame root-centred, then averaged over time."""
    root = topology.root
    return (joints - joints[:, :, root : root + 1]).mean(dim=1)


def bone_lengths(pose: torch.Tensor, topology: Topology) -> torch.Tensor:
    """(B, J, 3) -> (B, J - 1): length of every bone (Topology.bones order) of one pose per sample.

    Applied to the mean pose, this is DESIGN §2.3's "bone lengths from the mean pose", not the mean of
    per-frame lengths.
    """
    children = torch.as_tensor(topology.bone_children, device=pose.device)
    parents = torch.as_tensor(topology.bone_parents, device=pose.device)
    return torch.linalg.vector_norm(pose[:, children] - pose[:, parents], dim=-1)
