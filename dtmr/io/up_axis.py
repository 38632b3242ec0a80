"""Which way is up in an imported clip, and turning it upright: the project's clips are y up (docs/topologies.md).

Every 3-D format has a convention for its up axis (BVH: +y; FreeMoCap's calibrated world: +z; a camera: -y),
the *prior*. Files break it (Blender and motion-capture tools write z-up BVH; MediaPipe's world landmarks are y
down), so the data gets a say: a standing person's head is above their feet. Per frame, the direction from the
mid-ankles to the head names the axis it is closest to when within `UPRIGHT_ANGLE_DEG` of it. The prior is kept
unless it is upright in fewer than `STRONG_FRACTION` of the frames while another axis is upright in at least
that many. The one assumption: the person stands (or sits) in most frames. A body lying along one axis for most
of the clip is taken as standing along it, since the data cannot tell a person lying on the floor of a y-up file
from a standing person in a z-up one (joint positions carry no gravity); such a clip needs its axis given. A
clip still not upright in most frames after that (no axis holds it, or the axis given leaves it lying) gets a
warning naming the option that fixes it.

Joints of any registered topology are judged through their NTU-25 mapping (head, ankles).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..skeleton import NTU25, to_ntu25

AXES = ("+x", "-x", "+y", "-y", "+z", "-z")
#: what `--up` accepts: a signed or unsigned axis ("z" = "+z"), or "auto" (detect)
UP_CHOICES = ("auto", "x", "y", "z", "+x", "+y", "+z", "-x", "-y", "-z")
#: proper rotations taking the named axis onto +y (new = old @ R.T); no mirror image
UP_ROTATIONS = {
    "+y": np.eye(3),
    "-y": np.diag([-1.0, -1.0, 1.0]),
    "+z": np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]),
    "-z": np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]),
    "+x": np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]]),
    "-x": np.array([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]]),
}
#: a frame is upright along an axis when its feet-to-head direction is within this angle of it
UPRIGHT_ANGLE_DEG = 45.0
#: the share of frames that makes an axis clearly up (and the share below which a clip counts as lying down)
STRONG_FRACTION = 0.5
_HEAD = NTU25.index("head")
_ANKLES = (NTU25.index("left_ankle"), NTU25.index("right_ankle"))


def normalize_up(text: str | None) -> str | None:
    """"z" / "+z" -> "+z", "-y" -> "-y"; None or "auto" -> None (detect). Raises ValueError otherwise."""
    if text is None:
        return None
    value = str(text).strip().lower()
    if value == "auto":
        return None
    if value in ("x", "y", "z"):
        value = "+" + value
    if value not in UP_ROTATIONS:
        raise ValueError(f"unknown up axis {text!r} (expected one of {', '.join(UP_CHOICES)})")
    return value


def axis_vector(axis: str) -> np.ndarray:
    vector = np.zeros(3)
    vector["xyz".index(axis[1])] = 1.0 if axis[0] == "+" else -1.0
    return vector


def feet_to_head(joints: np.ndarray, topology: str) -> np.ndarray:
    """(T, 3) unit vectors from the mid-ankles to the head per frame (NaN where either is missing)."""
    ntu = to_ntu25(joints, topology).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        ankles = ntu[:, list(_ANKLES)]
        feet = np.where(np.isnan(ankles[:, 0]), ankles[:, 1], np.where(np.isnan(ankles[:, 1]), ankles[:, 0],
                                                                      ankles.mean(axis=1)))
        vector = ntu[:, _HEAD] - feet
        norm = np.linalg.norm(vector, axis=1, keepdims=True)
        return np.where(norm > 0, vector / norm, np.nan)


def upright_fraction(directions: np.ndarray, axis: str) -> float:
    """Share of the frames with a known direction that are upright along `axis` (0 when none is known)."""
    known = np.isfinite(directions).all(axis=1)
    if not known.any():
        return 0.0
    cosines = directions[known] @ axis_vector(axis)
    return float((cosines >= math.cos(math.radians(UPRIGHT_ANGLE_DEG))).mean())


@dataclass(frozen=True)
class UpChoice:
    axis: str  # the file's up axis, turned onto +y
    how: str  # "given", "detected" or "convention"
    #: share of the frames upright once turned (feet-to-head within 45 degrees of +y)
    upright: float

    def note(self) -> str:
        return f"up {self.axis} ({self.how})"

    def warning(self) -> str:
        """"" when the clip is upright in most frames, else what to do about it."""
        if self.upright >= STRONG_FRACTION:
            return ""
        return (f"the body is upright in only {100 * self.upright:.0f}% of its frames with {self.axis} as up: "
                "if it should stand, give its up axis (dtmr data import --up, or the Studio's "
                "File > Open with options)")


def choose_up(joints: np.ndarray, topology: str, prior: str, given: str | None = None) -> UpChoice:
    """The up axis of `joints` (file axes): `given` when not None, else the prior unless the data says otherwise."""
    directions = feet_to_head(joints, topology)
    fractions = {axis: upright_fraction(directions, axis) for axis in AXES}
    if given is not None:
        return UpChoice(given, "given", fractions[given])
    best = max(AXES, key=lambda axis: (fractions[axis], axis == prior))
    if best != prior and fractions[prior] < STRONG_FRACTION <= fractions[best]:
        return UpChoice(best, "detected", fractions[best])
    return UpChoice(prior, "convention", fractions[prior])


def turn_upright(joints: np.ndarray, axis: str) -> np.ndarray:
    """`joints` (..., 3) with `axis` turned onto +y by a proper rotation."""
    return np.asarray(joints, dtype=np.float64) @ UP_ROTATIONS[axis].T
