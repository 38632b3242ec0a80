"""The naive kinematic retarget as a baseline method: on clips (`naive_retarget_clip`) and as a retargeter
(`NaiveRetargeter`, the same computation in torch on normalized batches).

The retarget itself, on joint arrays, is `dtmr.skeleton.retarget.naive_retarget` (bone directions of the
source on the mean-pose bone lengths of the reference; missing joints and their subtrees stay missing).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ...data.clip import Clip
from ...data.provenance import Provenance
from ...errors import InputError
from ...methods import NAIVE
from ...skeleton import Topology, get_topology
from ...skeleton.retarget import EPS, naive_retarget
from .retarget_inputs import check_retarget_inputs


def naive_retarget_clip(clip: Clip, reference: Clip) -> Clip:
    """The source clip's motion on the reference's mean-pose bone lengths, with provenance in `extra`."""
    if clip.topology != reference.topology:
        raise InputError(reference.source_file, f"reference clip {reference.name!r} has topology "
                                                f"{reference.topology}, the source {clip.topology}")
    out = naive_retarget(clip.joints, reference.joints, clip.topology)
    made = Provenance(method=NAIVE.name, beta=1.0, source_clip=clip.name, reference_clip=reference.name)
    return made.stamp(clip, joints=out)


def ancestor_bones(topology: Topology) -> np.ndarray:
    """(J, J-1) 0/1 matrix: entry (j, b) is 1 when bone b lies on the path from the root to joint j.

    Forward kinematics is then one matrix product: joints = root + ancestors @ bone offsets.
    """
    bone_of = {child: b for b, (_, child) in enumerate(topology.bones)}
    out = np.zeros((topology.num_joints, topology.num_bones), dtype=np.float32)
    for j in range(topology.num_joints):
        k = j
        while topology.parents[k] >= 0:
            out[j, bone_of[k]] = 1.0
            k = topology.parents[k]
    return out


def mean_pose_bone_lengths(ref: torch.Tensor, topology: Topology) -> torch.Tensor:
    """(B, T, J, 3) -> (B, J-1) bone lengths of each clip's root-centred mean pose (NaN frames ignored)."""
    root = topology.root
    centred = ref - ref[:, :, root : root + 1]
    valid = torch.isfinite(centred).all(dim=-1, keepdim=True)
    count = valid.sum(dim=1)
    mean = torch.where(valid, centred, 0.0).sum(dim=1) / count.clamp(min=1)
    mean = torch.where(count > 0, mean, torch.nan)
    children = torch.as_tensor(topology.bone_children, device=ref.device)
    parents = torch.as_tensor(topology.bone_parents, device=ref.device)
    return torch.linalg.vector_norm(mean[:, children] - mean[:, parents], dim=-1)


class NaiveRetargeter(nn.Module):
    """`naive_retarget` as a retargeter (docs/ARCHITECTURE.md): no parameters, `beta` = 1.

    It recomputes the retarget in torch on a batch rather than calling the NumPy function, so it runs on the
    model's device inside `Anonymizer`; tests/models/test_baselines_naive.py checks the two agree."""

    method = NAIVE.name

    def __init__(self, topology: str | Topology):
        super().__init__()
        self.topology = get_topology(topology)
        self.beta = 1.0
        topo = self.topology
        self.register_buffer("ancestors", torch.from_numpy(ancestor_bones(topo)), persistent=False)
        self.register_buffer("bone_children", torch.from_numpy(topo.bone_children), persistent=False)
        self.register_buffer("bone_parents", torch.from_numpy(topo.bone_parents), persistent=False)

    def config_dict(self) -> dict:
        return {}

    def mean_pose_bone_lengths(self, ref: torch.Tensor) -> torch.Tensor:
        return mean_pose_bone_lengths(ref, self.topology)

    def forward(self, src: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        vec = src[:, :, self.bone_children] - src[:, :, self.bone_parents]
        norm = torch.linalg.vector_norm(vec, dim=-1, keepdim=True)
        directions = torch.where(norm > EPS, vec / norm.clamp(min=EPS), 0.0)
        offsets = directions * self.mean_pose_bone_lengths(ref)[:, None, :, None]
        # 0 * NaN would spread a missing bone to every joint in the product: zero it, then mark its subtree.
        missing = ~(torch.isfinite(vec).all(dim=-1) & torch.isfinite(offsets).all(dim=-1))
        offsets = torch.where(missing[..., None], 0.0, offsets)
        subtree_missing = (missing.to(offsets.dtype) @ self.ancestors.T) > 0
        root = self.topology.root
        joints = src[:, :, root : root + 1] + torch.einsum("jb,ntbc->ntjc", self.ancestors, offsets)
        return torch.where(subtree_missing[..., None], torch.nan, joints)

    def retarget(self, src: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        """(B, 64, J, 3) normalized source and reference -> (B, 64, J, 3) retargeted source."""
        check_retarget_inputs(src, ref, self.topology)
        return self(src, ref)
