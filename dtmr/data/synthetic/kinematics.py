"""From a per-frame pose description to NTU-25 joints, by forward kinematics.

The performer frame: metres, x to the performer's right, y up, z backwards (the performer faces -z, i.e.
the camera of view 1), floor at y = 0, the standing pelvis above the origin. A `Pose` holds per-frame
channels: trunk angles, wrist targets relative to the shoulders (in the frame of the upper trunk),
ankle positions relative to their planted spots, and elbow/knee hints. Limbs are solved by two-bone
inverse kinematics, so every bone keeps its length exactly and a planted ankle stays exactly where it
was planted; `joints` then rebuilds the skeleton with `dtmr.skeleton.forward_kinematics`.

Trunk angles are (bend, lean, twist): bend forwards, lean to the right, twist to the left (radians).
Sides are indexed 0 = left, 1 = right, with x sign `SIDE_SIGN`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...skeleton import NTU25, forward_kinematics
from .identity import TOE_HEIGHT, Identity

SIDE_SIGN = (-1.0, 1.0)
SIDES = ("left", "right")
UP = np.array([0.0, 1.0, 0.0])
FORWARD = np.array([0.0, 0.0, -1.0])
#: direction the forearm bends to by default (forwards and a little up, relative to the upper arm)
FOREARM_BEND = np.array([0.0, 0.35, -1.0])
_SHOULDER_DROP = np.deg2rad(6.0)  # the Kinect shoulder joints sit a little below the spine-shoulder joint
_HIP_OFFSET = np.array([0.92, -0.38, 0.05])  # pelvis -> hip joint in the pelvis frame (x mirrored per side)
_THUMB_ANGLE = np.deg2rad(40.0)
_MAX_REACH = 0.998  # a leg never locks completely straight
_J = {name: j for j, name in enumerate(NTU25.joint_names)}


def normalized(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def rotation(angles: np.ndarray) -> np.ndarray:
    """(..., 3) (bend, lean, twist) -> (..., 3, 3) rotation Ry(twist) Rx(-bend) Rz(-lean), written out."""
    angles = np.asarray(angles, dtype=np.float64)
    cb, cl, ct = np.moveaxis(np.cos(angles), -1, 0)
    sb, sl, st = np.moveaxis(np.sin(angles), -1, 0)
    # rows of Rx(-bend) Rz(-lean): (cl, sl, 0), (-cb sl, cb cl, sb), (sb sl, -sb cl, cb); then the yaw
    out = np.empty(angles.shape[:-1] + (3, 3))
    out[..., 0, 0] = ct * cl + st * sb * sl
    out[..., 0, 1] = ct * sl - st * sb * cl
    out[..., 0, 2] = st * cb
    out[..., 1, 0] = -cb * sl
    out[..., 1, 1] = cb * cl
    out[..., 1, 2] = sb
    out[..., 2, 0] = -st * cl + ct * sb * sl
    out[..., 2, 1] = -st * sl - ct * sb * cl
    out[..., 2, 2] = ct * cb
    return out


def rotate(matrices: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """Apply (T, 3, 3) rotations to (..., T, 3) vectors."""
    return np.einsum("tij,...tj->...ti", matrices, vectors)


def swing(vectors: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rotate (..., T, 3) vectors about x by (T,) angles: a hanging limb swings forwards for angle > 0."""
    c, s = np.cos(angle), np.sin(angle)
    x, y, z = vectors[..., 0], vectors[..., 1], vectors[..., 2]
    return np.stack([x, c * y + s * z, c * z - s * y], -1)


