"""Data-parallel training with `torchrun`: one process per device, DistributedDataParallel.

`torchrun --nproc_per_node N -m dtmr train ...` sets RANK / WORLD_SIZE / LOCAL_RANK; without them the
trainer runs as a single process. The backend is NCCL on GPUs and gloo on CPUs. Each process takes an
equal share of every global batch; DDP averages gradients, and BatchNorm statistics are taken over the
global batch (`torch.nn.SyncBatchNorm` on GPUs; `GlobalBatchNorm` on CPUs, where PyTorch has no
synchronized BatchNorm), so with per-sample losses the run matches a single process with the same global
batch (tests/train/test_trainers.py). Batch-coupled loss terms (supervised contrastive,
cross-correlation) are computed on each process' share.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.distributed.nn.functional as dist_fn
import torch.nn.functional as F
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
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

    def synchronize_batch_norm(self, module: nn.Module) -> nn.Module:
        """`module` with its BatchNorm layers normalizing over the global batch (a no-op in one process).
        Call before building optimizers: parameters are kept, only the layers change."""
        if not self.distributed:
            return module
        if self.device.type == "cuda":
            return nn.SyncBatchNorm.convert_sync_batchnorm(module)
        return convert_to_global_batch_norm(module)

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


class GlobalBatchNorm(_BatchNorm):
    """BatchNorm whose training statistics are summed over every process (gloo; autograd flows through
    the all-reduce), for any input (B, C, ...). Evaluation uses the running statistics, as BatchNorm."""

    def _check_input_dim(self, x: torch.Tensor) -> None:
        if x.dim() < 2:
            raise ValueError(f"expected at least 2-D input, got {x.dim()}-D")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training:
            return F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, False, 0.0, self.eps)
        channels = x.shape[1]
        dims = [0, *range(2, x.dim())]
        count = x.new_tensor([x.numel() // channels])
        stats = dist_fn.all_reduce(torch.cat([x.sum(dims), (x * x).sum(dims), count]))
        total = stats[-1]
        mean = stats[:channels] / total
        var = stats[channels:2 * channels] / total - mean * mean
        if self.track_running_stats:
            with torch.no_grad():
                self.num_batches_tracked += 1
                momentum = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
                unbiased = var * total / (total - 1).clamp(min=1)
                self.running_mean.lerp_(mean, momentum)
                self.running_var.lerp_(unbiased, momentum)
        shape = (1, channels) + (1,) * (x.dim() - 2)
        y = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        return y * self.weight.view(shape) + self.bias.view(shape) if self.affine else y


def convert_to_global_batch_norm(module: nn.Module) -> nn.Module:
    """Replace every BatchNorm layer of `module` by a `GlobalBatchNorm` sharing its parameters and buffers."""
    if isinstance(module, _BatchNorm) and not isinstance(module, GlobalBatchNorm):
        new = GlobalBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                              module.track_running_stats)
        if module.affine:
            new.weight, new.bias = module.weight, module.bias
        if module.track_running_stats:
            new.running_mean, new.running_var = module.running_mean, module.running_var
            new.num_batches_tracked = module.num_batches_tracked
        new.train(module.training)
        return new
    for name, child in module.named_children():
        module.add_module(name, convert_to_global_batch_norm(child))
    return module
