"""The model's input normalization (DESIGN §2.3) and its exact inverse.

A clip of T frames becomes 64 frames: resampled uniformly in time by linear interpolation, translated
so that the first-frame pelvis (the root joint) is the origin, and rotated about the vertical (y) axis
so that the first-frame hip line, left hip -> right hip, points along +x. `Normalization` keeps what is
needed to map a model output back to the source's own space and length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .topology import Topology, get_topology

MODEL_FRAMES = 64


def resample(joints: np.ndarray, frames: int) -> np.ndarray:
    """Uniformly resample (T, ...) to (frames, ...) by linear interpolation in time.

    The first and last frames are kept exactly; T == frames returns a copy.
    """
    joints = np.asarray(joints, dtype=np.float32)
    length = joints.shape[0]
    if length == 0:
        raise ValueError("cannot resample an empty clip")
    if length == frames:
        return joints.copy()
    if length == 1:
        return np.repeat(joints, frames, axis=0)
    pos = np.linspace(0.0, length - 1, frames)
    lo = np.minimum(np.floor(pos).astype(np.int64), length - 2)
    w = (pos - lo).astype(np.float32).reshape((frames,) + (1,) * (joints.ndim - 1))
    return (1.0 - w) * joints[lo] + w * joints[lo + 1]


def _first_valid(values: np.ndarray) -> np.ndarray | None:
    """First row of (T, 3) whose three coordinates are finite."""
    ok = np.isfinite(values).all(axis=-1)
    idx = np.flatnonzero(ok)
    return values[idx[0]] if idx.size else None


def yaw_rotation(hip_line: np.ndarray) -> np.ndarray:
    """3x3 rotation about +y that maps the horizontal part of `hip_line` onto +x."""
    h = np.array([hip_line[0], 0.0, hip_line[2]], dtype=np.float64)
    n = np.linalg.norm(h)
    if not np.isfinite(n) or n < 1e-9:
        return np.eye(3, dtype=np.float32)
    x = h / n
    y = np.array([0.0, 1.0, 0.0])
    z = np.cross(x, y)
    return np.stack([x, y, z]).astype(np.float32)


@dataclass(frozen=True)
class Normalization:
    """The spatial and temporal transform of one clip; `invert` maps model space back to the clip's."""

    origin: np.ndarray  # (3,) first-frame pelvis in the source's space
    rotation: np.ndarray  # (3, 3) applied as R @ (x - origin)
    length: int  # source frame count
    frames: int = MODEL_FRAMES

    def apply_spatial(self, joints: np.ndarray) -> np.ndarray:
        return ((np.asarray(joints, dtype=np.float32) - self.origin) @ self.rotation.T).astype(np.float32)

    def invert_spatial(self, joints: np.ndarray) -> np.ndarray:
        return (np.asarray(joints, dtype=np.float32) @ self.rotation + self.origin).astype(np.float32)

    def invert(self, normalized: np.ndarray) -> np.ndarray:
        """(frames, J, 3) in model space -> (length, J, 3) in the source's space."""
        return self.invert_spatial(resample(normalized, self.length))


def canonical_transform(joints: np.ndarray, topology: str | Topology, frames: int = MODEL_FRAMES) -> Normalization:
    topo = get_topology(topology)
    joints = np.asarray(joints, dtype=np.float32)
    if joints.ndim != 3 or joints.shape[0] == 0:
        raise ValueError(f"expected a (T, J, 3) clip with T > 0, got shape {joints.shape}")
    origin = _first_valid(joints[:, topo.root])
    if origin is None:
        with np.errstate(invalid="ignore"):
            origin = np.nanmean(joints.reshape(-1, 3), axis=0)
        origin = np.nan_to_num(origin)
    hips = joints[:, topo.right_hip] - joints[:, topo.left_hip]
    hip_line = _first_valid(hips)
    rotation = yaw_rotation(hip_line) if hip_line is not None else np.eye(3, dtype=np.float32)
    return Normalization(origin=origin.astype(np.float32), rotation=rotation, length=joints.shape[0], frames=frames)


def normalize(
    joints: np.ndarray, topology: str | Topology, frames: int = MODEL_FRAMES
) -> tuple[np.ndarray, Normalization]:
    """(T, J, 3) clip -> ((frames, J, 3) model input, its `Normalization`)."""
    transform = canonical_transform(joints, topology, frames)
    return transform.apply_spatial(resample(joints, frames)), transform
