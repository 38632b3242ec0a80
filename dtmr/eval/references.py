"""Paired targets of the protocol (DESIGN §5). The references themselves are drawn by
`dtmr.data.ReferencePool.draw_all` (the rule: docs/ARCHITECTURE.md, "Reference pool")."""

from __future__ import annotations

import numpy as np


def paired_targets(source_actions: np.ndarray, source_views: np.ndarray, reference_subjects: np.ndarray,
                   pool_subjects: np.ndarray, pool_actions: np.ndarray, pool_views: np.ndarray) -> np.ndarray:
    """(N,) the pool clip showing the reference's subject performing the source's action in the source's
    view (the first such clip), or -1 when the data set has none: the ground truth of a retarget. A reference
    of unknown subject (negative) has none: another clip of unknown subject need not be the same person."""
    key = {}
    for i, k in enumerate(zip(pool_subjects.tolist(), pool_actions.tolist(), pool_views.tolist())):
        if k[0] >= 0:
            key.setdefault(k, i)
    return np.array([key.get(k, -1) for k in zip(reference_subjects.tolist(), source_actions.tolist(),
                                                 source_views.tolist())], dtype=np.int64)
