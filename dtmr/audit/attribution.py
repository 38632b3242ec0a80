"""Occlusion attribution: which joints and which frames an attacker relies on to name a clip's subject.

`occlusion_attribution(predict_proba, clip, class_index)` hides one part of the clip at a time and
records how much the probability of `class_index` (the clip's true subject) falls:

* **a joint**: its whole trajectory is moved onto its parent's (the root onto the mean of its
  children's), so the bone ending at it has length zero and the joint has no motion of its own. Why this
  neutral value and not the joint's mean position over the clip: bone lengths are the strongest static
  identity cue (the bone-length attacker of `dtmr audit` reads nothing else), and a joint frozen at its
  mean position keeps its mean height and most of its bone length, so an attacker that reads body
  proportions would seem to rely on no joint at all. Collapsing onto the parent removes both the joint's
  proportion and its motion, and leaves every other joint where it was.
* **a window of frames**: windows of `window` frames start every `window // 2` frames (the last one
  ends on the last frame); a window's frames are replaced by the straight line between the last frame
  before it and the first frame after it (held when the window touches an end of the clip; the mean pose
  when one window is the whole clip). What the occluded frames said beyond a smooth path is gone; the
  rest of the clip is untouched. A frame's score is the mean drop of the windows that hold it: the
  half-overlap halves the blur of non-overlapping windows for twice their cost.

All occluded variants and the clip itself go to `predict_proba` in **one** call (a model batches them).
A drop below zero (hiding a part made the attacker surer) is clipped to 0: the scores say what the
attacker relies on, not what confuses it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..data.clip import Clip
from ..skeleton import get_topology

PredictProba = Callable[[Sequence[Clip]], np.ndarray]


@dataclass(frozen=True)
class Attribution:
    """Drops of P(class_index) when each joint or window of frames is hidden; all >= 0."""

    joints: np.ndarray  # (J,) float64
    frames: np.ndarray  # (T,) float64: the mean drop of the windows that hold each frame
    base_probability: float  # P(class_index) of the clip as it is
    class_index: int
    window: int

    @property
    def joints_normalized(self) -> np.ndarray:
        """(J,) in [0, 1]: the joint scores over their maximum (all 0 when nothing matters)."""
        return _normalized(self.joints)

    @property
    def frames_normalized(self) -> np.ndarray:
        """(T,) in [0, 1]: the frame scores over their maximum (all 0 when nothing matters)."""
        return _normalized(self.frames)

    def top_joints(self, k: int = 5) -> list[int]:
        """The `k` joints with the largest drop, largest first (ties: lower index first)."""
        return [int(j) for j in np.argsort(-self.joints, kind="stable")[:k]]


def occlusion_attribution(predict_proba: PredictProba, clip: Clip, class_index: int, window: int = 8) -> Attribution:
    """Per-joint and per-frame reliance of `predict_proba` on `clip` for class column `class_index`.

    `predict_proba(clips) -> (N, C)` probabilities, like `Attacker.predict_proba` or
    `Recognizer.predict_proba`. One call is made, on 1 + J + about 2·T / window clips.
    """
    if window < 1:
        raise ValueError(f"window must be at least 1 frame, got {window}")
    joint_variants = [clip.replace(joints=_without_joint(clip.joints, clip.topology, j))
                      for j in range(clip.num_joints)]
    spans = _windows(clip.num_frames, window)
    frame_variants = [clip.replace(joints=_without_frames(clip.joints, start, stop)) for start, stop in spans]
    probabilities = np.asarray(predict_proba([clip, *joint_variants, *frame_variants]), dtype=np.float64)
    expected = 1 + len(joint_variants) + len(frame_variants)
    if probabilities.ndim != 2 or probabilities.shape[0] != expected:
        raise ValueError(f"predict_proba returned shape {probabilities.shape} for {expected} clips; "
                         f"expected ({expected}, classes)")
    if not np.isfinite(probabilities).all():
        raise ValueError("predict_proba returned probabilities that are not finite")
    if not 0 <= class_index < probabilities.shape[1]:
        raise ValueError(f"class index {class_index} out of range for {probabilities.shape[1]} classes")
    p = probabilities[:, class_index]
    base = float(p[0])
    drops = np.maximum(base - p[1:], 0.0)  # (J + W,)
    joint_drops = drops[: clip.num_joints]
    covered = np.zeros(clip.num_frames)
    frames = np.zeros(clip.num_frames)
    for (start, stop), drop in zip(spans, drops[clip.num_joints:]):
        frames[start:stop] += drop
        covered[start:stop] += 1
    frames /= covered  # every frame lies in at least one window
    return Attribution(joint_drops, frames, base, int(class_index), int(window))


def _windows(frames: int, window: int) -> list[tuple[int, int]]:
    """[start, stop) of each occluded window: `window` long, every `window // 2` frames, the last at the end."""
    if frames <= window:
        return [(0, frames)]
    stride = max(1, window // 2)
    starts = list(range(0, frames - window + 1, stride))
    if starts[-1] + window < frames:
        starts.append(frames - window)
    return [(s, s + window) for s in starts]


def _without_joint(joints: np.ndarray, topology: str, j: int) -> np.ndarray:
    """(T, J, 3) copy with joint j on its parent's trajectory (the root: on the mean of its children's)."""
    topo = get_topology(topology)
    out = joints.copy()
    parent = topo.parents[j]
    if parent >= 0:
        out[:, j] = joints[:, parent]
    else:
        children = [c for c, p in enumerate(topo.parents) if p == j]
        with warnings.catch_warnings():  # frames where every child is missing stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            out[:, j] = np.nanmean(joints[:, children], axis=1) if children else np.nan
    return out


def _without_frames(joints: np.ndarray, start: int, stop: int) -> np.ndarray:
    """(T, J, 3) copy with frames [start, stop) on the line between the frames around them."""
    out = joints.copy()
    before = joints[start - 1] if start > 0 else None
    after = joints[stop] if stop < len(joints) else None
    if before is None and after is None:
        with warnings.catch_warnings():  # a joint missing on every frame stays NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            out[:] = np.nanmean(joints, axis=0)
        return out
    if before is None:
        before = after
    if after is None:
        after = before
    # a joint missing on one edge holds the other edge; missing on both, it stays missing
    before = np.where(np.isnan(before), after, before)
    after = np.where(np.isnan(after), before, after)
    weights = (np.arange(start, stop) - (start - 1)) / (stop - start + 1)  # (n,) strictly inside (0, 1)
    out[start:stop] = before[None] + weights[:, None, None] * (after - before)[None]
    return out


def _normalized(scores: np.ndarray) -> np.ndarray:
    top = float(np.max(scores)) if scores.size else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)

