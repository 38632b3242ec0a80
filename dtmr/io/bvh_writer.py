"""BVH export of a clip: a joint hierarchy with the clip's own bone lengths and per-frame rotations.

The hierarchy is the clip's topology rooted at its root joint. Each bone's OFFSET is its mean length over the
frames where both ends are known, along the bone's mean direction (the rest pose is the clip's average
posture). The root has position and rotation channels, every other joint three rotation channels
(`Zrotation Xrotation Yrotation`, the order of most motion-capture files). Numbers are centimetres and
degrees with 6 decimals.

A joint with several children (NTU's spine-shoulder: neck and both shoulders) cannot aim every child with one
rotation when their relative geometry changes from frame to frame. Its own rotation is the best fit (Kabsch) of
its children's rest directions to their current ones, and each child hangs off a zero-offset **branch joint**
`{joint}_to_{child}` whose rotation aims that child exactly. `read_bvh` drops branch joints by that name.

Rotations reproduce every bone's direction exactly (up to rounding); a bone whose length changes from frame to
frame (Kinect jitter) keeps its mean length, which is the only round-trip error. A missing (NaN) joint makes the
bones on both sides of it unknown in that frame: their rotations (relative to the parent) are held from the
nearest frame where they are known, the rest pose when they never are; a missing root position likewise.
BVH cannot say "missing", so such joints read back as that held pose, not NaN.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import InputError
from ..skeleton import get_topology
from .atomic import atomic_write
from .bvh_reader import BRANCH_INFIX, UNITS

#: the unit written (see `guess_unit`: a human-sized rest pose in centimetres reads back as centimetres)
WRITE_UNIT = "cm"
ROTATION_CHANNELS = "Zrotation Xrotation Yrotation"
#: bones shorter than this (metres) have no direction
_EPS = 1e-9


def write_bvh(path: str | Path, clip: Clip, per_frame_lengths: bool = False) -> None:
    """Write `clip` as a BVH file (atomically); the file reads back with `read_bvh` as the same topology.

    `per_frame_lengths` adds position channels to every joint that carry each bone's length in each frame (the
    bone's own direction, scaled), so a clip whose bone lengths vary reads back exactly too; Blender reads them
    as bone locations. Without it only the root has position channels and every bone keeps its mean length.
    """
    topo = get_topology(clip.topology)
    joints = clip.joints.astype(np.float64)
    if not np.isfinite(joints).any():
        raise InputError(path, "every joint of the clip is missing (NaN): nothing to write")
    children = [[c for c, p in enumerate(topo.parents) if p == j] for j in range(topo.num_joints)]
    directions, frame_lengths, lengths = _bone_directions(joints, topo.parents)
    rest = _rest_directions(directions)
    rotations = _local_rotations(directions, rest, topo, children)

    scale = 1.0 / UNITS[WRITE_UNIT]
    columns = [_filled(joints[:, topo.root], np.isfinite(joints[:, topo.root]).all(axis=1), np.zeros(3)) * scale]
    lines = ["HIERARCHY"]

    def joint(j: int, depth: int, offset: np.ndarray) -> None:
        pad = "\t" * depth
        lines.append(f"{pad}{'ROOT' if depth == 0 else 'JOINT'} {topo.joint_names[j]}")
        lines.append(f"{pad}{{")
        lines.append(f"{pad}\tOFFSET {_numbers(offset)}")
        if depth == 0 or per_frame_lengths:
            lines.append(f"{pad}\tCHANNELS 6 Xposition Yposition Zposition {ROTATION_CHANNELS}")
        else:
            lines.append(f"{pad}\tCHANNELS 3 {ROTATION_CHANNELS}")
        if depth > 0 and per_frame_lengths:
            known = np.isfinite(frame_lengths[:, j])
            columns.append(np.where(known, frame_lengths[:, j], lengths[j])[:, None] * rest[j] * scale)
        columns.append(_euler_zxy(rotations[topo.joint_names[j]]))
        kids = children[j]
        if not kids:
            lines.extend([f"{pad}\tEnd Site", f"{pad}\t{{", f"{pad}\t\tOFFSET {_numbers(0.25 * offset)}", f"{pad}\t}}"])
        for c in kids:
            child_offset = rest[c] * lengths[c] * scale
            if len(kids) == 1:
                joint(c, depth + 1, child_offset)
                continue
            name = f"{topo.joint_names[j]}{BRANCH_INFIX}{topo.joint_names[c]}"
            lines.extend([f"{pad}\tJOINT {name}", f"{pad}\t{{", f"{pad}\t\tOFFSET {_numbers(np.zeros(3))}",
                          f"{pad}\t\tCHANNELS 3 {ROTATION_CHANNELS}"])
            columns.append(_euler_zxy(rotations[name]))
            joint(c, depth + 2, child_offset)
            lines.append(f"{pad}\t}}")
        lines.append(f"{pad}}}")

    joint(topo.root, 0, np.zeros(3))
    lines += ["MOTION", f"Frames: {clip.num_frames}", f"Frame Time: {1.0 / clip.fps:.10g}"]
    values = np.concatenate(columns, axis=1)
    with atomic_write(path) as tmp, open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(lines) + "\n")
        np.savetxt(fh, values, fmt="%.6f")


def _numbers(values: np.ndarray) -> str:
    return " ".join(f"{v:.6f}" for v in values)


def _bone_directions(joints: np.ndarray, parents: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For the bone each joint owns (the root's is empty): (T, J, 3) unit direction, NaN where unknown (an end
    missing, or a zero length); (T, J) length, NaN where an end is missing; (J,) mean length over the frames
    with a direction (0 when none)."""
    frames, count = joints.shape[:2]
    directions = np.full((frames, count, 3), np.nan)
    frame_lengths = np.zeros((frames, count))
    lengths = np.zeros(count)
    for j, p in enumerate(parents):
        if p < 0:
            continue
        vector = joints[:, j] - joints[:, p]
        norm = np.linalg.norm(vector, axis=1)
        known = np.isfinite(norm) & (norm > _EPS)
        directions[known, j] = vector[known] / norm[known, None]
        frame_lengths[:, j] = norm
        if known.any():
            lengths[j] = norm[known].mean()
    return directions, frame_lengths, lengths


