"""NTU-25 joints from the points of a C3D file: joint centres when the file has them (Plug-in Gait's model
outputs and common lab names), else computed from Plug-in Gait's markers (lower body or full body).

Point labels are compared without a `Subject:` prefix (Vicon Nexus writes one) and case-insensitively; the
first of two points of the same name counts. For each joint, the first rule whose points the file has:

| NTU-25 joint | joint centre | from markers |
|---|---|---|
| hips | `LHJC`, `LFEP` | Harrington et al. 2007 from `LASI`, `RASI` and `LPSI`+`RPSI` (or `SACR`) |
| knees | `LKJC`, `LFEO` | midpoint of `LKNE` and a medial marker (`LKNM`, `LMKNE`, `LKNEM`), else `LKNE` |
| ankles | `LAJC`, `LTIO` | midpoint of `LANK` and a medial marker (`LMED`, `LMMA`, `LANKM`, `LMANK`), else `LANK` |
| feet | | `LTOE` |
| shoulders | `LSJC`, `LCLO` | `LSHO` |
| elbows | `LEJC`, `LHUO` | midpoint of `LELB` and `LMEL` / `LELM` / `LELBM`, else `LELB` |
| wrists | `LWJC`, `LRAO` | midpoint of `LWRA` and `LWRB`, else either |
| hands | | `LFIN` |
| head | | mean of `LFHD`, `RFHD`, `LBHD`, `RBHD`; else `HEDO` |
| spine shoulder | | midpoint of `C7` and `CLAV`, else of the shoulders |
| spine base, spine mid, neck | | midpoints: the hips; spine base and spine shoulder; spine shoulder and head |

(`R...` likewise.) Hand tips and thumbs are never measured by these marker sets: NaN. The hips, knees and
ankles are required; a file without them is refused with one line naming what is missing. Joints the
file cannot give (the upper body of a lower-body set) are NaN.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..skeleton import NTU25
from .c3d_file import C3DPoints

#: Harrington et al. (J Biomech 40(3), 2007) hip centre regression, in the pelvis frame (origin: midpoint of
#: the ASIS; x anterior, y superior, z lateral), from pelvis width PW (ASIS to ASIS) and depth PD (mid-ASIS to
#: mid-PSIS): x = -0.24 PD - 9.9 mm, y = -0.30 PW - 10.9 mm, z = 0.33 PW + 7.3 mm
HARRINGTON = {"x": (-0.24, -0.0099), "y": (-0.30, -0.0109), "z": (0.33, 0.0073)}
REQUIRED = ("left_hip", "right_hip", "left_knee", "right_knee", "left_ankle", "right_ankle")
SIDES = {"left": "L", "right": "R"}
_CENTRES = {"hip": ("HJC", "FEP"), "knee": ("KJC", "FEO"), "ankle": ("AJC", "TIO"), "shoulder": ("SJC", "CLO"),
            "elbow": ("EJC", "HUO"), "wrist": ("WJC", "RAO")}
#: (lateral marker, medial markers): the joint is their midpoint, or the lateral marker alone
_PAIRS = {"knee": ("KNE", ("KNM", "MKNE", "KNEM")), "ankle": ("ANK", ("MED", "MMA", "ANKM", "MANK")),
          "elbow": ("ELB", ("MEL", "ELM", "ELBM")), "wrist": ("WRA", ("WRB",)), "shoulder": ("SHO", ())}
_SINGLE = {"foot": "TOE", "hand": "FIN"}
#: what a refused file lacks, as the error names it
_NEEDS = {"hip": "{s}HJC or {s}FEP, or the markers LASI, RASI and LPSI, RPSI or SACR",
          "knee": "{s}KJC, {s}FEO or {s}KNE", "ankle": "{s}AJC, {s}TIO or {s}ANK"}


class _Points:
    """The file's points by normalized label: `get("LASI")` is (T, 3) metres or None when absent or never valid."""

    def __init__(self, found: C3DPoints):
        self.by_name: dict[str, np.ndarray] = {}
        for index, label in enumerate(found.labels):
            name = label.rsplit(":", 1)[-1].strip().upper()
            if name and name not in self.by_name and np.isfinite(found.points[:, index]).any():
                self.by_name[name] = found.points[:, index]

    def get(self, *names: str) -> np.ndarray | None:
        return next((self.by_name[n] for n in names if n in self.by_name), None)


