"""Foot-ground contact and foot sliding.

Heights and speeds are measured against the clip's floor plane (`dtmr.skeleton.floor.fit_floor`), not
along the camera's y axis: a Kinect pitched down by 14° sees a planted foot 20 cm "lower" once the person
has walked a metre towards it, which made the old level-floor rule miss planted feet and take swinging
ones for contacts (docs/evaluation.md, "Foot sliding on tilted camera-space data").

A contact joint (the ankle and toe joints of `Topology.feet`) touches the ground on a frame when it is
within `height_threshold` of its own resting height and its speed along the floor normal is below
`vertical_speed_threshold`. A joint's resting height is a low percentile of its heights above the floor
over the clip, so an ankle that rests 8 cm above the floor is handled like a toe resting at 2 cm, and a
few noisy frames do not matter; a joint whose resting height is more than `MAX_REST_HEIGHT` above the
clip's lowest contact joint never touches the ground (a leg held up for the whole clip). Foot sliding is
the speed of a contact joint parallel to the floor on its contact frames: zero for a planted foot.
"""

from __future__ import annotations

import numpy as np

from .floor import FloorPlane, fit_floor
from .topology import Topology, get_topology

HEIGHT_THRESHOLD = 0.05  # m above the ground level
VERTICAL_SPEED_THRESHOLD = 0.3  # m/s
GROUND_PERCENTILE = 5.0
MAX_REST_HEIGHT = 0.15  # m above the lowest contact joint


def joint_speeds(positions: np.ndarray, fps: float) -> np.ndarray:
    """(T, ..., 3) -> (T, ..., 3) per-frame velocity in m/s (central differences, one-sided at the ends)."""
    positions = np.asarray(positions, dtype=np.float32)
    if positions.shape[0] < 2:
        return np.zeros_like(positions)
    return (np.gradient(positions, axis=0) * fps).astype(np.float32)


def _floor(joints: np.ndarray, topology: Topology, floor: FloorPlane | None) -> FloorPlane:
    return fit_floor(joints, topology) if floor is None else floor


def resting_heights(joints: np.ndarray, topology: str | Topology, floor: FloorPlane | None = None) -> np.ndarray:
    """(C,) resting height above the floor of each contact joint; NaN for a joint that never rests on
    the ground. `floor` defaults to the clip's own (`fit_floor`)."""
    topo = get_topology(topology)
    heights = _floor(joints, topo, floor).heights(np.asarray(joints)[:, list(topo.contact_joints)])
    rest = np.full(heights.shape[1], np.nan, dtype=np.float32)
    for c in range(heights.shape[1]):
        h = heights[:, c]
        h = h[np.isfinite(h)]
        if h.size:
            rest[c] = np.percentile(h, GROUND_PERCENTILE)
    if np.isfinite(rest).any():
        rest[rest - np.nanmin(rest) > MAX_REST_HEIGHT] = np.nan
    return rest


def foot_contacts(
    joints: np.ndarray,
    topology: str | Topology,
    fps: float,
    height_threshold: float = HEIGHT_THRESHOLD,
    vertical_speed_threshold: float = VERTICAL_SPEED_THRESHOLD,
    floor: FloorPlane | None = None,
) -> np.ndarray:
    """(T, C) bool: contact of each joint of `topology.contact_joints` on each frame."""
    topo = get_topology(topology)
    plane = _floor(joints, topo, floor)
    feet = np.asarray(joints, dtype=np.float32)[:, list(topo.contact_joints)]
    rest = resting_heights(joints, topo, plane)
    with np.errstate(invalid="ignore"):
        low = (plane.heights(feet) - rest) < height_threshold
        still = np.abs(plane.vertical(joint_speeds(feet, fps))) < vertical_speed_threshold
    return low & still


def sliding_speeds(joints: np.ndarray, topology: str | Topology, fps: float, floor: FloorPlane | None = None) -> np.ndarray:
    """(T, C) speed (m/s) parallel to the floor of each contact joint, NaN where it is not in contact."""
    topo = get_topology(topology)
    plane = _floor(joints, topo, floor)
    feet = np.asarray(joints, dtype=np.float32)[:, list(topo.contact_joints)]
    horizontal = np.linalg.norm(plane.horizontal(joint_speeds(feet, fps)), axis=-1)
    contact = foot_contacts(joints, topo, fps, floor=plane)
    return np.where(contact, horizontal, np.nan).astype(np.float32)


def foot_sliding_speed(joints: np.ndarray, topology: str | Topology, fps: float) -> float:
    """Mean speed (m/s) parallel to the floor of the contact joints over their contact frames (0 when none)."""
    speeds = sliding_speeds(joints, topology, fps)
    speeds = speeds[np.isfinite(speeds)]
    return float(speeds.mean()) if speeds.size else 0.0