def _rest_directions(directions: np.ndarray) -> np.ndarray:
    """(J, 3) rest direction of each bone: its mean direction, +y when that is undefined."""
    known = np.isfinite(directions).all(axis=2, keepdims=True)
    mean = np.where(known, directions, 0.0).sum(axis=0)
    norm = np.linalg.norm(mean, axis=1, keepdims=True)
    up = np.array([0.0, 1.0, 0.0])
    return np.where(norm > 1e-6, mean / np.maximum(norm, 1e-6), up)


def _local_rotations(directions: np.ndarray, rest: np.ndarray, topo, children: list[list[int]]) -> dict:
    """Joint or branch-joint name -> (T, 3, 3) rotation relative to its BVH parent."""
    frames = len(directions)
    identity = np.broadcast_to(np.eye(3), (frames, 3, 3))
    world = {}  # joint -> world rotation of the BVH joint its child bone hangs off (itself or its branch)
    local = {}
    for j in topo.order:
        p = topo.parents[j]
        parent_world = identity if p < 0 else world[(p, j)]
        kids = children[j]
        if len(kids) == 1:
            target = _aim(parent_world, rest[kids[0]], directions[:, kids[0]])
        elif kids:
            target = _fit(parent_world, rest[kids], directions[:, kids])
        else:
            target = parent_world
        own = _relative(parent_world, target)
        local[topo.joint_names[j]] = own
        own_world = parent_world @ own
        for c in kids:
            if len(kids) == 1:
                world[(j, c)] = own_world
                continue
            branch = _relative(own_world, _aim(own_world, rest[c], directions[:, c]))
            local[f"{topo.joint_names[j]}{BRANCH_INFIX}{topo.joint_names[c]}"] = branch
            world[(j, c)] = own_world @ branch
    return local


def _relative(parent_world: np.ndarray, target: np.ndarray) -> np.ndarray:
    """parent^T @ target, with the frames where target is unknown (NaN) held from the nearest known frame."""
    relative = np.swapaxes(parent_world, 1, 2) @ target
    known = np.isfinite(relative).all(axis=(1, 2))
    return _filled(relative, known, np.eye(3))


