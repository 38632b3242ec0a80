"""Which joint is under the mouse: the view's camera applied to the frame's joints, in widget pixels.

pyqtgraph draws with projection × view matrices (`GLViewMixin.projectionMatrix`, `viewMatrix`); the same
product maps a scene point to normalized device coordinates, and from there to the widget's logical
pixels (origin top-left, y down), where mouse positions live.
"""

from __future__ import annotations

import numpy as np

#: a joint farther than this from the mouse (logical pixels) is not picked
PICK_RADIUS = 8.0


def project(points: np.ndarray, mvp: np.ndarray, width: float, height: float) -> np.ndarray:
    """(N, 3) scene points -> (N, 2) pixel positions; NaN for missing points and points behind the camera."""
    points = np.asarray(points, dtype=np.float64)
    homogeneous = np.concatenate([points, np.ones((len(points), 1))], axis=1) @ np.asarray(mvp, np.float64).T
    w = homogeneous[:, 3]
    with np.errstate(invalid="ignore", divide="ignore"):
        ndc = homogeneous[:, :2] / w[:, None]
    pixels = np.stack([(ndc[:, 0] + 1.0) * 0.5 * width, (1.0 - ndc[:, 1]) * 0.5 * height], axis=1)
    pixels[~(w > 0)] = np.nan
    return pixels


def nearest_point(pixels: np.ndarray, x: float, y: float, radius: float = PICK_RADIUS) -> int | None:
    """Index of the projected point nearest to (x, y) within `radius` pixels, or None."""
    distances = np.hypot(pixels[:, 0] - x, pixels[:, 1] - y)
    distances[~np.isfinite(distances)] = np.inf
    if not len(distances) or distances.min() > radius:
        return None
    return int(np.argmin(distances))
