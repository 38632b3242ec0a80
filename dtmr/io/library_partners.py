"""The partners of a library's clips (`Clip.partners`: the other people of a two-person capture), stored in an
optional `partners` group of the HDF5 clip library (docs/io.md, "The HDF5 clip library").

Layout, created when the first clip with partners is written (a library without two-person clips has no such
group, and readers of libraries written before it simply find none):

- `partners/joints_flat` (G, J, 3) float32, chunked, shuffle + gzip + fletcher32 like `joints_flat`;
- `partners/offsets` (N + 1,) int64: clip i's partners are rows `offsets[i]:offsets[i + 1]`, P x T_i rows (P
  partners of its T_i frames, partner by partner), none for a clip alone; attribute `crc32` over the offsets;
- `partners/crc32` (N,) uint32: CRC-32 of each clip's float32 partner bytes (0 for none), checked on every read.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import h5py
import numpy as np

from ..data.clip import MAX_PARTNERS, Clip
from ..errors import InputError

GROUP = "partners"
CHUNK_FRAMES = 128
_CHECKSUM = "crc32"


def _crc(values: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(values).tobytes())


def write_partners(h5: h5py.File, clips: Sequence[Clip], first_clip: int) -> None:
    """Append the partners of `clips` (library clips `first_clip`, ...); creates the group on the first clip
    that has any, with no partners for the clips already in the file."""
    if GROUP not in h5:
        if all(c.partners is None for c in clips):
            return
        _create(h5, first_clip)
    group = h5[GROUP]
    rows = [np.zeros((0, *clips[0].joints.shape[1:]), np.float32) if c.partners is None
            else c.partners.reshape(-1, *c.joints.shape[1:]) for c in clips]
    flat, offsets, crcs = group["joints_flat"], group["offsets"], group["crc32"]
    start = flat.shape[0]
    ends = start + np.cumsum([len(r) for r in rows], dtype=np.int64)
    flat.resize(int(ends[-1]), axis=0)
    if ends[-1] > start:
        flat[start:] = np.concatenate(rows)
    offsets.resize(first_clip + len(clips) + 1, axis=0)
    offsets[first_clip + 1:] = ends
    crcs.resize(first_clip + len(clips), axis=0)
    crcs[first_clip:] = [_crc(r) for r in rows]


def _create(h5: h5py.File, clips_before: int) -> None:
    joints = h5["joints_flat"]
    group = h5.create_group(GROUP)
    compressed = joints.compression is not None
    group.create_dataset(
        "joints_flat", shape=(0, *joints.shape[1:]), maxshape=(None, *joints.shape[1:]), dtype=np.float32,
        chunks=(CHUNK_FRAMES, *joints.shape[1:]), fletcher32=True,
        **({"shuffle": True, "compression": "gzip", "compression_opts": 4} if compressed else {}),
    )
    group.create_dataset("offsets", data=np.zeros(clips_before + 1, np.int64), maxshape=(None,), chunks=(1024,),
                         fletcher32=True)
    group.create_dataset("crc32", data=np.zeros(clips_before, np.uint32), maxshape=(None,), chunks=(1024,),
                         fletcher32=True)


def finish_partners(h5: h5py.File) -> None:
    """Store the checksums of the group's offsets and per-clip CRCs (small: N + 1 and N numbers)."""
    if GROUP in h5:
        for name in ("offsets", "crc32"):
            ds = h5[GROUP][name]
            ds.attrs[_CHECKSUM] = _crc(ds[()])


class PartnerStore:
    """The partners of an open library, read clip by clip; `None` store when the library has no group."""

    def __init__(self, group: h5py.Group, path: str, offsets: np.ndarray, crcs: np.ndarray):
        self._flat = group["joints_flat"]
        self._offsets = offsets
        self._crcs = crcs
        self._path = path

    @classmethod
    def open(cls, f: h5py.File, path: str, clips: int, joint_shape: tuple[int, int], check_links, check_storage,
             read_checked) -> PartnerStore | None:
        """Check the group's layout (the library's own checks are passed in) before anything large is read."""
        if GROUP not in f:
            return None
        check_links(f, (GROUP,), path)
        group = f[GROUP]
        if not isinstance(group, h5py.Group):
            raise InputError(path, f"'{GROUP}' must be a group")
        check_links(group, ("joints_flat", "offsets", "crc32"), path)
        for name in ("joints_flat", "offsets", "crc32"):
            if not isinstance(group.get(name), h5py.Dataset):
                raise InputError(path, f"'{GROUP}/{name}' is missing")
            check_storage(group[name], path)
        flat = group["joints_flat"]
        if flat.ndim != 3 or flat.shape[1:] != joint_shape or flat.dtype.kind != "f":
            raise InputError(path, f"'{GROUP}/joints_flat' must be (G, {joint_shape[0]}, 3) floats, got "
                                   f"{flat.dtype} {flat.shape}")
        offsets, crcs = read_checked(group["offsets"], path), read_checked(group["crc32"], path)
        if offsets.shape != (clips + 1,) or offsets.dtype.kind not in "iu" or crcs.shape != (clips,) \
                or crcs.dtype.kind not in "iu":
            raise InputError(path, f"'{GROUP}/offsets' and '{GROUP}/crc32' must have {clips + 1} and {clips} rows")
        if offsets.dtype == np.uint64 and offsets.max() > np.iinfo(np.int64).max:
            raise InputError(path, f"'{GROUP}/offsets' must not decrease from 0 to {flat.shape[0]}")
        offsets = offsets.astype(np.int64)
        if offsets[0] != 0 or offsets[-1] != flat.shape[0] or (np.diff(offsets) < 0).any():
            raise InputError(path, f"'{GROUP}/offsets' must not decrease from 0 to {flat.shape[0]}")
        return cls(group, path, offsets, crcs)

    def read(self, i: int, frames: int) -> np.ndarray | None:
        """(P, frames, J, 3) partners of clip i, or None; InputError when the rows do not fit or fail the CRC."""
        start, stop = int(self._offsets[i]), int(self._offsets[i + 1])
        if start == stop:
            return None
        count, left = divmod(stop - start, frames)
        if left or count > MAX_PARTNERS:
            raise InputError(self._path, f"clip {i}: {stop - start} partner rows do not make at most "
                                         f"{MAX_PARTNERS} partners of {frames} frames")
        rows = np.asarray(self._flat[start:stop], dtype=np.float32)
        if _crc(rows) != int(self._crcs[i]):
            raise InputError(self._path, f"the partners of clip {i} fail their checksum (the file is damaged)")
        return rows.reshape(count, frames, *rows.shape[1:])
