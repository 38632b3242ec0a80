"""A plausibility score per clip: is this a body a person could have? 0 = plausible, higher = less.

Six components, each per frame ((T,) arrays in `PlausibilityScore.frames`) and per clip (floats):

* ``bone_error`` (m): mean over bones of |ℓ_t − L|, L = `body` (the bone lengths of the body the clip
  claims: the reference's mean-pose lengths for a retarget) or, without one, the clip's own mean lengths
  (then it measures bones that stretch and shrink over time);
* ``joint_angle`` (degrees): the largest excess over the elbow and knee limits of
  `dtmr.skeleton.joint_limits` (a knee bent backwards, a forearm folded through the upper arm);
* ``self_intersection`` (m): the deepest overlap of two non-adjacent limb capsules
  (`dtmr.skeleton.joint_limits.capsule_pairs`: forearms against the torso, the two shins, each thigh against
  the other shin);
* ``foot_sliding`` (m/s): mean speed along the floor of the contact joints on their contact frames
  (`dtmr.skeleton.contact`, floor plane fitted to the clip);
* ``ground_penetration`` (m): how far the lowest contact joint is below the clip's floor plane (the plane
  where its feet stand, `dtmr.skeleton.floor`), less `PENETRATION_TOLERANCE` of tracking noise;
* ``jerk`` (m/s³): mean over joints of ‖third difference‖·fps³.

The clip value of each is its mean over frames (NaN frames left out). The score is the mean over the six
of value / threshold (`THRESHOLDS`), so 1 is "every component at its threshold" and a single component at
six times its threshold also gives 1. The thresholds are what a careful viewer notices, set against real
Kinect data (docs/evaluation.md, "Plausibility score"): bone lengths off by 2 cm, 10° beyond a joint
limit, 2 cm of limb through limb or foot through floor, 0.25 m/s of sliding (standing Kinect clips read
0.13 m/s from tracking noise alone), and 1000 m/s³ of jerk.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields
from types import MappingProxyType

import numpy as np

from ..data.clip import Clip
from ..skeleton.contact import sliding_speeds
from ..skeleton.floor import fit_floor
from ..skeleton.geometry import bone_lengths
from ..skeleton.joint_limits import capsule_depths, hinge_violations
from ..skeleton.topology import Topology, get_topology

COMPONENTS = ("bone_error", "joint_angle", "self_intersection", "foot_sliding", "ground_penetration", "jerk")
THRESHOLDS = MappingProxyType({
    "bone_error": 0.02,
    "joint_angle": 10.0,
    "self_intersection": 0.02,
    "foot_sliding": 0.25,
    "ground_penetration": 0.02,
    "jerk": 1000.0,
})
PENETRATION_TOLERANCE = 0.02  # m


@dataclass(frozen=True)
class PlausibilityScore:
    """Per-clip components (see the module docstring), `score`, and the per-frame (T,) arrays."""

    bone_error: float
    joint_angle: float
    self_intersection: float
    foot_sliding: float
    ground_penetration: float
    jerk: float
    frames: MappingProxyType = field(compare=False, repr=False, default_factory=lambda: MappingProxyType({}))

    @property
    def score(self) -> float:
        """Mean over the components of value / `THRESHOLDS` (NaN components left out; 0 when all are)."""
        ratios = [getattr(self, k) / THRESHOLDS[k] for k in COMPONENTS]
        finite = [r for r in ratios if np.isfinite(r)]
        return float(np.mean(finite)) if finite else 0.0

    def as_dict(self) -> dict[str, float]:
        """The components and the score, by name."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "frames"}
        out["score"] = self.score
        return out


def self_intersection(joints: np.ndarray, topology: str | Topology) -> np.ndarray:
    """(T,) deepest overlap (m) of the limb capsules of `capsule_pairs` on each frame (0 when none)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        depths = capsule_depths(np.asarray(joints, dtype=np.float64), topology, np)
    return np.maximum(np.max(depths, axis=-1), 0.0)


def _jerk(joints: np.ndarray, fps: float) -> np.ndarray:
    """(T,) mean over joints of ‖Δ³x‖·fps³, defined from frame 3 on (NaN before)."""
    out = np.full(joints.shape[0], np.nan)
    if joints.shape[0] >= 4:
        third = joints[3:] - 3 * joints[2:-1] + 3 * joints[1:-2] - joints[:-3]
        out[3:] = np.nanmean(np.linalg.norm(third, axis=-1), axis=-1) * fps**3
    return out


def _mean(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else float("nan")


def joints_plausibility(joints: np.ndarray, topology: str | Topology, fps: float,
                        body: np.ndarray | None = None) -> PlausibilityScore:
    """The plausibility of a (T, J, 3) clip; `body` (J-1,) the bone lengths it should have."""
    topo = get_topology(topology)
    joints = np.asarray(joints, dtype=np.float64)
    if joints.ndim != 3 or joints.shape[1:] != (topo.num_joints, 3):
        raise ValueError(f"plausibility: joints must be (T, {topo.num_joints}, 3) for {topo.name}, got {joints.shape}")
    if not np.isfinite(joints).any():  # nothing to judge: not "perfectly plausible"
        raise ValueError("plausibility: no finite joint coordinates in any frame")
    lengths = bone_lengths(joints, topo)
    if body is None:
        body = np.nanmean(lengths, axis=0)
    body = np.asarray(body, dtype=np.float64)
    if body.shape != (topo.num_bones,):
        raise ValueError(f"plausibility: body must hold {topo.num_bones} bone lengths, got shape {body.shape}")
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN frames give NaN, left out below
        plane = fit_floor(joints, topo)
        feet = plane.heights(joints[:, list(topo.contact_joints)])
        sliding = sliding_speeds(joints, topo, fps, floor=plane)
        per_frame = {
            "bone_error": np.nanmean(np.abs(lengths - body), axis=-1),
            "joint_angle": np.nanmax(hinge_violations(joints, topo), axis=-1),
            "self_intersection": self_intersection(joints, topo),
            "foot_sliding": np.nanmean(sliding, axis=-1),
            "ground_penetration": np.maximum(-np.nanmin(feet, axis=-1) - PENETRATION_TOLERANCE, 0.0),
            "jerk": _jerk(joints, fps),
        }
    clip_values = {k: _mean(v) for k, v in per_frame.items()}
    # over every contact sample, as `dtmr.skeleton.foot_sliding_speed`; a clip without contact slides 0
    clip_values["foot_sliding"] = float(np.nan_to_num(_mean(sliding)))
    return PlausibilityScore(**clip_values, frames=MappingProxyType(per_frame))


def clip_plausibility(clip: Clip, body: np.ndarray | None = None) -> PlausibilityScore:
    """The plausibility of `clip` (its topology and frame rate); `body` as in `joints_plausibility`."""
    return joints_plausibility(clip.joints, clip.topology, clip.fps, body)
