"""Dynamic time warping between skeleton clips, vectorized over batches of pairs (NumPy), and the warp it defines.

Frames are compared by their unit bone directions (parent -> child, concatenated), which do not depend on the
bodies' sizes: two people doing the same movement match frame by frame whatever their proportions. The cost of
a pair of frames is the squared Euclidean distance between those vectors; a path takes steps (1,0), (0,1),
(1,1) from the first frames to the last; a pair's DTW distance is the cost summed along its optimal path.

Every loop below runs over frames (64 in the model space), never over clips: a chunk of pairs is one array.
"""

from __future__ import annotations

import numpy as np
import torch

from ...skeleton import Topology

#: sequence pairs per chunk of `pair_distances` (a chunk's cost matrices: 4096 x 64 x 64 float64 = 128 MB)
PAIRS_PER_CHUNK = 4096


def bone_direction_features(joints: torch.Tensor, topology: Topology) -> torch.Tensor:
    """(B, T, J, 3) -> (B, T, (J-1)*3) unit bone directions."""
    vec = joints[:, :, topology.bone_children] - joints[:, :, topology.bone_parents]
    return (vec / vec.norm(dim=-1, keepdim=True).clamp(min=1e-6)).flatten(2)


def frame_costs(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    """(B, T, F) and (B, U, F) features -> (B, T, U) float64 squared distances between their frames."""
    return torch.cdist(a, b).pow(2).cpu().numpy().astype(np.float64)


def dtw_accumulated(cost: np.ndarray) -> np.ndarray:
    """(B, T, U) frame-cost matrices -> (B, T, U) accumulated costs: entry (i, j) is the cheapest path from
    (0, 0) to (i, j).

    Rows are filled with a prefix-minimum scan (C[i,j] = min(a[j], C[i,j-1] + d[i,j]) unrolled), so the only
    Python loop is over the T frames."""
    b, t, _ = cost.shape
    acc = np.empty_like(cost)
    acc[:, 0] = np.cumsum(cost[:, 0], axis=1)
    for i in range(1, t):
        diagonal = np.concatenate([np.full((b, 1), np.inf), acc[:, i - 1, :-1]], axis=1)
        entry = cost[:, i] + np.minimum(diagonal, acc[:, i - 1])
        prefix = np.cumsum(cost[:, i], axis=1)
        acc[:, i] = prefix + np.minimum.accumulate(entry - prefix, axis=1)
    return acc


def dtw_paths(cost: np.ndarray) -> np.ndarray:
    """(B, T, U) frame-cost matrices -> (B, T, U) 0/1 matrices of the optimal warping paths."""
    b, t, u = cost.shape
    acc = dtw_accumulated(cost)
    path = np.zeros((b, t, u), dtype=np.float32)
    rows, i, j = np.arange(b), np.full(b, t - 1), np.full(b, u - 1)
    path[rows, i, j] = 1
    for _ in range(t + u - 2):
        moving = (i > 0) | (j > 0)
        if not moving.any():
            break
        up = np.where(i > 0, acc[rows, np.maximum(i - 1, 0), j], np.inf)
        left = np.where(j > 0, acc[rows, i, np.maximum(j - 1, 0)], np.inf)
        diag = np.where((i > 0) & (j > 0), acc[rows, np.maximum(i - 1, 0), np.maximum(j - 1, 0)], np.inf)
        step = np.argmin(np.stack([diag, up, left]), axis=0)
        i = np.where(moving & (step != 2), i - 1, i)
        j = np.where(moving & (step != 1), j - 1, j)
        path[rows[moving], i[moving], j[moving]] = 1
    return path


@torch.no_grad()
def warp_onto(x: torch.Tensor, timing: torch.Tensor, topology: Topology) -> torch.Tensor:
    """(B, T, J, 3) clips `x` warped onto the frames of `timing` (B, U, J, 3) -> (B, U, J, 3); no gradient.

    Each frame of `timing` takes the mean of the frames of `x` the optimal path matches to it: the poses are
    x's, their timing is `timing`'s. A clip warped onto itself is returned unchanged."""
    cost = frame_costs(bone_direction_features(timing, topology), bone_direction_features(x, topology))
    path = torch.from_numpy(dtw_paths(cost)).to(x)  # (B, U, T)
    weights = path / path.sum(dim=2, keepdim=True)
    return torch.einsum("but,btjc->bujc", weights, x)


@torch.no_grad()
def pair_distances(a: torch.Tensor, b: torch.Tensor, pairs: np.ndarray,
                   chunk: int = PAIRS_PER_CHUNK) -> np.ndarray:
    """DTW distances of sequence pairs: `a` (N, T, F) and `b` (M, U, F) features (`bone_direction_features`),
    `pairs` (P, 2) indices into them -> (P,) float64, pair p being a[pairs[p, 0]] against b[pairs[p, 1]]."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    out = np.empty(len(pairs), dtype=np.float64)
    for start in range(0, len(pairs), chunk):
        part = torch.from_numpy(pairs[start:start + chunk]).to(a.device)
        cost = frame_costs(a[part[:, 0]], b[part[:, 1]])
        out[start:start + len(part)] = dtw_accumulated(cost)[:, -1, -1]
    return out
