"""Quadruplets for paired training: two subjects x two actions, from one view (docs/splits.md).

A quadruplet is four clip indices in the order

    [(P1, A1), (P1, A2), (P2, A1), (P2, A2)]

with P1 != P2 and A1 != A2, all four from the same view when the metadata has views. With x = the four
clips, the cross-reconstruction target of D(E_A(x[0]), E_I(x[3])), the action of (P1, A1) performed
with the body of P2, is x[2] = (P2, A1); symmetrically D(E_A(x[3]), E_I(x[0])) -> x[1]. (PMR's public
code labels these pairs inconsistently, SPEC_NOTES §2.6; this order is the semantically correct one.)

Sampling is uniform over the valid (view, P1, A1, P2, A2) combinations, then uniform over the clips
(repetitions) of each of the four (view, subject, action) cells. It works on per-view subject x action
occupancy matrices, so its cost grows with the number of labels, not with the square of the clips.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..errors import DtmrError

#: rows sampled per block (bounds the (rows, actions) and (rows, subjects) weight matrices)
_BLOCK = 8192


def _pick(rng: np.random.Generator, weights: np.ndarray) -> np.ndarray:
    """One column per row of non-negative integer `weights` (R, K), with probability proportional to them."""
    cumulative = np.cumsum(weights, axis=1)
    draw = rng.integers(0, cumulative[:, -1])
    return np.count_nonzero(cumulative <= draw[:, None], axis=1)


class QuadrupletSampler:
    """Draws quadruplets from the clips `indices` (default: all) of a metadata table.

    Clips with an unknown (-1) subject or action are never used. Without a `view` field, or where the
    view is unknown (-1), those clips form one view of their own. `sample` is deterministic for a given
    seed and sequence of calls; to resume a run exactly, build a new sampler with the epoch's seed.
    """

    def __init__(self, metadata: Mapping[str, np.ndarray], indices=None, seed: int = 0):
        for name in ("subject", "action"):
            if name not in metadata:
                raise DtmrError(f"quadruplets need the clips' {name}, which the metadata does not have")
        subject = np.asarray(metadata["subject"])
        action = np.asarray(metadata["action"])
        total = subject.shape[0]
        view = np.asarray(metadata["view"]) if "view" in metadata else np.full(total, -1)
        if action.shape[0] != total or view.shape[0] != total:
            raise DtmrError("quadruplets: the metadata fields have different lengths")
        clips = np.arange(total) if indices is None else np.asarray(indices, dtype=np.int64).ravel()
        if clips.size and (clips.min() < 0 or clips.max() >= total):
            raise DtmrError(f"quadruplets: clip indices must lie in 0..{total - 1}")
        clips = clips[(subject[clips] >= 0) & (action[clips] >= 0)]

        self.views, v = np.unique(view[clips], return_inverse=True)
        self.subjects, s = np.unique(subject[clips], return_inverse=True)
        self.actions, a = np.unique(action[clips], return_inverse=True)
        shape = (self.views.size, self.subjects.size, self.actions.size)
        cell = np.ravel_multi_index((v, s, a), shape) if clips.size else np.zeros(0, dtype=np.int64)
        order = np.argsort(cell, kind="stable")
        self._clips = clips[order]
        self._count = np.bincount(cell, minlength=int(np.prod(shape)))
        self._start = np.cumsum(self._count) - self._count
        occupied = (self._count > 0).reshape(shape).astype(np.int64)
        self._occupied = occupied
        # co-occurrence of actions over subjects, per view: cooccur[v, a1, a2] = #subjects with both
        self._cooccur = np.einsum("vsa,vsb->vab", occupied, occupied)
        # number of valid (P2, A2) partners of each anchor cell (v, P1, A1); see _partners
        shared = np.einsum("vsa,vta->vst", occupied, occupied)  # actions two subjects share
        partners = np.einsum("vst,vta->vsa", shared, occupied)
        partners -= occupied.sum(axis=2, keepdims=True) + occupied.sum(axis=1, keepdims=True) - 1
        self._anchor_weight = np.cumsum(np.where(occupied > 0, partners, 0).ravel())
        #: number of valid (view, P1, A1, P2, A2) combinations
        self.combinations = int(self._anchor_weight[-1]) if self._anchor_weight.size else 0
        if self.combinations == 0:
            raise DtmrError(
                f"no quadruplet exists in these {clips.size} clips: it needs two subjects who both performed "
                "the same two actions (in the same view)"
            )
        self._rng = np.random.default_rng(seed)

    def sample(self, n: int) -> np.ndarray:
        """(n, 4) int64 clip indices, rows ordered [(P1, A1), (P1, A2), (P2, A1), (P2, A2)]."""
        if n < 0:
            raise DtmrError(f"cannot sample {n} quadruplets")
        return np.concatenate(
            [self._sample_block(min(_BLOCK, n - start)) for start in range(0, n, _BLOCK)] or [np.zeros((0, 4), np.int64)]
        )

    def _sample_block(self, n: int) -> np.ndarray:
        rng = self._rng
        anchor = np.searchsorted(self._anchor_weight, rng.integers(0, self.combinations, n), side="right")
        v, p1, a1 = np.unravel_index(anchor, self._occupied.shape)
        rows = np.arange(n)
        # A2: performed by P1, weighted by how many other subjects performed both A1 and A2
        action_weight = self._occupied[v, p1] * (self._cooccur[v, a1] - 1)
        action_weight[rows, a1] = 0
        a2 = _pick(rng, action_weight)
        # P2: uniform among the other subjects who performed both actions
        subject_weight = self._occupied[v, :, a1] * self._occupied[v, :, a2]
        subject_weight[rows, p1] = 0
        p2 = _pick(rng, subject_weight)
        cells = np.ravel_multi_index(
            (np.stack([v] * 4, 1), np.stack([p1, p1, p2, p2], 1), np.stack([a1, a2, a1, a2], 1)), self._occupied.shape
        )
        within = rng.integers(0, self._count[cells])
        return self._clips[self._start[cells] + within].astype(np.int64)
