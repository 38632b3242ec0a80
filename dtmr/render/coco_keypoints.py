"""COCO-17 keypoints for 2-D consumers: clips projected through a pinhole camera, written as a COCO keypoint
results list that `dtmr.io.coco_json.read_coco_json_2d` (and MMPose / COCO tools) read back.

It lives with the renderer because it projects through the render camera (`camera.Camera`); the reader of
the same layout is `dtmr.io.coco_json`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import InputError
from ..io.atomic import atomic_write
from ..io.coco_json import DEFAULT_IMAGE_SIZE, MAX_PEOPLE, check_count
from ..skeleton import COCO17, get_topology
from .camera import Camera, fit_camera

def write_coco_json(path: str | Path, clips: Clip | Sequence[Clip], camera: Camera | None = None,
                    image_size: tuple[int, int] = DEFAULT_IMAGE_SIZE) -> None:
    """Write clips as a COCO keypoint results list, projected through a pinhole `camera`, atomically.

    One entry per person per frame: `{"image_id": frame, "category_id": 1, "keypoints": [x, y, v] * 17,
    "score": 1.0}` plus `"track_id": person index` when several people are written (several clips, or a
    clip with partners, after its own person: people seen together, in the same frames). Joints are matched
    to COCO-17 by name; a COCO joint the topology lacks, a NaN joint and a joint behind the camera are
    written as (0, 0, 0), COCO's "not labelled"; the others have v = 2. `camera` defaults to the render
    camera's "front" view (the sensor's own) fitted to all clips, for an `image_size` (width, height) image.

    Pixels are those of a photograph taken by that camera (x right, y down, as COCO's images): a performer
    facing the camera has their left shoulder on the image's right. NTU RGB+D's `colorX` is the mirror image
    of this (Kinect v2 colour frames are mirrored: there the performer's left is on the left), so an export of
    an NTU clip matches its colour coordinates after x -> width - x (docs/io.md, "COCO-17 keypoint JSON").
    """
    clips = [clips] if isinstance(clips, Clip) else list(clips)
    if not clips:
        raise InputError(path, "no clips to write")
    clips = [person for clip in clips for person in _people(clip)]
    check_count(len(clips), MAX_PEOPLE, "clips (people per frame)", str(path))
    width, height = image_size
    if not (width > 0 and height > 0):
        raise ValueError(f"image_size must be positive (width, height), got {image_size}")
    if camera is None:
        camera = fit_camera(clips, aspect=width / height, azimuth=0.0, elevation=0.0)
    results = []
    for index, clip in enumerate(clips):
        pixels = camera.project(_coco17_joints(clip, path), (width, height))
        for frame, points in enumerate(pixels):
            entry = {"image_id": frame, "category_id": 1, "keypoints": _triples(points), "score": 1.0}
            if len(clips) > 1:
                entry["track_id"] = index
            results.append(entry)
    text = json.dumps(results, allow_nan=False)
    with atomic_write(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)


def _people(clip: Clip) -> list[Clip]:
    """The clip and its partners (`Clip.partners`, a two-person capture's other person) as clips of their own:
    people seen together, each written with its `track_id`."""
    if clip.partners is None:
        return [clip]
    return [clip, *(Clip(joints=p, topology=clip.topology, fps=clip.fps) for p in clip.partners)]


def _coco17_joints(clip: Clip, path) -> np.ndarray:
    """(T, 17, 3) joints of `clip` in COCO-17 order, NaN for the COCO joints its topology has no name for."""
    topo = get_topology(clip.topology)
    out = np.full((clip.num_frames, COCO17.num_joints, 3), np.nan)
    shared = [(i, topo.joint_names.index(n)) for i, n in enumerate(COCO17.joint_names) if n in topo.joint_names]
    if not shared:
        raise InputError(path, f"{topo.name} shares no joint names with coco17; map the clip to a topology "
                               "that does first")
    for coco, own in shared:
        out[:, coco] = clip.joints[:, own]
    return out


def _triples(points: np.ndarray) -> list:
    values: list = []
    for x, y in points.tolist():
        if np.isfinite(x) and np.isfinite(y):
            values += [x, y, 2]
        else:
            values += [0, 0, 0]
    return values
