"""The floor under a clip: a plane fitted to where its feet stand, so that camera-space data filmed by a
tilted camera (Kinect: 8-21° on N-UCLA) measure heights and horizontal speeds against the real floor and
not against the camera's y axis.

The candidate floor points are, on each frame, the lowest contact joint (`Topology.feet`): whoever stands
has a foot on the floor on most frames. A plane y = a·x + b·z + c is fitted to them by least squares,
with two guards for the cases where the tilt is not observable:

* the slope (a, b) is shrunk towards level by a ridge term of `SLOPE_PRIOR`² (a person who stands on one
  spot spreads the points over a few centimetres and cannot tell a tilt from tracking noise, while one
  who walks a metre across the room determines it), and is capped at `MAX_TILT`;
* a second fit drops the points more than `OUTLIER_MADS` scaled median absolute deviations from the first
  (a glitched frame, a jump).

Heights are then signed distances along the plane's unit normal (positive above the floor); the plane
passes through the middle of the standing points, so the feet of a standing person are at about 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .topology import Topology, get_topology

#: horizontal spread (m) of the standing points below which the slope is mostly shrunk to level
SLOPE_PRIOR = 0.05
#: steepest floor accepted (degrees): a steeper fit is a degenerate one (stairs, a lying person)
MAX_TILT = 30.0
OUTLIER_MADS = 3.0
#: smallest outlier band (m), so that a perfectly flat clip keeps all its points
MIN_OUTLIER_BAND = 0.02


@dataclass(frozen=True)
class FloorPlane:
    """The plane n·p = offset, n a unit normal pointing up (n_y > 0)."""

    normal: np.ndarray
    offset: float

    @property
    def tilt_degrees(self) -> float:
        """Angle between the floor and the camera's horizontal (x, z) plane."""
        return float(np.degrees(np.arccos(np.clip(self.normal[1], -1.0, 1.0))))

    def heights(self, points: np.ndarray) -> np.ndarray:
        """(...,) signed height of (..., 3) points above the floor (m); NaN for a missing point."""
        return np.asarray(points, dtype=np.float64) @ self.normal - self.offset

    def vertical(self, vectors: np.ndarray) -> np.ndarray:
        """(...,) component of (..., 3) vectors (velocities) along the floor's normal."""
        return np.asarray(vectors, dtype=np.float64) @ self.normal

    def horizontal(self, vectors: np.ndarray) -> np.ndarray:
        """(..., 3) part of (..., 3) vectors parallel to the floor."""
        vectors = np.asarray(vectors, dtype=np.float64)
        return vectors - self.vertical(vectors)[..., None] * self.normal


LEVEL = np.array([0.0, 1.0, 0.0])


def standing_points(joints: np.ndarray, topology: str | Topology) -> np.ndarray:
    """(P, 3) the lowest (smallest y) finite contact joint of every frame that has one."""
    topo = get_topology(topology)
    feet = np.asarray(joints, dtype=np.float64)[:, list(topo.contact_joints)]
    valid = np.isfinite(feet).all(axis=-1)
    y = np.where(valid, feet[..., 1], np.inf)
    lowest = np.argmin(y, axis=1)
    rows = np.flatnonzero(valid.any(axis=1))
    return feet[rows, lowest[rows]]


def _fit(points: np.ndarray) -> tuple[np.ndarray, float]:
    """(a, b), c of the ridge fit y = a·x + b·z + c, slope capped at MAX_TILT."""
    xz = points[:, [0, 2]]
    centre_xz, centre_y = xz.mean(axis=0), points[:, 1].mean()
    d = xz - centre_xz
    scatter = d.T @ d / len(points)
    slope = np.linalg.solve(scatter + SLOPE_PRIOR**2 * np.eye(2), d.T @ (points[:, 1] - centre_y) / len(points))
    steepest = np.tan(np.radians(MAX_TILT))
    norm = float(np.linalg.norm(slope))
    if norm > steepest:
        slope = slope * (steepest / norm)
    return slope, float(centre_y - slope @ centre_xz)


def fit_floor(joints: np.ndarray, topology: str | Topology) -> FloorPlane:
    """The floor plane of a (T, J, 3) clip (see the module docstring); level through y = 0 when no foot
    joint is ever finite."""
    points = standing_points(joints, topology)
    if len(points) == 0:
        return FloorPlane(LEVEL.copy(), 0.0)
    slope, c = _fit(points)
    residual = points[:, 1] - points[:, [0, 2]] @ slope - c
    spread = OUTLIER_MADS * 1.4826 * np.median(np.abs(residual - np.median(residual)))
    keep = np.abs(residual - np.median(residual)) <= max(spread, MIN_OUTLIER_BAND)
    if keep.sum() >= 3:
        slope, c = _fit(points[keep])
    normal = np.array([-slope[0], 1.0, -slope[1]])
    scale = float(np.linalg.norm(normal))
    return FloorPlane(normal / scale, c / scale)
