"""COCO-17 keypoints from pose estimators (MMPose / ViTPose JSON, OpenPose `*_keypoints.json`). The writer of
the COCO results layout is `dtmr.render.coco_keypoints` (it projects through the render camera). Layouts,
decisions and bounds: docs/io.md ("COCO-17 keypoint JSON").

Readers: `read_coco_json` (3-D keypoints -> one `coco17` Clip, metres) and `read_coco_json_2d` (2-D keypoints
-> `Keypoints2D`, pixels; Clips are 3-D, so 2-D files must be lifted). Recognised layouts:

- MMPose inferencer `pred_out_dir` files: a list of instances (one image) or `[{"frame_id", "instances"}]`
  (a video); a dump of the inferencer's result `{"predictions": [[instance, ...], ...]}`; the demo scripts'
  `{"meta_info", "instance_info": [{"frame_id", "instances"}]}`. An instance has `keypoints` (K x 2 or K x 3)
  and optionally `keypoint_scores` (K).
- COCO results lists `[{"image_id", "category_id", "keypoints": [x, y, v] * K, "score"}]` (MMPose 0.x,
  ViTPose, AlphaPose).
- OpenPose `--write_json` files `{"people": [{"pose_keypoints_2d": [x, y, c] * N, "pose_keypoints_3d":
  [x, y, z, c] * N}]}` (BODY_25 or COCO-18, mapped to COCO-17 by name), one file or a folder of them.

K is 17 (COCO) or 133 (COCO-WholeBody, whose first 17 points are the COCO body).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import InputError, NeedsLiftingError
from ..skeleton import COCO17
from .bounded_read import read_bounded
from .coco_dataset import ImageSequence, dataset_sequences, is_coco_dataset
from .import_notes import notes
from .json_numbers import MAX_COORDINATE, check_count, holds_boolean  # noqa: F401 (re-exported: pose_npy)
from .json_numbers import numbers_array as _numbers

FORMAT = "coco-json"
#: a keypoint whose score is below this is missing (NaN); MMPose's demos draw keypoints from 0.3 up
DEFAULT_MIN_SCORE = 0.3
#: none of the layouts records a frame rate; a top-level "fps" number is used where a dict layout has one
DEFAULT_FPS = 30.0
MAX_FILE_BYTES = 64 * 2**20
MAX_FOLDER_BYTES = 1024 * 2**20
#: 200 000 frames is 1 h 51 min at 30 fps; frame numbers spanning more are refused before allocating
MAX_FRAMES = 200_000
MAX_PEOPLE = 1000
OPENPOSE_SUFFIX = "_keypoints.json"
#: default image of the writer: width, height in pixels
DEFAULT_IMAGE_SIZE = (1920, 1080)
#: COCO-WholeBody starts with the 17 COCO body keypoints, in COCO order
WHOLEBODY_KEYPOINTS = 133

# OpenPose's part orders (doc/02_output.md, "Keypoint Ordering in C++/Python"; the background entry is not
# written to JSON).
OPENPOSE_BODY_25 = (
    "Nose", "Neck", "RShoulder", "RElbow", "RWrist", "LShoulder", "LElbow", "LWrist", "MidHip", "RHip", "RKnee",
    "RAnkle", "LHip", "LKnee", "LAnkle", "REye", "LEye", "REar", "LEar", "LBigToe", "LSmallToe", "LHeel",
    "RBigToe", "RSmallToe", "RHeel",
)
OPENPOSE_COCO_18 = (
    "Nose", "Neck", "RShoulder", "RElbow", "RWrist", "LShoulder", "LElbow", "LWrist", "RHip", "RKnee", "RAnkle",
    "LHip", "LKnee", "LAnkle", "REye", "LEye", "REar", "LEar",
)
_OPENPOSE_NAME = {"nose": "Nose", **{
    f"{side}_{part}": f"{side[0].upper()}{part.capitalize()}"
    for side in ("left", "right") for part in ("eye", "ear", "shoulder", "elbow", "wrist", "hip", "knee", "ankle")
}}
#: OpenPose model by point count -> the index of each COCO-17 joint in it
_OPENPOSE_TO_COCO = {
    len(order): np.array([order.index(_OPENPOSE_NAME[name]) for name in COCO17.joint_names])
    for order in (OPENPOSE_BODY_25, OPENPOSE_COCO_18)
}
LIFT_HINT = "2-D keypoints: lift them to 3-D with `dtmr data import FILE --lift -o OUT.h5`"


@dataclass(frozen=True, eq=False)
class Keypoints2D:
    """The main person's 2-D COCO-17 keypoints: `keypoints` (T, 17, 2) float64 pixels, NaN where missing or
    below the score threshold; `scores` (T, 17) float64 as the file gives them, 0 in frames without the
    person; `fps` when the file records one; `name` the sequence's sample name (the file's stem, and for a
    COCO dataset file its video and track: `read_coco_sequences_2d`)."""

    keypoints: np.ndarray
    scores: np.ndarray
    fps: float | None
    path: str
    name: str = ""

    @property
    def num_frames(self) -> int:
        return int(self.keypoints.shape[0])


@dataclass(eq=False)
class CocoJsonClips:
    """What `read_coco_json` found: the pieces of an `InMemoryClipSource`."""

    path: str
    clips: list[Clip]
    topology: str = COCO17.name
    action_names: list[str] | None = None
    format: str = FORMAT


@dataclass(eq=False)
class _Person:
    points: np.ndarray  # (17, D) float64, as in the file
    scores: np.ndarray  # (17,) float64


@dataclass(eq=False)
class _Detections:
    frames: dict[int, list[_Person]]  # frame number -> people
    dim: int  # 2 or 3
    layout: str
    fps: float | None = None
    #: MMPose 3-D files do not name their joints (MMPose's 3-D models output Human3.6M-17)
    names_known: bool = True


# ---------------------------------------------------------------------------------------------- recognising


def is_coco_json(path: str | Path) -> bool:
    """Whether `path` looks like keypoint JSON (a `.json` file whose first 8 KiB name one of the layouts' keys)
    or a folder holding OpenPose `*_keypoints.json` files. Never raises."""
    try:
        path = Path(path)
        if path.is_dir():
            with os.scandir(path) as entries:
                for count, entry in enumerate(entries):
                    if entry.name.endswith(OPENPOSE_SUFFIX) and entry.is_file():
                        return True
                    if count >= 10_000:
                        return False
            return False
        if path.suffix.lower() != ".json" or not path.is_file():
            return False
        with open(path, "rb") as fh:
            head = fh.read(8192)
        if head.lstrip()[:1] not in (b"[", b"{"):
            return False
        keys = (b'"people"', b'"keypoints"', b'"instance_info"', b'"predictions"', b'"num_keypoints"',
                b'"annotations"', b'"images"')
        return any(key in head for key in keys)
    except (OSError, ValueError):
        return False


# ---------------------------------------------------------------------------------------------- reading


def read_coco_json(path: str | Path, topology: str | None = None,
                   min_score: float = DEFAULT_MIN_SCORE) -> CocoJsonClips:
    """3-D COCO-17 keypoints as one `coco17` Clip (the main person); 2-D files raise InputError (`LIFT_HINT`).

    Coordinates are taken as metres, y up, like every Clip; a body whose median extent is 100-10 000 units
    is taken as millimetres and divided by 1000 (`extra["units"]`); other scales are refused.
    `topology` may only be "coco17": it also confirms that unnamed MMPose 3-D keypoints are COCO-17.
    """
    path = str(path)
    if topology not in (None, COCO17.name):
        raise InputError(path, f"COCO keypoint JSON holds coco17 joints, not {topology}")
    sequences = _read_sequences(path, prefer_3d=True)
    if sequences and sequences[0][1].dim == 2:
        raise NeedsLiftingError(path, LIFT_HINT)
    found = _only_sequence(sequences, path)[1]
    if not found.names_known and topology is None:
        raise InputError(path, "MMPose 3-D keypoints do not name their joints and MMPose's 3-D models output "
                               "Human3.6M-17; pass --topology coco17 if these are COCO-17")
    points, _ = _main_person(found, path, min_score)
    joints, extra = _in_metres(points, path)
    extra.update(_size_warning(joints, extra))
    extra["layout"] = found.layout
    try:
        clip = Clip(joints=joints, topology=COCO17.name, fps=found.fps or DEFAULT_FPS, source_file=path,
                    sample_name=_sample_name(path), extra=extra)
    except ValueError as exc:
        raise InputError(path, str(exc)) from None
    return CocoJsonClips(path=path, clips=[clip])


def read_coco_json_2d(path: str | Path, min_score: float = DEFAULT_MIN_SCORE) -> Keypoints2D:
    """2-D COCO-17 keypoints of the main person (OpenPose files: `pose_keypoints_2d`); 3-D files raise, and so
    does a COCO dataset file of several videos or tracks (`read_coco_sequences_2d` reads those)."""
    path = str(path)
    name, found = _only_sequence(_read_sequences(path, prefer_3d=False), path)
    return _keypoints_2d(found, name, path, min_score)


def read_coco_sequences_2d(path: str | Path, min_score: float = DEFAULT_MIN_SCORE) -> list[Keypoints2D]:
    """The 2-D COCO-17 keypoints of every sequence of `path`: one per video or track of a COCO dataset file
    (`dtmr.io.coco_dataset`), the main person of any other layout (one)."""
    path = str(path)
    return [_keypoints_2d(found, name, path, min_score) for name, found in _read_sequences(path, prefer_3d=False)]


def _keypoints_2d(found: _Detections, name: str, path: str, min_score: float) -> Keypoints2D:
    if found.dim == 3:
        raise InputError(path, "3-D keypoints: open the file as clips (read_coco_json, `dtmr data import`)")
    points, scores = _main_person(found, path, min_score)
    points.setflags(write=False)
    scores.setflags(write=False)
    return Keypoints2D(keypoints=points, scores=scores, fps=found.fps, path=path, name=name)


def _sample_name(path: str) -> str:
    name = Path(path).name
    return name[: -len(".json")] if name.lower().endswith(".json") else name


def _only_sequence(sequences: list[tuple[str, _Detections]], path: str) -> tuple[str, _Detections]:
    if len(sequences) > 1:
        raise InputError(path, f"holds {len(sequences)} image sequences (videos or tracks): read them with "
                               "read_coco_sequences_2d, or `dtmr data import FILE --lift -o OUT.h5`")
    return sequences[0]


def _read_sequences(path: str, prefer_3d: bool) -> list[tuple[str, _Detections]]:
    """(sample name, detections) per image sequence: one, except for a COCO dataset file."""
    stem = _sample_name(path)
    if os.path.isdir(path):
        return [(stem, _read_openpose_folder(path, prefer_3d))]
    doc = _load_json(path)
    if is_coco_dataset(doc):
        sequences = dataset_sequences(doc, path)
        return [(_sequence_name(stem, seq.name, len(sequences)), _dataset_detections(seq, doc.get("fps"), path))
                for seq in sequences]
    if isinstance(doc, dict) and "people" in doc:
        frame = _frame_number(Path(path).name, path) if _has_digits(Path(path).name) else 0
        return [(stem, _openpose_detections({frame: _openpose_people(doc, path)}, prefer_3d))]
    return [(stem, _mmpose_or_coco(doc, path))]


def _sequence_name(stem: str, sequence: str, count: int) -> str:
    """The file's stem, and the video / track for a file of several sequences (`person_kp_video_3_track_7`)."""
    if count == 1 or not sequence:
        return stem
    return f"{stem}_{re.sub(r'[^A-Za-z0-9.-]+', '_', sequence).strip('_')}"


def _dataset_detections(sequence: ImageSequence, fps, path: str) -> _Detections:
    frames = {i: [_Person(points=p, scores=s) for p, s in people] for i, people in enumerate(sequence.frames)}
    return _Detections(frames=frames, dim=2, layout="coco-dataset", fps=_fps(fps, path))


def _load_json(path: str):
    """The parsed document; too large, not UTF-8, not JSON, NaN/Infinity or too deep -> one-line InputError."""
    data = read_bounded(path, MAX_FILE_BYTES, "keypoint JSON")
    try:
        return json.loads(data, parse_constant=_refuse_constant)
    except RecursionError:
        raise InputError(path, "not valid JSON (nested too deeply)") from None
    except (ValueError, MemoryError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise InputError(path, f"not valid JSON ({' '.join(str(exc).split())[:200]})") from None


def _refuse_constant(name: str):
    raise ValueError(f"non-finite number {name}")


def _has_digits(text: str) -> bool:
    return re.search(r"\d", text) is not None


def _frame_number(image_id, path: str) -> int:
    """An integer id as is; a string id (an image or file name) by its last run of digits."""
    if isinstance(image_id, int) and not isinstance(image_id, bool):
        return image_id
    if isinstance(image_id, str):
        digits = re.findall(r"\d+", image_id)
        if digits:
            return int(digits[-1][-18:])  # at most 18 digits: stays an int64
    raise InputError(path, f"frame id {str(image_id)[:40]!r} is neither an integer nor a name with a number")


def _coco17_rows(points: np.ndarray, scores: np.ndarray, what: str, path: str) -> _Person:
    count = points.shape[0]
    if count == WHOLEBODY_KEYPOINTS:
        points, scores = points[: COCO17.num_joints], scores[: COCO17.num_joints]
    elif count != COCO17.num_joints:
        raise InputError(path, f"{what} has {count} keypoints; COCO-17 (17) or COCO-WholeBody (133) expected")
    return _Person(points=points, scores=scores)


# MMPose and COCO results ---------------------------------------------------------------------------------


def _mmpose_or_coco(doc, path: str) -> _Detections:
    fps = None
    names_known = False
    if isinstance(doc, dict):
        fps = _fps(doc.get("fps"), path)
        if "instance_info" in doc:
            names_known = _check_meta(doc.get("meta_info"), path)
            frames, layout = _frame_list(doc["instance_info"], path), "mmpose-instance-info"
        elif "predictions" in doc:
            predictions = doc["predictions"]
            if not isinstance(predictions, list):
                raise InputError(path, "'predictions' must be a list (one entry per frame)")
            check_count(len(predictions), MAX_FRAMES, "frames", path)
            frames = {i: _instances(p, f"predictions[{i}]", path) for i, p in enumerate(predictions)}
            layout = "mmpose-predictions"
        else:
            raise InputError(path, "unknown keypoint JSON layout (expected 'people', 'instance_info', "
                                   "'predictions' or 'images' with 'annotations' at the top level, or a list)")
    elif isinstance(doc, list):
        first = next((e for e in doc if isinstance(e, dict)), None)
        if first is None:
            raise InputError(path, "no detections (an empty list, or one without objects)")
        if "instances" in first:
            frames, layout = _frame_list(doc, path), "mmpose-video"
        elif "image_id" in first:
            frames, layout = _coco_results(doc, path), "coco-results"
            names_known = True  # a results list is 2-D: 17 x (x, y, v)
        else:
            frames, layout = {0: _instances(doc, "the instance list", path)}, "mmpose-image"
    else:
        raise InputError(path, "unknown keypoint JSON layout (expected an object or a list)")
    dims = {p.points.shape[1] for people in frames.values() for p in people}
    if len(dims) > 1:
        raise InputError(path, "keypoints mix 2-D and 3-D")
    dim = dims.pop() if dims else 2
    return _Detections(frames=frames, dim=dim, layout=layout, fps=fps, names_known=names_known or dim == 2)


def _fps(value, path: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 10_000:
        raise InputError(path, f"'fps' must be a positive number, got {str(value)[:40]}")
    return float(value)


def _check_meta(meta, path: str) -> bool:
    """MMPose's `dataset_meta`: the keypoints must be COCO's (or COCO-WholeBody's). True when it names them."""
    if not isinstance(meta, dict):
        return False
    names = meta.get("keypoint_id2name")
    if isinstance(names, dict):
        first = [names.get(str(i)) for i in range(COCO17.num_joints)]
        if first != list(COCO17.joint_names):
            dataset = str(meta.get("dataset_name", "another data set"))[:40]
            raise InputError(path, f"the keypoints are {dataset}'s, not COCO-17 (per 'meta_info')")
        return True
    return False


def _frame_list(entries, path: str) -> dict[int, list[_Person]]:
    if not isinstance(entries, list):
        raise InputError(path, "the frame list must be a list of {'frame_id', 'instances'}")
    check_count(len(entries), MAX_FRAMES, "frames", path)
    frames: dict[int, list[_Person]] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "instances" not in entry:
            raise InputError(path, f"frame entry {i} is not an object with 'instances'")
        frame = _frame_number(entry.get("frame_id", i), path)
        if frame in frames:
            raise InputError(path, f"frame {frame} appears twice")
        frames[frame] = _instances(entry["instances"], f"frame {frame}", path)
    return frames


def _instances(instances, where: str, path: str) -> list[_Person]:
    if not isinstance(instances, list):
        raise InputError(path, f"{where}: instances must be a list")
    check_count(len(instances), MAX_PEOPLE, f"people in {where}", path)
    people = []
    for k, instance in enumerate(instances):
        if not isinstance(instance, dict) or "keypoints" not in instance:
            raise InputError(path, f"{where}, instance {k}: an object with 'keypoints' expected")
        what = f"{where}, instance {k}"
        points = _numbers(instance["keypoints"], (-1, -1), f"{what} 'keypoints'", path)
        if points.shape[1] not in (2, 3):
            raise InputError(path, f"{what}: keypoints must be (x, y) or (x, y, z), got {points.shape[1]} values")
        if "keypoint_scores" in instance:
            scores = _numbers(instance["keypoint_scores"], (points.shape[0],), f"{what} 'keypoint_scores'", path)
        else:
            scores = np.ones(points.shape[0])
        people.append(_coco17_rows(points, scores, what, path))
    return people


def _coco_results(entries: list, path: str) -> dict[int, list[_Person]]:
    check_count(len(entries), MAX_FRAMES * 10, "results", path)
    frames: dict[int, list[_Person]] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or "keypoints" not in entry or "image_id" not in entry:
            raise InputError(path, f"result {i} is not an object with 'image_id' and 'keypoints'")
        flat = _numbers(entry["keypoints"], (-1,), f"result {i} 'keypoints'", path)
        if flat.size % 3:
            raise InputError(path, f"result {i}: 'keypoints' must be (x, y, v) triples, got {flat.size} numbers")
        triples = flat.reshape(-1, 3)
        people = frames.setdefault(_frame_number(entry["image_id"], path), [])
        people.append(_coco17_rows(triples[:, :2], triples[:, 2], f"result {i}", path))
        check_count(len(people), MAX_PEOPLE, f"people in image {entry['image_id']!r}"[:80], path)
    return frames


# OpenPose ------------------------------------------------------------------------------------------------


def _read_openpose_folder(folder: str, prefer_3d: bool) -> _Detections:
    try:
        with os.scandir(folder) as entries:
            files = []
            for entry in entries:
                if entry.name.endswith(OPENPOSE_SUFFIX) and entry.is_file():
                    files.append(entry.path)
                    check_count(len(files), MAX_FRAMES, "frame files", folder)
    except OSError as exc:
        raise InputError(folder, f"cannot be listed ({exc.strerror or type(exc).__name__})") from None
    if not files:
        raise InputError(folder, f"no OpenPose *{OPENPOSE_SUFFIX} files in this folder")
    total = sum(os.path.getsize(f) for f in files)
    if total > MAX_FOLDER_BYTES:
        raise InputError(folder, f"{total} bytes of keypoint files: over the {MAX_FOLDER_BYTES}-byte limit")
    people: dict[int, list[dict]] = {}
    for file in files:
        name = Path(file).name
        if not _has_digits(name[: -len(OPENPOSE_SUFFIX)]):
            raise InputError(file, "no frame number in the file name")
        frame = _frame_number(name[: -len(OPENPOSE_SUFFIX)], file)
        if frame in people:
            raise InputError(folder, f"two files hold frame {frame}")
        doc = _load_json(file)
        if not isinstance(doc, dict) or "people" not in doc:
            raise InputError(file, "not an OpenPose keypoint file (no 'people')")
        people[frame] = _openpose_people(doc, file)
    return _openpose_detections(people, prefer_3d)


def _openpose_people(doc: dict, path: str) -> list[dict]:
    people = doc["people"]
    if not isinstance(people, list):
        raise InputError(path, "'people' must be a list")
    check_count(len(people), MAX_PEOPLE, "people", path)
    found = []
    for k, person in enumerate(people):
        if not isinstance(person, dict):
            raise InputError(path, f"person {k} is not an object")
        found.append({
            dim: _openpose_points(person.get(f"pose_keypoints_{dim}d"), dim, f"person {k}", path) for dim in (2, 3)
        })
    return found


def _openpose_points(values, dim: int, who: str, path: str) -> _Person | None:
    """`[x, y, c] * N` (2-D) or `[x, y, z, c] * N` (3-D) as COCO-17; None when absent or empty."""
    if values is None or values == []:
        return None
    what = f"{who} 'pose_keypoints_{dim}d'"
    flat = _numbers(values, (-1,), what, path)
    width = dim + 1
    count = flat.size // width
    if flat.size % width or count not in _OPENPOSE_TO_COCO:
        raise InputError(path, f"{what}: {flat.size} numbers; expected BODY_25 or COCO-18 ({width} per point)")
    rows = flat.reshape(count, width)[_OPENPOSE_TO_COCO[count]]
    return _Person(points=rows[:, :dim], scores=rows[:, dim])


def _openpose_detections(people: dict[int, list[dict]], prefer_3d: bool) -> _Detections:
    has_3d = any(p[3] is not None for frame in people.values() for p in frame)
    dim = 3 if prefer_3d and has_3d else 2
    frames = {f: [p[dim] for p in frame if p[dim] is not None] for f, frame in people.items()}
    return _Detections(frames=frames, dim=dim, layout=f"openpose-{dim}d")


# ---------------------------------------------------------------------------------------------- main person


def _main_person(found: _Detections, path: str, min_score: float) -> tuple[np.ndarray, np.ndarray]:
    """(T, 17, D) points (NaN: missing or score below `min_score`) and (T, 17) scores of the main person.

    T spans the file's first to last frame number; frames without the person are NaN (scores 0). The main
    person is seeded at the detection with the highest mean keypoint score anywhere in the file, then followed
    forwards and backwards: in each frame, the detection whose centre (mean of its confident keypoints) is
    nearest the centre where the person was last seen, if that is within one body size (the seed's largest
    keypoint extent along an axis) per frame elapsed; otherwise the person is missing from that frame.
    """
    if not found.frames:
        raise InputError(path, "no frames")
    first, last = min(found.frames), max(found.frames)
    check_count(last - first + 1, MAX_FRAMES, "frames between the first and last frame number", path)
    count = last - first + 1
    candidates: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in range(count)]
    best, seed = -np.inf, None
    for frame, people in found.frames.items():
        for person in people:
            points = np.where((person.scores >= min_score)[:, None], person.points, np.nan)
            confident = np.isfinite(points).all(axis=1)
            if not confident.any():
                continue
            centre = points[confident].mean(axis=0)
            row = frame - first
            candidates[row].append((points, person.scores, centre))
            score = float(person.scores.mean())
            if score > best:
                best, seed = score, (row, len(candidates[row]) - 1)
    if seed is None:
        raise InputError(path, f"no person with a keypoint scored {min_score} or more in any frame")
    points = np.full((count, COCO17.num_joints, found.dim), np.nan)
    scores = np.zeros((count, COCO17.num_joints))
    row, k = seed
    points[row], scores[row], seed_centre = candidates[row][k]
    size = float(np.nanmax(np.nanmax(points[row], axis=0) - np.nanmin(points[row], axis=0)))
    size = size if size > 0 else np.inf  # a single confident keypoint: no size, no gate
    for step in (1, -1):
        centre, seen = seed_centre, row
        for t in range(row + step, count if step == 1 else -1, step):
            if not candidates[t]:
                continue
            distances = [float(np.linalg.norm(c[2] - centre)) for c in candidates[t]]
            nearest = int(np.argmin(distances))
            if distances[nearest] <= size * abs(t - seen):
                points[t], scores[t], centre = candidates[t][nearest]
                seen = t
    return points, scores


def _size_warning(joints: np.ndarray, extra: dict[str, str]) -> dict[str, str]:
    """An import note and warning when the body read is no person's height (0.8-2.5 m, `body_size`): the
    file's numbers are taken as metres or millimetres and nothing else, so a body in other units arrives at
    the wrong size; {} otherwise."""
    from .body_size import MAX_HEIGHT_M, MIN_HEIGHT_M, body_height, passes_as_person

    height = body_height(joints, COCO17.name)
    if passes_as_person(height):
        return {}
    unit = "mm" if extra.get("units") else "m"
    return notes(f"units {unit} (COCO 3-D keypoints are read as metres or millimetres)",
                 f"the body is {height:.3g} m tall, outside {MIN_HEIGHT_M:g}-{MAX_HEIGHT_M:g} m: the file's unit "
                 "may be neither")


def _in_metres(points: np.ndarray, path: str) -> tuple[np.ndarray, dict[str, str]]:
    """Points as metres: the median extent of the body (frames with 4+ joints) tells metres from millimetres."""
    finite = np.isfinite(points).all(axis=2)
    rows = finite.sum(axis=1) >= 4
    if not rows.any():
        return points, {}
    extents = [np.ptp(frame[ok], axis=0).max() for frame, ok in zip(points[rows], finite[rows])]
    extent = float(np.median(extents))
    if extent <= 10.0:
        return points, {}
    if 100.0 <= extent <= 10_000.0:
        return points / 1000.0, {"units": "millimetres, divided by 1000"}
    raise InputError(path, f"the body spans {extent:.4g} units: expected metres (or millimetres)")
