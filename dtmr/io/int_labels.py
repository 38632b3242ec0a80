"""The one rule every reader applies to stored integer labels (subject, action, view, repetition): they become
int64 (-1 unknown); a uint64 value of 2^63 or more, which would wrap to a negative number and so read as
"unknown", is refused naming the file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError

_INT64_MAX = np.iinfo(np.int64).max


def labels_as_int64(values: np.ndarray, path: str | Path, name: str) -> np.ndarray:
    if values.dtype == np.uint64 and values.size and int(values.max()) > _INT64_MAX:
        raise InputError(path, f"'{name}' holds a value too large for a label ({int(values.max())})")
    return values.astype(np.int64)
