"""Geometric metrics of retargeted clips (DESIGN §5), one value per clip.

Every metric takes clips as a list of (T_i, J, 3) arrays (lengths may differ), a single (T, J, 3) clip, or
an (N, T, J, 3) stack of equal-length clips, and returns a float64 array (N,) with one value per clip; a data set's
number is the mean of its clips' values (each clip weighs the same) and `summarize` turns per-seed numbers
into mean ± std. Units are metres and frames: velocities are metres per frame, accelerations metres per
frame², foot sliding is metres per second (its contact rule has thresholds in m/s, so it needs fps).
Missing joints (NaN) are left out of the averages; a clip with no valid term (e.g. a 1-frame clip for a
velocity) gets NaN. All clips are concatenated along time and reduced per clip with `np.bincount`, so
no metric but foot sliding loops over clips in Python.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..skeleton.contact import foot_sliding_speed
from ..skeleton.geometry import bone_lengths
from ..skeleton.topology import Topology, get_topology

ClipArrays = np.ndarray | Sequence[np.ndarray]


class _Stacked:
    """Clips concatenated along time: `frames` (F, J, 3) float64 and `clip` (F,), each frame's clip index."""

    def __init__(self, clips: ClipArrays, what: str):
        if isinstance(clips, np.ndarray) and clips.ndim == 3:
            clips = [clips]
        arrays = [np.asarray(c, dtype=np.float64) for c in clips]
        if not arrays:
            raise ValueError(f"{what}: no clips")
        for i, clip in enumerate(arrays):
            if clip.ndim != 3 or clip.shape[-1] != 3 or clip.shape[0] == 0:
                raise ValueError(f"{what}: clip {i} must be (T, J, 3) with T >= 1, got {clip.shape}")
            if clip.shape[1] != arrays[0].shape[1]:
                raise ValueError(f"{what}: clip {i} has {clip.shape[1]} joints, clip 0 has {arrays[0].shape[1]}")
        self.count = len(arrays)
        self.lengths = np.array([a.shape[0] for a in arrays])
        self.starts = np.concatenate([[0], np.cumsum(self.lengths)[:-1]])
        self.frames = np.concatenate(arrays, axis=0)
        self.clip = np.repeat(np.arange(self.count), self.lengths)

    @property
    def num_joints(self) -> int:
        return self.frames.shape[1]

    def velocity(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-frame displacement x_{t+1} − x_t within each clip, and the clip index of each row."""
        same = self.clip[1:] == self.clip[:-1]
        return (self.frames[1:] - self.frames[:-1])[same], self.clip[1:][same]

    def acceleration(self) -> tuple[np.ndarray, np.ndarray]:
        """Second difference x_{t+1} − 2x_t + x_{t−1} within each clip, and the clip index of each row."""
        f = self.frames
        same = self.clip[2:] == self.clip[:-2]
        return (f[2:] - 2.0 * f[1:-1] + f[:-2])[same], self.clip[2:][same]


def _pairs(prediction: ClipArrays, target: ClipArrays) -> tuple[_Stacked, _Stacked]:
    pred, true = _Stacked(prediction, "prediction"), _Stacked(target, "target")
    if pred.count != true.count:
        raise ValueError(f"{pred.count} predicted clips but {true.count} targets")
    mismatch = np.flatnonzero(pred.lengths != true.lengths)
    if mismatch.size or pred.num_joints != true.num_joints:
        i = int(mismatch[0]) if mismatch.size else 0
        raise ValueError(
            f"clip {i}: prediction ({pred.lengths[i]}, {pred.num_joints}, 3) and "
            f"target ({true.lengths[i]}, {true.num_joints}, 3) differ in shape"
        )
    return pred, true


def _per_clip_mean(values: np.ndarray, clip: np.ndarray, count: int) -> np.ndarray:
    """(count,) mean of the finite entries of the rows of `values` (F, ...) belonging to each clip; NaN
    for a clip without any."""
    rows = values.reshape(values.shape[0], int(np.prod(values.shape[1:])))
    valid = np.isfinite(rows)
    sums = np.bincount(clip, weights=np.where(valid, rows, 0.0).sum(axis=1), minlength=count)
    counts = np.bincount(clip, weights=valid.sum(axis=1), minlength=count)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1.0), np.nan)


def mse(prediction: ClipArrays, target: ClipArrays) -> np.ndarray:
    """(N,) mean over frames, joints and coordinates of (x̂ − x)² (m²)."""
    pred, true = _pairs(prediction, target)
    return _per_clip_mean((pred.frames - true.frames) ** 2, pred.clip, pred.count)


def mpjpe(prediction: ClipArrays, target: ClipArrays) -> np.ndarray:
    """(N,) mean per-joint position error: mean over frames and joints of ‖x̂ − x‖ (m)."""
    pred, true = _pairs(prediction, target)
    return _per_clip_mean(np.linalg.norm(pred.frames - true.frames, axis=-1), pred.clip, pred.count)


def velocity_error(prediction: ClipArrays, target: ClipArrays) -> np.ndarray:
    """(N,) mean over frames and joints of ‖Δx̂ − Δx‖, Δ = per-frame displacement (m/frame)."""
    pred, true = _pairs(prediction, target)
    (v_pred, clip), (v_true, _) = pred.velocity(), true.velocity()
    return _per_clip_mean(np.linalg.norm(v_pred - v_true, axis=-1), clip, pred.count)


def smoothness(clips: ClipArrays) -> np.ndarray:
    """(N,) mean acceleration magnitude: mean over frames and joints of ‖x_{t+1} − 2x_t + x_{t−1}‖ (m/frame²)."""
    stacked = _Stacked(clips, "clips")
    acc, clip = stacked.acceleration()
    return _per_clip_mean(np.linalg.norm(acc, axis=-1), clip, stacked.count)


def _mean_pose_bone_lengths(clips: _Stacked, topology: Topology) -> np.ndarray:
    """(N, J-1) bone lengths of each clip's root-centred time-mean pose (NaN frames left out per joint).

    Same definition as `dtmr.skeleton.mean_pose_bone_lengths`, for all clips in one reduction.
    """
    root = topology.root
    centred = clips.frames - clips.frames[:, root : root + 1]
    valid = np.isfinite(centred).all(axis=-1, keepdims=True)
    sums = np.add.reduceat(np.where(valid, centred, 0.0), clips.starts, axis=0)
    counts = np.add.reduceat(valid.astype(np.float64), clips.starts, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        pose = np.where(counts > 0, sums / np.maximum(counts, 1.0), np.nan)
    return bone_lengths(pose, topology)


def bone_length_error(prediction: ClipArrays, reference: ClipArrays, topology: str | Topology) -> np.ndarray:
    """(N,) mean over frames and bones of |ℓ̂_{t,k} − L_k| (m): the prediction's per-frame bone lengths
    against the mean-pose bone lengths L of its reference clip (the body it should have taken on).

    prediction[i] and reference[i] may differ in length.
    """
    topo = get_topology(topology)
    pred, ref = _Stacked(prediction, "prediction"), _Stacked(reference, "reference")
    if pred.count != ref.count:
        raise ValueError(f"{pred.count} predicted clips but {ref.count} references")
    for what, clips in (("prediction", pred), ("reference", ref)):
        if clips.num_joints != topo.num_joints:
            raise ValueError(f"{what}: topology {topo.name} has {topo.num_joints} joints, clips have {clips.num_joints}")
    reference_lengths = _mean_pose_bone_lengths(ref, topo)
    error = np.abs(bone_lengths(pred.frames, topo) - reference_lengths[pred.clip])
    return _per_clip_mean(error, pred.clip, pred.count)


def foot_sliding(clips: ClipArrays, topology: str | Topology, fps: float | Sequence[float]) -> np.ndarray:
    """(N,) `dtmr.skeleton.foot_sliding_speed` of each clip: mean horizontal speed (m/s) of the contact
    joints on their contact frames (0 for a clip without contact). fps: one rate or one per clip.

    The contact rule works per clip (resting heights are per-clip percentiles), so this one loops.
    """
    stacked = _Stacked(clips, "clips")
    clip_list = np.split(stacked.frames, stacked.starts[1:])
    rates = np.asarray(fps, dtype=np.float64).ravel()
    if rates.size == 1:
        rates = np.repeat(rates, len(clip_list))
    if rates.size != len(clip_list):
        raise ValueError(f"{rates.size} frame rates for {len(clip_list)} clips")
    return np.array([foot_sliding_speed(c, topology, r) for c, r in zip(clip_list, rates)], dtype=np.float64)


def summarize(values: Sequence[float] | np.ndarray) -> dict[str, float]:
    """{"mean", "std"} of the finite values (sample std, ddof = 1; 0 for a single value).

    NaN marks a value that is undefined (see the module docstring) and is left out; no finite value at
    all raises ValueError.
    """
    array = np.asarray(values, dtype=np.float64).ravel()
    finite = array[np.isfinite(array)]
    if finite.size == 0:
        raise ValueError("summarize: no finite values")
    std = float(finite.std(ddof=1)) if finite.size > 1 else 0.0
    return {"mean": float(finite.mean()), "std": std}
