"""Load a pickle that holds only plain data and NumPy arrays, without ever running what a file names.

`pickle.load` calls any function a file names (`os.system`, ...). Here every global the file names goes
through `find_class`, which admits a fixed table and refuses anything else before it is imported:

- `numpy.ndarray`, `numpy.dtype`, `numpy[._]core.multiarray._reconstruct` and `.scalar`, `numpy[._]core.
  numeric._frombuffer`: what NumPy's own array, dtype and scalar pickles name (protocols 0-5, NumPy 1 and 2);
- `builtins.bytearray` (what `dtmr.io.pyskl_pickle` writes arrays through) and `_codecs.encode`, which
  protocol 2 pickles (mmcv's `dump`, so PYSKL's own files) use for every `bytes` value.

None of them is handed to the file as is: each is a checking stand-in (`_Admitted`) that accepts only the
arguments NumPy and `pickle` themselves write (`_codecs.encode` only to latin-1; dtypes only plain numbers,
booleans and strings, never Python objects or structured records), cannot be changed by the file, and is not a
type (so `NEWOBJ` cannot reach `__new__`). Array and dtype states set by the file's `BUILD` are checked before
NumPy sees them. Memory: the file is refused above `MAX_PICKLE_BYTES`; it is read through a reader that never
asks for more bytes than the file has left (nor allocates a declared length before reading it); the memo is
a dict (Python's pure-Python unpickler), not a table sized by the largest index a file names; and every
array's data must be exactly the bytes the file holds for it, so a declared shape can never allocate more
than the file's size.
"""

from __future__ import annotations

import math
import os
import pickle
import re
import struct
import warnings
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..errors import InputError
from .bounded_tree import TreeBounds, check_tree

#: larger files are refused before a byte is read (PYSKL's `ntu120_3danno.pkl` is about 4 GB, from its shapes)
MAX_PICKLE_BYTES = 8 * 2**30
#: the dtype kinds an array or scalar may have: booleans, integers, floats, complex, byte and text strings
_KINDS = frozenset("biufcSU")
#: the bytes of the arrays a pickle may reach, shared ones counted each time: 4 per byte of the file and 64 MiB
#: (a file's arrays hold at most its own bytes; a shared one is copied into as many clips as reference it)
ARRAY_BYTES_PER_FILE_BYTE = 4
ARRAY_BYTES_SLACK = 64 * 2**20
_TYPESTR = re.compile(r"[<>|=]?[a-zA-Z?][0-9]{0,6}")
_LATIN1 = ("latin1", "latin-1")


class RefusedGlobal(Exception):
    """The file names a Python object that is not on the admitted list."""

    def __init__(self, module: str, name: str):
        self.qualname = f"{module}.{name}"
        super().__init__(self.qualname)


def load_data_pickle(path: str | Path, what: str = "pickle"):
    """The object pickled in `path`, loaded with only the admitted globals; errors are one-line InputErrors
    (`what` names the kind of file in them)."""
    try:
        size = os.stat(path).st_size
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or exc})") from None
    if size > MAX_PICKLE_BYTES:
        raise InputError(path, f"is {size / 2**30:.1f} GiB; a {what} larger than {MAX_PICKLE_BYTES // 2**30} GiB "
                               "is refused")
    try:
        with open(path, "rb") as fh:
            tree = _DataUnpickler(_BoundedReader(fh, size)).load()
    except RefusedGlobal as exc:
        raise InputError(path, f"refused to load: it references the Python object {exc.qualname}, and a {what} "
                               "may hold only containers, text, numbers and NumPy arrays") from None
    except Exception as exc:  # noqa: BLE001 - nothing of the file's runs here, so any failure is a damaged file
        reason = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise InputError(path, f"not a readable {what} ({reason})") from None
    # a shared array is as many clips as it has references: their bytes may not exceed a few times the file's
    check_tree(tree, path, what, TreeBounds(max_array_bytes=ARRAY_BYTES_PER_FILE_BYTE * size + ARRAY_BYTES_SLACK))
    return tree


class _BoundedReader:
    """`read(n)` that never asks the file for more than it has left: a declared length of 2**60 bytes is
    then a short read (an error), not an allocation of that size."""

    def __init__(self, fh, size: int):
        self.fh = fh
        self.size = size

    def read(self, n: int) -> bytes:
        return self.fh.read(max(0, min(n, self.size - self.fh.tell())))

    def readline(self) -> bytes:
        return self.fh.readline()


