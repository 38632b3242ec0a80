"""Reference choice of the protocol (DESIGN §3, §5): for each source clip, a clip drawn uniformly from a pool
of clips whose subject differs from the source's."""

from __future__ import annotations

import numpy as np

from ..errors import DtmrError


def draw_references(source_subjects: np.ndarray, pool_subjects: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(N,) pool indices, each uniform over the pool clips of another subject than its source."""
    source_subjects = np.asarray(source_subjects)
    pool_subjects = np.asarray(pool_subjects)
    out = np.empty(len(source_subjects), dtype=np.int64)
    for subject in np.unique(source_subjects):
        rows = np.flatnonzero(source_subjects == subject)
        candidates = np.flatnonzero(pool_subjects != subject)
        if candidates.size == 0:
            raise DtmrError(f"no reference for subject {subject}: every pool clip is of that subject")
        out[rows] = candidates[rng.integers(candidates.size, size=rows.size)]
    return out


def paired_targets(source_actions: np.ndarray, source_views: np.ndarray, reference_subjects: np.ndarray,
                   pool_subjects: np.ndarray, pool_actions: np.ndarray, pool_views: np.ndarray) -> np.ndarray:
    """(N,) the pool clip showing the reference's subject performing the source's action in the source's
    view (the first such clip), or -1 when the data set has none: the ground truth of a retarget."""
    key = {}
    for i, k in enumerate(zip(pool_subjects.tolist(), pool_actions.tolist(), pool_views.tolist())):
        key.setdefault(k, i)
    return np.array([key.get(k, -1) for k in zip(reference_subjects.tolist(), source_actions.tolist(),
                                                 source_views.tolist())], dtype=np.int64)