def arm_direction(elevation, azimuth, side: int) -> np.ndarray:
    """Unit upper-arm direction: `elevation` from hanging (0) to overhead (pi), in the vertical plane
    turned `azimuth` from sideways (0) towards the front (pi/2); negative azimuth points behind."""
    elevation, azimuth = np.broadcast_arrays(np.asarray(elevation, float), np.asarray(azimuth, float))
    se = np.sin(elevation)
    return np.stack([SIDE_SIGN[side] * se * np.cos(azimuth), -np.cos(elevation), -se * np.sin(azimuth)], -1)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """np.cross for (..., 3) arrays without its per-call overhead."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


def _perpendicular(hint: np.ndarray, axis: np.ndarray) -> np.ndarray:
    """Unit part of `hint` orthogonal to the unit `axis`; some perpendicular where the hint is parallel."""
    perp = hint - np.sum(hint * axis, -1, keepdims=True) * axis
    norm = np.linalg.norm(perp, axis=-1, keepdims=True)
    weak = norm < 1e-6
    if weak.any():
        axis = np.broadcast_to(axis, perp.shape)
        spare = _cross(axis, np.array([1.0, 0.0, 0.0]))
        spare = np.where(np.linalg.norm(spare, axis=-1, keepdims=True) < 1e-3, _cross(axis, FORWARD), spare)
        perp = np.where(weak, normalized(spare), perp)
        norm = np.where(weak, 1.0, norm)
    return perp / norm


def bend_toward(direction: np.ndarray, toward: np.ndarray, angle) -> np.ndarray:
    """`direction` turned by `angle` towards `toward` (the elbow flexion of a forearm)."""
    angle = np.asarray(angle, float)[..., None]
    return np.cos(angle) * direction + np.sin(angle) * _perpendicular(np.broadcast_to(toward, direction.shape), direction)


def two_bone_ik(target: np.ndarray, hint: np.ndarray, upper, lower) -> tuple[np.ndarray, np.ndarray]:
    """Unit directions of the two bones (lengths `upper`, `lower`: floats or broadcastable arrays) of a limb
    whose end must reach `target` (relative to the limb's root), with the middle joint on the side of `hint`. A target out of reach is approached along its
    line (the limb straightens); one too close is pushed out to the nearest reachable distance."""
    dist = np.linalg.norm(target, axis=-1, keepdims=True)
    axis = target / np.maximum(dist, 1e-12)
    reach = np.clip(dist, abs(upper - lower) + 1e-6, (upper + lower) * (1.0 - 1e-9))
    cos_a = np.clip((upper**2 + reach**2 - lower**2) / (2.0 * upper * reach), -1.0, 1.0)
    first = cos_a * axis + np.sqrt(1.0 - cos_a**2) * _perpendicular(hint, axis)
    second = normalized(reach * axis - upper * first)
    return first, second


@dataclass(frozen=True)
class Body:
    """What the kinematics needs from an `Identity`, in the performer frame."""

    lengths: np.ndarray  # (24,) bone lengths
    arm: tuple[tuple[float, float], tuple[float, float]]  # (upper arm, forearm) per side
    leg: tuple[tuple[float, float], tuple[float, float]]  # (thigh, shank) per side
    hip: np.ndarray  # (2, 3) pelvis -> hip joint in the pelvis frame
    shoulder: np.ndarray  # (2, 3) spine-shoulder -> shoulder joint in the upper-trunk frame (at rest)
    planted: np.ndarray  # (2, 3) planted ankle positions
    foot: np.ndarray  # (2, 3) horizontal unit direction of each foot
    foot_pitch: np.ndarray  # (2,) downward angle of the planted ankle -> toe bone
    pelvis_height: float
    neck: float
    head: float

    @classmethod
    def of(cls, identity: Identity) -> "Body":
        style = identity.style
        length = identity.length
        hip = np.array([[s * _HIP_OFFSET[0], _HIP_OFFSET[1], _HIP_OFFSET[2]] for s in SIDE_SIGN])
        hip = normalized(hip) * np.array([[length("left_hip")], [length("right_hip")]])
        shoulder = np.array([[s * np.cos(_SHOULDER_DROP), -np.sin(_SHOULDER_DROP), 0.06] for s in SIDE_SIGN])
        shoulder = normalized(shoulder) * np.array([[length("left_shoulder")], [length("right_shoulder")]])
        ankle_height = identity.ankle_height
        planted = np.array(
            [
                [SIDE_SIGN[s] * (abs(hip[s, 0]) + style.stance), ankle_height, -style.foot_forward[s]]
                for s in range(2)
            ]
        )
        foot = np.array([[SIDE_SIGN[s] * np.sin(style.toe_out[s]), 0.0, -np.cos(style.toe_out[s])] for s in range(2)])
        foot_pitch = np.array(
            [np.arcsin(np.clip((ankle_height - TOE_HEIGHT) / length(f"{side}_foot"), 0.0, 1.0)) for side in SIDES]
        )
        leg = tuple((length(f"{side}_knee"), length(f"{side}_ankle")) for side in SIDES)
        # pelvis height at which the legs show the performer's resting knee flexion (the lower of the two)
        heights = []
        for s, (thigh, shank) in enumerate(leg):
            reach = np.sqrt(thigh**2 + shank**2 + 2 * thigh * shank * np.cos(style.knee_bend))
            horizontal = np.hypot(planted[s, 0] - hip[s, 0] - style.weight_shift, planted[s, 2] - hip[s, 2])
            heights.append(ankle_height + np.sqrt(reach**2 - horizontal**2) - hip[s, 1])
        return cls(
            lengths=identity.bone_lengths,
            arm=tuple((length(f"{side}_elbow"), length(f"{side}_wrist")) for side in SIDES),
            leg=leg,
            hip=hip,
            shoulder=shoulder,
            planted=planted,
            foot=foot,
            foot_pitch=foot_pitch,
            pelvis_height=float(min(heights)),
            neck=length("neck"),
            head=length("head"),
        )

    @property
    def arm_lengths(self) -> np.ndarray:
        """(2, 2): (upper arm, forearm) of the left and right arm."""
        return np.array(self.arm)

    @property
    def leg_lengths(self) -> np.ndarray:
        """(2, 2): (thigh, shank) of the left and right leg."""
        return np.array(self.leg)

    def arm_pose(self, side: int, elevation, azimuth, elbow, bend=FOREARM_BEND) -> tuple[np.ndarray, np.ndarray]:
        """(wrist target, elbow hint) of an arm given by joint angles (see `arm_direction`)."""
        upper, fore = self.arm[side]
        u = arm_direction(elevation, azimuth, side)
        f = bend_toward(u, bend, elbow)
        return upper * u + fore * f, u


@dataclass
class Pose:
    """Per-frame channels of a performance (T frames); see the module docstring for the frames."""

    pelvis: np.ndarray  # (T, 3) pelvis offset from the standing position
    pelvis_rot: np.ndarray  # (T, 3) bend, lean, twist of the pelvis
    spine_rot: np.ndarray  # (T, 3) of the spine relative to the pelvis (half per spine bone)
    neck_rot: np.ndarray  # (T, 3) of the head relative to the upper trunk (half per neck bone)
    wrist: np.ndarray  # (2, T, 3) wrist relative to the shoulder, upper-trunk frame
    elbow: np.ndarray  # (2, T, 3) side the elbow points to, upper-trunk frame
    hand: np.ndarray  # (2, T, 3) wrist bend: added to the forearm direction to give the hand's (zero: straight)
    ankle: np.ndarray  # (2, T, 3) ankle offset from its planted spot, performer frame
    foot_pitch: np.ndarray  # (2, T) extra downward pitch of the foot (toes pointing)
    shrug: np.ndarray  # (2, T) shoulder elevation

    @property
    def frames(self) -> int:
        return self.pelvis.shape[0]

    @classmethod
    def concatenate(cls, poses: list["Pose"]) -> "Pose":
        """The poses one after the other in time (one kinematics call for many performances)."""
        return cls(**{name: np.concatenate([getattr(p, name) for p in poses], axis=axis)
                      for name, axis in _TIME_AXIS.items()})


#: the time axis of each `Pose` field
_TIME_AXIS = {"pelvis": 0, "pelvis_rot": 0, "spine_rot": 0, "neck_rot": 0, "wrist": 1, "elbow": 1, "hand": 1,
              "ankle": 1, "foot_pitch": 1, "shrug": 1}


def neutral_pose(identity: Identity, body: Body, frames: int) -> Pose:
    """The performer standing at rest in their own posture."""
    style = identity.style
    ones = np.ones((frames, 1))
    arms = [body.arm_pose(s, style.arm_elevation[s], style.arm_azimuth[s], style.elbow_bend[s]) for s in range(2)]
    return Pose(
        pelvis=ones * [style.weight_shift, 0.0, 0.0],
        pelvis_rot=ones * [0.3 * style.trunk_bend, 0.5 * style.trunk_lean, 0.0],
        spine_rot=ones * [0.7 * style.trunk_bend, 0.5 * style.trunk_lean, 0.0],
        neck_rot=ones * [style.head_bend, style.head_lean, 0.0],
        wrist=np.stack([np.broadcast_to(w, (frames, 3)) for w, _ in arms]),
        elbow=np.stack([np.broadcast_to(h, (frames, 3)) for _, h in arms]),
        hand=np.zeros((2, frames, 3)),
        ankle=np.zeros((2, frames, 3)),
        foot_pitch=np.zeros((2, frames)),
        shrug=np.array(style.shrug)[:, None] * np.ones((2, frames)),
    )


def _side_joints(part: str) -> list[int]:
    return [_J[f"{side}_{part}"] for side in SIDES]


def joints(pose: Pose, body: Body) -> np.ndarray:
    """(T, 25, 3) NTU-25 joints of the pose in the performer frame (float64)."""
    frames = pose.frames
    pelvis_r = rotation(pose.pelvis_rot)
    lower_r = pelvis_r @ rotation(0.5 * pose.spine_rot)
    upper_r = lower_r @ rotation(0.5 * pose.spine_rot)
    neck_r = upper_r @ rotation(0.5 * pose.neck_rot)
    head_r = neck_r @ rotation(0.5 * pose.neck_rot)
    dirs = np.zeros((frames, NTU25.num_joints, 3))
    dirs[:, _J["spine_mid"]] = lower_r[..., 1]
    dirs[:, _J["spine_shoulder"]] = upper_r[..., 1]
    dirs[:, _J["neck"]] = neck_r[..., 1]
    dirs[:, _J["head"]] = head_r[..., 1]
    sign = np.array(SIDE_SIGN)[:, None]

    drop = pose.shrug - _SHOULDER_DROP
    shoulder = np.stack([sign * np.cos(drop), np.sin(drop), np.full_like(drop, 0.06)], -1)
    dirs[:, _side_joints("shoulder")] = np.swapaxes(rotate(upper_r, normalized(shoulder)), 0, 1)
    hip_dir = np.broadcast_to(normalized(body.hip)[:, None], (2, frames, 3))
    dirs[:, _side_joints("hip")] = np.swapaxes(rotate(pelvis_r, hip_dir), 0, 1)

    upper_arm, forearm = two_bone_ik(pose.wrist, pose.elbow, body.arm_lengths[:, 0, None, None],
                                     body.arm_lengths[:, 1, None, None])
    hand = normalized(forearm + pose.hand)
    thumb_side = _perpendicular(-upper_arm + 0.3 * FORWARD, hand)
    thumb = np.cos(_THUMB_ANGLE) * hand + np.sin(_THUMB_ANGLE) * thumb_side
    for part, direction in (("elbow", upper_arm), ("wrist", forearm), ("hand", hand),
                            ("hand_tip", hand), ("thumb", thumb)):
        dirs[:, _side_joints(part)] = np.swapaxes(rotate(upper_r, direction), 0, 1)

    root = pose.pelvis + [0.0, body.pelvis_height, 0.0]
    hips = root + rotate(pelvis_r, np.broadcast_to(body.hip[:, None], (2, frames, 3)))
    ankles = body.planted[:, None] + pose.ankle
    # lower the pelvis where a leg would otherwise have to over-extend
    leg_reach = _MAX_REACH * body.leg_lengths.sum(axis=1)[:, None]
    horizontal2 = (hips[..., 0] - ankles[..., 0]) ** 2 + (hips[..., 2] - ankles[..., 2]) ** 2
    highest = ankles[..., 1] + np.sqrt(np.maximum(leg_reach**2 - horizontal2, 0.0))
    over = np.maximum(np.max(hips[..., 1] - highest, axis=0), 0.0)
    root[:, 1] -= over
    hips[..., 1] -= over
    knee_hint = np.broadcast_to((body.foot + sign * [0.15, 0.0, 0.0])[:, None], (2, frames, 3))
    thigh, shank = two_bone_ik(ankles - hips, knee_hint, body.leg_lengths[:, 0, None, None],
                               body.leg_lengths[:, 1, None, None])
    dirs[:, _side_joints("knee")] = np.swapaxes(thigh, 0, 1)
    dirs[:, _side_joints("ankle")] = np.swapaxes(shank, 0, 1)
    pitch = (body.foot_pitch[:, None] + pose.foot_pitch)[..., None]
    dirs[:, _side_joints("foot")] = np.swapaxes(np.cos(pitch) * body.foot[:, None] - np.sin(pitch) * UP, 0, 1)

    return forward_kinematics(root, dirs[:, NTU25.bone_children], body.lengths, NTU25)
