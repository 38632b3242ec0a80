"""Motion files of other tools, written by the tests from the formats' public specifications (never copied).

BVH (Biovision Hierarchy): `HIERARCHY`, a `ROOT` and nested `JOINT`s each with an `OFFSET` from its parent and
`CHANNELS`, `End Site`s at the leaves, then `MOTION`, `Frames:`, `Frame Time:` and one line of channel values per
frame; rotations in degrees, composed in the order listed. The same walking body (1.77 m, metres, y up, facing +z,
its left side at +x) is written with the joint names of the common rigs (Mixamo, CMU, MocapBank, Blender Rigify,
Unreal, Unity), with names no table knows, in any unit, y up or z up (Blender's world), with position channels on
the root only or on every joint (Blender's export).

MediaPipe world landmarks (`pose_world_landmarks`): 33 landmarks in metres, origin at the hips' midpoint, x to the
image's right, y down, z away from the camera.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

#: (key, parent key, offset in metres): a 1.77 m body standing, y up, facing +z, left at +x
BODY = [
    ("pelvis", None, (0.0, 0.95, 0.0)),
    ("spine_a", "pelvis", (0.0, 0.10, 0.0)),
    ("spine_b", "spine_a", (0.0, 0.15, 0.0)),
    ("chest", "spine_b", (0.0, 0.15, 0.0)),
    ("neck", "chest", (0.0, 0.12, 0.0)),
    ("head", "neck", (0.0, 0.10, 0.0)),
    *[item for s, x in (("l", 1.0), ("r", -1.0)) for item in (
        (f"{s}_clav", "chest", (0.03 * x, 0.08, 0.0)),
        (f"{s}_upper", f"{s}_clav", (0.15 * x, 0.0, 0.0)),
        (f"{s}_fore", f"{s}_upper", (0.28 * x, 0.0, 0.0)),
        (f"{s}_hand", f"{s}_fore", (0.25 * x, 0.0, 0.0)),
        (f"{s}_thigh", "pelvis", (0.09 * x, -0.05, 0.0)),
        (f"{s}_shin", f"{s}_thigh", (0.0, -0.43, 0.0)),
        (f"{s}_foot", f"{s}_shin", (0.0, -0.42, 0.0)),
        (f"{s}_toe", f"{s}_foot", (0.0, -0.05, 0.13)),
    )],
]
#: End Site offsets of the leaves (metres)
ENDS = {"head": (0.0, 0.18, 0.02), "l_hand": (0.08, 0.0, 0.0), "r_hand": (-0.08, 0.0, 0.0),
        "l_toe": (0.0, 0.0, 0.05), "r_toe": (0.0, 0.0, 0.05)}
LIMBS = ("clav", "upper", "fore", "hand", "thigh", "shin", "foot", "toe")

#: per rig: the names of the body's joints (left side; the right one follows from it) and its extra joints
RIG_NAMES = {
    "mixamo": dict(pelvis="mixamorig:Hips", spine_a="mixamorig:Spine", spine_b="mixamorig:Spine1",
                   chest="mixamorig:Spine2", neck="mixamorig:Neck", head="mixamorig:Head",
                   l_clav="mixamorig:LeftShoulder", l_upper="mixamorig:LeftArm", l_fore="mixamorig:LeftForeArm",
                   l_hand="mixamorig:LeftHand", l_thigh="mixamorig:LeftUpLeg", l_shin="mixamorig:LeftLeg",
                   l_foot="mixamorig:LeftFoot", l_toe="mixamorig:LeftToeBase"),
    "cmu": dict(pelvis="Hips", spine_a="LowerBack", spine_b="Spine", chest="Spine1", neck="Neck", head="Head",
                l_clav="LeftShoulder", l_upper="LeftArm", l_fore="LeftForeArm", l_hand="LeftHand",
                l_thigh="LeftUpLeg", l_shin="LeftLeg", l_foot="LeftFoot", l_toe="LeftToeBase"),
    "mocapbank": dict(pelvis="Hips", spine_a="Chest", spine_b="Chest2", chest="Chest3", neck="Neck", head="Head",
                      l_clav="LeftCollar", l_upper="LeftShoulder", l_fore="LeftElbow", l_hand="LeftWrist",
                      l_thigh="LeftHip", l_shin="LeftKnee", l_foot="LeftAnkle", l_toe="LeftToe"),
    "rigify": dict(pelvis="pelvis", spine_a="spine", spine_b="spine.001", chest="chest", neck="neck", head="head",
                   l_clav="shoulder.L", l_upper="upper_arm.L", l_fore="forearm.L", l_hand="hand.L",
                   l_thigh="thigh.L", l_shin="shin.L", l_foot="foot.L", l_toe="toe.L"),
    "unreal": dict(pelvis="pelvis", spine_a="spine_01", spine_b="spine_02", chest="spine_03", neck="neck_01",
                   head="head", l_clav="clavicle_l", l_upper="upperarm_l", l_fore="lowerarm_l", l_hand="hand_l",
                   l_thigh="thigh_l", l_shin="calf_l", l_foot="foot_l", l_toe="ball_l"),
    "unity": dict(pelvis="Hips", spine_a="Spine", spine_b="Chest", chest="UpperChest", neck="Neck", head="Head",
                  l_clav="LeftShoulder", l_upper="LeftUpperArm", l_fore="LeftLowerArm", l_hand="LeftHand",
                  l_thigh="LeftUpperLeg", l_shin="LeftLowerLeg", l_foot="LeftFoot", l_toe="LeftToes"),
    # no table knows these: read by the tree's shape
    "unknown": {key: f"bone{i:02d}" for i, (key, _, _) in enumerate(BODY)},
}
#: joints a real rig of that kind has beyond the body's: (name, parent key, offset), placed before the children
EXTRAS = {
    "mixamo": [("mixamorig:HeadTop_End", "head", (0.0, 0.18, 0.02))],
    "cmu": [("LThumb", "l_hand", (0.02, 0.0, 0.03)), ("RThumb", "r_hand", (-0.02, 0.0, 0.03))],
}
#: the NTU-25 joint each body key is, for joint maps of the unknown rig
NTU_OF_KEY = {"pelvis": "spine_base", "head": "head",
              **{f"{s}_{part}": f"{side}_{ntu}" for s, side in (("l", "left"), ("r", "right"))
                 for part, ntu in (("upper", "shoulder"), ("fore", "elbow"), ("hand", "wrist"), ("thigh", "hip"),
                                   ("shin", "knee"), ("foot", "ankle"), ("toe", "foot"))}}
#: y up -> z up (Blender's world): (x, y, z) -> (x, -z, y), a proper rotation
Y_TO_Z_UP = np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]])


def rig_names(rig: str) -> dict[str, str]:
    """Body key -> joint name, the right side's names made from the left's as the rig spells them."""
    names = dict(RIG_NAMES[rig])
    if rig == "unknown":
        return names
    for part in LIMBS:
        left = names[f"l_{part}"]
        right = left.replace("Left", "Right").replace(".L", ".R")
        names[f"r_{part}"] = right[:-2] + "_r" if right.endswith("_l") else right
    return names


def motion_angles(t: int) -> dict[str, tuple[float, float, float]]:
    """(Z, X, Y) rotation in degrees of each body key at frame t (y up): a walk with swinging arms."""
    phase = 2 * np.pi * t / 30.0
    swing = 25.0 * np.sin(phase)
    return {"pelvis": (0.0, 0.0, 5.0 * np.sin(phase)),
            "l_thigh": (0.0, swing, 0.0), "r_thigh": (0.0, -swing, 0.0),
            "l_shin": (0.0, 15.0 + 15.0 * np.sin(phase + 1), 0.0),
            "r_shin": (0.0, 15.0 - 15.0 * np.sin(phase + 1), 0.0),
            "l_upper": (-70.0, -swing, 0.0), "r_upper": (70.0, swing, 0.0),
            "l_fore": (0.0, 0.0, -20.0), "r_fore": (0.0, 0.0, 20.0), "neck": (0.0, 10.0 * np.sin(phase), 0.0)}


def write_rig_bvh(path: Path, rig: str, units_per_metre: float = 100.0, z_up: bool = False,
                  position_channels_everywhere: bool = False, frames: int = 30, turn_deg: float = 0.0) -> Path:
    """A BVH of the walking body under `rig`'s names. `turn_deg`: the whole body turned about the up axis."""
    names = rig_names(rig)
    frame = Y_TO_Z_UP if z_up else np.eye(3)
    turn = np.radians(turn_deg)
    yaw = np.array([[np.cos(turn), 0, np.sin(turn)], [0, 1, 0], [-np.sin(turn), 0, np.cos(turn)]])
    to_file = frame @ yaw

    def offset(values) -> np.ndarray:
        return to_file @ np.asarray(values, dtype=float) * units_per_metre

    children: dict[str | None, list] = {}
    for key, parent, off in BODY:
        children.setdefault(parent, []).append((key, names[key], off))
    extra_children: dict[str, list] = {}
    for name, parent, off in EXTRAS.get(rig, []):
        extra_children.setdefault(parent, []).append(name)
    # a joint's rotation channels as the file's axes name them: y up Z X Y, z up (Y->Z, Z->-Y) Y X Z
    rotation = "Yrotation Xrotation Zrotation" if z_up else "Zrotation Xrotation Yrotation"
    lines, channel_rows = ["HIERARCHY"], []

    def emit(key: str | None, name: str, off, depth: int, extra_offset=None) -> None:
        pad = "\t" * depth
        lines.append(f"{pad}{'ROOT' if depth == 0 else 'JOINT'} {name}")
        lines.append(f"{pad}{{")
        o = offset(off)
        lines.append(f"{pad}\tOFFSET {o[0]:.6f} {o[1]:.6f} {o[2]:.6f}")
        positions = depth == 0 or position_channels_everywhere
        lines.append(f"{pad}\tCHANNELS {6 if positions else 3} "
                     + ("Xposition Yposition Zposition " if positions else "") + rotation)
        channel_rows.append((key, positions, o))
        for child_key, child_name, child_off in children.get(key, []) if key else []:
            emit(child_key, child_name, child_off, depth + 1)
        extras = extra_children.get(key, []) if key else []
        for extra in extras:
            extra_off = next(off for n, _, off in EXTRAS[rig] if n == extra)
            emit(None, extra, extra_off, depth + 1)
        if key is None or (key in ENDS and not extras):
            end = offset(ENDS.get(key, (0.0, 0.05, 0.0)) if key else (0.0, 0.02, 0.0))
            lines.extend([f"{pad}\tEnd Site", f"{pad}\t{{",
                          f"{pad}\t\tOFFSET {end[0]:.6f} {end[1]:.6f} {end[2]:.6f}", f"{pad}\t}}"])
        lines.append(f"{pad}}}")

    root_key, root_name, root_off = children[None][0]
    if rig == "unreal":  # Unreal's skeletons stand on a root bone at the floor
        children["root"] = children.pop(None)
        root_key, root_name, root_off = "root", "root", (0.0, 0.0, 0.0)
    emit(root_key, root_name, root_off, 0)
    lines += ["MOTION", f"Frames: {frames}", f"Frame Time: {1 / 30:.6f}"]
    for t in range(frames):
        # a turned body stands still (its joints' rotations would have to be turned too)
        angles = motion_angles(t) if turn_deg == 0 else {}
        row: list[float] = []
        for k, (key, positions, o) in enumerate(channel_rows):
            if positions:
                walk = offset((0.02 * np.sin(2 * np.pi * t / 30.0), 0.0, 0.04 * t)) if k == 0 else 0.0
                row += list(o + walk)
            z, x, y = angles.get(key, (0.0, 0.0, 0.0))
            row += [-z, x, y] if z_up else [z, x, y]  # z up: Y = -(y-up Z), X = X, Z = y-up Y
        lines.append(" ".join(f"{v:.6f}" for v in row))
    path = Path(path)
    path.write_text("\n".join(lines) + "\n")
    return path


