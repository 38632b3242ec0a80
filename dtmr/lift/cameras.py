"""Random pinhole cameras around a performer, and projection of 3-D joints to pixels.

World coordinates are the project's: metres, y up. A camera stands at `distance` from a target point near
the performer's hips (the hip midpoint of the window's centre frame plus a jitter, so the person is not
always at the image centre), seen under `elevation` (positive: the camera is higher and looks down) from
the horizontal direction `yaw` around the vertical axis, with a small `roll`. Its image has `focal` pixels
and principal point `principal`; pixel u grows to the image's right, v downwards.

The lifter's 3-D output is expressed in the camera's **level frame**: the camera frame with pitch and roll
removed, i.e. y up (gravity), z the camera's horizontal viewing direction, x = y × z (the image's left, as
in Kinect camera space, where a performer facing the camera faces -z and their right is +x).
The ranges (`CAMERA_RANGES`) are documented in docs/models.md.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: uniform ranges of the random cameras (angles in degrees, lengths in metres, focal and principal in pixels)
CAMERA_RANGES = {
    "yaw_deg": (0.0, 360.0),
    "elevation_deg": (-10.0, 35.0),
    "roll_deg": (-5.0, 5.0),
    "distance_m": (2.0, 8.0),
    "focal_px": (400.0, 2000.0),
    "principal_x_px": (200.0, 1100.0),
    "principal_y_px": (150.0, 650.0),
    #: standard deviation of the look-at point around the hip midpoint, per axis
    "target_jitter_m": (0.25, 0.25),
}


@dataclass(frozen=True)
class Cameras:
    """N cameras: level-frame rotations (N, 3, 3), camera rotations relative to the level frame (N, 3, 3),
    centres (N, 3), focal lengths (N,), principal points (N, 2)."""

    level: np.ndarray
    tilt: np.ndarray
    centre: np.ndarray
    focal: np.ndarray
    principal: np.ndarray


def _rot_x(a: np.ndarray) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    o, z = np.ones_like(a), np.zeros_like(a)
    return np.stack([np.stack([o, z, z], -1), np.stack([z, c, -s], -1), np.stack([z, s, c], -1)], -2)


def _rot_z(a: np.ndarray) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    o, z = np.ones_like(a), np.zeros_like(a)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


def random_cameras(targets: np.ndarray, rng: np.random.Generator, ranges: dict | None = None) -> Cameras:
    """One random camera looking at each of `targets` (N, 3) world points (jittered)."""
    r = {**CAMERA_RANGES, **(ranges or {})}
    n = len(targets)

    def draw(key):
        lo, hi = r[key]
        return rng.uniform(lo, hi, n)

    yaw, elev, roll = (np.radians(draw(k)) for k in ("yaw_deg", "elevation_deg", "roll_deg"))
    distance, focal = draw("distance_m"), draw("focal_px")
    principal = np.stack([draw("principal_x_px"), draw("principal_y_px")], -1)
    target = targets + rng.normal(0.0, r["target_jitter_m"][0], (n, 3))
    # horizontal unit vector from the target towards the camera; the camera looks along its opposite
    away = np.stack([np.sin(yaw), np.zeros(n), np.cos(yaw)], -1)
    centre = target + distance[:, None] * (np.cos(elev)[:, None] * away + np.sin(elev)[:, None] * np.array([0, 1, 0]))
    z_axis = -away
    y_axis = np.broadcast_to(np.array([0.0, 1.0, 0.0]), (n, 3))
    x_axis = np.cross(y_axis, z_axis)
    level = np.stack([x_axis, y_axis, z_axis], -2)  # rows: level-frame axes in world coordinates
    # pitch down by the elevation (a rotation about the level x axis), then roll about the optical axis
    tilt = _rot_z(roll) @ _rot_x(-elev)
    return Cameras(level=level, tilt=tilt, centre=centre, focal=focal, principal=principal)


def to_level_frame(points: np.ndarray, cameras: Cameras) -> np.ndarray:
    """World directions/offsets (N, ..., 3) rotated into each camera's level frame (no translation)."""
    return _rotate(cameras.level, points)


def _rotate(rotations: np.ndarray, points: np.ndarray) -> np.ndarray:
    """rotations (N, 3, 3) applied to points (N, ..., 3) (a matmul: much faster than einsum here)."""
    rt = np.swapaxes(rotations, 1, 2).reshape((len(rotations),) + (1,) * (points.ndim - 2) + (3, 3))
    return (points[..., None, :] @ rt)[..., 0, :]


def project(points: np.ndarray, cameras: Cameras) -> np.ndarray:
    """Pixels (N, ..., 2) of world points (N, ..., 3) seen by camera n."""
    rel = points - cameras.centre.reshape((-1,) + (1,) * (points.ndim - 2) + (3,))
    cam = _rotate(cameras.tilt @ cameras.level, rel)
    depth = np.maximum(cam[..., 2], 0.05)
    f = cameras.focal.reshape((-1,) + (1,) * (points.ndim - 2))
    pp = cameras.principal.reshape((-1,) + (1,) * (points.ndim - 2) + (2,))
    # camera x points to the image's left and y up: pixels grow to the right and downwards
    return pp + f[..., None] * np.stack([-cam[..., 0], -cam[..., 1]], -1) / depth[..., None]
