"""The length policy of a side-by-side comparison, shared by the export and the Studio's clock.

The comparison runs for the longest clip; a shorter clip holds its last frame until the end (it neither
loops nor disappears, so the panels stay side by side and the held pose is visibly the clip's end).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def comparison_length(lengths: Iterable[int]) -> int:
    """Frames in the comparison of clips with these lengths: the longest one."""
    lengths = list(lengths)
    if not lengths or min(lengths) < 1:
        raise ValueError(f"a comparison needs clips of at least one frame, got lengths {lengths}")
    return max(lengths)


def frame_index(frame, length: int):
    """The frame of a clip of `length` frames shown at comparison frame `frame` (int or int array)."""
    if length < 1:
        raise ValueError(f"clip length must be positive, got {length}")
    if np.any(np.asarray(frame) < 0):
        raise ValueError(f"frame must not be negative, got {frame}")
    return np.minimum(frame, length - 1)
