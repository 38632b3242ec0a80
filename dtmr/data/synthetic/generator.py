"""`generate_clips`: the synthetic data set (subjects x actions x repetitions x views of NTU-25 clips).

Every random quantity comes from its own generator, derived from the seed with `numpy.random.SeedSequence`
and a spawn key naming what it is for:

* ``(0, subject)``: the performer's body and style;
* ``(1, subject, action)``: the performer's habits for one action (amplitude, speed, quirks);
* ``(2, subject, action, repetition)``: one performance (timing, amplitude, sway, fidgeting, facing);
* ``(3, subject, action, repetition, view)``: one camera's placement and measurement noise.

So a clip depends only on the seed and its own labels: S001A002R00V01 is the same array whichever other
subjects, actions, repetitions or views are generated with it, and in whatever order.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from ...errors import DtmrError
from ..clip import Clip
from .actions import ACTIONS, ActionContext
from .envelopes import smooth_noise
from .identity import Identity, Style, make_identity
from .kinematics import Body, Pose, joints, neutral_pose, swing
from .noise import kinect_noise

FPS = 30.0
MIN_FRAMES, MAX_FRAMES = 40, 90
#: camera yaw of views 1, 2, ...: frontal first, then NTU's +-45 degree cameras, then the two sides; fixed
#: per view number, so view 1 is the same clip whether 1 or 3 views are generated
VIEW_YAWS_DEG = (0.0, 45.0, -45.0, 90.0, -90.0)
CAMERA_DISTANCE = (2.5, 3.5)  # m from the performer
CAMERA_LATERAL_SD = 0.2  # m
FACING_SD_DEG = 5.0  # how squarely the performer faces the direction of the central camera
FIDGET_FRAMES = 6.0  # correlation time of the involuntary movements
GENERATOR = "dtmr-synthetic"

_BODY, _HABIT, _PERFORMANCE, _CAMERA = range(4)


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=key))


def _yaw_matrix(yaw: float) -> np.ndarray:
    c, s = np.cos(yaw), np.sin(yaw)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def _add_idle_motion(pose: Pose, style: Style, t: np.ndarray, rng: np.random.Generator) -> None:
    """Postural sway of the pelvis and small involuntary movements of the arms and head."""
    phases = rng.uniform(0.0, 2.0 * np.pi, size=2)
    jitter = style.fidget * smooth_noise(rng, t.size, 4, FIDGET_FRAMES)
    rate = 2.0 * np.pi * style.sway_rate
    pose.pelvis[:, 0] += style.sway * np.sin(rate * t + phases[0])
    pose.pelvis[:, 2] += 0.7 * style.sway * np.sin(0.8 * rate * t + phases[1])
    for side in range(2):
        pose.wrist[side] = swing(pose.wrist[side], jitter[:, side])
        pose.elbow[side] = swing(pose.elbow[side], jitter[:, side])
    pose.neck_rot[:, 0] += jitter[:, 2]
    pose.neck_rot[:, 2] += jitter[:, 3]


@dataclass(frozen=True)
class Habit:
    """A performer's own way of doing one action, the same in every repetition."""

    amplitude: float
    speed: float
    quirk: np.ndarray  # (3,) in [-1, 1], read by the action

    @classmethod
    def draw(cls, rng: np.random.Generator) -> "Habit":
        return cls(float(np.exp(0.1 * rng.standard_normal())), float(np.exp(0.07 * rng.standard_normal())),
                   rng.uniform(-1.0, 1.0, size=3))


