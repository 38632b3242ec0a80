"""The synthetic actions: each one edits a performer's neutral `Pose`, frame by frame, as a function of
the phase of the movement.

An action sees an `ActionContext`: the phase `p` (0 -> 1 over the movement, 0 before and 1 after it),
the time in seconds, the performer's body and style, the amplitude of this performance, and three
numbers in [-1, 1] (`quirk`) that stand for the performer's own way of doing this action (how high the
hand goes, one punch or two, ...). Feet that the action does not move keep a zero ankle offset, so they
stay planted. Amplitudes are scaled by `ctx.amplitude`; oscillation counts follow the performer's
rates times the movement's duration, so a quicker performer waves more often in the same time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .envelopes import keyframes, pulse
from .identity import Identity
from .kinematics import FOREARM_BEND, SIDE_SIGN, Body, Pose, normalized, swing

UP_BEND = np.array([0.0, 1.0, -0.3])  # forearm folded upwards (fist to the chin, waving hand)


@dataclass(frozen=True)
class ActionContext:
    identity: Identity
    body: Body
    p: np.ndarray  # (T,) phase of the movement
    t: np.ndarray  # (T,) seconds since the first frame
    seconds: float  # duration of the movement itself
    amplitude: float
    quirk: np.ndarray  # (3,) in [-1, 1]

    @property
    def style(self):
        return self.identity.style

    @property
    def dominant(self) -> int:
        """Side index (0 left, 1 right) of the dominant hand and foot."""
        return 1 if self.style.dominant > 0 else 0

    @property
    def scale(self) -> float:
        """Body size relative to a 1.70 m performer (distances of the actions scale with it)."""
        return self.identity.height / 1.70

    def rest_arm(self, side: int) -> np.ndarray:
        """(elevation, azimuth, elbow) of the resting arm."""
        s = self.style
        return np.array([s.arm_elevation[side], s.arm_azimuth[side], s.elbow_bend[side]])


def set_arm(pose: Pose, body: Body, side: int, angles: np.ndarray, bend=FOREARM_BEND) -> None:
    """Put an arm at per-frame (T, 3) angles (elevation, azimuth, elbow)."""
    pose.wrist[side], pose.elbow[side] = body.arm_pose(side, angles[:, 0], angles[:, 1], angles[:, 2], bend)


def blend_arm(pose: Pose, side: int, wrist: np.ndarray, elbow: np.ndarray, weight: np.ndarray) -> None:
    """Move an arm towards a wrist target and elbow hint, by per-frame weights in [0, 1]."""
    w = weight[:, None]
    pose.wrist[side] = (1.0 - w) * pose.wrist[side] + w * wrist
    pose.elbow[side] = normalized((1.0 - w) * pose.elbow[side] + w * np.broadcast_to(elbow, pose.wrist[side].shape))


def _lerp(a, b, w: np.ndarray) -> np.ndarray:
    w = w[:, None] if np.ndim(a) or np.ndim(b) else w
    return (1.0 - w) * a + w * b


def _head_point(ctx: ActionContext, up: float, forward: float, sideways: float = 0.0) -> np.ndarray:
    """A point of the head (spine-shoulder frame): `up` of the head bone above the neck, offsets in body scale."""
    body = ctx.body
    return np.array([sideways * ctx.scale, body.neck + up * body.head, -forward * ctx.scale])


def walk_in_place(ctx: ActionContext, pose: Pose) -> None:
    s, k = ctx.style, ctx.style.sharpness
    d = ctx.dominant
    o = 1 - d
    steps = max(2, round(s.cadence * s.tempo * ctx.seconds))
    phase = np.pi * steps * ctx.p
    env = pulse(ctx.p, (0.0, 0.1), (0.9, 1.0), k)
    lift_height = float(np.clip(0.10 * ctx.amplitude * ctx.scale, 0.05, 0.2))
    wave = env * np.sin(phase)
    lift = np.empty((2, wave.size))
    lift[d] = np.maximum(wave, 0.0) ** 1.5  # the dominant foot leads
    lift[o] = np.maximum(-wave, 0.0) ** 1.5
    pose.ankle[..., 1] += lift_height * lift
    pose.ankle[..., 2] -= 0.3 * lift_height * lift
    pose.foot_pitch += 0.35 * lift
    # weight over the standing foot; trunk follows it
    pose.pelvis[:, 0] += SIDE_SIGN[o] * 0.03 * ctx.amplitude * wave
    pose.pelvis[:, 1] += 0.01 * ctx.amplitude * (np.abs(wave) - env / 2)
    pose.pelvis_rot[:, 1] += SIDE_SIGN[o] * np.deg2rad(3.0) * ctx.amplitude * wave
    arm_swing = np.deg2rad(22.0) * s.arm_swing * ctx.amplitude
    pose.spine_rot[:, 2] += SIDE_SIGN[d] * np.deg2rad(4.0) * s.arm_swing * wave
    for side, sign in ((d, -1.0), (o, s.off_hand)):  # each arm swings against the leg on its side
        angle = sign * arm_swing * wave
        pose.wrist[side] = swing(pose.wrist[side], angle)
        pose.elbow[side] = swing(pose.elbow[side], angle)


def wave(ctx: ActionContext, pose: Pose) -> None:
    s, k, q = ctx.style, ctx.style.sharpness, ctx.quirk
    d = ctx.dominant
    raised = pulse(ctx.p, (0.0, 0.22), (0.78, 1.0), k)
    waving = pulse(ctx.p, (0.15, 0.3), (0.7, 0.85), k)
    cycles = max(1.5, s.gesture_rate * s.tempo * ctx.seconds * 0.56)
    swing_angle = 0.45 * ctx.amplitude * waving * np.sin(2.0 * np.pi * cycles * (ctx.p - 0.22) / 0.56)
    top = np.array([1.75 + 0.2 * q[0], 0.5 + 0.3 * q[1], 1.5 + 0.2 * q[2]])
    angles = _lerp(ctx.rest_arm(d), top, raised)
    bend = np.stack([SIDE_SIGN[d] * np.sin(swing_angle), np.cos(swing_angle), np.full_like(swing_angle, -0.3)], -1)
    set_arm(pose, ctx.body, d, angles, normalized(_lerp(FOREARM_BEND, bend, raised)))
    pose.spine_rot[:, 1] -= SIDE_SIGN[d] * np.deg2rad(2.0) * raised


def clap(ctx: ActionContext, pose: Pose) -> None:
    s, k, q = ctx.style, ctx.style.sharpness, ctx.quirk
    together = pulse(ctx.p, (0.0, 0.2), (0.8, 1.0), k)
    claps = max(2, round(s.gesture_rate * s.tempo * ctx.seconds * 0.5))
    c = np.clip((ctx.p - 0.2) / 0.6, 0.0, 1.0)
    gap = 0.10 * ctx.amplitude * (0.5 + 0.5 * np.cos(2.0 * np.pi * claps * c))
    centre = np.array([0.0, -0.22 * ctx.scale, -(0.28 + 0.05 * q[0]) * ctx.scale])
    for side, sign in enumerate(SIDE_SIGN):
        wrist = centre + np.stack([sign * (0.03 + gap / 2), np.zeros_like(gap), np.zeros_like(gap)], -1)
        blend_arm(pose, side, wrist - ctx.body.shoulder[side], np.array([0.6 * sign, -1.0, 0.3]), together)
        pose.hand[side] += together[:, None] * [0.0, 0.6, -1.5]  # hands point forwards, palms together
    pose.neck_rot[:, 0] += np.deg2rad(8.0) * together * (1 + q[1]) / 2  # looks at the hands


def jump(ctx: ActionContext, pose: Pose) -> None:
    k, q, amp = ctx.style.sharpness, ctx.quirk, ctx.amplitude
    height = (0.06 + 0.07 * (1 + q[0]) * amp) * ctx.scale
    crouch = (0.10 + 0.03 * q[1]) * amp * ctx.scale
    times = [0.0, 0.22, 0.36, 0.48, 0.60, 0.72, 1.0]
    pose.pelvis[:, 1] += keyframes(ctx.p, times, [0.0, -crouch, 0.02, height + 0.03, 0.0, -0.7 * crouch, 0.0], k)
    feet = keyframes(ctx.p, times, [0.0, 0.0, 0.0, height, 0.0, 0.0, 0.0], k)
    pose.ankle[..., 1] += feet
    pose.foot_pitch += keyframes(ctx.p, times, [0.0, 0.0, 0.0, 0.4, 0.0, 0.0, 0.0], k)
    bend = keyframes(ctx.p, times, [0.0, 0.35 * amp, 0.05, 0.0, 0.1, 0.25 * amp, 0.0], k)
    pose.pelvis_rot[:, 0] += 0.4 * bend
    pose.spine_rot[:, 0] += 0.6 * bend
    reach = min(amp, 1.2)
    for side in range(2):
        rest = ctx.rest_arm(side)
        keys = [rest, [-0.6 * reach, 1.35, 0.3], [2.3 * reach, 1.35, 0.4], [2.1 * reach, 1.35, 0.3],
                [1.0, 1.35, 0.6], [0.5, 1.35, 0.5], rest]
        set_arm(pose, ctx.body, side, keyframes(ctx.p, times, keys, k))


def squat(ctx: ActionContext, pose: Pose) -> None:
    k, q, amp = ctx.style.sharpness, ctx.quirk, ctx.amplitude
    leg = sum(ctx.body.leg[0])
    depth = min((0.28 + 0.07 * q[0]) * amp, 0.45) * leg
    lean = (0.45 + 0.15 * q[1]) * amp
    times = [0.0, 0.38, 0.62, 1.0]
    down = keyframes(ctx.p, times, [0.0, 1.0, 0.95, 0.0], k)
    pose.pelvis[:, 1] -= depth * down
    pose.pelvis[:, 2] += 0.35 * depth * down  # hips go back, heels stay down
    pose.pelvis_rot[:, 0] += 0.4 * lean * down
    pose.spine_rot[:, 0] += 0.6 * lean * down
    pose.neck_rot[:, 0] -= 0.3 * down  # keeps looking ahead
    for side in range(2):
        rest = ctx.rest_arm(side)
        forward = np.array([1.55 - lean + 0.15 * q[2], 1.45, 0.2])  # about horizontal in the world
        set_arm(pose, ctx.body, side, _lerp(rest, forward, down))


def kick(ctx: ActionContext, pose: Pose) -> None:
    k, amp = ctx.style.sharpness, ctx.amplitude
    d = ctx.dominant
    o = 1 - d
    leg = sum(ctx.body.leg[d])
    times = [0.0, 0.2, 0.38, 0.52, 0.66, 0.82, 1.0]
    shift = SIDE_SIGN[o] * 0.06 * ctx.scale
    pose.pelvis[:, 0] += keyframes(ctx.p, times, [0.0, shift, shift, shift, shift, 0.0, 0.0], k)
    pose.pelvis_rot[:, 1] += keyframes(ctx.p, times, [0.0, 0.04, 0.04, 0.04, 0.04, 0.0, 0.0], k) * SIDE_SIGN[o]
    ankle = np.array([[0, 0, 0], [0, 0, 0], [0, 0.15, 0.12], [0, 0.30 * amp, -0.45 * amp],
                      [0, 0.12, -0.08], [0, 0, 0], [0, 0, 0]]) * leg
    pose.ankle[d] += keyframes(ctx.p, times, ankle, k)
    pose.foot_pitch[d] += keyframes(ctx.p, times, [0.0, 0.0, 0.5, 0.6, 0.2, 0.0, 0.0], k)
    bend = keyframes(ctx.p, times, [0.0, 0.0, -0.05, -0.15 * amp, -0.05, 0.0, 0.0], k)
    pose.pelvis_rot[:, 0] += 0.5 * bend
    pose.spine_rot[:, 0] += 0.5 * bend
    counter = keyframes(ctx.p, times, [0.0, 0.0, -0.2, 0.4 * amp, 0.1, 0.0, 0.0], k)
    for side, sign in ((o, 1.0), (d, -0.7)):  # arms swing against the kicking leg
        pose.wrist[side] = swing(pose.wrist[side], sign * counter)
        pose.elbow[side] = swing(pose.elbow[side], sign * counter)


def punch(ctx: ActionContext, pose: Pose) -> None:
    k, q, amp = ctx.style.sharpness, ctx.quirk, ctx.amplitude
    d = ctx.dominant
    guard = pulse(ctx.p, (0.0, 0.18), (0.82, 1.0), k)
    centres = (0.5,) if q[0] < 0 else (0.38, 0.62)
    strike = sum(pulse(ctx.p, (c - 0.07, c - 0.01), (c + 0.03, c + 0.12)) for c in centres)
    guard_angles = np.array([0.55, 1.3, 2.0])
    bend = normalized(_lerp(FOREARM_BEND, UP_BEND, guard))
    for side in range(2):
        angles = _lerp(ctx.rest_arm(side), guard_angles, guard)
        if side == d:
            angles = _lerp(angles, np.array([1.50 + 0.1 * q[1], 1.45 + 0.1 * q[2], 0.08]), strike)
        set_arm(pose, ctx.body, side, angles, bend)
    pose.spine_rot[:, 2] += SIDE_SIGN[d] * 0.25 * amp * strike
    pose.pelvis_rot[:, 2] += SIDE_SIGN[d] * 0.08 * amp * strike
    pose.spine_rot[:, 0] += 0.05 * guard


def bow(ctx: ActionContext, pose: Pose) -> None:
    k, q = ctx.style.sharpness, ctx.quirk
    depth = (0.55 + 0.15 * q[0]) * ctx.amplitude
    bowed = pulse(ctx.p, (0.05, 0.4), (0.6, 0.95), k)
    pose.pelvis_rot[:, 0] += 0.35 * depth * bowed
    pose.spine_rot[:, 0] += 0.65 * depth * bowed
    pose.neck_rot[:, 0] += 0.25 * depth * bowed * (1 + q[1]) / 2
    pose.pelvis[:, 2] += 0.12 * depth * bowed * ctx.scale  # hips back, for balance
    for side in range(2):  # the arms keep hanging straight down in the world
        pose.wrist[side] = swing(pose.wrist[side], depth * bowed)
        pose.elbow[side] = swing(pose.elbow[side], depth * bowed)


def raise_arms(ctx: ActionContext, pose: Pose) -> None:
    s, k, q, amp = ctx.style, ctx.style.sharpness, ctx.quirk, ctx.amplitude
    lag = 0.03 * (1.0 - s.off_hand) / 0.25
    top = np.array([min(2.95, 2.55 + 0.35 * amp), 0.25 + 0.25 * (1 + q[0]), 0.1 + 0.075 * (1 + q[1])])
    for side in range(2):
        delay = 0.0 if side == ctx.dominant else lag
        up = pulse(ctx.p, (0.02 + delay, 0.38 + delay), (0.62 + delay, 0.98), k)
        set_arm(pose, ctx.body, side, _lerp(ctx.rest_arm(side), top, up))
    held = pulse(ctx.p, (0.35, 0.42), (0.58, 0.65), k)
    if q[2] > 0:  # cheering: the raised arms pump
        pump = 0.15 * amp * held * np.sin(2.0 * np.pi * 1.5 * s.tempo * ctx.t)
        pose.wrist = swing(pose.wrist, pump)
        pose.elbow = swing(pose.elbow, pump)
    up = pulse(ctx.p, (0.02, 0.38), (0.62, 0.98), k)
    pose.spine_rot[:, 0] -= 0.05 * up
    pose.neck_rot[:, 0] -= 0.15 * up


def phone_call(ctx: ActionContext, pose: Pose) -> None:
    s, k, q = ctx.style, ctx.style.sharpness, ctx.quirk
    d = ctx.dominant
    sign = SIDE_SIGN[d]
    at_ear = pulse(ctx.p, (0.02, 0.28), (0.78, 0.98), k)
    ear = _head_point(ctx, 0.85, 0.0, sign * 0.075)
    wrist = ear + np.array([sign * 0.02, -0.13, -0.05 - 0.02 * q[0]]) * ctx.scale - ctx.body.shoulder[d]
    blend_arm(pose, d, wrist, np.array([sign * 0.6, -1.0, 0.1 * q[1]]), at_ear)
    pose.neck_rot[:, 1] += sign * 0.12 * at_ear
    pose.neck_rot[:, 0] += 0.05 * ctx.amplitude * at_ear * np.sin(2.0 * np.pi * 0.8 * s.tempo * ctx.t)


def drink(ctx: ActionContext, pose: Pose) -> None:
    k, q = ctx.style.sharpness, ctx.quirk
    d = ctx.dominant
    sign = SIDE_SIGN[d]
    at_mouth = pulse(ctx.p, (0.02, 0.3), (0.72, 0.97), k)
    sip = pulse(ctx.p, (0.3, 0.42), (0.55, 0.68), k)
    mouth = _head_point(ctx, 0.55, 0.10)
    cup = np.array([sign * 0.03, -0.09, -0.07 - 0.02 * q[0]]) * ctx.scale
    wrist = mouth + cup - ctx.body.shoulder[d] + sip[:, None] * [0.0, 0.04, 0.02]
    blend_arm(pose, d, wrist, np.array([sign * 0.4, -1.0, -0.2]), at_mouth)
    pose.neck_rot[:, 0] -= (0.35 + 0.1 * q[1]) * ctx.amplitude * sip  # head tilts back


def throw(ctx: ActionContext, pose: Pose) -> None:
    k, amp = ctx.style.sharpness, ctx.amplitude
    d = ctx.dominant
    o = 1 - d
    sign = SIDE_SIGN[d]
    times = [0.0, 0.18, 0.42, 0.55, 0.66, 0.85, 1.0]
    rest = ctx.rest_arm(d)
    throwing = [rest, [1.2, 0.2, 0.6], [2.2, -0.6, 1.6], [2.4, 0.8, 0.9], [1.2, 1.6, 0.15], [0.6, 1.5, 0.3], rest]
    bends = [FOREARM_BEND, UP_BEND, [0.0, 1.0, 0.3], UP_BEND, FOREARM_BEND, FOREARM_BEND, FOREARM_BEND]
    set_arm(pose, ctx.body, d, keyframes(ctx.p, times, throwing, k), normalized(keyframes(ctx.p, times, bends, k)))
    rest = ctx.rest_arm(o)
    balance = [rest, [0.8, 1.2, 0.4], [1.4, 1.3, 0.5], [1.2, 1.2, 0.6], [0.6, 0.6, 0.8], [0.4, 0.3, 0.5], rest]
    set_arm(pose, ctx.body, o, keyframes(ctx.p, times, balance, k))
    twist = sign * amp * keyframes(ctx.p, times, [0.0, -0.1, -0.4, 0.0, 0.35, 0.1, 0.0], k)
    pose.spine_rot[:, 2] += twist
    pose.pelvis_rot[:, 2] += 0.4 * twist
    pose.spine_rot[:, 0] += amp * keyframes(ctx.p, times, [0.0, 0.0, -0.1, 0.0, 0.3, 0.1, 0.0], k)
    pose.pelvis[:, 2] += amp * ctx.scale * keyframes(ctx.p, times, [0.0, 0.0, 0.03, 0.0, -0.04, -0.01, 0.0], k)


@dataclass(frozen=True)
class Action:
    name: str
    #: typical duration of a performance (seconds) at tempo 1
    seconds: float
    perform: Callable[[ActionContext, Pose], None]


#: action number k (1-based, like NTU's A001) is ACTIONS[k - 1]
ACTIONS: tuple[Action, ...] = (
    Action("walk in place", 2.4, walk_in_place),
    Action("wave", 2.0, wave),
    Action("clap", 2.0, clap),
    Action("jump", 1.8, jump),
    Action("squat", 2.6, squat),
    Action("kick", 1.7, kick),
    Action("punch", 1.6, punch),
    Action("bow", 2.4, bow),
    Action("raise arms", 2.4, raise_arms),
    Action("phone call", 2.6, phone_call),
    Action("drink", 2.4, drink),
    Action("throw", 1.9, throw),
)

SYNTHETIC_ACTION_NAMES: list[str] = [a.name for a in ACTIONS]
