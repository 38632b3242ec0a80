"""The MixFormer branch's CPU inference paths: the same function as `dtmr.models.mixformer`, fewer passes.

At batch 32 the (N, 3C, T, V) activations (up to ~50 MB) spill out of the caches, and a block makes ~60
passes over them. At inference (eval mode) `speed_up_mixformer` puts three changes in place:

- the batch runs in chunks of `EVAL_CHUNK` clips (`SkeletonMixFormer.batch_chunk`), whose activations stay
  in cache between the passes;
- every Conv2d followed by a BatchNorm2d runs as one convolution with the normalization folded in
  (`FoldedSequential`);
- the temporal max-pool branch takes the maximum of three shifted views (`ShiftedMaxPool`).

Each is the same function up to rounding, and each is a module put where the plain one was, holding the same
children: the state dict (keys and tensors) is that of the paper's modules, and training mode runs them as
they are.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from ..mixformer import SkeletonMixFormer

#: clips per pass of the stack at inference: those of a few clips stay in cache, those of a batch of 32 do not
EVAL_CHUNK = 4


class FoldedSequential(nn.Sequential):
    """An nn.Sequential (same children, same state-dict keys) that at inference applies each Conv2d followed by a
    BatchNorm2d as one convolution with the normalization folded in:

        BN(conv(x)) = conv(x; w * s) + (b - mean) * s + beta,   s = gamma / sqrt(var + eps)   (per channel)

    one pass over the activation instead of two, equal up to rounding. The folded weights are derived at every
    call (a few small ops), never stored; in training mode it is the plain Sequential (batch statistics)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            return super().forward(x)
        layers = list(self)
        i = 0
        while i < len(layers):
            if isinstance(layers[i], nn.Conv2d) and i + 1 < len(layers) and isinstance(layers[i + 1], nn.BatchNorm2d):
                conv, norm = layers[i], layers[i + 1]
                scale = norm.weight * torch.rsqrt(norm.running_var + norm.eps)
                bias = norm.bias - norm.running_mean * scale
                if conv.bias is not None:
                    bias = bias + conv.bias * scale
                x = conv._conv_forward(x, conv.weight * scale[:, None, None, None], bias)
                i += 2
            else:
                x = layers[i](x)
                i += 1
        return x


class ShiftedMaxPool(nn.MaxPool2d):
    """MaxPool2d((3, 1), stride=(s, 1), padding=(1, 0)) over time. At inference, the elementwise maximum of the
    three shifted (strided) views of the -inf-padded input: the same values, two elementwise kernels instead
    of the pooling kernel that also computes the argmax indices. Training keeps MaxPool2d (its gradient goes
    to one element of a tie)."""

    def __init__(self, stride: int):
        super().__init__((3, 1), stride=(stride, 1), padding=(1, 0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            return super().forward(x)
        s = self.stride[0]
        padded = F.pad(x, (0, 0, 1, 1), value=float("-inf"))  # (N, C, T + 2, V)
        frames = (x.shape[2] - 1) // s + 1
        window = [padded[:, :, k : k + s * (frames - 1) + 1 : s] for k in range(3)]  # 3 x (N, C, T_out, V)
        return torch.maximum(torch.maximum(window[0], window[1]), window[2])


def _is_temporal_max_pool(module: nn.Module) -> bool:
    return (type(module) is nn.MaxPool2d and _pair(module.kernel_size) == (3, 1)
            and _pair(module.padding) == (1, 0) and _pair(module.stride)[1] == 1 and module.dilation in (1, (1, 1))
            and not module.ceil_mode and not module.return_indices)


def _pair(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value, value)


def _has_conv_then_norm(sequence: nn.Sequential) -> bool:
    layers = list(sequence)
    return any(isinstance(a, nn.Conv2d) and isinstance(b, nn.BatchNorm2d) for a, b in zip(layers, layers[1:]))


def _replace_children(root: nn.Module, replacement) -> None:
    """Every descendant `m` of `root` for which `replacement(m)` is a module is replaced by it in its parent, in
    `m`'s mode (a new module starts in training mode, which would leave an eval-mode model on the plain path)."""
    for parent in list(root.modules()):
        for name, child in list(parent.named_children()):
            new = replacement(child)
            if new is not None:
                setattr(parent, name, new.train(child.training))


def speed_up_mixformer(mixformer: SkeletonMixFormer, *, fold_batchnorm: bool = True, shifted_max: bool = True,
                       batch_chunk: int | None = EVAL_CHUNK) -> None:
    """Put the inference paths chosen in place in `mixformer` (in place; again on a prepared one changes nothing).

    The pools first: a folded Sequential is built from the children its plain one holds at that moment."""
    if shifted_max:
        _replace_children(mixformer, lambda m: ShiftedMaxPool(_pair(m.stride)[0]) if _is_temporal_max_pool(m)
                          else None)
    if fold_batchnorm:
        _replace_children(mixformer, lambda m: FoldedSequential(*m) if type(m) is nn.Sequential
                          and _has_conv_then_norm(m) else None)
    mixformer.batch_chunk = batch_chunk