def write_joint_map(path: Path) -> Path:
    """A `--joint-map` for the unknown rig: its joint names -> NTU-25 joint names."""
    names = rig_names("unknown")
    path = Path(path)
    path.write_text(json.dumps({names[key]: ntu for key, ntu in NTU_OF_KEY.items()}, indent=1))
    return path


def write_no_legs_bvh(path: Path) -> Path:
    """A hierarchy of a spine, a head and two arms, no legs."""
    path = Path(path)
    path.write_text("""HIERARCHY
ROOT Base
{
\tOFFSET 0 100 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
\tJOINT Chest
\t{
\t\tOFFSET 0 40 0
\t\tCHANNELS 3 Zrotation Xrotation Yrotation
""" + "".join(f"""\t\tJOINT Arm{side}1
\t\t{{
\t\t\tOFFSET {x * 15} 5 0
\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\tJOINT Arm{side}2
\t\t\t{{
\t\t\t\tOFFSET {x * 28} 0 0
\t\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\t\tJOINT Arm{side}3
\t\t\t\t{{
\t\t\t\t\tOFFSET {x * 25} 0 0
\t\t\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\t\t\tEnd Site
\t\t\t\t\t{{
\t\t\t\t\t\tOFFSET {x * 8} 0 0
\t\t\t\t\t}}
\t\t\t\t}}
\t\t\t}}
\t\t}}
""" for side, x in (("A", 1), ("B", -1))) + """\t\tJOINT Top
\t\t{
\t\t\tOFFSET 0 20 0
\t\t\tCHANNELS 3 Zrotation Xrotation Yrotation
\t\t\tEnd Site
\t\t\t{
\t\t\t\tOFFSET 0 20 0
\t\t\t}
\t\t}
\t}
}
MOTION
Frames: 2
Frame Time: 0.033333
""" + "\n".join(" ".join(["0"] * 30) for _ in range(2)) + "\n")
    return path


