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
   (`DTMRConfig.residual = "naive"`) blends with the source on the reference's bone lengths instead; one
   trained with a re-timed residual ("retimed", "retimed-naive") with its `residual`, computed in the
   normalized space like D and mapped back the same way. k-same (`dtmr.models.motion`) also gets each
   source's subject label (the clip's `subject`, -1 when unknown), so that its partners are other people.

Output clips keep the source's metadata and carry their `Provenance` in `extra`: `source_clip`,
`reference_clip`, `model`, `method`, `beta` and `output` ("retargeted" or "released").
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..data.clip import Clip
from ..data.label_set import action_name_map, fitted_action_names, shared_action_labels
from ..data.provenance import Provenance
from ..errors import DtmrError, InputError
from ..methods import SOURCE_RESIDUAL
from ..skeleton import NTU25, Normalization, Topology, to_ntu25
from .checkpoints.checkpoint import build_model_from_checkpoint, load_checkpoint
from .clip_batch import invert_batch, naive_retarget_batch, normalize_batch
from .serving.runner import CPU_BATCH, ModelRunner, check_precision
from .blend import ReleaseParts


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
    """Runs a retargeter (`dtmr.models.interface`) on clips; see the module docstring.

    `precision` ("fp32", or "bf16" under autocast) and `cuda_graph` (the cached decode replayed from a CUDA
    graph) apply on a CUDA device only (dtmr/models/inference.py)."""

    def __init__(self, model: nn.Module, *, checkpoint: dict | None = None, source: str | Path | None = None,
                 device: str | torch.device | None = None, precision: str = "fp32", cuda_graph: bool = False):
        self.device = torch.device(device) if device is not None else default_device()
        check_precision(precision, self.device, cuda_graph)
        self.model = model.to(self.device).eval()
        self.runner = ModelRunner(self.model, self.device, precision, cuda_graph)
        #: the checkpoint's metadata: every top-level entry but the ones holding tensors (state dicts)
        self.checkpoint = {k: v for k, v in (checkpoint or {}).items() if not _holds_tensor(v)}
        self.source = None if source is None else str(source)
        #: what a DisentangledTMR release blends with (`dtmr.methods.RESIDUALS`): the source (every other model
        #: too), naive(source, reference), or one only the model computes (`model.residual`), told its labels
        kind = getattr(model, "residual_kind", SOURCE_RESIDUAL)
        self.model_residual = kind.computed_by_model
        self.naive_residual = kind.on_reference and not kind.computed_by_model
        self.residual_labels = kind.labels
        #: k-same is told each source's subject, so that it never averages a person with themselves; re-timing
        #: and k-same are told each source's action where the library and the fitted file name the label alike
        #: (`action_names` of `anonymize_batch`); elsewhere they take the nearest template
        flags = (("subjects", "takes_subjects"), ("actions", "takes_actions"))
        self.retarget_labels = tuple(name for name, flag in flags if getattr(model, flag, False))
        self.fitted_actions = fitted_action_names(self.checkpoint.get("data"))

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | torch.device | None = None, precision: str = "fp32",
                        cuda_graph: bool = False) -> Anonymizer:
        """Load any method's checkpoint; `device` defaults to CUDA when available, else the CPU."""
        if device is not None:  # a wrong precision is refused before the checkpoint is read
            check_precision(precision, torch.device(device), cuda_graph)
        checkpoint = load_checkpoint(path)
        model = build_model_from_checkpoint(checkpoint, source=path)
        return cls(model, checkpoint=checkpoint, source=path, device=device, precision=precision,
                   cuda_graph=cuda_graph)

    @property
    def beta(self) -> float:
        return float(self.model.beta)

    @property
    def method(self) -> str:
        return str(self.model.method)

    @property
    def topology(self) -> Topology:
        return self.model.topology

    def auto_batch_size(self, largest: int, sharing: int = 1) -> int:
        """The model batch `--batch auto` means, at most `largest`: 32 on the CPU, what fits in the free
        memory of a CUDA device that `sharing` processes fill at once."""
        return self.runner.auto_batch(largest, sharing)

    # ------------------------------------------------------------------ public API

    def anonymize(self, clip: Clip, reference: Clip) -> Clip:
        """The released clip: (1 - β)·source + β·D in the source's space and length (with a naive-residual
        DisentangledTMR, the source on the reference's bone lengths instead of the source)."""
        return self.retarget_pair(clip, reference)[1]

    def anonymize_batch(self, clips: Sequence[Clip], references: Sequence[Clip] | Clip,
                        batch_size: int = CPU_BATCH, action_names: Sequence[str] | None = None) -> list[Clip]:
        """Released clips for many sources; `references` is one per clip, or one Clip for all. `action_names`:
        the sources' library's (`ClipSource.action_names`), which lets a model that takes actions use the
        labels it shares with its fitted file."""
        return [released for _, released, _ in self._pairs(clips, references, batch_size, retargeted=False,
                                                           action_names=action_names)]

    def retarget_pair(self, clip: Clip, reference: Clip,
                      action_names: Sequence[str] | None = None) -> tuple[Clip, Clip]:
        """(retargeted: the full D, released: the β blend), both in the source's space and length;
        `action_names` as for `anonymize_batch`."""
        return self.retarget_pairs([clip], [reference], action_names=action_names)[0]

    def retarget_pairs(self, clips: Sequence[Clip], references: Sequence[Clip] | Clip,
                       batch_size: int = CPU_BATCH, action_names: Sequence[str] | None = None,
                       ) -> list[tuple[Clip, Clip]]:
        return [(retargeted, released) for retargeted, released, _ in
                self._pairs(clips, references, batch_size, retargeted=True, action_names=action_names)]

    def retarget_parts(self, clip: Clip, reference: Clip, action_names: Sequence[str] | None = None,
                       ) -> tuple[Clip, Clip, ReleaseParts]:
        """`retarget_pair` and the two terms the released clip is blended from, to blend it at another β
        without running the model again (the Studio's β slider)."""
        return self._pairs([clip], [reference], CPU_BATCH, retargeted=True, action_names=action_names)[0]

    # ------------------------------------------------------------------ internals

    def _pairs(self, clips: Sequence[Clip], references: Sequence[Clip] | Clip, batch_size: int,
               retargeted: bool, action_names: Sequence[str] | None = None,
               ) -> list[tuple[Clip | None, Clip, ReleaseParts]]:
        """(retargeted or None, released, its parts) per clip. Batch k + 1 is prepared while batch k runs on a CUDA
        device; on the CPU each batch runs as it is submitted."""
        if isinstance(references, Clip):
            references = [references] * len(clips)
        if len(references) != len(clips):
            raise ValueError(f"{len(clips)} clips but {len(references)} references")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        out: list[tuple[Clip | None, Clip, ReleaseParts]] = []
        running = None
        for start in range(0, len(clips), batch_size):
            batch = _Batch(self, clips[start : start + batch_size], references[start : start + batch_size])
            submitted = (batch, self.runner.submit(batch.src, batch.ref,
                                                   self._labels(batch.clips, action_names, self.retarget_labels)),
                         self._labels(batch.clips, action_names, self.residual_labels))
            if running is not None:
                out.extend(self._finish(*running, retargeted))
            running = submitted
        if running is not None:
            out.extend(self._finish(*running, retargeted))
        return out

    def source_inputs(self, clips: Sequence[Clip], action_names: Sequence[str] | None = None,
                      residual: bool = False) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """((n, 64, J, 3) the sources as the model sees them, the labels its `retarget` (or, with `residual`,
        its `residual`) is told): what an audit needs to replay a model's own choices on a release's sources
        (k-same's partners, dtmr/audit/partners.py)."""
        sources = [self._model_joints(c, "source") for c in clips]
        src = self._model_inputs(sources, clips, "source")[0]
        wanted = self.residual_labels if residual else self.retarget_labels
        return torch.from_numpy(src), self._labels(clips, action_names, wanted) or {}

    def _labels(self, clips: Sequence[Clip], action_names: Sequence[str] | None,
                wanted: tuple[str, ...]) -> dict[str, torch.Tensor] | None:
        """The `wanted` labels as keyword arguments (of `retarget` or of `residual`): the sources' subjects,
        and their actions where the library and the fitted file name them alike."""
        labels = {}
        if "subjects" in wanted:
            labels["subjects"] = torch.from_numpy(np.array([-1 if c.subject is None else int(c.subject)
                                                            for c in clips], dtype=np.int64))
        if "actions" in wanted and self.fitted_actions and action_names:
            actions = [c.action for c in clips]
            library = action_name_map(list(action_names), np.array([-1 if a is None else a for a in actions]))
            labels["actions"] = torch.from_numpy(shared_action_labels(actions, library, self.fitted_actions))
        return labels or None

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

    def _model_inputs(self, joints: Sequence[np.ndarray], clips: Sequence[Clip],
                      role: str) -> tuple[np.ndarray, list[Normalization]]:
        """The clips' (n, 64, J, 3) model input (missing joints filled, normalized) and their transforms; an
        InputError names the first clip that cannot be normalized."""
        filled, errors = [], {}
        for i, j in enumerate(joints):
            j = np.asarray(j, dtype=np.float32)
            if np.isfinite(j).all():
                filled.append(j)
                continue
            try:
                filled.append(fill_missing_joints(j, self.topology))
            except ValueError as exc:
                errors[i] = str(exc)
                filled.append(np.zeros_like(j[:1]))  # a stand-in, refused below
        with np.errstate(over="ignore", invalid="ignore"):  # refused below, with one message
            batch, transforms = normalize_batch(filled, self.topology)
        finite = np.isfinite(batch).reshape(len(batch), -1).all(axis=1)
        for i in np.flatnonzero(~finite):
            errors.setdefault(int(i), "coordinates too large to normalize")
        if errors:
            first = min(errors)
            raise InputError(clips[first].source_file, f"{role} clip {clips[first].name!r}: {errors[first]}")
        return batch, transforms

    def _finish(self, batch: _Batch, running, residual_labels: dict | None,
                retargeted: bool) -> list[tuple[Clip | None, Clip, ReleaseParts]]:
        """Invert the model's output, blend it and wrap the clips."""
        full = running.result()
        self._check_finite(full, batch.clips)
        inverted = invert_batch(full, batch.transforms)
        # the residual at the source's own frames: the source, or (config.residual = "naive") the source on
        # the reference's bone lengths, which rigid normalization leaves unchanged, or a re-timed residual
        # mapped back like D (its timing is the template's: there is no source frame to keep), or k-same's
        if self.model_residual:
            with torch.inference_mode():
                moved = self.model.residual(*(torch.from_numpy(x).to(self.device, self.runner.dtype)
                                              for x in (batch.src, batch.ref)), **(residual_labels or {}))
            residuals = invert_batch(moved.float().cpu().numpy(), batch.transforms)
        elif self.naive_residual:
            residuals = naive_retarget_batch(batch.sources, batch.references, self.topology)
        else:
            residuals = batch.sources
        pairs = []
        for clip, reference, full_joints, residual in zip(batch.clips, batch.reference_clips, inverted, residuals):
            parts = ReleaseParts(full_joints, residual, self.beta)
            pairs.append((self._output(clip, reference, full_joints, "retargeted") if retargeted else None,
                          self._output(clip, reference, parts.joints(), "released"), parts))
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
        made = Provenance(method=self.method, beta=self.beta, model=self.source or "in-memory model", output=kind,
                          source_clip=clip.name, reference_clip=reference.name)
        return made.stamp(clip, joints=joints, topology=self.topology.name)


class _Batch:
    """One model batch, prepared: the clips, their joints in the model's topology, the model inputs and the
    sources' transforms."""

    def __init__(self, anonymizer: Anonymizer, clips: Sequence[Clip], references: Sequence[Clip]):
        self.clips, self.reference_clips = clips, references
        self.sources = [anonymizer._model_joints(c, "source") for c in clips]
        self.src, self.transforms = anonymizer._model_inputs(self.sources, clips, "source")
        self.references = [anonymizer._model_joints(r, "reference") for r in references]
        self.ref = anonymizer._model_inputs(self.references, references, "reference")[0]


def _holds_tensor(value) -> bool:
    if isinstance(value, torch.Tensor):
        return True
    if isinstance(value, dict):
        return any(_holds_tensor(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_holds_tensor(v) for v in value)
    return False
