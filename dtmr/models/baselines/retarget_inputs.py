"""Validation of the (src, ref) pair every retargeter's `retarget` receives (docs/ARCHITECTURE.md)."""

from __future__ import annotations

import torch

from ...skeleton import MODEL_FRAMES, Topology


def check_retarget_inputs(src: torch.Tensor, ref: torch.Tensor, topology: Topology) -> None:
    """Raise ValueError unless both are (B, 64, J, 3) with the same B and J = the topology's joints."""
    expected = (MODEL_FRAMES, topology.num_joints, 3)
    for name, x in (("src", src), ("ref", ref)):
        if x.ndim != 4 or tuple(x.shape[1:]) != expected:
            raise ValueError(f"{name} must be (B, {MODEL_FRAMES}, {topology.num_joints}, 3) for topology "
                             f"{topology.name}, got {tuple(x.shape)}")
    if src.shape[0] != ref.shape[0]:
        raise ValueError(f"src and ref batch sizes differ: {src.shape[0]} vs {ref.shape[0]}")
