"""The HDF5 clip library: many clips of one topology in one file, read lazily (layout in docs/io.md).

Joints are stored ragged: `joints_flat (F, J, 3)` float32, chunked along frames with shuffle + gzip +
fletcher32 (so a damaged chunk is detected, not read as wrong numbers), and `offsets (N + 1,)`; clip i is
`joints_flat[offsets[i]:offsets[i + 1]]`. Per-clip metadata are 1-D datasets in the `clips` group. Opening
a library reads its attributes and `offsets` only; metadata columns are read on first use; a clip's joints
are read when the clip is. Every write builds a complete file under a temporary name and renames it into
place (`atomic_write`): an append copies the file first, so a failure leaves the existing library as it was.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import shutil
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import h5py
import numpy as np

from ..data.clip import Clip
from ..errors import InputError
from ..skeleton import get_topology
from .atomic import atomic_write
from .hdf5_output import hdf5_output
from .hdf5_watchdog import check_readable
from .int_labels import labels_as_int64
from .library_partners import PartnerStore, finish_partners, write_partners

FORMAT = "dtmr-clip-library"
VERSION = 1
#: frames per chunk of `joints_flat`: 128 x 25 x 3 float32 = 38 kB, a few clips per chunk
CHUNK_FRAMES = 128
INT_COLUMNS = ("subject", "action", "view", "repetition")
TEXT_COLUMNS = ("sample_name", "source_file", "topology", "extra")
COLUMNS = (*INT_COLUMNS, "fps", *TEXT_COLUMNS)
#: per-clip CRC-32 of the clip's float32 joint bytes, checked on every read
JOINTS_CRC = "joints_crc32"
#: clips or frames buffered in memory before they are written
_BATCH_CLIPS = 4096
_BATCH_FRAMES = 1 << 17
#: the largest chunk a library may declare: HDF5 decompresses a whole chunk to read any of it (ours: 38 kB)
_MAX_CHUNK_BYTES = 1 << 24
#: attribute holding a dataset's CRC-32 (of its raw numbers, or of its strings joined by NUL)
_CHECKSUM = "crc32"
#: what h5py raises on damaged files (a damaged shape can ask for petabytes; a damaged header can turn a
#: dataset into another kind of object)
_READ_ERRORS = (OSError, KeyError, ValueError, RuntimeError, TypeError, AttributeError, MemoryError)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class ClipLibrary:
    """An open clip library; also a `ClipSource` (see dtmr.io.sources). Use as a context manager or close()."""

    format = "hdf5"

    def __init__(self, path: str | Path):
        self.path = str(path)
        if not Path(self.path).is_file():
            raise InputError(self.path, "no such file")
        self._file: h5py.File | None = None
        self._open()

    # -- opening and validation ------------------------------------------------------------------------
    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except _READ_ERRORS as exc:
            raise InputError(self.path, f"corrupted or unreadable clip library ({_one_line(exc)})") from None

    def _open(self) -> None:
        check_readable(self.path)  # some damage makes libhdf5 loop forever: a child process reads it first
        with self._reading():
            self._file = h5py.File(self.path, "r")
            try:
                self._validate()
            except BaseException:
                self._file.close()
                raise
        self._columns: dict[str, np.ndarray] = {}

    def _validate(self) -> None:
        f = self._file
        if f.attrs.get("format") != FORMAT:
            raise InputError(self.path, f"not a {FORMAT} file (no 'format' attribute saying so)")
        version = f.attrs.get("version")
        if not isinstance(version, (int, np.integer)) or version < 1:
            raise InputError(self.path, "no valid 'version' attribute (a positive integer)")
        if version > VERSION:
            raise InputError(self.path, f"library format version {version} is newer than this dtmr ({VERSION})")
        name = str(f.attrs.get("topology", ""))
        try:
            self.topology = get_topology(name).name
        except KeyError:
            raise InputError(self.path, f"unknown topology {name!r}") from None
        _check_links(f, ("joints_flat", "offsets", "clips", "action_names"), self.path)
        _check_links(f["clips"], (*COLUMNS, JOINTS_CRC), self.path)
        joints = f["joints_flat"]
        shape = (get_topology(self.topology).num_joints, 3)
        if joints.ndim != 3 or joints.shape[1:] != shape or joints.dtype.kind != "f":
            raise InputError(
                self.path, f"'joints_flat' must be (F, {shape[0]}, 3) floats, got {joints.dtype} {joints.shape}"
            )
        datasets = [joints, f["offsets"], *(f["clips"][column] for column in (*COLUMNS, JOINTS_CRC))]
        if "action_names" in f:
            datasets.append(f["action_names"])
        for ds in datasets:  # before anything is read: a declared shape is only what the header says
            _check_storage(ds, self.path)
        offsets = _read_checked(f["offsets"], self.path)
        if offsets.ndim != 1 or offsets.dtype.kind not in "iu" or len(offsets) < 1:
            raise InputError(self.path, "'offsets' must be a 1-D integer array")
        if offsets.dtype == np.uint64 and offsets.max() > np.iinfo(np.int64).max:
            raise InputError(self.path, f"'offsets' must increase from 0 to {joints.shape[0]}")
        offsets = offsets.astype(np.int64)
        if offsets[0] != 0 or offsets[-1] != joints.shape[0] or (np.diff(offsets) <= 0).any():
            raise InputError(self.path, f"'offsets' must increase from 0 to {joints.shape[0]}")
        self._offsets = offsets
        self._joints = joints
        for column in (*COLUMNS, JOINTS_CRC):
            ds = f["clips"][column]
            if ds.shape != (len(self),):
                raise InputError(self.path, f"column 'clips/{column}' does not have {len(self)} rows")
            text = h5py.check_string_dtype(ds.dtype) is not None
            if text != (column in TEXT_COLUMNS) or not text and ds.dtype.kind not in ("f" if column == "fps" else "iu"):
                wanted = "text" if column in TEXT_COLUMNS else "floats" if column == "fps" else "integers"
                raise InputError(self.path, f"column 'clips/{column}' must hold {wanted}, not {ds.dtype}")
        # two-person clips' partners: an optional group (`library_partners`), checked as strictly as the rest
        self._partners = PartnerStore.open(f, self.path, len(self), shape, _check_links, _check_storage,
                                           _read_checked)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> ClipLibrary:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __repr__(self) -> str:
        return f"ClipLibrary({self.path!r}, {len(self)} clips, {self.topology})"

    # -- metadata ----------------------------------------------------------------------------------
    @property
    def action_names(self) -> list[str] | None:
        with self._reading():
            if "action_names" not in self._file:
                return None
            return _read_checked(self._file["action_names"], self.path).tolist()

    @property
    def num_frames(self) -> np.ndarray:
        """(N,) frames of every clip."""
        return np.diff(self._offsets)

    def column(self, name: str) -> np.ndarray:
        """One metadata column for all clips: ints (-1 unknown), fps floats, or str objects ("" unknown)."""
        if name not in COLUMNS:
            raise KeyError(f"no column {name!r} (columns: {', '.join(COLUMNS)})")
        return self._column(name)

    def _column(self, name: str) -> np.ndarray:
        if name not in self._columns:
            with self._reading():
                ds = self._file["clips"][name]
                values = _read_checked(ds, self.path)
            self._columns[name] = labels_as_int64(values, self.path, name) if name in INT_COLUMNS else values
        return self._columns[name]

    def metadata(self, i: int) -> dict:
        """The `Clip` fields but joints of clip i (so `Clip(joints, **library.metadata(i))` works)."""
        i = self._index(i)
        meta = {name: _label_from_stored(self.column(name)[i]) for name in INT_COLUMNS}
        meta["fps"] = float(self.column("fps")[i])
        meta["topology"] = str(self.column("topology")[i]) or self.topology
        meta["sample_name"] = str(self.column("sample_name")[i]) or None
        meta["source_file"] = str(self.column("source_file")[i]) or None
        meta["extra"] = self._extra(i)
        return meta

    def _extra(self, i: int) -> dict[str, str]:
        with self._reading():
            extra = _extra_from_text(str(self.column("extra")[i]))
        if extra is None:
            raise InputError(self.path, f"clip {i}: 'extra' is not a JSON object")
        return extra

    def metadata_table(self) -> dict[str, np.ndarray]:
        """One array per field, length N: ints (-1 unknown), fps, str objects, `extra` dicts, `num_frames`."""
        table = {name: self.column(name) for name in COLUMNS if name != "extra"}
        table["extra"] = np.array([self._extra(i) for i in range(len(self))], dtype=object)
        table["num_frames"] = self.num_frames
        return table

    def find(self, **criteria) -> np.ndarray:
        """Indices of the clips matching every criterion, e.g. `find(subject=3, view=[1, 2], correct="1")`.

        A criterion is a value or a collection of accepted values; None matches unknown. Names that are not
        columns are looked up in each clip's `extra`.
        """
        keep = np.ones(len(self), dtype=bool)
        for name, wanted in criteria.items():
            accepted = list(wanted) if isinstance(wanted, (list, tuple, set, frozenset, np.ndarray)) else [wanted]
            if name in INT_COLUMNS or name == "fps":
                values = self.column(name)
                keep &= np.isin(values, [-1 if a is None else a for a in accepted])
            else:
                if name in TEXT_COLUMNS and name != "extra":
                    values = self.column(name).tolist()
                    accepted = {"" if a is None else str(a) for a in accepted}
                else:
                    values = [self._extra(i).get(name) for i in range(len(self))]
                    accepted = {None if a is None else str(a) for a in accepted}
                keep &= np.fromiter((v in accepted for v in values), dtype=bool, count=len(self))
        return np.flatnonzero(keep)

    # -- clips -------------------------------------------------------------------------------------
    def _index(self, i: int) -> int:
        n = len(self)
        if not -n <= int(i) < n:
            raise IndexError(f"clip index {i} out of range for {n} clips")
        return int(i) % n

    def read(self, i: int) -> Clip:
        """Clip i; reads only the chunks of `joints_flat` that hold it."""
        i = self._index(i)
        with self._reading():
            joints = self._joints[self._offsets[i]:self._offsets[i + 1]]
            self._check_joints(joints, i)
            return Clip(joints=joints, partners=self._read_partners(i), **self.metadata(i))

    def _read_partners(self, i: int) -> np.ndarray | None:
        """Clip i's partners (`Clip.partners`), None for a clip alone or a library without any."""
        if self._partners is None:
            return None
        return self._partners.read(i, int(self._offsets[i + 1] - self._offsets[i]))

    def _check_joints(self, joints: np.ndarray, i: int) -> None:
        """fletcher32 catches a damaged chunk, this a chunk lost from the index (it would read as zeros)."""
        with np.errstate(over="ignore"):  # float64 beyond float32: inf here, refused by Clip with one message
            joints = np.ascontiguousarray(joints, dtype=np.float32)
        if zlib.crc32(joints) != self._column(JOINTS_CRC)[i]:
            raise InputError(self.path, f"the joints of clip {i} fail their checksum (the file is damaged)")

    def read_many(self, indices: Iterable[int]) -> list[Clip]:
        return [self.read(i) for i in indices]

    def read_all_joints(self) -> tuple[np.ndarray, np.ndarray]:
        """(joints_flat, offsets) in one read, for training."""
        with self._reading():
            flat = self._joints[()]
        for i in range(len(self)):
            self._check_joints(flat[self._offsets[i]:self._offsets[i + 1]], i)
        return flat, self._offsets.copy()

    def read_all(self) -> list[Clip]:
        """Every clip, with one read of `joints_flat`."""
        flat, offsets = self.read_all_joints()
        with self._reading():
            return [
                Clip(joints=flat[offsets[i]:offsets[i + 1]], partners=self._read_partners(i), **self.metadata(i))
                for i in range(len(self))
            ]

    def __iter__(self) -> Iterator[Clip]:
        for i in range(len(self)):
            yield self.read(i)

    # -- writing -----------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str | Path,
        clips: Iterable[Clip],
        topology: str | None = None,
        action_names: Sequence[str] | None = None,
    ) -> ClipLibrary:
        """Write a new library (replacing any file at `path` only once it is complete) and open it.

        `clips` may be a generator: they are written in batches, never all held in memory. The topology is
        `topology` or that of the first clip; a clip of another topology is an InputError.
        """
        cls.write(path, clips, topology, action_names)
        return cls(path)

    @staticmethod
    def write(
        path: str | Path,
        clips: Iterable[Clip],
        topology: str | None = None,
        action_names: Sequence[str] | None = None,
        batch_clips: int | None = None,
        compress: bool = True,
    ) -> None:
        """`create` without opening the result: for a writer that does not read it back (opening checks the
        whole file in the HDF5 watchdog's child process first; `stored_form` gives what reading would).
        Clips are written `batch_clips` at a time (default _BATCH_CLIPS; fewer when their frames fill the
        batch first): a writer fed while it waits for more, like a release merge, writes small batches so that
        little is left to write after the last clip arrives. `compress=False` stores the joints without gzip
        (still chunked and checksummed): for scratch files read once, where gzip is half the writing time."""
        clips = iter(clips)
        first = next(clips, None)
        if topology is None and first is None:
            raise InputError(path, "no clips to write and no topology given")
        try:
            topo = get_topology(topology or first.topology)
        except KeyError:
            raise InputError(path, f"unknown topology {topology!r}") from None
        with atomic_write(path) as tmp:
            with hdf5_output(tmp, "w") as h5:
                _initialize(h5, topo.name, compress)
                if action_names is not None:
                    _set_action_names(h5, path, action_names)
                writer = _ClipWriter(h5, str(path), topo.name, batch_clips)
                for clip in itertools.chain([] if first is None else [first], clips):
                    writer.add(clip)
                writer.finish()

    def append(self, clips: Iterable[Clip], action_names: Sequence[str] | None = None) -> None:
        """Add clips; copy-on-write, so an exception midway leaves the file on disk byte-identical."""
        with atomic_write(self.path) as tmp:
            shutil.copyfile(self.path, tmp)
            with hdf5_output(tmp, "r+") as h5:
                if action_names is not None:
                    _set_action_names(h5, self.path, action_names)
                writer = _ClipWriter(h5, self.path, self.topology)
                for clip in clips:
                    writer.add(clip)
                writer.finish()
        self.close()
        self._open()


