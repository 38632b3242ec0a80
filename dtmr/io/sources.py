"""Open any clip path behind one interface (`ClipSource`, docs/ARCHITECTURE.md): a `.skeleton` file, a folder of
them (searched recursively), an `.npz` data set, an `.h5` clip library, and the formats of other tools (pose
estimators' `.json` and `.npy`, SGN arrays, PYSKL pickles, BVH, C3D; docs/io.md). `OPEN_KINDS` lists them.

HDF5 libraries are read lazily; the other formats are read into memory when opened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..data.clip import Clip
from ..errors import InputError
from .bvh_reader import read_bvh
from .c3d_file import is_c3d
from .c3d_reader import read_c3d
from .clip_source import ClipSource, InMemoryClipSource
from .coco_json import is_coco_json, read_coco_json
from .import_options import ImportOptions
from .library import ClipLibrary
from .npz_dataset import read_npz_dataset
from .ntu_skeleton import read_ntu_clip
from .pose_npy import is_mmpose3d_json, is_pose_npy, read_mmpose3d_json, read_pose_npy
from .pyskl_pickle_reader import read_pyskl_pickle
from .sgn_npz import is_sgn_npz, read_sgn_npz
from .special_files import refuse_special_file
from .topology_arg import check_topology_name

SKELETON_SUFFIX = ".skeleton"
NPZ_SUFFIX = ".npz"
NPY_SUFFIX = ".npy"
JSON_SUFFIX = ".json"
BVH_SUFFIX = ".bvh"
PICKLE_SUFFIXES = (".pkl", ".pickle")
HDF5_SUFFIXES = (".h5", ".hdf5")
#: every kind `open_clip_source` reads, as a user names it (its error message; the Studio's Open dialog)
OPEN_KINDS = (
    ".skeleton (NTU) or a folder of them", ".npz (this project's, SGN/CTR-GCN, VideoPose3D)",
    ".pkl (PYSKL / MMAction2 annotations)",
    ".npy (H36M-17, MediaPipe-33 / FreeMoCap, NTU-25)", ".json (COCO-17 from MMPose / OpenPose, or a folder of "
    "OpenPose frames; MMPose H36M-17 3-D)", ".bvh (motion capture)", ".c3d (motion capture: joint centres or "
    "Plug-in Gait markers)", ".h5 library",
)
#: a source's `format` as a person reads it (`dtmr data info`)
FORMAT_LABELS = {
    "ntu-skeleton": "NTU .skeleton", "npz": ".npz data set", "hdf5": "HDF5 clip library",
    "pose-npy": "3-D pose array", "mmpose-3d-json": "MMPose 3-D keypoint JSON", "coco-json": "COCO-17 keypoint JSON",
    "bvh": "BVH motion capture", "c3d": "C3D motion capture", "pyskl-pickle": "PYSKL annotation pickle",
    "sgn-npz": "SGN / CTR-GCN arrays",
}
#: the file name patterns of those kinds, for file dialogs
OPEN_PATTERNS = ("*.skeleton", "*.npz", "*.pkl", "*.pickle", "*.npy", "*.json", "*.bvh", "*.c3d", "*.h5", "*.hdf5")


def skeleton_files(folder: str | Path) -> list[Path]:
    """The `.skeleton` files under `folder` (recursively), sorted by path."""
    return sorted(p for p in Path(folder).rglob(f"*{SKELETON_SUFFIX}") if p.is_file())


def open_clip_source(
    path: str | Path,
    topology: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    options: ImportOptions | None = None,
) -> ClipSource:
    """Open `path` by its kind; `topology` overrides (.npz) or must agree with (others) the file's own.

    `progress(done, total)` is called after each file of a folder of `.skeleton` files. `options` (up axis, unit,
    joint map) go to the readers of BVH and 3-D pose arrays; the other formats fix their own.
    """
    path = Path(path)
    options = options or ImportOptions()
    refuse_special_file(path)
    topology = check_topology_name(topology, path)
    _refuse_unused_options(path, options)
    if path.is_dir() and is_coco_json(path):  # a folder of OpenPose frames
        return _in_memory(read_coco_json(path, topology))
    if path.is_dir():
        files = skeleton_files(path)
        if not files:
            raise InputError(path, f"no {SKELETON_SUFFIX} files in this folder")
        _expect_ntu25(topology, path)
        clips = []
        for done, file in enumerate(files, 1):
            clips.append(read_ntu_clip(file))
            if progress is not None:
                progress(done, len(files))
        return InMemoryClipSource(str(path), "ntu-skeleton", "ntu25", clips)
    if not path.exists():
        raise InputError(path, "no such file or folder")
    suffix = path.suffix.lower()
    if suffix == SKELETON_SUFFIX:
        _expect_ntu25(topology, path)
        return InMemoryClipSource(str(path), "ntu-skeleton", "ntu25", [read_ntu_clip(path)])
    if suffix == NPY_SUFFIX or (suffix == NPZ_SUFFIX and is_pose_npy(path)):
        return read_pose_npy(path, topology, **options.pose_kwargs())
    if suffix == JSON_SUFFIX:
        # an H36M-17 lifter's output names its skeleton; the COCO reader would refuse it as not COCO-17
        if is_mmpose3d_json(path):
            return read_mmpose3d_json(path, topology)
        return _in_memory(read_coco_json(path, topology))
    if suffix == BVH_SUFFIX:
        return read_bvh(path, topology, **options.bvh_kwargs())
    if is_c3d(path):
        return read_c3d(path, topology)
    if suffix in PICKLE_SUFFIXES:
        return _in_memory(read_pyskl_pickle(path, topology))
    if suffix == NPZ_SUFFIX and is_sgn_npz(path):
        return _in_memory(read_sgn_npz(path, topology))
    if suffix == NPZ_SUFFIX:
        dataset = read_npz_dataset(path, topology)
        return InMemoryClipSource(str(path), "npz", dataset.topology, dataset.clips, dataset.action_names)
    if suffix in HDF5_SUFFIXES:
        library = ClipLibrary(path)
        if topology is not None and topology != library.topology:
            library.close()
            raise InputError(path, f"the library holds {library.topology} clips, not {topology}")
        return library
    raise InputError(path, f"unknown kind of file (expected one of: {', '.join(OPEN_KINDS)})")


def _refuse_unused_options(path: Path, options: ImportOptions) -> None:
    """The up axis, unit and scale reach only the BVH and 3-D pose-array readers, and the joint map only BVH:
    given for another file they would be ignored without a word, so they are refused, naming the file."""
    if not options.any:
        return  # and the file is not opened here (`is_pose_npy` reads a .npz's member list)
    suffix = path.suffix.lower()
    bvh = suffix == BVH_SUFFIX
    pose = path.is_file() and (suffix == NPY_SUFFIX or (suffix == NPZ_SUFFIX and is_pose_npy(path)))
    if options.joint_map is not None and not bvh:
        raise InputError(path, "--joint-map is for BVH files; this file's joints are named by its format")
    if (options.up, options.units, options.scale) != (None, None, None) and not (bvh or pose):
        raise InputError(path, "--up, --units and --scale are for BVH files and 3-D pose arrays (.npy, pose .npz); "
                               "this format states its own axes and units")


def _in_memory(read) -> InMemoryClipSource:
    """A reader's result (path, format, topology, clips, action_names) as a source."""
    return InMemoryClipSource(str(read.path), read.format, read.topology, read.clips, read.action_names)


def _expect_ntu25(topology: str | None, path: Path) -> None:
    if topology not in (None, "ntu25"):
        raise InputError(path, f".skeleton files hold ntu25 joints, not {topology}")


def load_clips(path: str | Path, topology: str | None = None) -> list[Clip]:
    """Every clip of `path` (an HDF5 library is read with one read of its joints)."""
    source = open_clip_source(path, topology)
    if isinstance(source, ClipLibrary):
        with source:
            return source.read_all()
    return list(source.clips)
