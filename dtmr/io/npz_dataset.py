"""The `.npz` data-set layout of `../shared/data` (see its READMEs): reader and writer.

Joints are either padded, `joints (N, T, J, 3)` with `lengths (N,)`, or ragged, `joints_flat (F, J, 3)` with
`offsets (N + 1,)` (clip i is `joints_flat[offsets[i]:offsets[i + 1]]`). Per-clip label arrays: `subject`,
`action`, optional `view`, `repetition`, `sample_name`, `source_file`, `fps` (scalar or per clip). Data-set
arrays: `joint_names`, `parents`, `action_names`, `topology`. Any other 1-D array of length N (e.g. UI-PRMD's
`correct`) is a per-clip column and lands in `Clip.extra` as strings. Label value -1 means unknown.

The topology is, in this order: the `topology=` argument, the file's `topology` string, the registered joint
set whose names (and parents) equal `joint_names`/`parents`, the one whose parents equal `parents`, the only
registered joint set with J joints. Files are loaded with `allow_pickle=False`.
"""

from __future__ import annotations

import math
import struct
import tokenize
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import MAX_FPS, MAX_PARTNERS, MIN_FPS, Clip
from ..errors import InputError
from ..skeleton import get_topology, topology_for_joint_count, topology_names
from .int_labels import labels_as_int64
from .atomic import atomic_write
from .topology_arg import topology_with_joints

#: frames per second when the file has no `fps` (N-UCLA's Kinect v1 runs at a nominal 30 Hz)
DEFAULT_FPS = 30.0
LABELS = ("subject", "action", "view", "repetition")
TEXTS = ("sample_name", "source_file")
#: arrays that are not per-clip extra columns
RESERVED = frozenset({
    "joints", "lengths", "joints_flat", "offsets", "fps", "topology", "joint_names", "parents", "action_names",
    "partners_flat", "partner_offsets", *LABELS, *TEXTS,
})
_READ_ERRORS = (
    OSError, ValueError, EOFError, KeyError, IndexError, RuntimeError, NotImplementedError, MemoryError,
    struct.error, zipfile.BadZipFile, zlib.error,
)
#: what NumPy raises on a garbage `.npy` header: it parses the header as a Python literal, retrying with a
#: tokenizer for files written by Python 2
_HEADER_ERRORS = (ValueError, SyntaxError, tokenize.TokenError, RecursionError)
#: what every `.npy` file starts with (a single array, not an archive of a data set)
_NPY_MAGIC = b"\x93NUMPY"
#: a zip archive (an .npz is one) starts with a local file header, or, when empty, its end record
_ZIP_MAGICS = (b"PK\x03\x04", b"PK\x05\x06")
#: `.npy` format versions whose header layout `_check_member` knows (what NumPy writes for plain arrays)
_NPY_VERSIONS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


@dataclass(eq=False)
class NpzDataset:
    path: str
    topology: str
    clips: list[Clip]
    action_names: list[str] | None = None


def read_npz_dataset(path: str | Path, topology: str | None = None) -> NpzDataset:
    """Every clip of an `.npz` data set; malformed or corrupted files raise InputError naming the file."""
    path = str(path)
    with open_npz_archive(path, "a single .npy array, not an .npz archive of a data set") as archive:
        arrays = _ArchiveReader(archive, path)
        return _read_dataset(arrays, path, topology)


