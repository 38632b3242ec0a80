"""Data-parallel training with `torchrun`: one process per device, DistributedDataParallel.

`torchrun --nproc_per_node N -m dtmr train ...` sets RANK / WORLD_SIZE / LOCAL_RANK; without them the
trainer runs as a single process. The backend is NCCL on GPUs and gloo on CPUs. Each process takes an
equal share of every global batch; DDP averages gradients, so with per-sample losses the run matches a
single process with the same global batch (tests/train/test_distributed.py). Batch-coupled terms
(supervised contrastive, cross-correlation) are computed on each process' share, as DDP does for
BatchNorm without SyncBatchNorm.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from ..errors import DtmrError


@dataclass(frozen=True)
class DistributedContext:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def wrap(self, module: nn.Module) -> nn.Module:
        """`module` under DDP when distributed (built from the parameters that require grad now)."""
        if not self.distributed or not any(p.requires_grad for p in module.parameters()):
            return module
        device_ids = [self.device.index] if self.device.type == "cuda" else None
        return DistributedDataParallel(module, device_ids=device_ids, find_unused_parameters=True)

    def share(self, batch_size: int) -> slice:
        """This process' part of a global batch of `batch_size` items."""
        if batch_size % self.world_size:
            raise DtmrError(f"the batch ({batch_size}) must be divisible by the number of processes "
                            f"({self.world_size})")
        per = batch_size // self.world_size
        return slice(self.rank * per, (self.rank + 1) * per)

    def mean(self, values: dict[str, float]) -> dict[str, float]:
        """Average logged numbers over the processes (identical keys everywhere)."""
        if not self.distributed or not values:
            return values
        keys = sorted(values)
        t = torch.tensor([float(values[k]) for k in keys], dtype=torch.float64,
                         device=self.device if self.device.type == "cuda" else "cpu")
        dist.all_reduce(t)
        return {k: float(v) / self.world_size for k, v in zip(keys, t.tolist())}

    def barrier(self) -> None:
        if self.distributed:
            dist.barrier()


def pick_device(requested: str | None, local_rank: int = 0) -> torch.device:
    """`requested` ("cpu", "cuda", "cuda:1"), or CUDA when available, else the CPU."""
    if requested in (None, "", "auto"):
        requested = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(requested)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise DtmrError(f"device {requested!r} requested but CUDA is not available")
        if device.index is None:
            device = torch.device("cuda", local_rank)
    return device


def init_distributed(requested_device: str | None = None) -> DistributedContext:
    """Join the `torchrun` process group when launched by it; a single-process context otherwise."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = pick_device(requested_device, local_rank)
    if world <= 1:
        return DistributedContext(device=device)
    if not dist.is_initialized():
        backend = "nccl" if device.type == "cuda" else "gloo"
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group(backend=backend)
    return DistributedContext(rank=dist.get_rank(), world_size=dist.get_world_size(), local_rank=local_rank,
                              device=device)


def shutdown_distributed() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
