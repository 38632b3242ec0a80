"""Side-channel attackers: a nearest neighbour on what a file says besides the body and how it moves.

A recording session is told apart by where the person stood, the camera's height and tilt and the tracker's
dropouts; a clip by its frame count. None of this is motion, and the learned attackers normalize most of it
away before they look (first-frame pelvis at the origin), so without these attackers an audit would miss
the channels that linked 90-100 % of released clips to their source (issue 40). Each channel is a small
feature vector per clip:

| channel | features |
|---|---|
| `first-root` | the first frame's root position (3): the plain attacker that found the leak |
| `placement` | first-frame and mean root (6), first-frame heading as cos/sin of the hip line's yaw (2), the fitted floor's normal x/z and height (3): where in the room and how the camera looked |
| `length` | frame count and fps (2) |
| `dropouts` | per joint, the share of frames where it is missing (NaN), sits on its parent (a bone under 1 mm: a joint filled from its parent) and moves on an exactly straight line at constant speed (what linear gap filling leaves) (3 J) |
| `clip-stats` | amplitude (per-axis spread of the root-centred joints, 3), mean joint speed and root speed per frame, root path length (3) |

The classifier is a nearest neighbour on features standardized over the training clips, with ties shared:
clips at the same distance vote equally, so a channel that carries nothing (every release at 64 frames)
scores chance, not the first training clip's subject. `embed` gives the standardized features, which the
audit's linkage compares with the raw clips' by Euclidean distance (`metric`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch

from ..attacker_names import SIDE_CHANNELS
from ..data.clip import Clip
from ..errors import DtmrError
from ..skeleton import get_topology
from ..skeleton.floor import fit_floor
from .base import class_targets, read_attacker_file, save_attacker

#: a bone shorter than this (m) is a joint placed on its parent
ZERO_BONE = 1e-3
#: |second difference| below this (m per frame²) on all three axes: a frame on a straight constant-speed path
STRAIGHT = 1e-6
#: distances within this relative margin of the nearest are a tie
TIE = 1e-6


@contextlib.contextmanager
def _quiet():
    """NaN statistics of all-missing joints are expected here (they become 0 after standardizing)."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _first_finite(rows: np.ndarray) -> np.ndarray:
    ok = np.flatnonzero(np.isfinite(rows).all(axis=-1))
    return rows[ok[0]].astype(np.float64) if ok.size else np.full(rows.shape[-1], np.nan)


def first_root(clip: Clip) -> np.ndarray:
    return _first_finite(clip.joints[:, get_topology(clip.topology).root])


def placement(clip: Clip) -> np.ndarray:
    topo = get_topology(clip.topology)
    joints = clip.joints.astype(np.float64)
    root = joints[:, topo.root]
    with _quiet():
        mean_root = np.nanmean(root, axis=0)
    hips = _first_finite(joints[:, topo.right_hip] - joints[:, topo.left_hip])
    yaw = np.arctan2(hips[2], hips[0])
    floor = fit_floor(joints, topo)
    return np.concatenate([first_root(clip), mean_root, [np.cos(yaw), np.sin(yaw)],
                           [floor.normal[0], floor.normal[2], floor.offset]])


def length(clip: Clip) -> np.ndarray:
    return np.array([clip.num_frames, clip.fps], dtype=np.float64)


def dropouts(clip: Clip) -> np.ndarray:
    topo = get_topology(clip.topology)
    joints = clip.joints.astype(np.float64)
    missing = ~np.isfinite(joints).all(axis=-1)  # (T, J)
    parents = np.array(topo.parents)
    bones = joints - joints[:, np.maximum(parents, 0)]
    with np.errstate(invalid="ignore"):
        on_parent = (np.linalg.norm(bones, axis=-1) < ZERO_BONE) & (parents >= 0)
        if len(joints) >= 3:
            accel = np.abs(np.diff(joints, n=2, axis=0)).max(axis=-1)  # (T-2, J)
            straight = np.concatenate([np.zeros((1, joints.shape[1]), bool), accel < STRAIGHT,
                                       np.zeros((1, joints.shape[1]), bool)])
        else:
            straight = np.zeros(missing.shape, bool)
    return np.concatenate([missing.mean(axis=0), on_parent.mean(axis=0), straight.mean(axis=0)])


