"""Reader of the SGN / CTR-GCN preprocessed NTU arrays (`NTU60_CS.npz`, `NTU120_CSub.npz`, ...).

Layout: `x_train` (N, T, 150) — per frame two bodies × 25 joints × (x, y, z), frames zero-padded at the end
(T = 300), a body absent from a frame all zeros — `y_train` (N, classes) one-hot or (N,) class numbers, and the
same for `test`. Any multiple of 75 values per frame is read as that many bodies.

Each row becomes one clip: its main actor (`dtmr.io.multi_body`, as for `.skeleton` files) in the frames it is
present in, which also drops the padding. Joints at exactly 0 are kept: the preprocessing translates every frame
so that a joint lies at the origin, so 0 is a coordinate here, not a missing joint. Actions are the class numbers
(argmax of a one-hot row; 0-based: NTU's A017 is 16), subjects and the other labels are unknown (the format
has none). `extra["part"]` is `train` or `test`, `sample_name` is `train_000042` (part and row).

The archive is recognised by its member names (`x_train.npy` / `x_test.npy`) from the zip directory alone
(`is_sgn_npz`). Each `.npy` header is checked against the member's stored size before anything is read, and
`x` is read in blocks of `BLOCK_BYTES` (a row larger than that is refused), so memory holds the clips and one
block, never the whole array (CTR-GCN writes NTU120's `x_train` uncompressed, about 11 GB); a member declaring
more than `MAX_MEMBER_BYTES` is refused from its header.
"""

from __future__ import annotations

import lzma
import math
import struct
import tokenize
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import InputError
from .multi_body import aligned_partners, body_motions, body_presence, main_body
from .topology_arg import topology_with_joints

FORMAT = "sgn-npz"
PARTS = ("train", "test")
JOINTS = 25
FPS = 30.0
#: x is read this many bytes at a time
BLOCK_BYTES = 64 * 2**20
#: a larger array member is refused from its header (NTU120 CSub's x_train is about 11 GB)
MAX_MEMBER_BYTES = 32 * 2**30
_ZIP_MAGIC = b"PK\x03\x04"
_NPY_VERSIONS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
_READ_ERRORS = (OSError, ValueError, EOFError, KeyError, RuntimeError, NotImplementedError, MemoryError,
                OverflowError, struct.error, zipfile.BadZipFile, zlib.error, lzma.LZMAError)
#: what NumPy raises on a garbage `.npy` header (it parses it as a Python literal, with a tokenizer)
_HEADER_ERRORS = (ValueError, SyntaxError, tokenize.TokenError, RecursionError)


@dataclass(eq=False)
class SgnDataset:
    """The clips of an SGN / CTR-GCN archive (what `open_clip_source` wraps in an `InMemoryClipSource`)."""

    path: str
    topology: str
    clips: list[Clip]
    action_names: list[str] | None = None
    format: str = FORMAT


def is_sgn_npz(path: str | Path) -> bool:
    """A zip archive with `x_train.npy` or `x_test.npy` and no `joints` (the project's own `.npz` layout);
    reads the zip directory only, never an array, and never raises."""
    try:
        with open(path, "rb") as fh:
            if fh.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
                return False
        with zipfile.ZipFile(path) as archive:
            names = set(archive.namelist())
    except Exception:  # noqa: BLE001 - a sniff: whatever cannot be read is not this format
        return False
    return bool(names & {f"x_{part}.npy" for part in PARTS}) and not names & {"joints.npy", "joints_flat.npy"}


def read_sgn_npz(path: str | Path, topology: str | None = None) -> SgnDataset:
    """Every clip of `x_train` then `x_test`; damaged or malformed archives raise InputError naming the file."""
    path = str(path)
    topo = _topology(path, topology)
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise
    except _READ_ERRORS as exc:
        raise InputError(path, f"not a readable .npz archive ({_one_line(exc)})") from None
    with archive:
        names = set(archive.namelist())
        parts = [part for part in PARTS if f"x_{part}.npy" in names]
        if not parts:
            raise InputError(path, "no 'x_train' or 'x_test' array: not an SGN / CTR-GCN archive")
        clips: list[Clip] = []
        for part in parts:
            if f"y_{part}.npy" not in names:
                raise InputError(path, f"'x_{part}' without 'y_{part}'")
            actions = _labels(path, archive, f"y_{part}")
            clips.extend(_clips(path, archive, part, actions, topo))
    return SgnDataset(path=path, topology=topo, clips=clips)


def _topology(path: str, requested: str | None) -> str:
    return "ntu25" if requested is None else topology_with_joints(requested, JOINTS, path)


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


