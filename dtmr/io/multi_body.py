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


def body_motions(bodies: np.ndarray, present: np.ndarray) -> list[float]:
    """Per body, the sum over joints and axes of the variance over the frames it is present in (as the
    `.skeleton` reader measures motion); -inf for a body never present.

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
    return motions


def main_body(bodies: np.ndarray, present: np.ndarray) -> int | None:
    """Index of the body with the largest motion (`body_motions`), the first on a tie; None when no body is
    present in any frame."""
    motions = body_motions(bodies, present)
    if not motions or max(motions) == -np.inf:
        return None
    return int(np.argmax(motions))


#: people kept beside the main actor (`Clip.partners`): NTU RGB+D's actions have one or two performers (a third
#: body in its files is a mis-detection), and PYSKL's NTU annotations keep two bodies (M = 2)
KEPT_PARTNERS = 1


def partner_order(motions: list[float], main: int) -> list[int]:
    """Indices of the bodies kept as partners of body `main`: the others by decreasing motion (the first on a
    tie), at most `KEPT_PARTNERS`; bodies never present (motion -inf) are left out."""
    others = [i for i, motion in enumerate(motions) if i != main and motion != -np.inf]
    others.sort(key=lambda i: -motions[i])
    return others[:KEPT_PARTNERS]


def aligned_partners(bodies: np.ndarray, present: np.ndarray, main: int, motions: list[float],
                     zero_is_missing: bool = True) -> np.ndarray | None:
    """(P, T', V, 3) float32 partners of body `main` in the T' frames it is present in: NaN where a partner is
    absent or (with `zero_is_missing`, as PYSKL writes a missing joint) a joint is exactly (0, 0, 0); None
    when no partner shares a frame with it. `bodies` is (M, T, V, 3), `present` (M, T)."""
    frames = present[main]
    kept = []
    for other in partner_order(motions, main):
        shared = present[other][frames]
        if not shared.any():
            continue
        joints = bodies[other][frames].astype(np.float32)
        joints[~shared] = np.nan
        if zero_is_missing:
            joints[(joints == 0).all(axis=-1)] = np.nan
        kept.append(joints)
    return np.stack(kept) if kept else None