def clip_stats(clip: Clip) -> np.ndarray:
    topo = get_topology(clip.topology)
    joints = clip.joints.astype(np.float64)
    root = joints[:, topo.root]
    with _quiet():
        centred = joints - root[:, None]
        amplitude = np.nanmean(np.nanstd(centred, axis=0), axis=0)  # (3,)
        steps = np.linalg.norm(np.diff(joints, axis=0), axis=-1)  # (T-1, J)
        joint_speed = np.nanmean(steps) if steps.size else 0.0
        root_steps = np.linalg.norm(np.diff(root, axis=0), axis=-1)
        root_speed = np.nanmean(root_steps) if root_steps.size else 0.0
        path = np.nansum(root_steps)
    return np.concatenate([amplitude, [joint_speed, root_speed, path]])


#: channel name -> (features of one clip, what the table in docs/audit.md calls it)
CHANNELS: dict[str, tuple[Callable[[Clip], np.ndarray], str]] = {
    "first-root": (first_root, "side channel: first frame's root position"),
    "placement": (placement, "side channel: placement (root, heading, floor)"),
    "length": (length, "side channel: frame count and fps"),
    "dropouts": (dropouts, "side channel: missing-joint pattern"),
    "clip-stats": (clip_stats, "side channel: amplitude and speed"),
}


assert tuple(CHANNELS) == SIDE_CHANNELS, "dtmr/attacker_names.py lists the channels"


def channel_features(channel: str, clips: Sequence[Clip]) -> np.ndarray:
    """(N, F) float64 features of `channel` for each clip."""
    extract = CHANNELS[channel][0]
    return np.stack([extract(c) for c in clips]) if clips else np.zeros((0, 0))


def nearest(queries: np.ndarray, references: np.ndarray) -> list[np.ndarray]:
    """For each query row, the indices of the reference rows at the smallest Euclidean distance (ties
    within TIE of it)."""
    out = []
    ref_sq = (references**2).sum(axis=1)
    for start in range(0, len(queries), 512):
        q = queries[start:start + 512]
        d = np.maximum((q**2).sum(axis=1)[:, None] + ref_sq[None] - 2.0 * q @ references.T, 0.0)
        low = d.min(axis=1, keepdims=True)
        out.extend(np.flatnonzero(row) for row in d <= low * (1.0 + TIE) + 1e-12)
    return out


class SideChannelAttacker:
    """A nearest neighbour on one channel's standardized features (see the module docstring)."""

    metric = "euclidean"

    def __init__(self, channel: str, device: str | torch.device = "cpu"):
        if channel not in CHANNELS:
            raise DtmrError(f"unknown side channel {channel!r} (known: {', '.join(CHANNELS)})")
        self.name = self.channel = channel
        self.family = CHANNELS[channel][1]
        self.classes: list[int] = []
        self.mean = self.scale = self.train = None
        self.targets: np.ndarray | None = None

    def _standard(self, clips: Sequence[Clip]) -> np.ndarray:
        return np.nan_to_num((channel_features(self.channel, clips) - self.mean) / self.scale)

    def fit(self, clips: Sequence[Clip], labels: Sequence[int], seed: int) -> None:
        classes, targets = class_targets(labels, clips)
        features = channel_features(self.channel, clips)
        with _quiet():
            mean, scale = np.nanmean(features, axis=0), np.nanstd(features, axis=0)
        self.mean = np.nan_to_num(mean)
        self.scale = np.where(np.isfinite(scale) & (scale > 1e-12), scale, 1.0)
        self.classes, self.targets = classes, targets.numpy()
        self.train = self._standard(clips)

    def predict_proba(self, clips: Sequence[Clip]) -> np.ndarray:
        """(N, C): the share of each class among the nearest training clips."""
        if self.train is None:
            raise RuntimeError("the attacker is not trained")
        proba = np.zeros((len(clips), len(self.classes)))
        for row, tied in enumerate(nearest(self._standard(clips), self.train)):
            np.add.at(proba[row], self.targets[tied], 1.0 / len(tied))
        return proba

    def embed(self, clips: Sequence[Clip]) -> np.ndarray:
        return self._standard(clips)

    def save(self, path: str | Path) -> Path:
        state = {"mean": torch.from_numpy(self.mean), "scale": torch.from_numpy(self.scale),
                 "train": torch.from_numpy(self.train), "targets": torch.from_numpy(self.targets)}
        return save_attacker(path, self.name, self.classes, {"channel": self.channel}, state)

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "cpu") -> "SideChannelAttacker":
        payload = read_attacker_file(path)
        attacker = cls(str(payload["config"].get("channel")), device)
        state = payload["state"]
        attacker.mean, attacker.scale = state["mean"].numpy(), state["scale"].numpy()
        attacker.train, attacker.targets = state["train"].numpy(), state["targets"].numpy()
        attacker.classes = [int(c) for c in payload["classes"]]
        return attacker
