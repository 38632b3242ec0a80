"""Training data: a clip file and a named split, normalized once into the model's 64-frame space.

Every clip of both halves is normalized up front (DESIGN §2.3) and kept as one (N, 64, J, 3) array, so
a training step only indexes arrays. Labels stay the data set's own integers; `subject_classes` and
`action_classes` turn them into class indices 0..C-1 (sorted labels of the whole file, so train and test
share one numbering). Missing (NaN) joints become the origin (the first-frame pelvis) after
normalization; the original clips are kept for evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..data.splits import split_indices
from ..errors import DtmrError
from ..skeleton import MODEL_FRAMES, get_topology, normalize, to_ntu25

UNKNOWN = -1


@dataclass
class SplitArrays:
    """One half (train or test) of a split, ready for the trainer."""

    clips: list[Clip]
    joints: np.ndarray  # (N, 64, J, 3) normalized
    subjects: np.ndarray  # (N,) data-set labels
    actions: np.ndarray  # (N,)
    views: np.ndarray  # (N,), -1 when unknown
    fps: np.ndarray  # (N,) frame rate of the 64-frame resampled clip (for velocities and contacts)

    def __len__(self) -> int:
        return len(self.clips)

    def sampler_metadata(self) -> dict[str, np.ndarray]:
        return {"subject": self.subjects, "action": self.actions, "view": self.views}


def _label(value: int | None) -> int:
    return UNKNOWN if value is None else int(value)


def resampled_fps(fps: float, length: int, frames: int = MODEL_FRAMES) -> float:
    """Frame rate of a `length`-frame clip at `fps` once resampled to `frames` frames."""
    return fps * (frames - 1) / max(length - 1, 1)


def prepare_clips(clips: list[Clip], topology: str) -> SplitArrays:
    topo = get_topology(topology)
    joints = np.empty((len(clips), MODEL_FRAMES, topo.num_joints, 3), dtype=np.float32)
    for n, clip in enumerate(clips):
        data = clip.joints if clip.topology == topo.name else to_ntu25(clip.joints, clip.topology)
        joints[n] = np.nan_to_num(normalize(data, topo)[0], nan=0.0)
    return SplitArrays(
        clips=clips,
        joints=joints,
        subjects=np.array([_label(c.subject) for c in clips], dtype=np.int64),
        actions=np.array([_label(c.action) for c in clips], dtype=np.int64),
        views=np.array([_label(c.view) for c in clips], dtype=np.int64),
        fps=np.array([resampled_fps(c.fps, c.num_frames) for c in clips], dtype=np.float32),
    )


@dataclass
class TrainingData:
    path: str
    #: the named split; None when every clip is training data
    split: str | None
    topology: str
    train: SplitArrays
    test: SplitArrays
    subject_labels: np.ndarray  # sorted data-set labels; class index = position
    action_labels: np.ndarray
    action_names: list[str] | None

    def subject_classes(self, labels: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.subject_labels, labels)

    def action_classes(self, labels: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.action_labels, labels)

    def action_class_names(self) -> list[str]:
        from ..data.label_set import action_name_map

        names = action_name_map(self.action_names, self.action_labels)
        return [names.get(int(a), f"action {a}") for a in self.action_labels]

    def describe(self) -> dict:
        """What a checkpoint records about its training data."""
        return {
            "path": Path(self.path).name,
            "split": self.split,
            "topology": self.topology,
            "train_clips": len(self.train),
            "test_clips": len(self.test),
            "subjects": [int(s) for s in self.subject_labels],
            "actions": [int(a) for a in self.action_labels],
            "action_names": self.action_class_names(),
        }


def load_training_data(path: str | Path, split: str | None, topology: str | None = None) -> TrainingData:
    """Read `path` (anything `open_clip_source` opens), apply `split`, normalize both halves. `split` None:
    every clip is training data and the test half is empty (a motion model fitted on a whole library that no
    split fits, `dtmr.train.motion_fit`)."""
    from ..io.sources import open_clip_source

    source = open_clip_source(path)
    try:
        metadata = source.metadata_table()
        if split is None:
            train_idx, test_idx = np.arange(len(source), dtype=np.int64), np.zeros(0, dtype=np.int64)
        else:
            train_idx, test_idx = split_indices(split, metadata)
        target = topology or source.topology
        if target != source.topology and target != "ntu25":
            raise DtmrError(f"{path}: cannot train a {target} model on {source.topology} clips")
        clips = [source.read(int(i)) for i in np.concatenate([train_idx, test_idx])]
        action_names = source.action_names
    finally:
        source.close()
    train, test = clips[: len(train_idx)], clips[len(train_idx):]
    for name, half in (("train", train), ("test", test)):
        if any(c.subject is None or c.action is None for c in half):
            raise DtmrError(f"{path}: every {name} clip needs a subject and an action label to train on")
    labels = {key: np.unique([getattr(c, key) for c in clips]) for key in ("subject", "action")}
    return TrainingData(
        path=str(path),
        split=split,
        topology=get_topology(target).name,
        train=prepare_clips(train, target),
        test=prepare_clips(test, target),
        subject_labels=labels["subject"].astype(np.int64),
        action_labels=labels["action"].astype(np.int64),
        action_names=list(action_names) if action_names else None,
    )