def _initialize(h5: h5py.File, topology: str, compress: bool = True) -> None:
    topo = get_topology(topology)
    h5.attrs["format"] = FORMAT
    h5.attrs["version"] = VERSION
    h5.attrs["topology"] = topo.name
    h5.attrs["joint_names"] = list(topo.joint_names)
    h5.attrs["parents"] = np.array(topo.parents, dtype=np.int16)
    h5.create_dataset(
        "joints_flat", shape=(0, topo.num_joints, 3), maxshape=(None, topo.num_joints, 3), dtype=np.float32,
        chunks=(CHUNK_FRAMES, topo.num_joints, 3), fletcher32=True,
        **({"shuffle": True, "compression": "gzip", "compression_opts": 4} if compress else {}),
    )
    h5.create_dataset("offsets", data=np.zeros(1, dtype=np.int64), maxshape=(None,), chunks=(1024,), fletcher32=True)
    clips = h5.create_group("clips")
    for name in INT_COLUMNS:
        clips.create_dataset(name, shape=(0,), maxshape=(None,), dtype=np.int64, chunks=(1024,), fletcher32=True)
    clips.create_dataset("fps", shape=(0,), maxshape=(None,), dtype=np.float64, chunks=(1024,), fletcher32=True)
    for name in TEXT_COLUMNS:
        clips.create_dataset(name, shape=(0,), maxshape=(None,), dtype=h5py.string_dtype("utf-8"), chunks=(1024,))
    clips.create_dataset(JOINTS_CRC, shape=(0,), maxshape=(None,), dtype=np.uint32, chunks=(1024,), fletcher32=True)


