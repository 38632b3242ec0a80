"""Numbers out of parsed JSON, checked: the keypoint readers (`coco_json`, `coco_dataset`, `pose_npy`) share
these so that a boolean, a ragged list or an absurd value is the same one-line InputError in every layout."""

from __future__ import annotations

import numpy as np

from ..errors import InputError

#: coordinates beyond this (pixels or metres) are refused as absurd
MAX_COORDINATE = 1e7


def holds_boolean(value) -> bool:
    """A JSON true or false anywhere in `value`'s nested lists (iteratively: the document's depth is bounded)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, bool):
            return True
        if isinstance(item, list):
            stack.extend(item)
    return False


def numbers_array(value, shape: tuple[int, ...], what: str, path: str) -> np.ndarray:
    """`value` (nested JSON lists) as a float64 array of `shape` (-1: any length), finite and bounded."""
    try:
        array = None if holds_boolean(value) else np.array(value)  # NumPy reads true as 1.0 among numbers
    except (ValueError, TypeError, OverflowError, RecursionError):
        array = None
    if array is None or array.dtype.kind not in "fiu" or array.ndim != len(shape) or any(
            want != -1 and got != want for got, want in zip(array.shape, shape)):
        found = "ragged or non-numeric lists" if array is None or array.dtype.kind not in "fiu" else \
            f"shape {list(array.shape)}"
        want = "x".join("N" if n == -1 else str(n) for n in shape)
        raise InputError(path, f"{what} must be numbers of shape {want}, got {found}")
    array = array.astype(np.float64)
    if not (np.abs(array) <= MAX_COORDINATE).all():
        raise InputError(path, f"{what} holds a number beyond ±{MAX_COORDINATE:g}")
    return array


def check_count(count: int, limit: int, what: str, path: str) -> None:
    if count > limit:
        raise InputError(path, f"{count} {what}: more than the {limit} allowed")
