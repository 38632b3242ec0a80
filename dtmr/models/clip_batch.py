"""The Anonymizer's NumPy work on a whole batch of clips at once: normalize, invert, naive residual.

Each function gives, clip for clip, the bytes of its per-clip counterpart in `dtmr.skeleton` (`normalize`,
`Normalization.invert`, `naive_retarget`), so releases stay byte-identical; only the number of array
operations changes (tests/models/test_clip_batch.py checks the bytes). That holds because what is batched
here works element by element or row by row:

- resampling is `(1 - w)·x[lo] + w·x[lo + 1]` per element, with `resample`'s weights for each clip length,
  gathered from all the clips' frames at once (a clip already of the target length, or of one frame, is
  copied, as `resample` copies it);
- the 3×3 rotations are the same (J, 3) @ (3, 3) matrix product per frame, whether the frames of one clip
  or of many are stacked;
- a clip's yaw rotation is `yaw_rotation`'s float64 arithmetic, row by row (its norm still per clip: numpy
  computes a vector's norm with a dot product, whose rounding a batched sum need not share);
- the naive retarget's bone directions and forward kinematics are per frame (clips of any length are
  concatenated along time). A bone's length is the square root of its three squared components summed in
  order, which is what numpy's reduction over a length-3 axis computes, without the reduction's per-row cost;
- a reference's mean pose sums over its own frames, in order, for references of one length stacked.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from ..skeleton import Normalization, Topology
from ..skeleton.geometry import bone_vectors, forward_kinematics, mean_pose_bone_lengths
from ..skeleton.normalize import MODEL_FRAMES, canonical_transform
from ..skeleton.retarget import EPS

#: `yaw_rotation`'s threshold under which a hip line has no direction
_NO_DIRECTION = 1e-9


@lru_cache(maxsize=4096)
def _weights(length: int, frames: int) -> tuple[np.ndarray, np.ndarray]:
    """`resample`'s (lo, w) from `length` to `frames` frames (length > 1, length != frames)."""
    pos = np.linspace(0.0, length - 1, frames)
    lo = np.minimum(np.floor(pos).astype(np.int64), length - 2)
    return lo, (pos - lo).astype(np.float32)


def _resample_rows(flat: np.ndarray, lengths: Sequence[int], frames: Sequence[int]) -> np.ndarray:
    """Clip i, `lengths[i]` rows of `flat` (after the clips before it), resampled to `frames[i]` rows each as
    `resample` does it; the results concatenated."""
    total = int(np.sum(frames))
    lo, w = np.empty(total, dtype=np.int64), np.zeros(total, dtype=np.float32)
    copied = np.zeros(total, dtype=bool)
    start = row = 0
    for length, count in zip(lengths, frames):
        rows = slice(row, row + count)
        if length == count or length == 1:
            lo[rows] = start + (np.arange(count) if length == count else 0)
            copied[rows] = True
        else:
            lo[rows], w[rows] = _weights(length, count)
            lo[rows] += start
        start, row = start + length, row + count
    out = flat[lo]
    blend = ~copied
    w = w[blend].reshape((-1,) + (1,) * (flat.ndim - 1))
    out[blend] = (1.0 - w) * out[blend] + w * flat[lo[blend] + 1]
    return out


def _yaw_rotations(hip_lines: np.ndarray) -> np.ndarray:
    """(n, 3) float32 hip lines -> (n, 3, 3) float32, each as `yaw_rotation` gives it."""
    h = np.zeros((len(hip_lines), 3), dtype=np.float64)
    h[:, 0], h[:, 2] = hip_lines[:, 0], hip_lines[:, 2]
    norms = np.array([np.linalg.norm(row) for row in h])
    with np.errstate(invalid="ignore", divide="ignore"):
        x = h / norms[:, None]
    y = np.broadcast_to(np.array([0.0, 1.0, 0.0]), x.shape)
    rotations = np.stack([x, y, np.cross(x, y)], axis=1).astype(np.float32)
    rotations[~(np.isfinite(norms) & (norms >= _NO_DIRECTION))] = np.eye(3, dtype=np.float32)
    return rotations


