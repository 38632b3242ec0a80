"""What a released clip may carry besides its body and its motion: nothing of where the source stood, how
long it was, or which of its joints the tracker lost (issue 40; docs/privacy.md, "Channels of a release").

A recording session is told apart by where the person stood in front of the camera, by the camera's tilt and
by its tracker's dropouts; a clip by its exact frame count. A nearest neighbour on the first frame's root
alone linked 90-100 % of released clips to their source before these rules, so every release goes through
`release_joints`, whatever the method:

1. **Missing joints filled** (`fill_missing`): each coordinate of each joint is interpolated linearly in time
   between the frames where the joint is finite, and held constant before the first and after the last; a
   joint finite in no frame sits on its parent (its bone has length zero). No NaN is released.
2. **A fixed length** (`ReleaseOptions.length`, default `RELEASE_FRAMES` = the model's 64 frames): every
   clip is resampled uniformly in time by a cubic (Catmull-Rom) curve through its frames (`smooth_resample`):
   linear interpolation would leave the upsampled frames on straight segments between the source's, whose
   spacing gives the source's frame count back (measured: the share of such frames correlated -0.63 with it on
   N-UCLA). The fps is the source's, so a released clip lasts 64 / fps seconds whatever its source lasted: the
   tempo changes by source frames / 64 (the utility cost, docs/privacy.md).
3. **Canonical placement** (`placement_transform`): the floor under the clip (`dtmr.skeleton.floor`, fitted
   to where its feet stand) becomes the plane y = 0, the first frame's root is above the origin, and the
   first frame's hip line (left hip -> right hip) points along +x about the vertical, the convention of the
   model's input (DESIGN §2.3; a Kinect subject facing the camera already stands so). The trajectory within
   the clip is kept: it is motion, relative to the clip's own start.

`ReleaseOptions.keep_placement` and `keep_missing` are the explicit opt-ins for camera-space coordinates and
the NaN pattern; the release's attributes record them and `dtmr audit` fails such a release.
"""

from __future__ import annotations

import numpy as np

from ..skeleton import get_topology, resample
from ..skeleton.floor import fit_floor
from ..skeleton.normalize import MODEL_FRAMES, yaw_rotation
from ..skeleton.topology import Topology

#: the default released frame count: the model's own resolution, so no model output is resampled twice
RELEASE_FRAMES = MODEL_FRAMES


def fill_missing(joints: np.ndarray, topology: str | Topology) -> np.ndarray:
    """(T, J, 3) with NaN -> (T, J, 3) finite: linear in time inside gaps, held at the ends; a joint that is
    missing in every frame takes its parent's position (the root, when missing throughout: the mean of the
    other joints, else the origin)."""
    topo = get_topology(topology)
    joints = np.array(joints, dtype=np.float32)
    t = joints.shape[0]
    valid = np.isfinite(joints).all(axis=-1)  # (T, J)
    if valid.all():
        return joints
    frames = np.arange(t)
    never = ~valid.any(axis=0)
    for j in np.flatnonzero(valid.any(axis=0) & ~valid.all(axis=0)):
        seen = np.flatnonzero(valid[:, j])
        for c in range(3):
            joints[:, j, c] = np.interp(frames, seen, joints[seen, j, c])
    if never.any():
        if never[topo.root]:
            present = ~never
            root = np.nanmean(joints[:, present], axis=1) if present.any() else np.zeros((t, 3), np.float32)
            joints[:, topo.root] = root
        for j in topo.order:
            if never[j] and j != topo.root:
                joints[:, j] = joints[:, topo.parents[j]]
    return joints


def smooth_resample(joints: np.ndarray, frames: int) -> np.ndarray:
    """(T, ...) finite -> (frames, ...): the Catmull-Rom curve through the T frames, sampled at `frames`
    uniformly spaced times; the first and last frames are kept, T == frames returns a copy, T < 3 is linear."""
    joints = np.asarray(joints, dtype=np.float64)
    t = joints.shape[0]
    if t == frames or t < 3:
        return resample(joints, frames)
    pos = np.linspace(0.0, t - 1, frames)
    i = np.minimum(np.floor(pos).astype(np.int64), t - 2)  # segment [i, i + 1]
    u = (pos - i).reshape((frames,) + (1,) * (joints.ndim - 1))
    before, after = np.maximum(i - 1, 0), np.minimum(i + 2, t - 1)
    p0, p1, p2, p3 = joints[before], joints[i], joints[i + 1], joints[after]
    # end segments reflect the missing neighbour, so the end tangents are one-sided differences
    p0 = np.where((i == 0).reshape(u.shape), 2 * p1 - p2, p0)
    p3 = np.where((i + 1 == t - 1).reshape(u.shape), 2 * p2 - p1, p3)
    m1, m2 = (p2 - p0) / 2.0, (p3 - p1) / 2.0
    u2, u3 = u * u, u * u * u
    out = (2 * u3 - 3 * u2 + 1) * p1 + (u3 - 2 * u2 + u) * m1 + (-2 * u3 + 3 * u2) * p2 + (u3 - u2) * m2
    return out.astype(np.float32)


def _level(normal: np.ndarray) -> np.ndarray:
    """3x3 rotation taking the unit vector `normal` onto +y by the shortest arc."""
    up = np.array([0.0, 1.0, 0.0])
    axis = np.cross(normal, up)
    s, c = float(np.linalg.norm(axis)), float(normal @ up)
    if s < 1e-12:
        return np.eye(3)
    k = axis / s
    cross = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + s * cross + (1.0 - c) * cross @ cross


def placement_transform(joints: np.ndarray, topology: str | Topology) -> tuple[np.ndarray, np.ndarray]:
    """(rotation R, translation o) with R @ x + o the canonical placement of the (T, J, 3) finite `joints`
    (see the module docstring): the floor levelled and at y = 0, the first frame's root above the origin, its
    hip line along +x."""
    topo = get_topology(topology)
    joints = np.asarray(joints, dtype=np.float64)
    floor = fit_floor(joints, topo)
    level = _level(np.asarray(floor.normal, dtype=np.float64))
    first = joints[0] @ level.T  # levelled: the floor is the plane y = floor.offset
    turn = yaw_rotation(first[topo.right_hip] - first[topo.left_hip]).astype(np.float64)
    origin = np.array([first[topo.root, 0], floor.offset, first[topo.root, 2]])
    return turn @ level, -(turn @ origin)


def release_joints(joints: np.ndarray, topology: str | Topology, length: int | None = RELEASE_FRAMES,
                   keep_placement: bool = False, keep_missing: bool = False) -> np.ndarray:
    """The joints a release holds for a method's output `joints` (T, J, 3): missing joints filled unless
    `keep_missing`, resampled to `length` frames (None keeps T), placed canonically unless `keep_placement`
    (the placement is found on the filled clip, so it applies to a clip whose gaps are kept as well)."""
    joints = np.asarray(joints, dtype=np.float32)
    filled = fill_missing(joints, topology)
    out = joints if keep_missing else filled
    if length is not None:
        out = resample(out, length) if keep_missing else smooth_resample(out, length)
        filled = smooth_resample(filled, length)
    if keep_placement:
        return out
    rotation, offset = placement_transform(filled, topology)
    return (out.astype(np.float64) @ rotation.T + offset).astype(np.float32)
