"""`Anonymizer`: clips in, anonymized clips out, with any retargeter checkpoint (exported as `dtmr.Anonymizer`).

For each (source, reference) pair:

1. both clips are brought to the model's topology: unchanged when they already have it, mapped with
   `dtmr.skeleton.to_ntu25` when the model is NTU-25 and the clip is another registered joint set
   (the outputs are then NTU-25 clips), an `InputError` otherwise;
2. missing (NaN) joints are filled for the model only (linear interpolation in time, held at the ends;
   a joint never seen takes its parent's position);
3. both are normalized to 64 frames (`dtmr.skeleton.normalize`), the model runs batched under
   `torch.inference_mode()` with its key/value cache, and the full retarget D is mapped back to the
   source's own space and length (`Normalization.invert`): that is the *retargeted* clip;
4. the *released* clip is the blend in the source's own space, (1 - β)·source + β·invert(D), so β = 0
   returns the (mapped) source exactly, NaNs included. A DisentangledTMR trained with the naive residual
   (`DTMRConfig.residual = "naive"`) blends with the source on the reference's bone lengths instead.

Output clips keep the source's metadata and carry provenance in `extra`: `source_clip`,
`reference_clip`, `model`, `method`, `beta` and `output` ("retargeted" or "released").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..data.clip import Clip
from ..errors import DtmrError, InputError
from ..skeleton import NTU25, Normalization, Topology, normalize, to_ntu25
from ..skeleton.retarget import naive_retarget
from .checkpoint import build_model_from_checkpoint, load_checkpoint
from .interface import blend_release


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def fill_missing_joints(joints: np.ndarray, topology: Topology) -> np.ndarray:
    """(T, J, 3) with NaN joints -> a finite copy for the model.

    A joint seen in some frames is interpolated linearly in time between them (held constant before
    the first and after the last); a joint never seen copies its parent, and a never-seen root the
    mean of the other joints.
    """
    joints = np.asarray(joints, dtype=np.float32)
    valid = np.isfinite(joints).all(axis=-1)  # (T, J)
    if valid.all():
        return joints.copy()
    seen = valid.any(axis=0)  # (J,)
    if not seen.any():
        raise ValueError("the clip has no valid joint in any frame")
    length = joints.shape[0]
    frames = np.arange(length)[:, None]
    before = np.maximum.accumulate(np.where(valid, frames, -1), axis=0)  # last valid frame <= t, or -1
    after = np.minimum.accumulate(np.where(valid, frames, length)[::-1], axis=0)[::-1]  # first >= t, or T
    lo = np.where(before < 0, after, before) % length  # never-seen joints end up anywhere: replaced below
    hi = np.where(after >= length, lo, after) % length
    w = ((frames - lo) / np.maximum(hi - lo, 1)).clip(0.0, 1.0)[..., None].astype(np.float32)
    x_lo, x_hi = np.take_along_axis(joints, lo[..., None], 0), np.take_along_axis(joints, hi[..., None], 0)
    interpolated = (1.0 - w) * x_lo + w * x_hi
    filled = np.where(valid[..., None], joints, interpolated)
    for j in topology.order:  # parents before children
        if not seen[j]:
            parent = topology.parents[j]
            filled[:, j] = filled[:, parent] if parent >= 0 else filled[:, seen].mean(axis=1)
    return filled


class Anonymizer:
    """Runs a retargeter (`dtmr.models.interface`) on clips; see the module docstring."""

    def __init__(self, model: nn.Module, *, checkpoint: dict | None = None, source: str | Path | None = None,
                 device: str | torch.device | None = None):
        self.device = torch.device(device) if device is not None else default_device()
        self.model = model.to(self.device).eval()
        #: the checkpoint's metadata: every top-level entry but the ones holding tensors (state dicts)
        self.checkpoint = {k: v for k, v in (checkpoint or {}).items() if not _holds_tensor(v)}
        self.source = None if source is None else str(source)
        #: a DisentangledTMR trained with `DTMRConfig.residual = "naive"` blends with naive(source, reference)
        self.naive_residual = model.config_dict().get("residual") == "naive"

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | torch.device | None = None) -> "Anonymizer":
        """Load any method's checkpoint; `device` defaults to CUDA when available, else the CPU."""
        checkpoint = load_checkpoint(path)
        model = build_model_from_checkpoint(checkpoint, source=path)
        return cls(model, checkpoint=checkpoint, source=path, device=device)

    @property
    def beta(self) -> float:
        return float(self.model.beta)

    @property
    def method(self) -> str:
        return str(self.model.method)

    @property
    def topology(self) -> Topology:
        return self.model.topology

    # ------------------------------------------------------------------ public API

    def anonymize(self, clip: Clip, reference: Clip) -> Clip:
        """The released clip: (1 - β)·source + β·D in the source's space and length (with a naive-residual
        DisentangledTMR, the source on the reference's bone lengths instead of the source)."""
        return self.retarget_pair(clip, reference)[1]

    def anonymize_batch(self, clips: Sequence[Clip], references: Sequence[Clip] | Clip,
                        batch_size: int = 32) -> list[Clip]:
        """Released clips for many sources; `references` is one per clip, or one Clip for all."""
        return [released for _, released in self.retarget_pairs(clips, references, batch_size)]

    def retarget_pair(self, clip: Clip, reference: Clip) -> tuple[Clip, Clip]:
        """(retargeted: the full D, released: the β blend), both in the source's space and length."""
        return self.retarget_pairs([clip], [reference])[0]

    def retarget_pairs(self, clips: Sequence[Clip], references: Sequence[Clip] | Clip,
                       batch_size: int = 32) -> list[tuple[Clip, Clip]]:
        if isinstance(references, Clip):
            references = [references] * len(clips)
        if len(references) != len(clips):
            raise ValueError(f"{len(clips)} clips but {len(references)} references")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        out: list[tuple[Clip, Clip]] = []
        for start in range(0, len(clips), batch_size):
            out.extend(self._run_batch(clips[start : start + batch_size], references[start : start + batch_size]))
        return out

    # ------------------------------------------------------------------ internals

    def _model_joints(self, clip: Clip, role: str) -> np.ndarray:
        """The clip's (T, J, 3) joints in the model's topology (mapped to NTU-25 when needed)."""
        target = self.topology
        if clip.topology == target.name:
            return clip.joints
        if target.name == NTU25.name:
            try:
                return to_ntu25(clip.joints, clip.topology)
            except KeyError:
                pass
        raise InputError(clip.source_file, f"{role} clip {clip.name!r} has topology {clip.topology}, but the "
                                           f"{self.method} model expects {target.name}")

    def _model_input(self, joints: np.ndarray, clip: Clip, role: str) -> tuple[np.ndarray, Normalization]:
        try:
            filled = fill_missing_joints(joints, self.topology)
        except ValueError as exc:
            raise InputError(clip.source_file, f"{role} clip {clip.name!r}: {exc}") from None
        with np.errstate(over="ignore", invalid="ignore"):  # refused below, with one message
            joints, transform = normalize(filled, self.topology)
        if not np.isfinite(joints).all():
            raise InputError(clip.source_file, f"{role} clip {clip.name!r}: coordinates too large to normalize")
        return joints, transform

    def _run_batch(self, clips: Sequence[Clip], references: Sequence[Clip]) -> list[tuple[Clip, Clip]]:
        sources = [self._model_joints(c, "source") for c in clips]
        src, transforms = zip(*(self._model_input(j, c, "source") for j, c in zip(sources, clips)))
        references_joints = [self._model_joints(r, "reference") for r in references]
        ref = [self._model_input(j, r, "reference")[0] for j, r in zip(references_joints, references)]
        dtype = next((p.dtype for p in self.model.parameters() if p.is_floating_point()), torch.float32)
        with torch.inference_mode():
            full = self.model.retarget(torch.from_numpy(np.stack(src)).to(self.device, dtype),
                                       torch.from_numpy(np.stack(ref)).to(self.device, dtype))
        full = full.float().cpu().numpy()
        self._check_finite(full, clips)
        pairs = []
        for i, (clip, reference) in enumerate(zip(clips, references)):
            retargeted = transforms[i].invert(full[i])
            # the residual at the source's own frames: the source, or (config.residual = "naive") the source
            # on the reference's bone lengths, which rigid normalization leaves unchanged
            residual = naive_retarget(sources[i], references_joints[i], self.topology) if self.naive_residual \
                else sources[i]
            released = blend_release(retargeted, residual, self.beta).astype(np.float32)
            pairs.append((self._output(clip, reference, retargeted, "retargeted"),
                          self._output(clip, reference, released, "released")))
        return pairs

    def _check_finite(self, full: np.ndarray, clips: Sequence[Clip]) -> None:
        """The model's inputs are finite (missing joints filled), so must be its output D: a NaN or an
        infinity there comes from the model (weights that diverged, or inputs so far from its training data
        that it overflows) and would be released as NaN clips. The NaNs of a released clip are only the
        source's missing joints, which the β blend keeps."""
        bad = ~np.isfinite(full).reshape(len(full), -1).all(axis=1)
        if bad.any():
            first = clips[int(np.argmax(bad))]
            raise DtmrError(f"{self.source or 'the in-memory model'}: the {self.method} model's output is not finite "
                            f"(NaN or infinite) for {int(bad.sum())} of {len(full)} clips, first {first.name!r}: "
                            "its weights are unusable, or these clips are far outside what it was trained on")

    def _output(self, clip: Clip, reference: Clip, joints: np.ndarray, kind: str) -> Clip:
        extra = dict(clip.extra)
        extra.update(source_clip=clip.name, reference_clip=reference.name, model=self.source or "in-memory model",
                     method=self.method, beta=f"{self.beta:g}", output=kind)
        return clip.replace(joints=joints, topology=self.topology.name, extra=extra)


def _holds_tensor(value) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, dict):
        return any(_holds_tensor(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    return False
