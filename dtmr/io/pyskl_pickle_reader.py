"""Reader of the PYSKL / MMAction2 skeleton annotation pickle (`ntu60_3danno.pkl`, `ntu120_3danno.pkl`, and
what `dtmr.io.pyskl_pickle` writes).

Layout: `{"split": {name: [frame_dir, ...]}, "annotations": [{"frame_dir", "label", "keypoint" (M, T, V, C),
"keypoint_score" (M, T, V) optional, "total_frames" optional, ...}]}`, or (older MMAction2 files) the list of
annotations alone. The file is loaded by `dtmr.io.safe_pickle` (plain data and NumPy arrays only), never by
`pickle.load`.

Each annotation becomes one clip: its main actor (`dtmr.io.multi_body`, as for `.skeleton` files) in the frames
that body is present in, with the body of most motion among the others as its partner (`Clip.partners`). 3-D (C = 3): a joint at exactly (0, 0, 0) is missing (NaN), as in the `.skeleton`
reader (PYSKL's 3-D annotations are Kinect camera coordinates) and as `write_pyskl_pickle`'s exporter writes a
missing joint. 2-D (C = 2) keypoints are not clips: `read_pyskl_2d` returns them for a lifter.

Labels: PYSKL numbers classes from 0. When every `frame_dir` is an NTU name (`SsssCcccPpppRrrrAaaa`) whose
action is its label + 1 (PYSKL's NTU files, and this project's export of an NTU-numbered library), actions keep
NTU's own numbers (A017 -> 17, as read from `.skeleton` files); otherwise they are the labels themselves. Setup,
camera, performer and replication come from NTU names, unknown otherwise. The split names a clip belongs to
are `extra["split"]` (comma-separated, in the file's order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import InputError, NeedsLiftingError
from ..skeleton import topology_for_joint_count
from .multi_body import aligned_partners, body_motions, body_presence, main_body
from .ntu_skeleton import parse_ntu_name
from .safe_pickle import load_data_pickle
from .topology_arg import topology_with_joints

FORMAT = "pyskl-pickle"
#: PYSKL stores no frame rate; NTU and Kinetics are 30 Hz
FPS = 30.0
SUFFIXES = (".pkl", ".pickle")
#: the 2-D keypoints of PYSKL's files (HRNet) are COCO-17
DEFAULT_2D_TOPOLOGY = "coco17"
_WHAT = "PYSKL annotation pickle"


@dataclass(eq=False)
class PysklDataset:
    """The clips of an annotation pickle (what `open_clip_source` wraps in an `InMemoryClipSource`)."""

    path: str
    topology: str
    clips: list[Clip]
    action_names: list[str] | None = None
    format: str = FORMAT


@dataclass(eq=False)
class Pose2D:
    """The main actor's 2-D keypoints of one annotation, for a lifter.

    `fields` are `Clip`'s keyword arguments but `joints` and `topology` (fps, labels, names, extra), so a
    lifted clip is `Clip(joints=lifted, topology="ntu25", **pose.fields)`."""

    #: (T, V, 2) float32 in the file's units (pixels for PYSKL's HRNet files), T = every frame of the
    #: annotation; a joint at (0, 0) and a frame without the main actor are NaN
    keypoints: np.ndarray
    #: (T, V) float32 confidences, or None when the file has no `keypoint_score`
    scores: np.ndarray | None
    #: (height, width) of the video, or None when the annotation has no `img_shape`
    img_shape: tuple[int, int] | None
    fields: dict = field(default_factory=dict)


@dataclass(eq=False)
class PysklPoses2D:
    path: str
    topology: str
    poses: list[Pose2D]
    format: str = FORMAT


@dataclass(eq=False)
class _Annotation:
    index: int
    frame_dir: str
    label: int | None
    keypoint: np.ndarray
    scores: np.ndarray | None
    img_shape: tuple[int, int] | None


def is_pyskl_pickle(path: str | Path) -> bool:
    """A `.pkl` / `.pickle` file that starts like a pickled dict or list (reads 16 bytes; never raises)."""
    try:
        if Path(path).suffix.lower() not in SUFFIXES:
            return False
        with open(path, "rb") as fh:
            head = fh.read(16)
    except (OSError, ValueError):
        return False
    if head[:1] == b"\x80" and len(head) >= 3 and 2 <= head[1] <= 5:
        body = head[11:] if head[2:3] == b"\x95" else head[2:]  # protocol 4+ opens with an 8-byte FRAME
        return body[:1] in (b"}", b"]")
    return head[:1] in (b"(", b"}", b"]")  # protocols 0 and 1


def load_annotation_pickle(path: str | Path):
    """The unpickled file (plain containers, str, numbers and arrays), without any check of its layout."""
    return load_data_pickle(path, _WHAT)


def read_pyskl_pickle(path: str | Path, topology: str | None = None) -> PysklDataset:
    """The 3-D clips of an annotation pickle; 2-D keypoints are an InputError saying how to lift them."""
    path = str(path)
    annotations, splits = _read(path)
    if any(a.keypoint.shape[3] == 2 for a in annotations):
        raise NeedsLiftingError(path, "holds 2-D keypoints (C = 2), which must be lifted to 3-D first: "
                               f"dtmr data import {path} --lift -o OUT.h5")
    topo = _topology(path, annotations, topology, None)
    actions = _actions(annotations)
    clips = []
    for annotation, action in zip(annotations, actions):
        bodies = annotation.keypoint
        m, present = _main(path, annotation)
        joints = _float32(bodies[m][present])
        joints[(bodies[m][present] == 0).all(axis=-1)] = np.nan
        everyone = body_presence(bodies)
        partners = aligned_partners(_float32(bodies), everyone, m, body_motions(bodies, everyone))
        try:
            clips.append(Clip(joints=joints, topology=topo, partners=partners,
                              **_fields(path, annotation, action, m, splits)))
        except ValueError as exc:
            raise InputError(path, f"annotation {annotation.index} ({annotation.frame_dir}): {exc}") from None
    return PysklDataset(path=path, topology=topo, clips=clips)


def read_pyskl_2d(path: str | Path, topology: str | None = None) -> PysklPoses2D:
    """The main actor's 2-D keypoints of every annotation (topology `coco17` unless given), in all of its
    `total_frames`: a frame without the main actor is NaN (scores 0), as the COCO JSON reader gives the same
    detections, so a lifted pickle and a lifted JSON have the same frames."""
    path = str(path)
    annotations, splits = _read(path)
    if {a.keypoint.shape[3] for a in annotations} != {2}:
        raise InputError(path, "holds 3-D keypoints (C = 3); read its clips with read_pyskl_pickle")
    topo = _topology(path, annotations, topology, DEFAULT_2D_TOPOLOGY)
    actions = _actions(annotations)
    poses = []
    for annotation, action in zip(annotations, actions):
        m, present = _main(path, annotation)
        raw = annotation.keypoint[m]
        keypoints = _float32(raw)
        if np.isinf(keypoints).any():
            raise InputError(path, f"annotation {annotation.index} ({annotation.frame_dir}): infinite keypoints")
        keypoints[(raw == 0).all(axis=-1)] = np.nan
        keypoints[~present] = np.nan
        scores = None
        if annotation.scores is not None:
            scores = _float32(annotation.scores[m])
            scores[~present] = 0
        poses.append(Pose2D(keypoints=keypoints, scores=scores, img_shape=annotation.img_shape,
                            fields=_fields(path, annotation, action, m, splits)))
    return PysklPoses2D(path=path, topology=topo, poses=poses)


def _read(path: str) -> tuple[list[_Annotation], dict[str, list[str]]]:
    """The annotations (checked) and, per frame_dir, the names of the splits holding it."""
    data = load_annotation_pickle(path)
    if isinstance(data, list):
        items, split = data, {}
    elif isinstance(data, dict) and isinstance(data.get("annotations"), list):
        items, split = data["annotations"], data.get("split", {})
    else:
        raise InputError(path, f"not a {_WHAT}: expected a dict with an 'annotations' list, got "
                               f"{type(data).__name__}")
    if not items:
        raise InputError(path, "holds no annotations")
    annotations = [_annotation(path, i, item) for i, item in enumerate(items)]
    if not isinstance(split, dict):
        raise InputError(path, f"'split' must be a dict of frame_dir lists, got {type(split).__name__}")
    splits: dict[str, list[str]] = {a.frame_dir: [] for a in annotations}
    for name, members in split.items():
        if not isinstance(name, str) or not isinstance(members, (list, tuple)):
            raise InputError(path, f"split {str(name)[:40]!r} must name a list of frame_dirs")
        for frame_dir in members:  # as PYSKL does, names without an annotation are ignored
            if isinstance(frame_dir, str) and frame_dir in splits and name not in splits[frame_dir]:
                splits[frame_dir].append(name)
    return annotations, splits


def _annotation(path: str, i: int, item) -> _Annotation:
    def error(message: str) -> InputError:
        return InputError(path, f"annotation {i}: {message}")

    if not isinstance(item, dict):
        raise error(f"expected a dict, got {type(item).__name__}")
    frame_dir = item.get("frame_dir")
    if not isinstance(frame_dir, str):
        raise error("'frame_dir' must be a string")
    keypoint = item.get("keypoint")
    if not isinstance(keypoint, np.ndarray) or keypoint.ndim != 4 or keypoint.dtype.kind not in "fiu":
        raise error(f"'keypoint' must be a numeric (M, T, V, C) array, got {_describe(keypoint)}")
    keypoint = np.asarray(keypoint)
    bodies, frames, joints, dims = keypoint.shape
    if min(bodies, frames, joints) == 0 or dims not in (2, 3):
        raise error(f"'keypoint' must be (M, T, V, C) with M, T, V > 0 and C = 2 or 3, got {keypoint.shape}")
    total = item.get("total_frames", frames)
    if type(total) is not int or total != frames:
        raise error(f"'total_frames' is {str(total)[:40]} but 'keypoint' has {frames} frames")
    label = item.get("label")
    if label is not None and type(label) is not int:
        raise error(f"'label' must be an integer, got {type(label).__name__}")
    if label is not None and not -2**31 <= label < 2**31:
        raise error(f"'label' must be an integer from {-2**31} to {2**31 - 1}, got one of {label.bit_length()} bits")
    scores = item.get("keypoint_score")
    if scores is not None:
        if not isinstance(scores, np.ndarray) or scores.shape != keypoint.shape[:3] or scores.dtype.kind not in "fiu":
            raise error(f"'keypoint_score' must be a numeric {keypoint.shape[:3]} array, got {_describe(scores)}")
        scores = np.asarray(scores)
    img_shape = item.get("img_shape")
    if img_shape is not None:
        if not (isinstance(img_shape, (tuple, list)) and len(img_shape) == 2
                and all(type(n) is int and n > 0 for n in img_shape)):
            raise error(f"'img_shape' must be (height, width), got {str(img_shape)[:40]}")
        img_shape = (img_shape[0], img_shape[1])
    return _Annotation(index=i, frame_dir=frame_dir, label=None if label is None or label < 0 else label,
                       keypoint=keypoint, scores=scores, img_shape=img_shape)


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        return f"{value.dtype} {value.shape}"
    return type(value).__name__


def _topology(path: str, annotations: list[_Annotation], requested: str | None, default: str | None) -> str:
    counts = sorted({a.keypoint.shape[2] for a in annotations})
    if len(counts) > 1:
        raise InputError(path, f"annotations have different joint counts ({', '.join(map(str, counts))})")
    count = counts[0]
    name = requested or default
    if name is not None:
        return topology_with_joints(name, count, path)
    only = topology_for_joint_count(count)
    if only is None:
        raise InputError(path, f"cannot tell the topology of {count} joints; pass one explicitly (--topology)")
    return only.name


def _actions(annotations: list[_Annotation]) -> list[int | None]:
    """NTU's 1-based numbers when every name says the label is its action - 1, else the labels."""
    names = [parse_ntu_name(a.frame_dir) for a in annotations]
    if all(n is not None and a.label == n["action"] - 1 for n, a in zip(names, annotations)):
        return [n["action"] for n in names]
    return [a.label for a in annotations]