class _DataUnpickler(pickle._Unpickler):
    """Python's own unpickler in Python: the C one grows its memo to the largest index a file names
    and fills it (`LONG_BINPUT 4294967295` in a 10-byte file: 64 GiB; measured, 2**25 takes 512 MB), this one
    keeps the memo in a dict."""

    def __init__(self, file):
        # latin-1: Python 2 `str` values (array data in old NumPy pickles) decode to the same bytes
        super().__init__(file, encoding="latin1")

    def _load_bytearray8(self):
        # the inherited handler allocates (and zeroes) the declared length before reading it
        (size,) = struct.unpack("<Q", self.read(8))
        data = self.read(size)
        if len(data) != size:
            raise pickle.UnpicklingError("pickle data was truncated")
        self.append(bytearray(data))

    dispatch: ClassVar[dict] = {**pickle._Unpickler.dispatch, pickle.BYTEARRAY8[0]: _load_bytearray8}

    def find_class(self, module: str, name: str):
        admitted = _ADMITTED.get((module, name))
        if admitted is None:
            raise RefusedGlobal(module, name)
        return admitted


class _Admitted:
    """A checking stand-in for one admitted global; the file can call it, nothing else."""

    __slots__ = ("build", "qualname")

    def __init__(self, qualname: str, build):
        object.__setattr__(self, "qualname", qualname)
        object.__setattr__(self, "build", build)

    def __setattr__(self, name, value):
        raise pickle.UnpicklingError(f"{self.qualname} cannot be changed")

    def __call__(self, *args):
        return self.build(*args)


class _PendingDtype:
    """A dtype named by the file; its byte order arrives by `BUILD`, checked before it is used."""

    __slots__ = ("order", "spec")

    def __init__(self, spec: str):
        self.spec = spec
        self.order = "="

    def __setstate__(self, state):
        # NumPy writes (version, byte order, subarray, names, fields, itemsize, alignment, flags); a plain dtype
        # has no subarray, names or fields
        if not (isinstance(state, tuple) and len(state) >= 5 and state[1] in ("<", ">", "|", "=")
                and state[2:5] == (None, None, None)):
            raise pickle.UnpicklingError("only plain number, boolean and string dtypes are loaded")
        self.order = state[1]

    def resolve(self) -> np.dtype:
        dtype = plain_dtype(self.spec)
        return dtype.newbyteorder(self.order) if self.order in "<>" else dtype


class _GuardedArray(np.ndarray):
    """An array whose pickled state (`BUILD`) is checked before NumPy applies it."""

    def __setstate__(self, state):
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise pickle.UnpicklingError("malformed array state")
        if len(state) == 5:
            if state[0] != 1:
                raise pickle.UnpicklingError(f"array state version {state[0]!r}")
            state = state[1:]
        shape, dtype, fortran, raw = state
        shape = _shape(shape)
        dtype = _dtype(dtype)
        if not isinstance(fortran, (bool, int)):
            raise pickle.UnpicklingError("malformed array state")
        raw = _raw_bytes(raw, math.prod(shape) * dtype.itemsize)
        super().__setstate__((1, shape, dtype, bool(fortran), raw))


def plain_dtype(spec: str) -> np.dtype:
    """`np.dtype(spec)` for a type string such as `<f4`, `i8`, `U20`, `?`; anything else is refused."""
    if not isinstance(spec, str) or not _TYPESTR.fullmatch(spec):
        raise pickle.UnpicklingError(f"dtype {str(spec)[:40]!r} is not a plain type string")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecated alias (`a5`) is refused too
        dtype = np.dtype(spec)
    if dtype.kind not in _KINDS or dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None:
        raise pickle.UnpicklingError(f"dtype {spec!r} is not a plain number, boolean or string type")
    return dtype


def _dtype(value) -> np.dtype:
    if isinstance(value, _PendingDtype):
        return value.resolve()
    if isinstance(value, str):
        return plain_dtype(value)
    raise pickle.UnpicklingError(f"an array's dtype is a {type(value).__name__}")


def _shape(value) -> tuple[int, ...]:
    # each size under 2**48 before math.prod multiplies them: 32 sizes of a million digits each take hours
    if not isinstance(value, tuple) or len(value) > 32 or not all(
            type(n) is int and 0 <= n < 2**48 for n in value):
        raise pickle.UnpicklingError(f"array shape {str(value)[:60]} is not a tuple of sizes")
    return value


