"""SGN's segment sampling: split a clip into `seg` equal segments and take one frame from each.

Training draws one random frame per segment (a new draw every epoch); testing averages the logits of
several such draws (5 in SGN). Upstream SGN cuts segments of floor(T / seg) frames, so the last
T mod seg frames are never seen (frames 60-74 of a 75-frame clip) and clips shorter than seg are
zero-padded. Here the segment boundaries are floor(i * T / seg): the segments tile the whole clip, and a
clip shorter than seg repeats frames instead of gaining all-zero "frames" (docs/recognizers.md).
Without a random generator each segment gives its middle frame (deterministic, used for per-frame tracks).
"""

from __future__ import annotations

import numpy as np


def segment_bounds(num_frames: int, seg: int) -> tuple[np.ndarray, np.ndarray]:
    """(start, stop) frame of each of the `seg` segments; every segment has at least one frame."""
    if num_frames < 1:
        raise ValueError("cannot sample segments of an empty clip")
    edges = (np.arange(seg + 1) * num_frames) // seg
    starts = edges[:-1]
    stops = np.maximum(edges[1:], starts + 1)
    return starts, stops


def segment_indices(num_frames: int, seg: int, rng: np.random.Generator | None = None,
                    samples: int = 1) -> np.ndarray:
    """(samples, seg) frame indices, one per segment per sample; non-decreasing within a sample."""
    starts, stops = segment_bounds(num_frames, seg)
    widths = stops - starts
    if rng is None:
        return np.broadcast_to(starts + (widths - 1) // 2, (samples, seg)).copy()
    return starts + (rng.random((samples, seg)) * widths).astype(np.int64)


def window_indices(num_frames: int, seg: int, window: int, centres: np.ndarray) -> np.ndarray:
    """(len(centres), seg) frame indices: for each centre frame, the middle frames of the segments of the
    `window` frames around it. Windows keep their full length by shifting inside the clip at its ends;
    a clip shorter than `window` gives the whole clip for every centre."""
    span = min(window, num_frames)
    starts = np.clip(np.asarray(centres, dtype=np.int64) - window // 2, 0, num_frames - span)
    return starts[:, None] + segment_indices(span, seg)
