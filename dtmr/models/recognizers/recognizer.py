"""`Recognizer`: a trained SGN with its task and label names, loaded from a checkpoint and run on clips.

The checkpoint is the common dict of `dtmr.models.checkpoints.checkpoint` with `"method": "sgn"`, `config`
{num_classes, num_joints, seg}, and the extra keys `task` ("action" or "subject"), `labels` (the data
set's label int of each class index) and `class_names`; its `data` records the training data and, since
labels are matched by name, the label set's fingerprint (`dtmr.data.label_set`). Inference follows `preprocessing`: a clip is
mapped to the recognizer's topology, normalized spatially, and sampled into `seg` frames; predictions
average the logits of `samples` draws (SGN's test protocol: 5).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from ...data.clip import Clip
from ...data.label_set import RecognizerClasses, TrainedOn
from ...errors import CheckpointError, InputError
from ...skeleton import Topology, get_topology
from ..checkpoints.checkpoint import (
    RECOGNIZER_METHOD,
    build_model_from_checkpoint,
    load_checkpoint,
    register_method,
    save_checkpoint,
)
from .preprocessing import prepare_sequence, sample_segments
from .sampling import window_indices
from .sgn import DEFAULT_SEG, DIM, SGN

TASKS = ("action", "subject")
#: SGN's test protocol: logits averaged over this many segment draws
TEST_SAMPLES = 5
#: Windows (or clip draws) per forward pass; bounds memory for long clips and large data sets.
INFERENCE_BATCH = 256


class TopK(NamedTuple):
    """Best k classes per clip, best first: class indices, data set labels and probabilities, (N, k) each."""

    classes: np.ndarray
    labels: np.ndarray
    probabilities: np.ndarray


class Recognizer(nn.Module):
    """SGN plus what it recognizes. Build with `create` (untrained) or `from_checkpoint`."""

    method = RECOGNIZER_METHOD
    beta = None

    def __init__(self, model: SGN, task: str, labels: Sequence[int], class_names: Sequence[str],
                 topology: str | Topology):
        super().__init__()
        if task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
        self.topology = get_topology(topology)
        if model.num_joints != self.topology.num_joints:
            raise ValueError(f"SGN has {model.num_joints} joints, topology {self.topology.name} "
                             f"{self.topology.num_joints}")
        if not len(labels) == len(class_names) == model.num_classes:
            raise ValueError(f"SGN has {model.num_classes} classes but {len(labels)} labels and "
                             f"{len(class_names)} class names")
        self.model = model
        self.task = task
        self.labels = [int(x) for x in labels]
        self.class_names = [str(x) for x in class_names]
        #: epochs it was trained for, as its checkpoint records (None when unknown)
        self.training_epochs: int | None = None
        #: the data set it was trained on, as its checkpoint records it (unknown for an untrained one)
        self.trained_on = TrainedOn()

    @classmethod
    def create(cls, task: str, labels: Sequence[int], class_names: Sequence[str] | None = None,
               topology: str | Topology = "ntu25", seg: int = DEFAULT_SEG) -> "Recognizer":
        """An untrained recognizer (for the trainer); class names default to "<task> <label>"."""
        names = class_names if class_names is not None else [f"{task} {label}" for label in labels]
        return cls(SGN(len(labels), get_topology(topology).num_joints, seg), task, labels, names, topology)

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str | torch.device | None = None) -> "Recognizer":
        """Load a "sgn" checkpoint; `device` defaults to CUDA when available, else the CPU."""
        checkpoint = load_checkpoint(path)
        if checkpoint["method"] != cls.method:
            raise CheckpointError(path, f"not a recognizer checkpoint (method {checkpoint['method']!r})")
        recognizer = build_model_from_checkpoint(checkpoint, source=path)
        epochs = (checkpoint.get("metrics") or {}).get("epochs")
        recognizer.training_epochs = int(epochs) if isinstance(epochs, int) else None
        recognizer.trained_on = TrainedOn.of_checkpoint_data(checkpoint["data"])
        if device is None:
            device = "cuda" if torch.cuda.is_available() else "cpu"
        return recognizer.to(device)

    def config_dict(self) -> dict:
        return {"num_classes": self.model.num_classes, "num_joints": self.model.num_joints, "seg": self.model.seg}

    def save(self, path: str | Path, *, data: dict | None = None, metrics: dict | None = None) -> Path:
        """Write the checkpoint atomically; `data` describes the training data, `metrics` its results."""
        extra = {"task": self.task, "labels": list(self.labels), "class_names": list(self.class_names)}
        return save_checkpoint(path, self, data=data or {}, metrics=metrics or {}, extra=extra)

    def weights_fingerprint(self) -> str:
        """16 hex digits of a SHA-256 over every parameter and buffer, in name order.

        The same training command run in two sessions gave two evaluators (N-UCLA raw AR 83.0 against
        81.9 %), so a table may only join rows scored by the same weights; evaluations record this."""
        digest = hashlib.sha256()
        for name, tensor in sorted(self.state_dict().items()):
            digest.update(name.encode())
            digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
        return digest.hexdigest()[:16]

    @property
    def classes(self) -> RecognizerClasses:
        """What its classes are, for `dtmr.data.label_set.match_classes`."""
        return RecognizerClasses(self.task, tuple(self.labels), tuple(self.class_names), self.trained_on)

    @property
    def num_classes(self) -> int:
        return self.model.num_classes

    @property
    def seg(self) -> int:
        return self.model.seg

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def class_index(self, label: int) -> int | None:
        """The class index of a data set label, None when this recognizer has no such class."""
        try:
            return self.labels.index(int(label))
        except ValueError:
            return None

    def _prepare(self, clip: Clip) -> np.ndarray:
        try:
            return prepare_sequence(clip, self.topology)
        except ValueError as exc:
            raise InputError(clip.source_file, f"clip {clip.name!r}: {exc}") from None

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """SGN on a prepared (N, seg, J, 3) input, in eval mode and in chunks; (N, C) on the CPU."""
        self.model.eval()
        with torch.inference_mode():
            parts = [self.model(chunk.to(self.device)).float().cpu() for chunk in x.split(INFERENCE_BATCH)]
        return torch.cat(parts)

    def predict_proba(self, clips: Sequence[Clip], samples: int = TEST_SAMPLES, seed: int = 0) -> np.ndarray:
        """(N, C) class probabilities: softmax of the logits averaged over `samples` segment draws."""
        if not clips:
            return np.zeros((0, self.num_classes), dtype=np.float32)
        prepared = [self._prepare(clip) for clip in clips]
        x = sample_segments(prepared, self.seg, np.random.default_rng(seed), samples)
        logits = self.logits(x).view(len(clips), samples, -1).mean(dim=1)
        return torch.softmax(logits, dim=-1).numpy()

    def embed(self, clips: Sequence[Clip], samples: int = 5, seed: int = 0) -> np.ndarray:
        """(N, 512) clip embeddings (the features the classifier reads), averaged over `samples` draws."""
        if not clips:
            return np.zeros((0, 2 * DIM), dtype=np.float32)
        prepared = [self._prepare(clip) for clip in clips]
        x = sample_segments(prepared, self.seg, np.random.default_rng(seed), samples)
        self.model.eval()
        with torch.inference_mode():
            parts = [self.model.embed(chunk.to(self.device)).float().cpu() for chunk in x.split(INFERENCE_BATCH)]
        return torch.cat(parts).view(len(clips), samples, -1).mean(dim=1).numpy()

    def probabilities_from_embedding(self, embedding: np.ndarray) -> np.ndarray:
        """(N, 512) `embed` output -> (N, C) probabilities; the FC layer is linear, so this equals
        `predict_proba` with the same draws (the mean embedding gives the mean logits)."""
        with torch.inference_mode():
            logits = self.model.fc(torch.from_numpy(np.asarray(embedding, dtype=np.float32)).to(self.device))
        return torch.softmax(logits.float(), dim=-1).cpu().numpy()

    def predict_top_k(self, clips: Sequence[Clip], k: int = 5, samples: int = 5, seed: int = 0) -> TopK:
        proba = self.predict_proba(clips, samples, seed)
        k = min(k, self.num_classes)
        order = np.argsort(-proba, axis=1, kind="stable")[:, :k]
        return TopK(order, np.asarray(self.labels)[order], np.take_along_axis(proba, order, axis=1))

    def window_probabilities(self, clip: Clip, window: int = 32, stride: int = 1) -> np.ndarray:
        """(T, C) probabilities per frame, from the `window` frames centred on it.

        Every `stride`-th frame gets its own window; the frames in between take the nearest computed one.
        Windows come from the clip prepared once (normalized on its first frame) and are sampled at the
        segments' middle frames, so the track is deterministic; all windows run through SGN together,
        each distinct sampled frame once (`SGN.forward_windows`).
        """
        if window < 1 or stride < 1:
            raise ValueError(f"window and stride must be positive, got {window} and {stride}")
        length = clip.num_frames
        centres = np.arange(0, length, stride)
        sequence = torch.from_numpy(self._prepare(clip)).to(self.device)
        indices = torch.from_numpy(window_indices(length, self.seg, window, centres)).to(self.device)
        self.model.eval()
        with torch.inference_mode():
            logits = torch.cat([self.model.forward_windows(sequence, chunk).float().cpu()
                                for chunk in indices.split(INFERENCE_BATCH)])
        proba = torch.softmax(logits, dim=-1).numpy()
        nearest = np.minimum((np.arange(length) + stride // 2) // stride, len(centres) - 1)
        return proba[nearest]

def _build_recognizer(checkpoint: dict) -> Recognizer:
    config = checkpoint["config"]
    for key in ("task", "labels", "class_names"):
        if key not in checkpoint:
            raise KeyError(f"recognizer checkpoint lacks {key!r}")
    model = SGN(int(config["num_classes"]), int(config["num_joints"]), int(config.get("seg", DEFAULT_SEG)))
    return Recognizer(model, checkpoint["task"], checkpoint["labels"], checkpoint["class_names"],
                      checkpoint["topology"])


register_method("sgn", _build_recognizer)