def _transforms(clips: Sequence[np.ndarray], topology: Topology, frames: int) -> list[Normalization]:
    """`canonical_transform` of every clip: from the first frame when its root and hip line are finite (they
    are in the model's filled inputs), by `canonical_transform` itself otherwise."""
    first = np.stack([c[0] for c in clips])
    origins, hips = first[:, topology.root], first[:, topology.right_hip] - first[:, topology.left_hip]
    usable = np.isfinite(origins).all(axis=1) & np.isfinite(hips).all(axis=1)
    rotations = _yaw_rotations(hips)
    return [Normalization(origin=origins[i].copy(), rotation=rotations[i], length=c.shape[0], frames=frames)
            if usable[i] else canonical_transform(c, topology, frames) for i, c in enumerate(clips)]


def normalize_batch(clips: Sequence[np.ndarray], topology: Topology,
                    frames: int = MODEL_FRAMES) -> tuple[np.ndarray, list[Normalization]]:
    """(T_i, J, 3) float32 clips -> ((n, frames, J, 3) model input, their transforms), each clip as
    `dtmr.skeleton.normalize` does it."""
    transforms = _transforms(clips, topology, frames)
    resampled = _resample_rows(np.concatenate(clips), [c.shape[0] for c in clips], [frames] * len(clips))
    resampled = resampled.reshape((len(clips), frames) + clips[0].shape[1:])
    origins = np.stack([t.origin for t in transforms])[:, None, None]
    rotations = np.stack([t.rotation for t in transforms])[:, None]
    return ((resampled - origins) @ rotations.transpose(0, 1, 3, 2)).astype(np.float32), transforms


def invert_batch(normalized: np.ndarray, transforms: Sequence[Normalization]) -> list[np.ndarray]:
    """(n, frames, J, 3) model-space clips -> each in its source's space and length, as
    `Normalization.invert` gives it."""
    normalized = np.asarray(normalized, dtype=np.float32)
    lengths = [t.length for t in transforms]
    rows = _resample_rows(normalized.reshape((-1,) + normalized.shape[2:]), [normalized.shape[1]] * len(transforms),
                          lengths)
    rotations = np.repeat(np.stack([t.rotation for t in transforms]), lengths, axis=0)
    origins = np.repeat(np.stack([t.origin for t in transforms]), lengths, axis=0)[:, None]
    return np.split((rows @ rotations + origins).astype(np.float32), np.cumsum(lengths)[:-1])


def _directions(joints: np.ndarray, topology: Topology) -> np.ndarray:
    """`bone_directions(joints, topology, eps=EPS)` with NaN for a bone with a missing end, as
    `naive_retarget` builds them (the norm summed explicitly: see the module docstring)."""
    vec = bone_vectors(joints, topology)
    x, y, z = vec[..., 0], vec[..., 1], vec[..., 2]
    norm = np.sqrt(x * x + y * y + z * z)[..., None]
    with np.errstate(invalid="ignore"):
        out = vec / np.maximum(norm, EPS)
        out = np.where(norm <= EPS, 0.0, out).astype(np.result_type(vec, np.float32))
    out[~(np.isfinite(x) & np.isfinite(y) & np.isfinite(z))] = np.nan
    return out


def _mean_pose_bone_lengths(references: Sequence[np.ndarray], topology: Topology) -> np.ndarray:
    """(n, J-1): `mean_pose_bone_lengths` of every reference, the references of one length at once."""
    out = np.empty((len(references), topology.num_bones), dtype=np.float32)
    lengths = np.array([len(r) for r in references])
    for length in np.unique(lengths):
        group = np.flatnonzero(lengths == length)
        out[group] = mean_pose_bone_lengths(np.stack([references[i] for i in group]), topology)
    return out


def naive_retarget_batch(sources: Sequence[np.ndarray], references: Sequence[np.ndarray],
                         topology: Topology) -> list[np.ndarray]:
    """`naive_retarget(source, reference, topology)` for every pair: the sources' bone directions on each
    reference's mean-pose bone lengths."""
    joints = np.concatenate([np.asarray(s, dtype=np.float32) for s in sources])
    frames = [len(s) for s in sources]
    lengths = np.repeat(_mean_pose_bone_lengths(references, topology), frames, axis=0)
    out = forward_kinematics(joints[:, topology.root], _directions(joints, topology), lengths, topology)
    return np.split(out.astype(np.float32), np.cumsum(frames)[:-1])