def _set_action_names(h5: h5py.File, path: str | Path, action_names: Sequence[str]) -> None:
    names = [str(n) for n in action_names]
    if "action_names" in h5:
        if h5["action_names"].asstr()[()].tolist() != names:
            raise InputError(path, "the action names differ from those already in the library")
        return
    ds = h5.create_dataset("action_names", data=np.array(names, dtype=object), dtype=h5py.string_dtype("utf-8"))
    ds.attrs[_CHECKSUM] = _checksum(ds.asstr()[()])


class _ClipWriter:
    """Appends clips to an open library file in batches.

    Into a new file it keeps the checksum of every dataset running as it writes (zlib's CRC continues over
    consecutive bytes), so `finish` does not read the whole file back; appending to an existing file
    checksums what is in the file instead."""

    def __init__(self, h5: h5py.File, path: str, topology: str, batch_clips: int | None = None):
        self.h5 = h5
        self.path = path
        self.topology = topology
        self.batch_clips = _BATCH_CLIPS if batch_clips is None else batch_clips
        self.clips: list[Clip] = []
        self.frames = 0
        offsets = h5["offsets"]
        #: dataset name -> CRC of what was written so far; None: read the file back at the end
        self.crcs: dict[str, int] | None = \
            {"offsets": _checksum(offsets[()])} if offsets.shape[0] == 1 and not len(h5["clips"][JOINTS_CRC]) else None

    def add(self, clip: Clip) -> None:
        if clip.topology != self.topology:
            raise InputError(
                clip.source_file or self.path,
                f"clip {clip.name} has topology {clip.topology}, the library holds {self.topology} "
                "(joint sets cannot be mixed)",
            )
        self.clips.append(clip)
        self.frames += clip.num_frames
        if len(self.clips) >= self.batch_clips or self.frames >= _BATCH_FRAMES:
            self.flush()

    def finish(self) -> None:
        """Write what is buffered, then checksum `offsets` and every column (see `_read_checked`)."""
        self.flush()
        finish_partners(self.h5)
        for name, ds in (("offsets", self.h5["offsets"]),
                         *((name, self.h5["clips"][name]) for name in (*COLUMNS, JOINTS_CRC))):
            if self.crcs is not None:
                ds.attrs[_CHECKSUM] = self.crcs.get(name, 0)
            else:
                ds.attrs[_CHECKSUM] = _checksum(ds.asstr()[()] if ds.dtype.kind == "O" else ds[()])

    def _checksum_more(self, name: str, values: np.ndarray) -> None:
        """Continue `name`'s running checksum over `values`, appended after what it covers (`_checksum`'s
        bytes: the raw array, or the texts joined by NUL)."""
        if self.crcs is None:
            return
        if values.dtype.kind == "O":  # `_storable` texts: no NUL, valid UTF-8
            data = (("\0" if name in self.crcs else "") + "\0".join(values.tolist())).encode("utf-8")
        else:
            data = np.ascontiguousarray(values).tobytes()
        self.crcs[name] = zlib.crc32(data, self.crcs.get(name, 0))

    def flush(self) -> None:
        if not self.clips:
            return
        clips, self.clips, self.frames = self.clips, [], 0
        joints = self.h5["joints_flat"]
        first_frame = joints.shape[0]
        lengths = np.array([c.num_frames for c in clips], dtype=np.int64)
        joints.resize(first_frame + int(lengths.sum()), axis=0)
        joints[first_frame:] = np.concatenate([c.joints for c in clips])
        offsets = self.h5["offsets"]
        first_clip = offsets.shape[0] - 1
        offsets.resize(first_clip + len(clips) + 1, axis=0)
        ends = first_frame + np.cumsum(lengths)
        offsets[first_clip + 1:] = ends
        self._checksum_more("offsets", ends.astype(offsets.dtype))
        values = {
            **{name: [_stored_label(getattr(c, name)) for c in clips] for name in INT_COLUMNS},
            "fps": [c.fps for c in clips],
            "sample_name": [_storable(c.sample_name or "") for c in clips],
            "source_file": [_storable(c.source_file or "") for c in clips],
            "topology": [c.topology for c in clips],
            "extra": [_extra_text(c.extra) for c in clips],
            JOINTS_CRC: [zlib.crc32(np.ascontiguousarray(c.joints)) for c in clips],
        }
        group = self.h5["clips"]
        for name, column in values.items():
            ds = group[name]
            ds.resize(first_clip + len(clips), axis=0)
            array = np.array(column, dtype=object if name in TEXT_COLUMNS else ds.dtype)
            ds[first_clip:] = array
            self._checksum_more(name, array)
        write_partners(self.h5, clips, first_clip)