def mediapipe_world_landmarks(frames: int = 20) -> np.ndarray:
    """(frames, 33, 3) MediaPipe world landmarks (metres, hips' midpoint at the origin, y down) of a synthetic body."""
    from dtmr.data import generate_clips
    from dtmr.skeleton import NTU25, get_topology

    ntu = generate_clips(subjects=1, actions=1, repetitions=1, seed=5)[0].joints[:frames].astype(np.float64)
    places = {"left_foot_index": "left_foot", "right_foot_index": "right_foot", "left_heel": "left_ankle",
              "right_heel": "right_ankle", "left_pinky": "left_hand", "right_pinky": "right_hand",
              "left_index": "left_hand_tip", "right_index": "right_hand_tip"}
    topo = get_topology("mediapipe33")
    out = np.empty((len(ntu), topo.num_joints, 3))
    for j, joint in enumerate(topo.joint_names):
        target = places.get(joint, joint if joint in NTU25.joint_names else "head")
        out[:, j] = ntu[:, NTU25.index(target)]
    hips = out[:, [topo.left_hip, topo.right_hip]].mean(axis=1, keepdims=True)
    # Kinect camera space (x left, y up, z forward) -> MediaPipe's (x right, y down, z forward)
    return ((out - hips) * np.array([-1.0, -1.0, 1.0])).astype(np.float32)


def upright_and_height(joints: np.ndarray) -> tuple[bool, float]:
    """(head above both ankles along +y in every frame, the body's median height from the lowest joint to the
    head's top), for NTU-25 joints; the head joint is the head's centre, so 0.1 m is added for its top."""
    head, ankles = joints[:, 3], joints[:, [14, 18]]
    upright = bool((head[:, 1] > np.nanmax(ankles[..., 1], axis=1)).all())
    height = float(np.median(head[:, 1] - np.nanmin(joints[..., 1], axis=1))) + 0.1
    return upright, height