def _main(path: str, annotation: _Annotation) -> tuple[int, np.ndarray]:
    present = body_presence(annotation.keypoint)
    m = main_body(annotation.keypoint, present)
    if m is None:
        raise InputError(path, f"annotation {annotation.index} ({annotation.frame_dir}): no body in any frame")
    return m, present[m]


def _float32(values: np.ndarray) -> np.ndarray:
    # beyond float32 becomes inf, which the callers refuse; a signalling NaN (damaged bytes) is a NaN
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(np.float32)


def _fields(path: str, annotation: _Annotation, action: int | None, body: int,
            splits: dict[str, list[str]]) -> dict:
    """`Clip`'s keyword arguments but joints and topology."""
    ntu = parse_ntu_name(annotation.frame_dir)
    extra = {"body_index": str(body)}
    if ntu:
        extra["setup"] = str(ntu["setup"])
    if splits[annotation.frame_dir]:
        extra["split"] = ",".join(splits[annotation.frame_dir])
    return {
        "fps": FPS,
        "subject": ntu["performer"] if ntu else None,
        "action": action,
        "view": ntu["camera"] if ntu else None,
        "repetition": ntu["replication"] if ntu else None,
        "source_file": path,
        "sample_name": annotation.frame_dir,
        "extra": extra,
    }