def stored_form(clip: Clip) -> Clip:
    """`clip` as a library gives it back once written: its metadata through the writer's encodings and the
    reader's decodings (unknown labels, text made storable, `extra` through JSON as strings). The joints are
    the clip's own (a Clip holds float32, which is what is stored). A writer that keeps what it wrote, a
    release part (dtmr/release/chunks.py), uses it instead of reading its file back; a test pins it to
    reading."""
    extra = _extra_from_text(_extra_text(clip.extra))
    return clip.replace(
        **{name: _label_from_stored(_stored_label(getattr(clip, name))) for name in INT_COLUMNS},
        fps=float(np.float64(clip.fps)), sample_name=_storable(clip.sample_name or "") or None,
        source_file=_storable(clip.source_file or "") or None, extra={} if extra is None else extra,
    )


def _stored_label(value: int | None) -> int:
    return -1 if value is None else value


def _label_from_stored(value) -> int | None:
    """A label column's value as a Clip field: negative numbers are unknown."""
    value = int(value)
    return None if value < 0 else value


def _extra_text(extra: dict) -> str:
    return _storable(json.dumps(extra, sort_keys=True, ensure_ascii=False)) if extra else ""


def _extra_from_text(text: str) -> dict[str, str] | None:
    """The `extra` column's text as a dict of strings; None when it is not a JSON object (a JSON error
    propagates: readers wrap it with the file's name)."""
    try:
        extra = json.loads(text) if text else {}
    except RecursionError:
        raise ValueError("the extra column is nested too deeply") from None
    if not isinstance(extra, dict):
        return None
    return {str(k): str(v) for k, v in extra.items()}


