"""The PYSKL / MMAction2 skeleton annotation pickle: the writer. The reader is `dtmr.io.pyskl_pickle_reader`,
which loads through `dtmr.io.safe_pickle` (plain data and arrays only), never `pickle.load`.

Layout (what PYSKL's `PoseDataset` and MMAction2's skeleton datasets read)::

    {"split": {"name": [frame_dir, ...], ...},
     "annotations": [{"frame_dir": str, "label": int, "keypoint": (M, T, V, C) float32, "total_frames": int}]}

3-D annotations (NTU's `ntu60_3danno.pkl`) carry no `img_shape` / `keypoint_score`; `keypoint` holds metres,
the clip's person and its partners here (M = 1, or 2 for a two-person clip). Written with pickle protocol 4, holding only dicts, lists, str, int and arrays.

Arrays are pickled as `numpy.ndarray(shape, "<f4", bytearray)` rather than through NumPy's own reducer: NumPy
2 pickles name `numpy._core.multiarray._reconstruct`, which NumPy < 1.26 (common in MMAction2 / PYSKL
environments) cannot import. `numpy.ndarray` and `builtins.bytearray` exist in every NumPy version, and a
bytearray buffer keeps the loaded array writable (PYSKL's transforms modify keypoints in place).
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..errors import InputError
from .atomic import atomic_write

PROTOCOL = 4
KEYPOINT_DTYPE = "<f4"


def pyskl_annotation(frame_dir: str, label: int, keypoint: np.ndarray) -> dict:
    """One annotation; `keypoint` is (M, T, V, C) and is stored as little-endian float32."""
    keypoint = np.ascontiguousarray(keypoint, dtype=KEYPOINT_DTYPE)
    if keypoint.ndim != 4 or keypoint.shape[1] == 0:
        raise ValueError(f"keypoint must be (M, T, V, C) with T > 0, got {keypoint.shape}")
    return {"frame_dir": str(frame_dir), "label": int(label), "keypoint": keypoint,
            "total_frames": int(keypoint.shape[1])}


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, np.ndarray):
            if obj.dtype.hasobject:
                raise TypeError("an array of Python objects cannot go into an annotation pickle")
            array = np.ascontiguousarray(obj)
            return np.ndarray, (tuple(int(n) for n in array.shape), array.dtype.str, bytearray(array.tobytes()))
        return NotImplemented


def write_pyskl_pickle(path: str | Path, annotations: Sequence[dict], split: Mapping[str, Sequence[str]]) -> None:
    """Write `{"split": split, "annotations": annotations}` atomically; every split name must be an
    annotation's `frame_dir`, and frame dirs must be unique."""
    frame_dirs = [a["frame_dir"] for a in annotations]
    if len(set(frame_dirs)) != len(frame_dirs):
        duplicated = sorted({d for d in frame_dirs if frame_dirs.count(d) > 1})
        raise InputError(path, f"frame_dir {duplicated[0]!r} names more than one annotation")
    known = set(frame_dirs)
    for name, members in split.items():
        unknown = [d for d in members if d not in known]
        if unknown:
            raise InputError(path, f"split {name!r} names {unknown[0]!r}, which is no annotation's frame_dir")
    data = {"split": {str(name): [str(d) for d in members] for name, members in split.items()},
            "annotations": [dict(a) for a in annotations]}
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=PROTOCOL).dump(data)
    with atomic_write(path) as tmp:
        tmp.write_bytes(buffer.getvalue())
