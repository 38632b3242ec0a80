"""The ground grid under the skeletons: its height and its line segments."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..skeleton import get_topology

#: percentile of the foot heights taken as the floor (robust to a few glitched frames)
FLOOR_PERCENTILE = 2.0


def ground_level(joint_sets: Sequence[np.ndarray], topologies: Sequence[str]) -> float:
    """Height (y) of the floor shared by all clips: a low percentile of their feet's heights.

    Falls back to the lowest finite joint when no foot is finite, and to 0 when nothing is finite.
    """
    feet = np.concatenate([
        np.asarray(j)[:, get_topology(t).contact_joints, 1].ravel() for j, t in zip(joint_sets, topologies)
    ])
    feet = feet[np.isfinite(feet)]
    if feet.size:
        return float(np.percentile(feet, FLOOR_PERCENTILE))
    heights = np.concatenate([np.asarray(j)[..., 1].ravel() for j in joint_sets])
    heights = heights[np.isfinite(heights)]
    return float(heights.min()) if heights.size else 0.0


def grid_segments(low: np.ndarray, high: np.ndarray, y: float, spacing: float, border: float = 0.5) -> np.ndarray:
    """(L, 2, 3) lines of a square grid at height `y` covering the x/z box [low, high] plus `border` metres.

    Lines fall on multiples of `spacing`, so the floor does not shift when the box changes a little.
    """
    x0, x1 = np.floor((low[0] - border) / spacing), np.ceil((high[0] + border) / spacing)
    z0, z1 = np.floor((low[2] - border) / spacing), np.ceil((high[2] + border) / spacing)
    xs = np.arange(x0, x1 + 1) * spacing
    zs = np.arange(z0, z1 + 1) * spacing
    along_z = np.stack([
        np.stack([xs, np.full_like(xs, y), np.full_like(xs, zs[0])], axis=-1),
        np.stack([xs, np.full_like(xs, y), np.full_like(xs, zs[-1])], axis=-1),
    ], axis=1)
    along_x = np.stack([
        np.stack([np.full_like(zs, xs[0]), np.full_like(zs, y), zs], axis=-1),
        np.stack([np.full_like(zs, xs[-1]), np.full_like(zs, y), zs], axis=-1),
    ], axis=1)
    return np.concatenate([along_z, along_x], axis=0)
