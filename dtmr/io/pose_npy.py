"""3-D joint arrays written by pose estimators and lifters, one clip per file.

* `.npy` of shape (T, J, 3): FreeMoCap's `output_data/mediapipe_body_3d_xyz.npy` (MediaPipe's 33 landmarks),
  VideoPose3D's `--viz-export` (Human3.6M's 17 joints), MotionBERT-style exports. A bare array cannot say
  which skeleton it holds, so the joint count decides: 17 -> `h36m17`, 33 -> `mediapipe33`, 25 -> `ntu25`
  (`topology=` picks another registered set with that many joints). A FreeMoCap names file beside the array
  (`mediapipe_names_and_connections_dict.json`, `{"body": {"names": [...]}}`) is checked against the
  MediaPipe order and, when its names are the same in another order, used to reorder the joints.
* `.npz` holding one such array under `positions_3d`, `keypoints_3d`, `poses_3d` or `keypoints`, and
  optionally a scalar `fps`.
* MMPose's 3-D pose-lifter results JSON (`demo/body3d_pose_lifter_demo.py --save-predictions`):
  `{"meta_info": {"dataset_name": "h36m", ...}, "instance_info": [{"frame_id", "instances": [{"keypoints":
  17 x [x, y, z], ...}]}]}`; the first instance of each frame is the clip (MMPose sorts them by track id),
  a frame without one is a frame of NaN.

Coordinates become the project's (metres, y up, right-handed, see docs/topologies.md):

* Units: millimetres (FreeMoCap) or metres (lifters) are told apart by the median distance between the two
  hips: above `MILLIMETRE_HIP_WIDTH` (no person's hips are 5 m apart, nor 5 mm) the array is in millimetres.
  A body that is then no person's size (`dtmr.io.body_size`: 0.8-2.5 m) is read in the unit that makes it
  one, or refused asking for `units=` / `scale=` (MediaPipe's normalized image landmarks are a 30 cm body).
* Up axis of arrays: each producer's own is the prior, `DEFAULT_UP`, and the data decides when it clearly
  disagrees (`dtmr.io.up_axis`; `up=` names it instead): VideoPose3D exports camera space (x right, y down,
  z forward), turned 180 degrees about z into Kinect's camera space; FreeMoCap's world is z up once calibrated
  on a ground-plane board; MediaPipe's own world landmarks are y down (detected); NTU-25 arrays are Kinect's
  own. MMPose's demo writes (-x, z, -y) of camera space, a mirror image, which is mirrored back.

Labels and subjects are unknown (None); the frame rate is `DEFAULT_FPS` unless the file or `fps=` gives one.
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import InputError
from ..skeleton import get_topology
from . import body_size, import_notes, up_axis
from .bounded_read import read_bounded
from .clip_source import InMemoryClipSource
from .coco_json import holds_boolean
from .npz_dataset import (
    _HEADER_ERRORS,
    _NPY_MAGIC,
    _NPY_VERSIONS,
    _READ_ERRORS,
    _ArchiveReader,
    _one_line,
    open_npz_archive,
)
from .topology_arg import topology_with_joints

FORMAT_ARRAY = "pose-npy"
FORMAT_MMPOSE = "mmpose-3d-json"
DEFAULT_FPS = 30.0
#: the topology a bare array of J joints is read as
BY_JOINT_COUNT = {17: "h36m17", 25: "ntu25", 33: "mediapipe33"}
NPZ_KEYS = ("positions_3d", "keypoints_3d", "poses_3d", "keypoints")
FREEMOCAP_NAMES = "mediapipe_names_and_connections_dict.json"
#: a hip-to-hip distance above this many units means the array is in millimetres
MILLIMETRE_HIP_WIDTH = 5.0
#: which axis points up in arrays of each joint set, as its usual producer writes them (others: y up)
DEFAULT_UP = {"h36m17": "-y", "mediapipe33": "+z"}
#: proper rotations taking the named axis onto +y (new = old @ R.T)
UP_ROTATIONS = up_axis.UP_ROTATIONS
#: MMPose's (-x, z, -y) of camera space back to Kinect's (-x, -y, z): swap y and z
MMPOSE_TO_PROJECT = np.array([[1.0, 0, 0], [0, 0, 1], [0, 1, 0]])
MAX_JSON_BYTES = 256 * 2**20
#: frames of an MMPose 3-D results file (1 h 51 min at 30 fps, as the COCO JSON reader): counted in the raw
#: bytes before parsing, since 102 MB of empty frames parse into 6 million dicts and a 2.3 GB array
MAX_MMPOSE_FRAMES = 200_000
SNIFF_BYTES = 4096


def is_pose_npy(path: str | Path) -> bool:
    """A `.npy` file, or an `.npz` whose members include one of `NPZ_KEYS` (and not the data-set layout)."""
    path = Path(path)
    try:
        suffix = path.suffix.lower()
        if suffix == ".npy":
            return path.is_file()
        if suffix != ".npz" or not path.is_file():
            return False
        with zipfile.ZipFile(path) as archive:  # reads the central directory only
            members = {name.removesuffix(".npy") for name in archive.namelist()}
        return bool(members & set(NPZ_KEYS)) and not members & {"joints", "joints_flat"}
    except Exception:  # noqa: BLE001  (a sniff never raises)
        return False


def is_mmpose3d_json(path: str | Path) -> bool:
    """A `.json` whose first 4 KiB name MMPose's `meta_info` for the Human3.6M data set."""
    path = Path(path)
    try:
        if path.suffix.lower() != ".json" or not path.is_file():
            return False
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
        compact = b"".join(head.split())
        return b'"meta_info"' in compact and b'"dataset_name":"h36m"' in compact
    except Exception:  # noqa: BLE001
        return False


