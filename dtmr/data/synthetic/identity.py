"""Synthetic performers: a body (NTU-25 bone lengths from height and proportions) and a motion style.

Bone lengths are fractions of the standing height, calibrated on Kinect v2 skeletons (where the hip
joints sit close to the spine base and the shoulder joints inside the acromion), scaled per performer
by group factors (torso, head, shoulder width, arms, hands, hip width, legs, feet) and a small per-bone
factor, so left and right differ slightly as in real measurements. Ranges are in docs/synthetic.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...skeleton import NTU25

#: child joint -> (fraction of height, proportion group) for the 24 NTU-25 bones
_BONES = {
    "spine_mid": (0.165, "torso"),
    "spine_shoulder": (0.125, "torso"),
    "neck": (0.045, "head"),
    "head": (0.075, "head"),
    "left_shoulder": (0.090, "shoulders"),
    "right_shoulder": (0.090, "shoulders"),
    "left_elbow": (0.150, "arms"),
    "right_elbow": (0.150, "arms"),
    "left_wrist": (0.140, "arms"),
    "right_wrist": (0.140, "arms"),
    "left_hand": (0.045, "hands"),
    "right_hand": (0.045, "hands"),
    "left_hand_tip": (0.035, "hands"),
    "right_hand_tip": (0.035, "hands"),
    "left_thumb": (0.030, "hands"),
    "right_thumb": (0.030, "hands"),
    "left_hip": (0.042, "hips"),
    "right_hip": (0.042, "hips"),
    "left_knee": (0.232, "legs"),
    "right_knee": (0.232, "legs"),
    "left_ankle": (0.236, "legs"),
    "right_ankle": (0.236, "legs"),
    "left_foot": (0.052, "feet"),
    "right_foot": (0.052, "feet"),
}
#: standard deviation of each group's factor (clipped at 2.5 sd)
_GROUP_SD = {"torso": 0.035, "head": 0.05, "shoulders": 0.06, "arms": 0.035, "hands": 0.06,
             "hips": 0.08, "legs": 0.03, "feet": 0.05}
#: sex differences of the group factors (female / male), on top of the height difference
_FEMALE_GROUP = {"shoulders": 0.93, "hips": 1.06, "arms": 0.98}
_BONE_SD = 0.012
_FEMALE_FRACTION = 0.45
_HEIGHT = {True: (1.63, 0.065), False: (1.76, 0.07)}  # female, male: mean and sd in metres
_HEIGHT_RANGE = (1.50, 1.98)
RIGHT_HANDED_FRACTION = 0.88
TOE_HEIGHT = 0.012  # m, the Kinect foot joint of a planted foot above the floor


@dataclass(frozen=True)
class Style:
    """How a performer moves. Angles in radians, lengths in metres, rates in Hz."""

    tempo: float  # speed multiplier (durations divide by it)
    amplitude: float  # size of the movements
    sharpness: float  # easing exponent: >1 slow start / abrupt end
    timing_warp: float  # |w| < 0.3: front- or back-loaded timing within a movement
    dominant: int  # +1 right-handed (and -footed), -1 left
    off_hand: float  # amplitude of the non-dominant side relative to the dominant one
    arm_swing: float  # multiplier of the arm swing of walking
    cadence: float  # steps per second when walking in place (before tempo)
    gesture_rate: float  # waves / claps per second (before tempo)
    trunk_bend: float  # forward lean of the trunk
    trunk_lean: float  # sideways lean (+ to the right)
    head_bend: float  # forward tilt of the head
    head_lean: float
    shrug: tuple[float, float]  # left, right shoulder elevation
    arm_elevation: tuple[float, float]  # resting arm angle from the vertical, left, right
    arm_azimuth: tuple[float, float]  # direction of that angle: 0 sideways, pi/2 forwards
    elbow_bend: tuple[float, float]  # resting elbow flexion
    knee_bend: float  # resting knee flexion
    stance: float  # extra half-width of the stance beyond the hip joints
    toe_out: tuple[float, float]
    foot_forward: tuple[float, float]  # stagger of the feet (metres forward)
    weight_shift: float  # resting sideways offset of the pelvis
    sway: float  # amplitude of postural sway
    sway_rate: float
    fidget: float  # amplitude (radians) of small involuntary arm and head movements


@dataclass(frozen=True)
class Identity:
    subject: int
    female: bool
    height: float
    #: (24,) in `NTU25.bones` order
    bone_lengths: np.ndarray
    style: Style

    def length(self, joint: str) -> float:
        """Length of the bone that ends at `joint`."""
        return float(self.bone_lengths[_BONE_INDEX[joint]])

    @property
    def ankle_height(self) -> float:
        """Ankle joint above the floor on a planted foot (foot length times a fixed arch ratio)."""
        return 0.62 * max(self.length("left_foot"), self.length("right_foot"))


_BONE_INDEX = {NTU25.joint_names[c]: b for b, (_, c) in enumerate(NTU25.bones)}


def _bounded_normal(rng: np.random.Generator, mean: float, sd: float, size=None) -> np.ndarray:
    return mean + sd * np.clip(rng.standard_normal(size), -2.5, 2.5)


def _log_normal(rng: np.random.Generator, sd: float, low: float, high: float) -> float:
    return float(np.clip(np.exp(sd * rng.standard_normal()), low, high))


def _sample_body(rng: np.random.Generator, female: bool) -> tuple[float, np.ndarray]:
    mean, sd = _HEIGHT[female]
    height = float(np.clip(mean + sd * rng.standard_normal(), *_HEIGHT_RANGE))
    groups = sorted(_GROUP_SD)
    factors = dict(zip(groups, _bounded_normal(rng, 1.0, np.array([_GROUP_SD[g] for g in groups]))))
    if female:
        for group, scale in _FEMALE_GROUP.items():
            factors[group] *= scale
    per_bone = _bounded_normal(rng, 1.0, _BONE_SD, size=NTU25.num_bones)
    lengths = np.empty(NTU25.num_bones)
    for joint, b in _BONE_INDEX.items():
        fraction, group = _BONES[joint]
        lengths[b] = fraction * height * factors[group] * per_bone[b]
    return height, lengths


def _pair_deg(rng: np.random.Generator, low: float, high: float) -> tuple[float, float]:
    """Left and right values drawn uniformly in [low, high] degrees, in radians."""
    left, right = np.deg2rad(rng.uniform(low, high, size=2))
    return float(left), float(right)


def _sample_style(rng: np.random.Generator) -> Style:
    deg = np.deg2rad
    return Style(
        tempo=_log_normal(rng, 0.12, 0.78, 1.3),
        amplitude=_log_normal(rng, 0.12, 0.75, 1.3),
        sharpness=_log_normal(rng, 0.25, 0.6, 1.6),
        timing_warp=float(rng.uniform(-0.25, 0.25)),
        dominant=1 if rng.random() < RIGHT_HANDED_FRACTION else -1,
        off_hand=float(rng.uniform(0.75, 1.0)),
        arm_swing=float(rng.uniform(0.4, 1.4)),
        cadence=float(rng.uniform(1.5, 2.2)),
        gesture_rate=float(rng.uniform(1.8, 3.0)),
        trunk_bend=float(deg(_bounded_normal(rng, 3.0, 3.0))),
        trunk_lean=float(deg(_bounded_normal(rng, 0.0, 1.5))),
        head_bend=float(deg(_bounded_normal(rng, 6.0, 5.0))),
        head_lean=float(deg(_bounded_normal(rng, 0.0, 3.0))),
        shrug=tuple(float(v) for v in deg(_bounded_normal(rng, 0.0, 3.0, size=2))),
        arm_elevation=_pair_deg(rng, 5.0, 14.0),
        arm_azimuth=_pair_deg(rng, -20.0, 40.0),
        elbow_bend=_pair_deg(rng, 5.0, 22.0),
        knee_bend=float(deg(rng.uniform(4.0, 12.0))),
        stance=float(rng.uniform(0.02, 0.09)),
        toe_out=tuple(float(v) for v in deg(np.clip(_bounded_normal(rng, 10.0, 5.0, size=2), -5.0, 25.0))),
        foot_forward=tuple(float(v) for v in _bounded_normal(rng, 0.0, 0.015, size=2)),
        weight_shift=float(_bounded_normal(rng, 0.0, 0.012)),
        sway=float(rng.uniform(0.004, 0.02)),
        sway_rate=float(rng.uniform(0.2, 0.6)),
        fidget=float(deg(rng.uniform(0.5, 3.0))),
    )


def make_identity(rng: np.random.Generator, subject: int) -> Identity:
    """Draw one performer from `rng` (the caller derives it from the seed and the subject number)."""
    female = bool(rng.random() < _FEMALE_FRACTION)
    height, lengths = _sample_body(rng, female)
    return Identity(subject=subject, female=female, height=height, bone_lengths=lengths, style=_sample_style(rng))
