"""C3D motion capture files as one NTU-25 clip: points in metres (`c3d_file`), joints from joint centres or
Plug-in Gait markers (`c3d_joints`), turned so that the lab's up axis becomes the project's +y.

Labs put the vertical axis where they like (Vicon and Qualisys: +z; Motion Analysis and many others: +y),
and C3D does not say which in a standard place, so it is read from the motion: the lab axis along which the
hips lie above the ankles (the mean over frames of hip midpoint minus ankle midpoint). Every capture of a
standing, walking or exercising person has that; a recording lying down all the time would be turned wrong.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import InputError
from ..skeleton import NTU25
from . import body_size, import_notes
from .c3d_file import UNIT_SCALE, read_c3d_points
from .c3d_joints import ntu25_from_c3d
from .clip_source import InMemoryClipSource

FORMAT = "c3d"
#: up axis of the lab -> the proper rotation (3 x 3, applied to row vectors as `points @ R.T`) taking it to +y
UP_ROTATIONS = {
    "+y": np.eye(3),
    "-y": np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, -1]]),
    "+z": np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]]),
    "-z": np.array([[1.0, 0, 0], [0, 0, -1], [0, 1, 0]]),
    "+x": np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]]),
    "-x": np.array([[0.0, 1, 0], [-1, 0, 0], [0, 0, 1]]),
}


def read_c3d(path: str | Path, topology: str | None = None) -> InMemoryClipSource:
    """One `ntu25` clip of the person in a C3D file; InputError naming the file when it cannot be read or
    lacks the points its joints need."""
    path = str(path)
    if topology not in (None, NTU25.name):
        raise InputError(path, f"C3D files are read as ntu25 clips, not {topology}")
    found = read_c3d_points(path)
    joints, extra = ntu25_from_c3d(found)
    joints, size_notes = _person_sized(joints, found.units, path)
    extra.update(size_notes)
    up = lab_up_axis(joints, path)
    joints = joints @ UP_ROTATIONS[up].T
    extra.update(c3d_units=found.units, c3d_up=up)
    try:
        clip = Clip(joints=joints, topology=NTU25.name, fps=found.rate, source_file=path,
                    sample_name=Path(path).stem, extra=extra)
    except ValueError as exc:
        raise InputError(path, str(exc)) from None
    return InMemoryClipSource(path, FORMAT, NTU25.name, [clip])


def _person_sized(joints: np.ndarray, units: str, path: str) -> tuple[np.ndarray, dict[str, str]]:
    """The joints as they are when POINT:UNITS makes the body a person's size (or it cannot be measured: a
    lower-body marker set); else rescaled to the unit that does, with a warning (a file written without
    POINT:UNITS, or with the wrong one); an InputError naming the file when no unit does."""
    height = body_size.body_height(joints, NTU25.name)
    if body_size.passes_as_person(height):
        return joints, {}
    file_scale = UNIT_SCALE[units.lower()]
    in_file_units = height / file_scale
    metres, note = body_size.metres_per_unit(path, in_file_units, None, None)
    warning = (f"POINT:UNITS is {units!r}, which makes the body {height:.3g} m tall: read as {note}")
    return joints * np.float32(metres / file_scale), import_notes.notes(note, warning)


def lab_up_axis(joints: np.ndarray, path: str) -> str:
    """"+z", "-y", ...: the lab axis along which the hips lie above the ankles (module docstring)."""
    names = NTU25.joint_names
    hips = joints[:, [names.index("left_hip"), names.index("right_hip")]].mean(axis=1)
    ankles = joints[:, [names.index("left_ankle"), names.index("right_ankle")]].mean(axis=1)
    rise = hips - ankles
    rise = rise[np.isfinite(rise).all(axis=1)]
    if not len(rise):
        raise InputError(path, "the hips and ankles are never all visible in the same frame")
    mean = rise.mean(axis=0)
    axis = int(np.argmax(np.abs(mean)))
    return ("+" if mean[axis] > 0 else "-") + "xyz"[axis]
