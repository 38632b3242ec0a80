"""Orbit camera: where the eye is, and how 3-D points (metres, y up) land on panel pixels.

Angles follow the data's own frame (Kinect camera space: x to the sensor's left, y up, z away from the
sensor). At azimuth 0 and elevation 0 the eye sits where the sensor was and looks along +z, so the
``front`` preset shows what the Kinect saw (a subject facing the sensor has their right hand on the
image's left). Azimuth turns the eye about the vertical axis through the target (positive = towards +x),
elevation raises it (90 = straight down, image up = +z). Projection is perspective with a vertical field
of view; pixel coordinates are x right, y down, origin at the panel's top-left corner.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

#: metres in front of the eye below which points are not drawn (and segments are cut)
NEAR = 0.05

#: (azimuth, elevation) in degrees; "oblique" is the export default because it shows depth.
PRESETS: dict[str, tuple[float, float]] = {
    "front": (0.0, 0.0),
    "side": (90.0, 0.0),
    "top": (0.0, 90.0),
    "oblique": (30.0, 20.0),
}
DEFAULT_PRESET = "oblique"


@dataclass(frozen=True)
class Camera:
    azimuth: float = PRESETS[DEFAULT_PRESET][0]
    elevation: float = PRESETS[DEFAULT_PRESET][1]
    distance: float = 4.0
    target: tuple[float, float, float] = (0.0, 0.8, 3.0)
    #: vertical field of view, degrees
    fov: float = 40.0

    def __post_init__(self) -> None:
        if not -90.0 <= self.elevation <= 90.0:
            raise ValueError(f"elevation must be within [-90, 90] degrees, got {self.elevation}")
        if not 0.0 < self.fov < 180.0:
            raise ValueError(f"fov must be within (0, 180) degrees, got {self.fov}")
        if not self.distance > 0.0:
            raise ValueError(f"distance must be positive, got {self.distance}")
        object.__setattr__(self, "target", tuple(float(v) for v in self.target))

    @classmethod
    def preset(cls, name: str, **changes) -> "Camera":
        """A camera at one of `PRESETS`; `changes` override any other field (distance, target, fov)."""
        try:
            azimuth, elevation = PRESETS[name]
        except KeyError:
            raise ValueError(f"unknown camera preset {name!r} (known: {', '.join(PRESETS)})") from None
        return cls(azimuth=azimuth, elevation=elevation, **changes)

    def replace(self, **changes) -> "Camera":
        return dataclasses.replace(self, **changes)

    def basis(self) -> np.ndarray:
        """(3, 3) rows: right, up, forward unit vectors in world space.

        `right` depends on the azimuth only, so the basis stays well defined looking straight down.
        """
        az, el = np.radians(self.azimuth), np.radians(self.elevation)
        to_eye = np.array([np.cos(el) * np.sin(az), np.sin(el), -np.cos(el) * np.cos(az)])
        forward = -to_eye
        right = np.array([-np.cos(az), 0.0, -np.sin(az)])
        up = np.cross(right, forward)
        return np.stack([right, up, forward])

    @property
    def eye(self) -> np.ndarray:
        return np.asarray(self.target) - self.distance * self.basis()[2]

    def to_view(self, points: np.ndarray) -> np.ndarray:
        """(..., 3) world points -> (..., 3) camera coordinates: x right, y up, z depth in front of the eye."""
        points = np.asarray(points, dtype=np.float64)
        return (points - self.eye) @ self.basis().T

    def focal_length(self, height: int) -> float:
        """Pixels per unit of (lateral offset / depth) for a panel `height` pixels tall."""
        return 0.5 * height / np.tan(np.radians(self.fov) / 2.0)

    def view_to_pixels(self, view: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        """(..., 3) camera coordinates -> (..., 2) pixels; NaN where the point is missing or behind `NEAR`."""
        width, height = size
        f = self.focal_length(height)
        depth = view[..., 2]
        with np.errstate(invalid="ignore", divide="ignore"):
            in_front = depth >= NEAR
            safe = np.where(in_front, depth, np.nan)
            x = 0.5 * width + f * view[..., 0] / safe
            y = 0.5 * height - f * view[..., 1] / safe
        return np.stack([x, y], axis=-1)

    def project(self, points: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        """(..., 3) world points -> (..., 2) pixel coordinates in a `size` = (width, height) panel."""
        return self.view_to_pixels(self.to_view(points), size)


def _joint_arrays(clips: Iterable) -> list[np.ndarray]:
    """Joint arrays of `clips`: (T, J, 3) arrays, or objects with a `joints` array (Clip, Panel)."""
    return [np.asarray(getattr(c, "joints", c), dtype=np.float64).reshape(-1, 3) for c in clips]


def scene_bounds(clips: Iterable, percentile: float = 0.5) -> tuple[np.ndarray, np.ndarray] | None:
    """(low, high) corners of the box holding the finite joints of all clips over all frames.

    Each axis is cut at `percentile` / 100 - `percentile` so a few glitched joints (Kinect sometimes
    throws a joint metres away for a frame) do not shrink everyone else. None when no joint is finite.
    """
    points = np.concatenate(_joint_arrays(clips), axis=0)
    points = points[np.isfinite(points).all(axis=1)]
    if points.size == 0:
        return None
    low, high = np.percentile(points, [percentile, 100.0 - percentile], axis=0)
    return low, high


def fit_camera(
    clips: Iterable,
    aspect: float = 4.0 / 3.0,
    azimuth: float | None = None,
    elevation: float | None = None,
    fov: float = 40.0,
    margin: float = 0.08,
    min_extent: float = 0.5,
) -> Camera:
    """A camera that frames every clip, over all their frames, in a panel of width/height `aspect`.

    The target is the centre of the joints' box (`scene_bounds`); the distance is the smallest one at
    which all 8 box corners project inside the panel, leaving `margin` (a fraction of each half-size)
    free at the borders. One camera for all panels keeps the skeletons comparable in size. Boxes smaller
    than `min_extent` metres along an axis are grown to it, so one still pose is not blown up.
    Azimuth and elevation default to the `DEFAULT_PRESET`.
    """
    default_az, default_el = PRESETS[DEFAULT_PRESET]
    camera = Camera(
        azimuth=default_az if azimuth is None else azimuth,
        elevation=default_el if elevation is None else elevation,
        fov=fov,
    )
    bounds = scene_bounds(clips)
    if bounds is None:
        return camera
    low, high = bounds
    centre = 0.5 * (low + high)
    half = np.maximum(0.5 * (high - low), 0.5 * min_extent)
    signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1], indexing="ij")).reshape(3, -1).T
    corners = (signs * half) @ camera.basis().T  # (8, 3) in camera axes, relative to the target
    tan_y = np.tan(np.radians(fov) / 2.0) * (1.0 - margin)
    tan_x = tan_y * aspect
    # depth of a corner is distance + corner_z; it must satisfy |corner_x| <= tan_x * depth (same for y)
    needed = np.concatenate([
        np.abs(corners[:, 0]) / tan_x - corners[:, 2],
        np.abs(corners[:, 1]) / tan_y - corners[:, 2],
        2.0 * NEAR - corners[:, 2],
    ])
    return camera.replace(distance=float(needed.max()), target=tuple(centre))


def clip_to_near(segments: np.ndarray) -> np.ndarray:
    """(L, 2, 3) segments in camera coordinates, cut where they cross the `NEAR` plane.

    The part behind the plane is dropped; a segment wholly behind it becomes NaN (not drawn).
    """
    segments = np.array(segments, dtype=np.float64)
    a, b = segments[:, 0], segments[:, 1]
    za, zb = a[:, 2:3], b[:, 2:3]
    with np.errstate(invalid="ignore", divide="ignore"):  # parallel to the plane: never crossing
        t = (NEAR - za) / (zb - za)
        crossing = a + t * (b - a)
    a_behind, b_behind = za < NEAR, zb < NEAR
    segments[:, 0] = np.where(a_behind & ~b_behind, crossing, a)
    segments[:, 1] = np.where(b_behind & ~a_behind, crossing, b)
    segments[(a_behind & b_behind)[:, 0]] = np.nan
    return segments