def _raw_bytes(raw, expected: int) -> bytes | bytearray:
    if isinstance(raw, str):  # Python 2 pickles (decoded as latin-1 by the unpickler)
        raw = raw.encode("latin-1")
    if not isinstance(raw, (bytes, bytearray)):
        raise pickle.UnpicklingError(f"array data is a {type(raw).__name__}, not bytes")
    if len(raw) != expected:
        raise pickle.UnpicklingError(f"an array declares {expected} bytes of data but holds {len(raw)}")
    return raw


def _reconstruct(subtype, shape, typecode) -> _GuardedArray:
    # NumPy always writes `_reconstruct(ndarray, (0,), b"b")` and sets the real shape and data by BUILD
    if subtype is not _NDARRAY or shape != (0,) or not isinstance(typecode, (bytes, str)):
        raise pickle.UnpicklingError("_reconstruct is loaded only as NumPy writes it")
    return np.empty(0, dtype=np.uint8).view(_GuardedArray)


def _ndarray(shape, dtype, buffer) -> _GuardedArray:
    """`ndarray(shape, dtype, buffer)`, how `dtmr.io.pyskl_pickle` writes arrays."""
    shape, dtype = _shape(shape), _dtype(dtype)
    buffer = _raw_bytes(buffer, math.prod(shape) * dtype.itemsize)
    return np.frombuffer(buffer, dtype=dtype).reshape(shape).view(_GuardedArray)


def _frombuffer(buffer, dtype, shape, order) -> _GuardedArray:
    """Protocol 5 arrays with their data in band."""
    shape, dtype = _shape(shape), _dtype(dtype)
    if order not in ("C", "F"):
        raise pickle.UnpicklingError(f"array order {str(order)[:10]!r}")
    buffer = _raw_bytes(buffer, math.prod(shape) * dtype.itemsize)
    return np.frombuffer(buffer, dtype=dtype).reshape(shape, order=order).view(_GuardedArray)


def _scalar(dtype, raw):
    """A NumPy scalar (e.g. an `np.int64` label), loaded as the Python value it holds."""
    dtype = _dtype(dtype)
    return np.frombuffer(_raw_bytes(raw, dtype.itemsize), dtype=dtype)[0].item()


def _new_dtype(spec, align=False, copy=True) -> _PendingDtype:
    if not isinstance(align, (bool, int)) or not isinstance(copy, (bool, int)):
        raise pickle.UnpicklingError("malformed dtype")
    plain_dtype(spec)
    return _PendingDtype(spec)


def _bytearray(*args) -> bytearray:
    if len(args) == 1 and isinstance(args[0], (bytes, bytearray)):
        return bytearray(args[0])
    if len(args) == 2 and isinstance(args[0], str) and args[1] in _LATIN1:
        return bytearray(args[0].encode("latin-1"))
    if not args:
        return bytearray()
    raise pickle.UnpicklingError("bytearray is loaded only from bytes")


def _encode(text, encoding) -> bytes:
    if not isinstance(text, str) or encoding not in _LATIN1:
        raise pickle.UnpicklingError("_codecs.encode is loaded only to latin-1, as protocol 2 writes bytes")
    return text.encode("latin-1")


_NDARRAY = _Admitted("numpy.ndarray", _ndarray)
_ADMITTED: dict[tuple[str, str], _Admitted] = {
    ("numpy", "ndarray"): _NDARRAY,
    ("numpy", "dtype"): _Admitted("numpy.dtype", _new_dtype),
    ("builtins", "bytearray"): _Admitted("builtins.bytearray", _bytearray),
    ("_codecs", "encode"): _Admitted("_codecs.encode", _encode),
}
# protocols 0-2 name Python 3's builtins by their Python 2 module, as pickle's own `fix_imports` maps them back
_ADMITTED[("__builtin__", "bytearray")] = _ADMITTED[("builtins", "bytearray")]
for _core in ("numpy.core", "numpy._core"):
    _ADMITTED[(f"{_core}.multiarray", "_reconstruct")] = _Admitted(f"{_core}.multiarray._reconstruct", _reconstruct)
    _ADMITTED[(f"{_core}.multiarray", "scalar")] = _Admitted(f"{_core}.multiarray.scalar", _scalar)
    _ADMITTED[(f"{_core}.numeric", "_frombuffer")] = _Admitted(f"{_core}.numeric._frombuffer", _frombuffer)
