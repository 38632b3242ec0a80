"""The main actor of a multi-body array, chosen as for NTU `.skeleton` files (`SkeletonFile.main_body_id`):
the body with the most motion, the first one on a tie.

Formats that pad to a fixed number of bodies and frames (PYSKL's `keypoint` (M, T, V, C), the SGN / CTR-GCN
arrays) write an absent body as all zeros, so a body is present in a frame when any of its values is not 0.
"""

from __future__ import annotations

import numpy as np


def body_presence(bodies: np.ndarray) -> np.ndarray:
    """(M, T) booleans: body m is present in frame t (`bodies` is (M, T, V, C))."""
    return (bodies != 0).any(axis=(2, 3))


def main_body(bodies: np.ndarray, present: np.ndarray) -> int | None:
    """Index of the body with the largest motion (sum over joints and axes of the variance over the frames it
    is present in, as the `.skeleton` reader measures it); None when no body is present in any frame.

    NaN and infinite values count as 0 here; they are the reader's to keep or refuse."""
    motions = []
    for body, frames in zip(bodies, present):
        if not frames.any():
            motions.append(-np.inf)
            continue
        # a signalling NaN (damaged bytes) or 1e300 gives a NaN or infinite motion, not a warning
        with np.errstate(over="ignore", invalid="ignore"):
            values = np.nan_to_num(body[frames].astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
            motions.append(float(values.var(axis=0).sum()))
    if not motions or max(motions) == -np.inf:
        return None
    return int(np.argmax(motions))