def read_pose_npy(path: str | Path, topology: str | None = None, up: str | None = None, fps: float | None = None,
                  units: str | None = None, scale: float | None = None):
    """The one clip of a `.npy` / `.npz` pose array as an `InMemoryClipSource` (format "pose-npy").

    `up` ("+x" ... "-z", "x" = "+x", None or "auto": the producer's convention unless the data clearly says
    otherwise), `units` ("m", "cm", "mm", "in") or `scale` (metres per unit) override what is read off the data.
    """
    path_str = str(path)
    try:
        up = up_axis.normalize_up(up)
    except ValueError as exc:
        raise InputError(path_str, str(exc)) from None
    if units is not None and units not in body_size.UNITS:
        raise InputError(path_str, f"unknown unit {units!r} (known: {', '.join(body_size.UNITS)})")
    if scale is not None and not (math.isfinite(scale) and scale > 0):
        raise InputError(path_str, f"the scale must be a positive number of metres per unit, got {scale!r}")
    if Path(path_str).suffix.lower() == ".npz":
        joints, file_fps = _read_npz(path_str)
    else:
        joints, file_fps = _read_npy(path_str), None
    topo = _topology_for(joints.shape[1], topology, path_str)
    if topo == "mediapipe33":
        joints = _freemocap_order(joints, path_str)
    clip = _sized_upright_clip(joints, topo, fps or file_fps or DEFAULT_FPS, path_str, up, units, scale)
    return _source(path_str, FORMAT_ARRAY, clip)


