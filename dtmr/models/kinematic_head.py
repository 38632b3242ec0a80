"""The decoder's forward-kinematics output head (`DTMRConfig.output_head = "kinematic"`).

Instead of J free joint positions, the decoder predicts per frame the root position and one direction per
bone; the joints follow from the reference's bone lengths by forward kinematics:

    raw (..., 3 + 3(J-1))  ->  root r (..., 3), directions u_b = v_b / |v_b| (..., J-1, 3)
    joint_j = r + Σ_{b on the path root→j} L_b · u_b        L (B, J-1): the reference's mean-pose bone lengths

So every output frame is a body with exactly the reference's proportions: the bone-length error is zero by
construction and no bone length of the source can leak into the full retarget, whatever β. The joint
head ("joints", the paper's) predicts the J·3 coordinates directly.
"""

from __future__ import annotations

import torch
from torch import nn

from ..skeleton import Topology
from .baselines.naive import ancestor_bones

#: |v_b| below this is treated as this (a zero vector has no direction; its gradient stays finite)
DIRECTION_EPS = 1e-6


class KinematicHead(nn.Module):
    def __init__(self, topology: Topology):
        super().__init__()
        self.num_joints = topology.num_joints
        self.num_bones = topology.num_bones
        self.register_buffer("ancestors", torch.from_numpy(ancestor_bones(topology)), persistent=False)

    @property
    def raw_size(self) -> int:
        """Values per frame the decoder's last linear layer produces: the root and one vector per bone."""
        return 3 + 3 * self.num_bones

    def forward(self, raw: torch.Tensor, bone_lengths: torch.Tensor) -> torch.Tensor:
        """raw (B, ..., 3 + 3(J-1)), bone_lengths (B, J-1) -> joints (B, ..., J*3)."""
        root = raw[..., :3]  # (B, ..., 3)
        vectors = raw[..., 3:].unflatten(-1, (self.num_bones, 3))  # (B, ..., J-1, 3)
        directions = vectors / torch.linalg.vector_norm(vectors, dim=-1, keepdim=True).clamp(min=DIRECTION_EPS)
        lengths = bone_lengths.view(bone_lengths.shape[0], *(1,) * (raw.ndim - 2), self.num_bones, 1)
        offsets = directions * lengths  # (B, ..., J-1, 3)
        joints = root.unsqueeze(-2) + torch.matmul(self.ancestors, offsets)  # (B, ..., J, 3)
        return joints.flatten(-2)