def open_npz_archive(path: str, single_array: str) -> np.lib.npyio.NpzFile:
    """`path` opened as an `.npz` archive without unpickling anything; an InputError naming it when it is not
    one (`single_array`: the message for a plain `.npy` array, refused before NumPy reads and allocates it)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_NPY_MAGIC))
        if head.startswith(_NPY_MAGIC):
            raise InputError(path, single_array)
        if not head.startswith(_ZIP_MAGICS):  # else NumPy takes it for a pickle and advises loading it unsafely
            raise InputError(path, "not an .npz archive (not a zip file: another kind of file with this name?)")
        archive = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise
    except _READ_ERRORS as exc:
        raise InputError(path, f"not a readable .npz archive ({_one_line(exc)})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise InputError(path, single_array)
    return archive


class _ArchiveReader:
    """Reads (once) members of an open .npz, turning format and decompression errors into InputError.

    The header of each member is checked against the member's stored (uncompressed) size before anything is
    read: header plus declared array must be exactly the member's length. A header declaring a huge shape is
    then an error, not a memory exhaustion, and a damaged header length (which would shift every number by
    the difference) is an error, not wrong joints.
    """

    def __init__(self, archive, path: str):
        self.archive = archive
        self.path = path
        self.names = set(archive.files)
        self.cache: dict[str, np.ndarray] = {}

    def __contains__(self, name: str) -> bool:
        return name in self.names

    def get(self, name: str) -> np.ndarray:
        if name not in self.cache:
            try:
                self._check_member(name)
                self.cache[name] = self.archive[name]
            except _READ_ERRORS as exc:
                raise InputError(self.path, f"array {name!r} is unreadable ({_one_line(exc)})") from None
        return self.cache[name]

    def _check_member(self, name: str) -> None:
        info = self.archive.zip.getinfo(f"{name}.npy")
        with self.archive.zip.open(info) as fh:
            version = np.lib.format.read_magic(fh)
            if version not in _NPY_VERSIONS:
                raise ValueError(f"unsupported .npy format version {version[0]}.{version[1]}")
            try:
                shape, _, dtype = _NPY_VERSIONS[version](fh)
            except _HEADER_ERRORS as exc:
                # NumPy's message may quote the whole (binary) header: keep the part before the quote
                reason = _one_line(exc).split(": ")[0][:80] if isinstance(exc, ValueError) else type(exc).__name__
                raise ValueError(f"its .npy header cannot be parsed ({reason})") from None
            header_end = fh.tell()
        if dtype.hasobject:
            raise ValueError("it holds Python objects, which are never unpickled")
        if any(n < 0 for n in shape):
            raise ValueError(f"its header declares a negative shape {shape}")
        declared = math.prod(shape) * dtype.itemsize
        if header_end + declared != info.file_size:
            raise ValueError(f"its header declares {declared} bytes of data after a {header_end}-byte header, "
                             f"but the member holds {info.file_size} bytes")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _read_dataset(arrays: _ArchiveReader, path: str, topology: str | None) -> NpzDataset:
    if "joints_flat" in arrays:
        flat = arrays.get("joints_flat")
        if "offsets" not in arrays:
            raise InputError(path, "ragged layout: 'joints_flat' without 'offsets'")
        offsets = _int_array(arrays.get("offsets"), "offsets", path)
        _check_joint_array(flat, 3, "joints_flat", path)
        if offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0 or offsets[-1] != len(flat):
            raise InputError(path, f"'offsets' must run from 0 to {len(flat)} (the frames of 'joints_flat')")
        lengths = np.diff(offsets)
        if "lengths" in arrays and not np.array_equal(_int_array(arrays.get("lengths"), "lengths", path), lengths):
            raise InputError(path, "'lengths' disagrees with 'offsets'")
        joints = [flat[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
        num_joints = flat.shape[1]
    elif "joints" in arrays:
        padded = arrays.get("joints")
        _check_joint_array(padded, 4, "joints", path)
        if "lengths" in arrays:
            lengths = _int_array(arrays.get("lengths"), "lengths", path)
            if lengths.shape != padded.shape[:1] or (lengths > padded.shape[1]).any():
                raise InputError(path, f"'lengths' must be one value per clip, at most {padded.shape[1]}")
        else:  # no lengths: a clip ends after its last frame that is not all zeros
            used = (padded != 0).any(axis=(2, 3))
            last = np.argmax(used[:, ::-1], axis=1) if padded.shape[1] else np.zeros(len(padded), dtype=np.int64)
            lengths = np.where(used.any(axis=1), padded.shape[1] - last, 0)
        joints = [padded[i, :n] for i, n in enumerate(lengths.tolist())]
        num_joints = padded.shape[2]
    else:
        raise InputError(path, "no joints: expected 'joints' (padded) or 'joints_flat' + 'offsets' (ragged)")
    count = len(joints)
    if (lengths <= 0).any():
        raise InputError(path, f"clip {int(np.argmax(lengths <= 0))} has no frames")

    topo = _decide_topology(arrays, path, num_joints, topology)
    columns = {name: _label_column(arrays, name, count, path) for name in LABELS}
    texts = {name: _text_column(arrays, name, count, path) for name in TEXTS}
    fps = _fps_column(arrays, count, path)
    extras = {
        name: _extra_column(arrays.get(name))
        for name in sorted(arrays.names - RESERVED)
        if arrays.get(name).shape == (count,)
    }
    partners = _partners(arrays, [len(j) for j in joints], num_joints, path)
    clips = []
    for i in range(count):
        try:
            clips.append(Clip(
                joints=joints[i],
                partners=partners[i],
                topology=topo,
                fps=float(fps[i]),
                **{name: (None if column[i] < 0 else int(column[i])) for name, column in columns.items()},
                sample_name=texts["sample_name"][i] or None,
                source_file=texts["source_file"][i] or path,
                extra={name: values[i] for name, values in extras.items()},
            ))
        except ValueError as exc:
            raise InputError(path, f"clip {i}: {exc}") from None
    return NpzDataset(path=path, topology=topo, clips=clips, action_names=_string_list(arrays, "action_names", path))


def _partners(arrays: _ArchiveReader, lengths: list[int], num_joints: int, path: str) -> list[np.ndarray | None]:
    """Per clip, its partners (P, T, J, 3) from `partners_flat` + `partner_offsets` (clip i's rows
    `partner_offsets[i]:partner_offsets[i + 1]`, P x T of them, partner by partner), or None."""
    if "partners_flat" not in arrays:
        return [None] * len(lengths)
    if "partner_offsets" not in arrays:
        raise InputError(path, "'partners_flat' without 'partner_offsets'")
    flat = arrays.get("partners_flat")
    _check_joint_array(flat, 3, "partners_flat", path)
    if flat.shape[1] != num_joints:
        raise InputError(path, f"'partners_flat' has {flat.shape[1]} joints, the clips {num_joints}")
    offsets = _int_array(arrays.get("partner_offsets"), "partner_offsets", path)
    if offsets.shape != (len(lengths) + 1,) or offsets[0] != 0 or offsets[-1] != len(flat) or \
            (np.diff(offsets) < 0).any():
        raise InputError(path, f"'partner_offsets' must be {len(lengths) + 1} values not decreasing from 0 to "
                               f"{len(flat)}")
    out = []
    for i, frames in enumerate(lengths):
        rows = flat[offsets[i]:offsets[i + 1]]
        if len(rows) % frames or len(rows) > MAX_PARTNERS * frames:
            raise InputError(path, f"clip {i}: {len(rows)} partner rows are not at most {MAX_PARTNERS} partners "
                                   f"of its {frames} frames")
        out.append(rows.reshape(-1, frames, num_joints, 3) if len(rows) else None)
    return out


def _check_joint_array(array: np.ndarray, ndim: int, name: str, path: str) -> None:
    if array.ndim != ndim or array.shape[-1] != 3 or array.dtype.kind not in "fiu":
        raise InputError(path, f"'{name}' must be a numeric array of {ndim} dimensions ending in 3, got "
                               f"{array.dtype} {array.shape}")


def _int_array(array: np.ndarray, name: str, path: str) -> np.ndarray:
    if array.dtype.kind not in "iu":
        raise InputError(path, f"'{name}' must hold integers, got {array.dtype}")
    return array.astype(np.int64)


def _label_column(arrays: _ArchiveReader, name: str, count: int, path: str) -> np.ndarray:
    if name not in arrays:
        return np.full(count, -1, dtype=np.int64)
    values = arrays.get(name)
    if values.shape != (count,) or values.dtype.kind not in "iu":
        raise InputError(path, f"'{name}' must be {count} integers, got {values.dtype} {values.shape}")
    return labels_as_int64(values, path, name)


def _text_column(arrays: _ArchiveReader, name: str, count: int, path: str) -> list[str]:
    if name not in arrays:
        return [""] * count
    values = arrays.get(name)
    if values.shape != (count,) or values.dtype.kind not in "US":
        raise InputError(path, f"'{name}' must be {count} strings, got {values.dtype} {values.shape}")
    return _strings(values, name, path)


def _strings(values: np.ndarray, name: str, path: str) -> list[str]:
    if values.dtype.kind == "S":
        try:
            return [v.decode("utf-8") for v in values.tolist()]
        except UnicodeDecodeError:
            raise InputError(path, f"'{name}' is not UTF-8 text") from None
    return [str(v) for v in values.tolist()]


def _fps_column(arrays: _ArchiveReader, count: int, path: str) -> np.ndarray:
    if "fps" not in arrays:
        return np.full(count, DEFAULT_FPS)
    fps = arrays.get("fps")
    if fps.dtype.kind not in "fiu" or fps.shape not in ((), (count,)):
        raise InputError(path, f"'fps' must be one number or one per clip, got {fps.dtype} {fps.shape}")
    fps = np.broadcast_to(fps.astype(np.float64), (count,))
    if not ((fps >= MIN_FPS) & (fps <= MAX_FPS)).all():  # also NaN
        raise InputError(path, f"'fps' must be from {MIN_FPS:g} to {MAX_FPS:g} frames per second")
    return fps


def _extra_column(values: np.ndarray) -> list[str]:
    if values.dtype.kind == "S":
        return [v.decode("utf-8", errors="replace") for v in values.tolist()]
    return [str(v) for v in values.tolist()]


def _string_list(arrays: _ArchiveReader, name: str, path: str) -> list[str] | None:
    if name not in arrays:
        return None
    values = arrays.get(name)
    if values.ndim != 1 or values.dtype.kind not in "US":
        raise InputError(path, f"'{name}' must be a list of strings, got {values.dtype} {values.shape}")
    return _strings(values, name, path)


def _decide_topology(arrays: _ArchiveReader, path: str, num_joints: int, requested: str | None) -> str:
    if requested is None and "topology" in arrays:
        stored = arrays.get("topology")
        if stored.shape != () or stored.dtype.kind not in "US":
            raise InputError(path, "'topology' must be one string")
        requested = _strings(stored.reshape(1), "topology", path)[0]
    if requested is not None:
        return topology_with_joints(requested, num_joints, path)
    names = _string_list(arrays, "joint_names", path)
    parents = None
    if "parents" in arrays:
        parents = tuple(_int_array(arrays.get("parents"), "parents", path).reshape(-1).tolist())
    candidates = [get_topology(n) for n in topology_names() if get_topology(n).num_joints == num_joints]
    if names is not None:
        by_name = [t for t in candidates if list(t.joint_names) == names]
        if not by_name:
            raise InputError(path, f"its {num_joints} joint names match no registered topology; pass one explicitly"
                                   " (--topology)")
        if parents is not None and by_name[0].parents != parents:
            raise InputError(path, f"joint names are those of {by_name[0].name} but the parents differ")
        return by_name[0].name
    if parents is not None:
        by_parents = [t for t in candidates if t.parents == parents]
        if len(by_parents) == 1:
            return by_parents[0].name
    only = topology_for_joint_count(num_joints)
    if only is None:
        raise InputError(path, f"cannot tell the topology of {num_joints} joints; pass one explicitly (--topology)")
    return only.name


def write_npz_dataset(path: str | Path, clips: list[Clip], action_names: list[str] | None = None) -> None:
    """Write clips in the ragged layout (with `topology`, `joint_names`, `parents`), atomically.

    Labels unknown for a clip are written as -1; `extra` keys become per-clip columns: integers when every
    value is an integer, strings otherwise (a missing value is ""). Partners of two-person clips go to
    `partners_flat` + `partner_offsets` (written only when a clip has any).
    """
    if not clips:
        raise InputError(path, "no clips to write")
    topo = get_topology(clips[0].topology)
    mixed = sorted({c.topology for c in clips} - {topo.name})
    if mixed:
        raise InputError(path, f"clips mix topologies: {topo.name} and {', '.join(mixed)}")
    lengths = np.array([c.num_frames for c in clips], dtype=np.int64)
    arrays: dict[str, np.ndarray] = {
        "joints_flat": np.concatenate([c.joints for c in clips]).astype(np.float32),
        "offsets": np.concatenate(([0], np.cumsum(lengths))),
        "lengths": lengths.astype(np.int32),
        "topology": np.array(topo.name),
        "joint_names": np.array(topo.joint_names),
        "parents": np.array(topo.parents, dtype=np.int16),
        "sample_name": np.array([c.sample_name or "" for c in clips]),
        "source_file": np.array([c.source_file or "" for c in clips]),
    }
    for name in LABELS:
        arrays[name] = np.array([-1 if getattr(c, name) is None else getattr(c, name) for c in clips], dtype=np.int64)
    fps = np.array([c.fps for c in clips], dtype=np.float32)
    arrays["fps"] = fps[:1].reshape(()) if (fps == fps[0]).all() else fps
    if action_names is not None:
        arrays["action_names"] = np.array(list(action_names), dtype=str)
    if any(c.partners is not None for c in clips):  # two-person clips: their partners, ragged like the joints
        rows = [np.zeros((0, topo.num_joints, 3), np.float32) if c.partners is None
                else c.partners.reshape(-1, topo.num_joints, 3) for c in clips]
        arrays["partners_flat"] = np.concatenate(rows).astype(np.float32)
        arrays["partner_offsets"] = np.concatenate(([0], np.cumsum([len(r) for r in rows]))).astype(np.int64)
    for name in sorted({k for c in clips for k in c.extra}):
        if name in RESERVED:
            raise InputError(path, f"extra field {name!r} clashes with a data-set array of the same name")
        arrays[name] = _extra_array([str(c.extra.get(name, "")) for c in clips])
    with atomic_write(path) as tmp, open(tmp, "wb") as fh:
        np.savez_compressed(fh, **arrays)


def _extra_array(values: list[str]) -> np.ndarray:
    try:
        numbers = [int(v) for v in values]
    except ValueError:
        numbers = None
    if numbers is not None and [str(n) for n in numbers] == values and all(abs(n) < 2**63 for n in numbers):
        return np.array(numbers, dtype=np.int64)
    return np.array(values, dtype=str)
