"""Data space (y up, Kinect camera space) to the GL scene (z up, as pyqtgraph's camera orbits).

The map (x, y, z) -> (x, -z, y) is a proper rotation, so left and right stay where they are. The
Kinect sensor looks along +z; after the map it looks along -Y from the origin, so a camera placed
towards +Y of the performer (azimuth 90°) sees what the sensor saw: the "front" preset.
"""

from __future__ import annotations

import numpy as np


def to_scene(points: np.ndarray) -> np.ndarray:
    """(..., 3) data-space points -> (..., 3) float32 scene points."""
    points = np.asarray(points, dtype=np.float32)
    out = np.empty_like(points)
    out[..., 0] = points[..., 0]
    out[..., 1] = -points[..., 2]
    out[..., 2] = points[..., 1]
    return out
