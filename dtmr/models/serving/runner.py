"""Running a retargeter's `retarget` on batches of normalized clips, on the CPU or on a CUDA device.

On the CPU a batch runs when it is submitted, in the model's dtype, exactly as it always has (releases stay
byte-identical). On a CUDA device:

- the batch is copied into a pinned host buffer and sent with a non-blocking copy, the result comes back
  the same way into another pinned buffer, and `submit` returns before the GPU is done: the caller prepares
  the next batch (normalizing it on the CPU) while this one runs, and collects results in order;
- `precision = "bf16"` runs the model under bf16 autocast (CUDA only: refused on the CPU);
- `cuda_graph = True` replays a DisentangledTMR's cached decode from a CUDA graph (dtmr/models/cuda_graph.py);
- `auto_batch` picks the batch from the device's free memory (`batch_for_memory`), measured from one probe
  batch's peak memory.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import torch
from torch import nn

from ...errors import DtmrError
from ..precision import PRECISIONS
from .prepare import prepare_for_inference

#: the model batch on the CPU, and `auto`'s there (what `anonymize_batch` has always used)
CPU_BATCH = 32
#: share of the free device memory `auto` fills (the rest absorbs the allocator's fragmentation)
MEMORY_SHARE = 0.7
#: clips of the probe batch whose peak memory `auto` scales from
PROBE_CLIPS = 16
#: `auto` never goes beyond this batch
LARGEST_BATCH = 16384


def check_precision(precision: str, device: torch.device, cuda_graph: bool = False) -> None:
    """A one-line DtmrError for a precision or a CUDA graph the device cannot run."""
    if precision not in PRECISIONS:
        raise DtmrError(f"--precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if precision == "bf16" and device.type != "cuda":
        raise DtmrError("--precision bf16 runs on a CUDA device only (the CPU path is float32): add --device cuda "
                        "or leave it out")
    if cuda_graph and device.type != "cuda":
        raise DtmrError("--cuda-graph needs a CUDA device: add --device cuda or leave it out")


def batch_for_memory(free_bytes: int, bytes_per_clip: int, largest: int = LARGEST_BATCH,
                     share: float = MEMORY_SHARE) -> int:
    """The largest batch whose clips (`bytes_per_clip` each) fit in `share` of `free_bytes`, at most
    `largest`, at least 1; a multiple of 8 from 8 up (the tensor cores' tile)."""
    if bytes_per_clip <= 0:
        raise ValueError("bytes_per_clip must be positive")
    return tile_batch(min(largest, int(free_bytes * share) // bytes_per_clip))


def tile_batch(clips: int) -> int:
    """`clips` rounded down to a multiple of 8 from 8 up (the tensor cores' tile), at least 1."""
    if clips < 8:
        return max(1, clips)
    return clips - clips % 8


class Pending:
    """A submitted batch; `result()` is its (n, 64, J, 3) float32 output (on CUDA: once the device is done
    with it, copied out of the pinned buffer that a later batch reuses)."""

    def __init__(self, output: np.ndarray | torch.Tensor, event: torch.cuda.Event | None = None):
        self.output, self.event = output, event

    def result(self) -> np.ndarray:
        if self.event is not None:
            self.event.synchronize()
            self.output, self.event = self.output.numpy().copy(), None
        return self.output


class ModelRunner:
    """`model.retarget` on `device` (see the module docstring); the model is already there, in eval mode, and is
    prepared for inference here (in place: `prepare_for_inference`)."""

    def __init__(self, model: nn.Module, device: torch.device, precision: str = "fp32", cuda_graph: bool = False):
        check_precision(precision, device, cuda_graph)
        self.model, self.device, self.precision = prepare_for_inference(model), device, precision
        self.cuda = device.type == "cuda"
        self.cuda_graph = cuda_graph
        if cuda_graph:
            from .cuda_graph import check_graphable

            check_graphable(model)
        self._graphs: dict = {}
        #: pinned (source, reference, output) buffers, two sets used in turn (a batch in flight and the next),
        #: and the batch that last used each
        self._pinned: list[list[torch.Tensor] | None] = [None, None]
        self._users: list[Pending | None] = [None, None]
        self._turn = 0

    def submit(self, src: np.ndarray, ref: np.ndarray, labels: dict[str, torch.Tensor] | None = None) -> Pending:
        """Run one batch of (n, 64, J, 3) float32 sources and references; `labels` are keyword arguments of
        `retarget` for the models that take them (k-same: `subjects`)."""
        dtype = self.dtype
        labels = labels or {}
        if not self.cuda:
            with torch.inference_mode():
                full = self.model.retarget(torch.from_numpy(src).to(self.device, dtype),
                                           torch.from_numpy(ref).to(self.device, dtype), **labels)
            return Pending(full.float().cpu().numpy())
        n, turn = len(src), self._turn
        self._turn = 1 - turn
        src_host, ref_host, out_host = self._buffers(turn, src.shape)
        src_host[:n].copy_(torch.from_numpy(src))
        ref_host[:n].copy_(torch.from_numpy(ref))
        with torch.inference_mode(), self._autocast():
            src_dev = src_host[:n].to(self.device, dtype, non_blocking=True)
            ref_dev = ref_host[:n].to(self.device, dtype, non_blocking=True)
            full = self._retarget(src_dev, ref_dev, labels)
            out_host[:n].copy_(full.float(), non_blocking=True)
        event = torch.cuda.Event()
        event.record()
        self._users[turn] = Pending(out_host[:n], event)
        return self._users[turn]

    def auto_batch(self, largest: int, sharing: int = 1) -> int:
        """The batch for `--batch auto`, at most `largest`: CPU_BATCH on the CPU, from free memory on CUDA,
        where `sharing` processes (this one included) fill the device at once."""
        if not self.cuda:
            return min(CPU_BATCH, largest)
        free = probe_free_bytes(self.device)
        return batch_for_memory(free, self.bytes_per_clip(), largest=largest, share=MEMORY_SHARE / sharing)

    # ------------------------------------------------------------------ internals

    @property
    def dtype(self) -> torch.dtype:
        """The model's floating-point dtype now (a caller may have converted it since)."""
        return next((p.dtype for p in self.model.parameters() if p.is_floating_point()), torch.float32)

    def _autocast(self):
        return torch.autocast("cuda", dtype=torch.bfloat16) if self.precision == "bf16" else contextlib.nullcontext()

    def _retarget(self, src: torch.Tensor, ref: torch.Tensor, labels: dict[str, torch.Tensor]) -> torch.Tensor:
        if not self.cuda_graph:
            return self.model.retarget(src, ref, **labels)
        from .cuda_graph import GraphedRetarget

        # one graph per batch size seen (a run uses one, and a smaller last batch is padded into it)
        batch = next((b for b in sorted(self._graphs) if b >= len(src)), None)
        if batch is None:
            batch = len(src)
            self._graphs[batch] = GraphedRetarget(self.model, batch, torch.bfloat16 if self.precision == "bf16"
                                                  else None)
        return self._graphs[batch](src, ref)

    def _buffers(self, turn: int, shape: tuple[int, ...]) -> list[torch.Tensor]:
        """The pinned buffers of `turn`, free (the batch that used them last is collected first) and large
        enough for `shape` (n, 64, J, 3)."""
        if self._users[turn] is not None:
            self._users[turn].result()
        buffers = self._pinned[turn]
        if buffers is None or buffers[0].shape[0] < shape[0]:
            buffers = [torch.empty(shape, dtype=torch.float32, pin_memory=True) for _ in range(3)]
            self._pinned[turn] = buffers
        return buffers

    def bytes_per_clip(self) -> int:
        """CUDA only: the peak device memory of one eager probe batch, per clip (random clips: the memory does
        not depend on them)."""
        from ...skeleton.normalize import MODEL_FRAMES

        shape = (PROBE_CLIPS, MODEL_FRAMES, self.model.topology.num_joints, 3)
        generator = torch.Generator(device=self.device).manual_seed(0)
        src, ref = (torch.randn(shape, generator=generator, device=self.device, dtype=self.dtype) for _ in range(2))
        torch.cuda.synchronize(self.device)
        torch.cuda.reset_peak_memory_stats(self.device)
        before = torch.cuda.memory_allocated(self.device)
        with torch.inference_mode(), self._autocast():
            self.model.retarget(src, ref)
        torch.cuda.synchronize(self.device)
        peak = torch.cuda.max_memory_allocated(self.device)
        return max(1, math.ceil((peak - before) / PROBE_CLIPS))


def probe_free_bytes(device: torch.device) -> int:
    """Free device memory: what the driver reports free plus what torch's allocator holds unused."""
    free, _ = torch.cuda.mem_get_info(device)
    return int(free + torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device))