def _storable(text: str) -> str:
    """`text` as valid UTF-8 without NUL: a file name with undecodable bytes (lone surrogates) gets "?" for
    them, and so does a NUL (HDF5 strings end at it; h5py refuses to write one)."""
    return text.encode("utf-8", "replace").decode("utf-8").replace("\0", "?")


def _checksum(values: np.ndarray) -> int:
    if values.dtype.kind == "O":
        return zlib.crc32("\0".join(values.tolist()).encode("utf-8"))
    return zlib.crc32(np.ascontiguousarray(values).tobytes())


def _check_links(group: h5py.Group, names: Iterable[str], path: str) -> None:
    """Refuse links among `names`: a library never writes any, and an external (or soft) link would make
    it read another file (or another of its own objects) as this one."""
    for name in names:
        link = group.get(name, getlink=True)
        if isinstance(link, h5py.ExternalLink):
            raise InputError(path, f"'{group.name.rstrip('/')}/{name}' links to another file ({link.filename}); "
                                   "a library must hold its own data")
        if link is not None and not isinstance(link, h5py.HardLink):
            raise InputError(path, f"'{group.name.rstrip('/')}/{name}' is a link; a library holds no links")


def _check_storage(ds: h5py.Dataset, path: str) -> None:
    """Refuse a dataset that reads outside the file, or declares a shape its stored data cannot fill.

    Reading allocates the declared shape, and a damaged or crafted header can declare any. Contiguous data must
    be allocated in full; chunked data must have a stored chunk for every chunk of its extent, each at most
    `_MAX_CHUNK_BYTES` decompressed, so what a read allocates is bounded by what the file holds (a gzip chunk
    by deflate's own limit of about 1000:1). Virtual datasets and external raw storage (other files) are refused.
    """
    plist = ds.id.get_create_plist()
    if ds.is_virtual:
        raise InputError(path, f"'{ds.name}' is a virtual dataset (it reads other files); a library must hold "
                               "its own data")
    if plist.get_external_count():
        raise InputError(path, f"'{ds.name}' keeps its data in external files; a library must hold its own data")
    itemsize = ds.id.get_type().get_size()
    layout = plist.get_layout()
    if layout == h5py.h5d.CHUNKED:
        if math.prod(ds.chunks) * itemsize > _MAX_CHUNK_BYTES:
            raise InputError(path, f"'{ds.name}' declares chunks of {math.prod(ds.chunks) * itemsize} bytes, "
                                   f"more than {_MAX_CHUNK_BYTES}")
        needed = math.prod(-(-n // c) for n, c in zip(ds.shape, ds.chunks))
        stored = ds.id.get_num_chunks() if needed else 0
        if stored < needed:
            raise InputError(path, f"'{ds.name}' declares shape {ds.shape} ({needed} chunks) but the file stores "
                                   f"{stored} of its chunks")
    elif layout == h5py.h5d.CONTIGUOUS and ds.id.get_storage_size() < ds.size * itemsize:
        raise InputError(path, f"'{ds.name}' declares shape {ds.shape}, more than the file stores for it")


def _read_checked(ds: h5py.Dataset, path: str) -> np.ndarray:
    """A whole dataset (strings as str objects), checked against the CRC-32 stored when it was written.

    fletcher32 covers the numbers in each chunk, but not a chunk that a damaged index makes disappear (it
    reads as the fill value) nor strings, which HDF5 keeps outside the chunks.
    """
    values = ds.asstr()[()] if ds.dtype.kind == "O" else ds[()]
    if ds.attrs.get(_CHECKSUM) != _checksum(values):
        raise InputError(path, f"'{ds.name}' fails its checksum (the file is damaged)")
    return values