def read_mmpose3d_json(path: str | Path, topology: str | None = None, fps: float | None = None):
    """The first person of MMPose's 3-D results JSON as an `InMemoryClipSource` (format "mmpose-3d-json")."""
    path_str = str(path)
    if topology not in (None, "h36m17"):
        raise InputError(path_str, f"MMPose 3-D results hold h36m17 joints, not {topology}")
    document = _load_json(path_str, frame_key=b'"instances"')
    if not isinstance(document, dict) or not isinstance(document.get("instance_info"), list):
        raise InputError(path_str, "not MMPose 3-D results: no 'instance_info' list")
    _check_mmpose_names(document.get("meta_info"), path_str)
    frames = document["instance_info"]
    if not frames:
        raise InputError(path_str, "'instance_info' holds no frames")
    h36m = get_topology("h36m17")
    joints = np.full((len(frames), h36m.num_joints, 3), np.nan)
    for t, frame in enumerate(frames):
        instances = frame.get("instances") if isinstance(frame, dict) else None
        if not isinstance(instances, list):
            raise InputError(path_str, f"frame {t}: no 'instances' list")
        if not instances:
            continue
        first = instances[0]
        keypoints = first.get("keypoints") if isinstance(first, dict) else None
        try:
            if holds_boolean(keypoints):  # NumPy would read true as 1.0
                raise TypeError
            values = np.array(keypoints, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise InputError(path_str, f"frame {t}: 'keypoints' is not a table of numbers") from None
        if values.shape == (h36m.num_joints, 2):
            raise InputError(path_str, f"frame {t}: 2-D keypoints; these are 3-D results only")
        if values.shape != (h36m.num_joints, 3):
            raise InputError(path_str, f"frame {t}: 'keypoints' must be 17 x [x, y, z], got shape {values.shape}")
        joints[t] = values
    clip = _clip(joints @ MMPOSE_TO_PROJECT.T, "h36m17", fps or DEFAULT_FPS, path_str)
    return _source(path_str, FORMAT_MMPOSE, clip)


def _read_npy(path: str) -> np.ndarray:
    """The array of a `.npy` file, its header checked against the file size before anything is allocated."""
    try:
        with open(path, "rb") as fh:
            if fh.read(len(_NPY_MAGIC)) != _NPY_MAGIC:
                raise InputError(path, "not a .npy array (no NUMPY header)")
            fh.seek(0)
            version = np.lib.format.read_magic(fh)
            if version not in _NPY_VERSIONS:
                raise InputError(path, f"unsupported .npy format version {version[0]}.{version[1]}")
            try:
                shape, _, dtype = _NPY_VERSIONS[version](fh)
            except _HEADER_ERRORS as exc:
                reason = _one_line(exc).split(": ")[0][:80] if isinstance(exc, ValueError) else type(exc).__name__
                raise InputError(path, f"its .npy header cannot be parsed ({reason})") from None
            header_end = fh.tell()
            size = fh.seek(0, 2)
        _check_array_header(shape, dtype, path)
        declared = math.prod(shape) * dtype.itemsize
        if header_end + declared != size:
            raise InputError(path, f"its header declares {declared} bytes of data after a {header_end}-byte "
                                   f"header, but the file holds {size} bytes")
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise
    except _READ_ERRORS as exc:
        raise InputError(path, f"not a readable .npy array ({_one_line(exc)})") from None


def _read_npz(path: str) -> tuple[np.ndarray, float | None]:
    with open_npz_archive(path, "a single .npy array named .npz") as archive:
        arrays = _ArchiveReader(archive, path)
        key = next((k for k in NPZ_KEYS if k in arrays), None)
        if key is None:
            present = ", ".join(sorted(arrays.names)[:8]) or "nothing"
            raise InputError(path, f"no pose array: expected one of {', '.join(NPZ_KEYS)}, found {present}")
        joints = arrays.get(key)
        _check_array_header(joints.shape, joints.dtype, path, key)
        fps = None
        if "fps" in arrays:
            value = arrays.get("fps")
            if value.shape != () or value.dtype.kind not in "fiu" or not 0 < float(value) < math.inf:
                raise InputError(path, f"'fps' must be one positive number, got {value.dtype} {value.shape}")
            fps = float(value)
    return joints, fps


def _check_array_header(shape: tuple, dtype: np.dtype, path: str, name: str = "array") -> None:
    if dtype.hasobject:
        raise InputError(path, f"the {name} holds Python objects, which are never unpickled")
    accepted = " or ".join(f"(T, {j}, 3)" for j in BY_JOINT_COUNT)
    if dtype.kind not in "fiu" or len(shape) != 3 or shape[2] != 3 or shape[0] < 1:
        raise InputError(path, f"the {name} is {dtype} {tuple(shape)}; expected numbers of shape {accepted} "
                               "(frames, joints, xyz)")


def _topology_for(num_joints: int, requested: str | None, path: str) -> str:
    if requested is not None:
        return topology_with_joints(requested, num_joints, path, "the array")
    if num_joints not in BY_JOINT_COUNT:
        accepted = ", ".join(f"{j} ({name})" for j, name in BY_JOINT_COUNT.items())
        raise InputError(path, f"{num_joints} joints per frame; a bare array is read by its joint count: {accepted}")
    return BY_JOINT_COUNT[num_joints]


def _freemocap_order(joints: np.ndarray, path: str) -> np.ndarray:
    """Joints in MediaPipe's order, checked (and reordered) against FreeMoCap's names file when one is beside."""
    names_file = Path(path).with_name(FREEMOCAP_NAMES)
    if not names_file.is_file():
        return joints
    document = _load_json(str(names_file), limit=16 * 2**20)
    body = document.get("body") if isinstance(document, dict) else None
    names = body.get("names") if isinstance(body, dict) else None
    expected = get_topology("mediapipe33").joint_names
    if not isinstance(names, list) or sorted(map(str, names)) != sorted(expected):
        raise InputError(names_file, "its 'body' 'names' are not MediaPipe's 33 pose landmarks")
    return joints[:, [names.index(n) for n in expected]]


def _check_mmpose_names(meta, path: str) -> None:
    """When MMPose's metadata names its keypoints, they must be Human3.6M's 17 in our order."""
    names = meta.get("keypoint_id2name") if isinstance(meta, dict) else None
    if names is None:
        return
    expected = {str(j): name for j, name in enumerate(get_topology("h36m17").joint_names)}
    if names != expected:
        raise InputError(path, "its 'keypoint_id2name' is not Human3.6M's 17 joints")


def _load_json(path: str, limit: int = MAX_JSON_BYTES, frame_key: bytes | None = None):
    """The parsed JSON of `path`; with `frame_key`, a file naming it more than MAX_MMPOSE_FRAMES times (one per
    frame) is refused before it is parsed."""
    data = read_bounded(path, limit, "keypoint JSON")
    if frame_key is not None and data.count(frame_key) > MAX_MMPOSE_FRAMES:
        raise InputError(path, f"more than {MAX_MMPOSE_FRAMES:,} frames ({data.count(frame_key):,} "
                               f"{frame_key.decode()} lists); split the recording")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise InputError(path, f"not readable JSON ({_one_line(exc)[:120]})") from None


def _clip(joints: np.ndarray, topology: str, fps: float, path: str, extra: dict | None = None) -> Clip:
    """A clip in metres: millimetre arrays (wide hips) are scaled down."""
    joints = _finite_joints(joints, path)
    if _hip_rule_unit(joints, topology, path) == "mm":
        joints = joints / 1000.0
    return _make_clip(joints, topology, fps, path)


def _sized_upright_clip(joints: np.ndarray, topology: str, fps: float, path: str, up: str | None,
                        units: str | None, scale: float | None) -> Clip:
    """A clip in metres, y up: the unit by the hip width when that makes a person, else by the body's size; the
    up axis the producer's unless the data clearly says otherwise (module docstring)."""
    joints = _finite_joints(joints, path)
    default = _hip_rule_unit(joints, topology, path)
    height = body_size.body_height(joints, topology)
    metres, unit_note = body_size.metres_per_unit(path, height, units, scale, default=default)
    joints = joints * metres
    size_warning = body_size.check_height(path, height * metres, given=units is not None or scale is not None)
    choice = up_axis.choose_up(joints, topology, prior=DEFAULT_UP.get(topology, "+y"), given=up)
    joints = up_axis.turn_upright(joints, choice.axis)
    height_note = f"height {height * metres:.2f} m; " if math.isfinite(height) else ""
    extra = import_notes.notes(f"{unit_note}; {height_note}{choice.note()}", choice.warning(), size_warning)
    return _make_clip(joints, topology, fps, path, extra)


def _finite_joints(joints: np.ndarray, path: str) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        joints = np.asarray(joints, dtype=np.float64)
        if np.isinf(joints).any():
            raise InputError(path, "infinite coordinates")
    return joints


def _hip_rule_unit(joints: np.ndarray, topology: str, path: str) -> str:
    """"mm" when the two hips are more than `MILLIMETRE_HIP_WIDTH` units apart (median), else "m"."""
    topo = get_topology(topology)
    with np.errstate(over="ignore", invalid="ignore"):
        width = np.linalg.norm(joints[:, topo.left_hip] - joints[:, topo.right_hip], axis=-1)
    width = width[np.isfinite(width)]
    if width.size == 0:
        raise InputError(path, "the two hips are never both present: cannot tell the units")
    return "mm" if np.median(width) > MILLIMETRE_HIP_WIDTH else "m"


def _make_clip(joints: np.ndarray, topology: str, fps: float, path: str, extra: dict | None = None) -> Clip:
    try:
        return Clip(joints=joints, topology=topology, fps=float(fps), source_file=path,
                    sample_name=Path(path).stem, extra=dict(extra or {}))
    except ValueError as exc:
        raise InputError(path, str(exc)) from None


def _source(path: str, format: str, clip: Clip):
    return InMemoryClipSource(path, format, clip.topology, [clip])
