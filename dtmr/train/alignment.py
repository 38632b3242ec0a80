"""Time alignment of a cross-reconstruction target to its source (dynamic time warping).

The target of a cross pair, x(P2, A1), is another performance than the source x(P1, A1): the same action
done by someone else, at their own pace. Without alignment the reconstruction loss asks the decoder for
the other performance's timing, which nothing it sees determines, and the best it can do is a blur. So the
target is warped onto the source's frames first: dynamic time warping between the two sequences of bone
directions (unit vectors parent -> child, which do not depend on the two bodies' sizes), then each source
frame takes the mean of the target frames matched to it. The body, style and amplitude of the target stay;
only its timing becomes the source's. (The paper does not say how it treats timing within a quadruplet;
docs/training.md.)
"""

from __future__ import annotations

import numpy as np
import torch

from ..skeleton import Topology


def _directions(joints: torch.Tensor, topology: Topology) -> torch.Tensor:
    """(B, T, J, 3) -> (B, T, (J-1)*3) unit bone directions."""
    vec = joints[:, :, topology.bone_children] - joints[:, :, topology.bone_parents]
    return (vec / vec.norm(dim=-1, keepdim=True).clamp(min=1e-6)).flatten(2)


def dtw_paths(cost: np.ndarray) -> np.ndarray:
    """(B, T, U) frame-distance matrices -> (B, T, U) 0/1 matrices of the optimal warping paths.

    Steps (1,0), (0,1), (1,1); the path runs from (0,0) to (T-1,U-1). Rows are filled with a prefix-minimum
    scan (C[i,j] = min(a[j], C[i,j-1] + d[i,j]) unrolled), so the only Python loops are over frames.
    """
    b, t, u = cost.shape
    acc = np.empty_like(cost)
    acc[:, 0] = np.cumsum(cost[:, 0], axis=1)
    for i in range(1, t):
        diagonal = np.concatenate([np.full((b, 1), np.inf), acc[:, i - 1, :-1]], axis=1)
        entry = cost[:, i] + np.minimum(diagonal, acc[:, i - 1])
        prefix = np.cumsum(cost[:, i], axis=1)
        acc[:, i] = prefix + np.minimum.accumulate(entry - prefix, axis=1)
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
def align_to_source(target: torch.Tensor, source: torch.Tensor, topology: Topology) -> torch.Tensor:
    """(B, T, J, 3) target warped onto the source's timing (same shape); no gradient."""
    a, b = _directions(source, topology), _directions(target, topology)
    cost = torch.cdist(a, b).pow(2).cpu().numpy().astype(np.float64)  # (B, T, T)
    path = torch.from_numpy(dtw_paths(cost)).to(target)
    weights = path / path.sum(dim=2, keepdim=True)  # each source frame: mean of its matched target frames
    return torch.einsum("btu,bujc->btjc", weights, target)
