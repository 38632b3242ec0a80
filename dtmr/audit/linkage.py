"""Linkage: which raw clip a released clip is matched to, by a nearest neighbour in an attacker's embedding or
on a side channel's features, or by its frame count alone. A link counts when the matched raw clip is the
source or a raw clip with the same joints (N-UCLA holds 95 pairs of identical clips, v02 = v03)."""

from __future__ import annotations

import numpy as np

from ..attackers.side_channels import nearest


def nearest_raw(release_embedding: np.ndarray, raw_embedding: np.ndarray) -> np.ndarray:
    """(N,) the index of each released clip's nearest raw clip (cosine) in the attacker's embedding."""
    a = release_embedding / (np.linalg.norm(release_embedding, axis=1, keepdims=True) + 1e-12)
    r = raw_embedding / (np.linalg.norm(raw_embedding, axis=1, keepdims=True) + 1e-12)
    return np.argmax(a @ r.T, axis=1)


def nearest_source(release_embedding: np.ndarray, raw_embedding: np.ndarray, sources: np.ndarray,
                   raw_crcs: np.ndarray) -> np.ndarray:
    """(N,) whether each released clip's nearest raw clip is its own source, or a raw clip with the same
    joints (N-UCLA holds 95 pairs of identical clips, v02 = v03: either one links)."""
    return raw_crcs[nearest_raw(release_embedding, raw_embedding)] == raw_crcs[sources]


def tied_linkage(release_features: np.ndarray, raw_features: np.ndarray, sources: np.ndarray,
                 raw_crcs: np.ndarray) -> np.ndarray:
    """(N,) the chance each released clip is linked to its own source (or a raw clip with the same joints)
    by a nearest neighbour that breaks ties at random: 1 / #tied when one of the tied raw clips is it."""
    out = np.zeros(len(sources))
    for i, tied in enumerate(nearest(release_features, raw_features)):
        if (raw_crcs[tied] == raw_crcs[sources[i]]).any():
            out[i] = 1.0 / len(tied)
    return out


def frame_count_linkage(released_frames: np.ndarray, raw_frames: np.ndarray,
                        sources: np.ndarray) -> tuple[float, float]:
    """(percent of clips linked by frame count alone: the count equals the source's and no other raw clip
    has it; percent expected when guessing among the raw clips of the same count)."""
    counts = {int(n): int(c) for n, c in zip(*np.unique(raw_frames, return_counts=True))}
    same = released_frames == raw_frames[sources]
    sharing = np.array([counts.get(int(n), 0) for n in released_frames])
    unique = same & (sharing == 1)
    expected = np.where(same, 1.0 / np.maximum(sharing, 1), 0.0)
    return 100.0 * float(unique.mean()), 100.0 * float(expected.mean())
