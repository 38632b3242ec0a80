"""The retargeter interface shared by every method (DisentangledTMR, DMR, PMR, naive, noise).

A retargeter is a `torch.nn.Module` with `topology` (a `Topology`), `beta` (float, fixed at training
time), `method` (str), `retarget(src, ref)` and `config_dict()`. `src` and `ref` are normalized
(B, 64, J, 3) clips; `retarget` returns the **full** retarget D(E_A(src), E_I(ref)) in the same
space, without the β blend. The release is `blend_release(full, src, beta)`. `config_dict()` returns
the plain dict a checkpoint stores so that the method's registered builder can rebuild the module
(see `dtmr.models.checkpoints.checkpoint`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch

from ..skeleton import Topology
from .blend import blend_release  # noqa: F401 (the rule lives in the torch-free blend module)


@runtime_checkable
class Retargeter(Protocol):
    topology: Topology
    beta: float
    method: str

    def retarget(self, src: torch.Tensor, ref: torch.Tensor) -> torch.Tensor: ...

    def config_dict(self) -> dict: ...