class _Member:
    """An open `.npy` member whose header was checked against the member's size; `read_rows` streams it."""

    def __init__(self, path: str, archive: zipfile.ZipFile, name: str):
        self.path = path
        self.name = name
        info = archive.getinfo(f"{name}.npy")
        self.fh = archive.open(info)
        try:
            self._check_header(info)
        except BaseException:
            self.fh.close()
            raise

    def _check_header(self, info: zipfile.ZipInfo) -> None:
        version = np.lib.format.read_magic(self.fh)
        if version not in _NPY_VERSIONS:
            raise ValueError(f"unsupported .npy format version {version[0]}.{version[1]}")
        try:
            self.shape, fortran, self.dtype = _NPY_VERSIONS[version](self.fh)
        except _HEADER_ERRORS as exc:
            raise ValueError(f"its .npy header cannot be parsed ({type(exc).__name__})") from None
        if self.dtype.hasobject or self.dtype.kind not in "biuf":
            raise ValueError(f"it holds {self.dtype}, not numbers")
        if fortran and len(self.shape) > 1:
            raise ValueError("it is stored in Fortran order")
        if any(n < 0 for n in self.shape):
            raise ValueError(f"its header declares a negative shape {self.shape}")
        declared = math.prod(self.shape) * self.dtype.itemsize
        if declared > MAX_MEMBER_BYTES:
            raise ValueError(f"it declares {declared / 2**30:.0f} GiB; at most {MAX_MEMBER_BYTES // 2**30} GiB "
                             "is read")
        if self.shape and math.prod(self.shape[1:]) * self.dtype.itemsize > BLOCK_BYTES:
            raise ValueError(f"its rows {self.shape[1:]} are larger than {BLOCK_BYTES // 2**20} MiB each")
        if self.fh.tell() + declared != info.file_size:
            raise ValueError(f"its header declares {declared} bytes of data after a {self.fh.tell()}-byte header, "
                             f"but the member holds {info.file_size} bytes")

    def read_rows(self, count: int) -> np.ndarray:
        """The next `count` rows (along the first axis)."""
        row_shape = self.shape[1:]
        size = count * math.prod(row_shape) * self.dtype.itemsize
        data = self.fh.read(size)
        if len(data) != size:
            raise EOFError("the member ends early")
        return np.frombuffer(data, dtype=self.dtype).reshape((count, *row_shape))


def _open_member(path: str, archive: zipfile.ZipFile, name: str) -> _Member:
    try:
        return _Member(path, archive, name)
    except _READ_ERRORS as exc:
        raise InputError(path, f"array {name!r} is unreadable ({_one_line(exc)})") from None


def _labels(path: str, archive: zipfile.ZipFile, name: str) -> list[int | None]:
    """Class numbers from one-hot rows (argmax) or integers (negative = unknown)."""
    member = _open_member(path, archive, name)
    with member.fh:
        try:
            y = member.read_rows(member.shape[0]) if member.shape else None
        except _READ_ERRORS as exc:
            raise InputError(path, f"array {name!r} is unreadable ({_one_line(exc)})") from None
    if y is not None and y.ndim == 1 and y.dtype.kind in "iu":
        return [None if v < 0 else int(v) for v in y.tolist()]
    if y is None or y.ndim != 2 or y.shape[1] == 0:
        raise InputError(path, f"'{name}' must be (N, classes) one-hot or (N,) integers, got "
                               f"{member.dtype} {member.shape}")
    y = y.astype(np.float64)
    if not np.isfinite(y).all():
        raise InputError(path, f"'{name}' holds NaN or infinite values")
    best = y.argmax(axis=1)
    top = y[np.arange(len(y)), best]
    ambiguous = (top <= 0) | ((y == top[:, None]).sum(axis=1) != 1)
    if ambiguous.any():
        raise InputError(path, f"'{name}' row {int(np.argmax(ambiguous))} is not one-hot (no single largest value)")
    return best.tolist()


def _clips(path: str, archive: zipfile.ZipFile, part: str, actions: list[int | None], topo: str) -> list[Clip]:
    name = f"x_{part}"
    member = _open_member(path, archive, name)
    with member.fh:
        shape = member.shape
        if len(shape) != 3 or shape[1] == 0 or shape[2] == 0 or shape[2] % (JOINTS * 3):
            raise InputError(path, f"'{name}' must be (N, T, 75 x bodies) with T > 0, got {member.dtype} {shape}")
        if shape[0] != len(actions):
            raise InputError(path, f"'{name}' has {shape[0]} rows but 'y_{part}' has {len(actions)}")
        count, frames, values = shape
        per_block = max(1, BLOCK_BYTES // (frames * values * member.dtype.itemsize))
        clips = []
        for start in range(0, count, per_block):
            try:
                block = member.read_rows(min(per_block, count - start))
            except _READ_ERRORS as exc:
                raise InputError(path, f"array {name!r} is unreadable ({_one_line(exc)})") from None
            bodies = block.reshape(len(block), frames, values // (JOINTS * 3), JOINTS, 3).swapaxes(1, 2)
            for offset, row in enumerate(bodies):
                i = start + offset
                clips.append(_clip(path, row, i, part, actions[i], topo))
    return clips


def _clip(path: str, bodies: np.ndarray, i: int, part: str, action: int | None, topo: str) -> Clip:
    present = body_presence(bodies)
    m = main_body(bodies, present)
    if m is None:
        raise InputError(path, f"'x_{part}' row {i} is all zeros (no body in any frame)")
    with np.errstate(over="ignore", invalid="ignore"):  # beyond float32 becomes inf, which Clip refuses
        joints = bodies[m][present[m]].astype(np.float32)
        # zeros are coordinates here (every frame is centred on a joint): only an absent partner is NaN
        partners = aligned_partners(bodies.astype(np.float32), present, m, body_motions(bodies, present),
                                    zero_is_missing=False)
    try:
        return Clip(joints=joints, topology=topo, fps=FPS, action=action, source_file=path,
                    sample_name=f"{part}_{i:06d}", extra={"part": part, "body_index": str(m)}, partners=partners)
    except ValueError as exc:
        raise InputError(path, f"'x_{part}' row {i}: {exc}") from None