def ntu25_from_c3d(found: C3DPoints) -> tuple[np.ndarray, dict[str, str]]:
    """(T, 25, 3) NTU-25 joints (the lab's axes, metres; NaN where not measured) and a note of where the
    hips came from (`extra`). InputError naming the file when hips, knees or ankles are missing."""
    points = _Points(found)
    frames = found.points.shape[0]
    joints: dict[str, np.ndarray | None] = {}
    hips_from = "joint centres"
    for side, s in SIDES.items():
        for part, names in _CENTRES.items():
            joints[f"{side}_{part}"] = points.get(*(s + n for n in names))
        if joints[f"{side}_hip"] is None:
            joints[f"{side}_hip"] = _harrington(points, side)
            hips_from = "Harrington regression from ASIS and PSIS markers"
        for part, (lateral, medial) in _PAIRS.items():
            if joints[f"{side}_{part}"] is None:
                joints[f"{side}_{part}"] = _pair(points.get(s + lateral), points.get(*(s + m for m in medial)))
        for part, name in _SINGLE.items():
            joints[f"{side}_{part}"] = points.get(s + name)
    missing = [name for name in REQUIRED if joints[name] is None]
    if missing:
        needs = "; ".join(f"{name.replace('_', ' ')} ({_NEEDS[name.split('_')[1]].format(s=SIDES[name.split('_')[0]])})"
                          for name in missing)
        raise InputError(found.path, f"cannot place the joints, it lacks the {needs}")
    joints["head"] = _head(points)
    joints["spine_base"] = _mid(joints["left_hip"], joints["right_hip"])
    joints["spine_shoulder"] = _pair(points.get("C7"), points.get("CLAV"), need_both=True)
    if joints["spine_shoulder"] is None:
        joints["spine_shoulder"] = _mid(joints["left_shoulder"], joints["right_shoulder"])
    joints["spine_mid"] = _mid(joints["spine_base"], joints["spine_shoulder"])
    joints["neck"] = _mid(joints["spine_shoulder"], joints["head"])
    out = np.full((frames, NTU25.num_joints, 3), np.nan)
    for index, name in enumerate(NTU25.joint_names):
        if joints.get(name) is not None:
            out[:, index] = joints[name]
    return out, {"c3d_hips": hips_from}


def _mid(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    return None if a is None or b is None else (a + b) / 2


def _pair(lateral: np.ndarray | None, medial: np.ndarray | None, need_both: bool = False) -> np.ndarray | None:
    """The midpoint of two markers across a joint; one of them when the other is absent (unless `need_both`)."""
    if lateral is not None and medial is not None:
        return (lateral + medial) / 2
    return None if need_both else (lateral if lateral is not None else medial)


def _head(points: _Points) -> np.ndarray | None:
    corners = [points.get(n) for n in ("LFHD", "RFHD", "LBHD", "RBHD")]
    if all(c is not None for c in corners):
        return np.mean(corners, axis=0)
    return points.get("HEDO")


def _unit(v: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _harrington(points: _Points, side: str) -> np.ndarray | None:
    """The hip centre of `side` (T, 3) from the pelvis markers, or None when they are not all there."""
    lasi, rasi = points.get("LASI"), points.get("RASI")
    lpsi, rpsi = points.get("LPSI"), points.get("RPSI")
    back = _mid(lpsi, rpsi) if lpsi is not None and rpsi is not None else points.get("SACR")
    if lasi is None or rasi is None or back is None:
        return None
    front = (lasi + rasi) / 2
    z = _unit(rasi - lasi)  # towards the right
    forward = front - back
    x = _unit(forward - np.sum(forward * z, axis=-1, keepdims=True) * z)  # anterior
    y = np.cross(z, x)  # superior
    width = np.linalg.norm(rasi - lasi, axis=-1, keepdims=True)
    depth = np.linalg.norm(forward, axis=-1, keepdims=True)
    lateral = 1.0 if side == "right" else -1.0
    (ax, bx), (ay, by), (az, bz) = HARRINGTON["x"], HARRINGTON["y"], HARRINGTON["z"]
    return front + (ax * depth + bx) * x + (ay * width + by) * y + lateral * (az * width + bz) * z
