"""2-D keypoint files opened as 3-D clips: read the 2-D keypoints, lift them (`lift_keypoints`), wrap the
result as a clip source. What `dtmr data import FILE --lift` reads.

Lifted clips are `coco17` in metres, root-relative (the lifter puts the hip midpoint at the origin of every
frame, so a lifted clip does not travel) and carry `extra["lifted"]` with the lifter's file name, so a
library says which of its clips were guessed from 2-D. 2-D sources: COCO-17 keypoint JSON (MMPose /
ViTPose, COCO results, OpenPose files and folders; `dtmr.io.coco_json`) and 2-D PYSKL pickles
(`dtmr.io.pyskl_pickle_reader`).
"""

from __future__ import annotations

from pathlib import Path

from ..data.clip import Clip
from ..errors import InputError
from ..io.clip_source import InMemoryClipSource
from ..io.coco_json import DEFAULT_FPS, is_coco_json, read_coco_sequences_2d
from ..io.import_notes import notes
from ..io.sources import PICKLE_SUFFIXES
from ..skeleton import COCO17
from .apply import DEFAULT_LIFTER, lift_keypoints

#: what `open_lifted` reads, as a person names it
LIFTABLE = "COCO-17 keypoint JSON (a file or a folder of OpenPose frames) or a 2-D PYSKL pickle"


def open_lifted(path: str | Path, lifter=None) -> InMemoryClipSource:
    """The 2-D keypoints of `path` lifted to 3-D `coco17` clips; an InputError naming `path` when it holds
    none. `lifter`: a network or checkpoint path (default: the bundled one)."""
    path = Path(path)
    lifted_by = Path(lifter).name if isinstance(lifter, (str, Path)) else DEFAULT_LIFTER[-1]
    extra = {"lifted": lifted_by, **notes(f"lifted from 2-D keypoints by {lifted_by} (root-relative: the body "
                                          "stays at the origin)")}
    if path.suffix.lower() in PICKLE_SUFFIXES:
        from ..io.pyskl_pickle_reader import read_pyskl_2d

        poses = read_pyskl_2d(path)
        if poses.topology != COCO17.name:
            raise InputError(path, f"the lifter takes coco17 keypoints, not {poses.topology}")
        clips = []
        for pose in poses.poses:
            joints = lift_keypoints(pose.keypoints, pose.scores, lifter=lifter, source=str(path))
            fields = dict(pose.fields)
            fields["extra"] = {**fields.get("extra", {}), **extra}
            clips.append(_clip(joints, path, fields))
        return InMemoryClipSource(str(path), "pyskl-pickle-lifted", COCO17.name, clips)
    if is_coco_json(path):
        clips = []
        for found in read_coco_sequences_2d(path):  # one per video or track of a COCO dataset file
            joints = lift_keypoints(found.keypoints, found.scores, lifter=lifter, source=str(path))
            fields = {"fps": found.fps or DEFAULT_FPS, "source_file": str(path), "sample_name": found.name,
                      "extra": dict(extra)}
            clips.append(_clip(joints, path, fields))
        return InMemoryClipSource(str(path), "coco-json-lifted", COCO17.name, clips)
    raise InputError(path, f"--lift reads 2-D keypoints: {LIFTABLE}")


def _clip(joints, path: Path, fields: dict) -> Clip:
    try:
        return Clip(joints=joints, topology=COCO17.name, **fields)
    except ValueError as exc:
        raise InputError(path, str(exc)) from None