def _filled(values: np.ndarray, known: np.ndarray, default: np.ndarray) -> np.ndarray:
    """`values` with every unknown frame replaced by the last known one before it (the first known one for
    frames before any), or by `default` when no frame is known."""
    if not known.any():
        return np.broadcast_to(default, values.shape).copy()
    index = np.where(known, np.arange(len(known)), -1)
    index = np.maximum.accumulate(index)
    index[index < 0] = np.flatnonzero(known)[0]
    return values[index]


def _aim(parent_world: np.ndarray, rest: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """(T, 3, 3) world rotation: the parent's, then the smallest turn taking the bone's rest direction (as the
    parent carries it) onto `direction`; NaN where `direction` is unknown."""
    carried = np.einsum("tij,tj->ti", parent_world, np.broadcast_to(rest, (len(parent_world), 3)))
    return _smallest_rotation(carried, direction) @ parent_world


def _smallest_rotation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(T, 3, 3) rotation about a x b taking unit vectors a onto b (a half turn about an axis normal to a when
    they are opposite)."""
    cross = np.cross(a, b)
    cos = np.einsum("ti,ti->t", a, b)
    skew = _skew(cross)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.eye(3) + skew + skew @ skew / (1.0 + cos)[:, None, None]
    opposite = cos < -1.0 + 1e-9
    if opposite.any():
        helper = np.where(np.abs(a[opposite, :1]) < 0.9, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
        axis = np.cross(a[opposite], helper)
        axis /= np.linalg.norm(axis, axis=1, keepdims=True)
        out[opposite] = 2.0 * axis[:, :, None] * axis[:, None, :] - np.eye(3)
    return out


def _skew(v: np.ndarray) -> np.ndarray:
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2], out[..., 1, 2] = -v[..., 2], v[..., 1], -v[..., 0]
    out[..., 1, 0], out[..., 2, 0], out[..., 2, 1] = v[..., 2], -v[..., 1], v[..., 0]
    return out


def _fit(parent_world: np.ndarray, rest: np.ndarray, directions: np.ndarray) -> np.ndarray:
    """(T, 3, 3) world rotation best taking the children's rest directions (K, 3) onto their current ones
    (T, K, 3) (Kabsch over the known children). Where fewer than two known children span a plane it aims the
    first known child as `_aim` does; NaN where no child is known."""
    known = np.isfinite(directions).all(axis=2)
    cov = np.einsum("ki,tkj->tij", rest, np.where(known[..., None], directions, 0.0))
    u, s, vt = np.linalg.svd(cov)
    sign = np.sign(np.linalg.det(np.swapaxes(vt, 1, 2) @ np.swapaxes(u, 1, 2)))
    fix = np.ones((len(cov), 3))
    fix[:, 2] = np.where(sign == 0, 1.0, sign)
    out = np.swapaxes(vt, 1, 2) @ (fix[:, :, None] * np.swapaxes(u, 1, 2))
    planar = s[:, 1] > 1e-6 * np.maximum(s[:, 0], _EPS)
    if (~planar).any():
        first = np.argmax(known, axis=1)
        rows = np.arange(len(cov))
        aimed = _aim(parent_world, rest[first], directions[rows, first])
        out = np.where(planar[:, None, None], out, aimed)
    return out


def _euler_zxy(rotation: np.ndarray) -> np.ndarray:
    """(T, 3) degrees (z, x, y) with rotation = Rz(z) @ Rx(x) @ Ry(y)."""
    r = rotation
    x = np.arcsin(np.clip(r[:, 2, 1], -1.0, 1.0))
    locked = np.abs(r[:, 2, 1]) > 1.0 - 1e-12  # x = +-90 degrees: z and y turn about one axis, y is set to 0
    z = np.where(locked, np.arctan2(r[:, 1, 0], r[:, 0, 0]), np.arctan2(-r[:, 0, 1], r[:, 1, 1]))
    y = np.where(locked, 0.0, np.arctan2(-r[:, 2, 0], r[:, 2, 2]))
    return np.degrees(np.stack([z, x, y], axis=1))
