"""A DisentangledTMR's retarget with its 64-step cached decode replayed from a CUDA graph.

The cached decode (`FactorizedDecoder.generate_cached`) is 64 steps × 6 layers of small kernels: on a GPU
its time is kernel launches, not arithmetic. A CUDA graph records those launches once and replays them in
one call. The graph is captured for a fixed batch `batch` on static buffers (action memory, identity and,
for the kinematic output head, the reference's bone lengths); the encoders run as usual before it (a few
large kernels each), their outputs are copied into the buffers, and a smaller batch is padded with copies
of its first clip (every clip is decoded independently, so the padding changes no other clip's output).

Capture happens on the first call, with that call's inputs in the buffers, after warm-up runs on a side
stream (as torch.cuda.graphs requires). Under bf16 autocast the capture runs with autocast's weight cache
off: a cached cast made while capturing would be freed under the graph.
"""

from __future__ import annotations

import contextlib

import torch
from torch import nn

from ...errors import DtmrError

#: eager runs on a side stream before capturing (initializes cuBLAS and the attention kernels' choices)
WARM_UP_RUNS = 2


def check_graphable(model: nn.Module) -> None:
    """A DtmrError unless `model` has the cached decoder this module captures (DisentangledTMR)."""
    decoder = getattr(model, "decoder", None)
    if not (hasattr(decoder, "generate_cached") and all(hasattr(model, name) for name in
                                                        ("encode_action", "encode_identity", "body"))):
        raise DtmrError(f"--cuda-graph: the {getattr(model, 'method', type(model).__name__)} model has no cached "
                        "decoder to capture (DisentangledTMR models only)")


class GraphedRetarget:
    """`model.retarget(src, ref)` for batches of at most `batch` clips on a CUDA device, the decode from a
    graph. `autocast` is the dtype the caller runs under (bf16) or None (float32)."""

    def __init__(self, model: nn.Module, batch: int, autocast: torch.dtype | None = None):
        check_graphable(model)
        if batch < 1:
            raise ValueError("batch must be at least 1")
        self.model, self.batch, self.autocast = model, batch, autocast
        self.graph: torch.cuda.CUDAGraph | None = None
        self.buffers: list[torch.Tensor | None] = []
        self.out: torch.Tensor | None = None

    def __call__(self, src: torch.Tensor, ref: torch.Tensor) -> torch.Tensor:
        """(n, 64, J, 3) normalized sources and references on the device, n <= batch -> (n, 64, J, 3)."""
        n = src.shape[0]
        if not 1 <= n <= self.batch:
            raise ValueError(f"the graph was captured for batches of at most {self.batch} clips, got {n}")
        inputs = [self.model.encode_action(src), self.model.encode_identity(ref), self.model.body(ref)]
        if self.graph is None:
            self.buffers = [None if x is None else x.new_empty((self.batch, *x.shape[1:])) for x in inputs]
        for buffer, x in zip(self.buffers, inputs):
            if buffer is not None:
                buffer[:n].copy_(x)
                buffer[n:].copy_(x[:1].expand(self.batch - n, *x.shape[1:]))
        if self.graph is None:
            self._capture()
        else:
            self.graph.replay()
        return self.out[:n]

    def _decode(self) -> torch.Tensor:
        action, identity, bones = self.buffers
        return self.model.decoder.generate_cached(action, identity, bones)

    def _capture(self) -> None:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(WARM_UP_RUNS):
                self._decode()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        uncached = torch.autocast("cuda", dtype=self.autocast, cache_enabled=False) if self.autocast \
            else contextlib.nullcontext()
        with uncached, torch.cuda.graph(graph):
            self.out = self._decode()
        graph.replay()  # capturing records the kernels without running them
        self.graph = graph