def perform(identity: Identity, body: Body, action: int, habit: Habit, rng: np.random.Generator) -> tuple[Pose, float]:
    """One performance of `action` (1-based): its `Pose` and the performer's facing yaw."""
    spec = ACTIONS[action - 1]
    style = identity.style

    duration = np.exp(0.06 * rng.standard_normal())
    amplitude = style.amplitude * habit.amplitude * np.exp(0.05 * rng.standard_normal())
    lead_in, lead_out = rng.uniform(0.03, 0.15, size=2)
    warp = style.timing_warp + 0.05 * rng.standard_normal()
    facing = np.deg2rad(FACING_SD_DEG) * rng.standard_normal()
    frames = int(np.clip(round(spec.seconds * FPS * duration / (style.tempo * habit.speed)), MIN_FRAMES, MAX_FRAMES))

    u = np.arange(frames) / (frames - 1)
    u = u + warp * np.sin(2.0 * np.pi * u) / (2.0 * np.pi)  # monotone for |warp| < 1
    active = 1.0 - lead_in - lead_out
    t = np.arange(frames) / FPS
    ctx = ActionContext(
        identity=identity,
        body=body,
        p=np.clip((u - lead_in) / active, 0.0, 1.0),
        t=t,
        seconds=active * (frames - 1) / FPS,
        amplitude=float(amplitude),
        quirk=habit.quirk,
    )
    pose = neutral_pose(identity, body, frames)
    spec.perform(ctx, pose)
    _add_idle_motion(pose, style, t, rng)
    return pose, float(facing)


def _check_count(name: str, value, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low or (high and value > high):
        bounds = f"{low}..{high}" if high else f"at least {low}"
        raise DtmrError(f"synthetic data: {name} must be an integer {bounds}, got {value!r}")
    return int(value)


def generate_clips(
    subjects: int = 40,
    actions: int = 12,
    repetitions: int = 2,
    seed: int = 0,
    views: int = 1,
    noise: float = 1.0,
) -> list[Clip]:
    """Procedural NTU-25 clips: every subject performs every action `repetitions` times, each
    performance seen by `views` cameras at once (like NTU RGB+D's three), at the yaws `VIEW_YAWS_DEG`.

    Labels are 1-based like NTU's (subject 1..subjects, action 1..actions, view 1..views), repetitions
    0-based; `noise` scales the Kinect-like measurement noise (0 gives clean clips of the same motion).
    Clips come in the order subject, action, repetition, view; each is named ``S001A002R00V01``.
    """
    subjects = _check_count("subjects", subjects, 1)
    actions = _check_count("actions", actions, 1, len(ACTIONS))
    repetitions = _check_count("repetitions", repetitions, 1)
    views = _check_count("views", views, 1, len(VIEW_YAWS_DEG))
    seed = _check_count("seed", seed, 0)
    if not (isinstance(noise, numbers.Real) and np.isfinite(noise) and noise >= 0):
        raise DtmrError(f"synthetic data: noise must be a finite number >= 0, got {noise!r}")
    yaws = np.deg2rad(VIEW_YAWS_DEG)
    extra = {"generator": GENERATOR, "seed": str(seed)}
    clips = []
    for subject in range(1, subjects + 1):
        identity = make_identity(_rng(seed, _BODY, subject), subject)
        body = Body.of(identity)
        labels, poses, facings = [], [], []
        for action in range(1, actions + 1):
            habit = Habit.draw(_rng(seed, _HABIT, subject, action))
            for rep in range(repetitions):
                pose, facing = perform(identity, body, action, habit, _rng(seed, _PERFORMANCE, subject, action, rep))
                labels.append((action, rep))
                poses.append(pose)
                facings.append(facing)
        # one kinematics pass for all of this performer's clips (they share the body)
        motions = np.split(joints(Pose.concatenate(poses), body), np.cumsum([p.frames for p in poses])[:-1])
        for (action, rep), motion, facing in zip(labels, motions, facings):
            for view in range(1, views + 1):
                camera = _rng(seed, _CAMERA, subject, action, rep, view)
                offset = np.array([CAMERA_LATERAL_SD * camera.standard_normal(), 0.0, camera.uniform(*CAMERA_DISTANCE)])
                placed = np.einsum("tjk,ik->tji", motion, _yaw_matrix(yaws[view - 1] + facing)) + offset
                placed += noise * kinect_noise(camera, motion.shape[0])
                clips.append(
                    Clip(
                        joints=placed.astype(np.float32),
                        topology="ntu25",
                        fps=FPS,
                        subject=subject,
                        action=action,
                        view=view,
                        repetition=rep,
                        sample_name=f"S{subject:03d}A{action:03d}R{rep:02d}V{view:02d}",
                        extra=dict(extra),
                    )
                )
    return clips
