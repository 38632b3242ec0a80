"""`lerp` whose three inputs may come in different floating dtypes: under autocast (bf16 on a GPU, or on the CPU)
the linear layers return bf16 while LayerNorm, softmax, interpolation and a model's own buffers stay float32,
and `torch.lerp` refuses mixed dtypes. The inputs are brought to the widest of the three first; when they
already agree (float32 inference) nothing is copied."""

from __future__ import annotations

import torch


def lerp(start: torch.Tensor, end: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """start + weight * (end - start), as `torch.lerp`, in the promoted dtype of the three."""
    if start.dtype == end.dtype == weight.dtype:  # float32 inference: nothing to convert, no call added
        return torch.lerp(start, end, weight)
    dtype = torch.promote_types(torch.promote_types(start.dtype, end.dtype), weight.dtype)
    return torch.lerp(start.to(dtype), end.to(dtype), weight.to(dtype))
