"""Foot contact and sliding of one clip, as the overlay and the sliding track show them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dtmr.skeleton import get_topology, sliding_speeds


@dataclass(frozen=True)
class FootSliding:
    """Per contact joint (`Topology.contact_joints`, ankle and toe of each foot):

    `speeds` (T, C) horizontal speed in m/s on contact frames, NaN elsewhere (`dtmr.skeleton.sliding_speeds`);
    `contacts` (T, C) bool, where `speeds` is defined: exactly `dtmr.skeleton.foot_contacts`, which
    `sliding_speeds` applies, read back instead of computed a second time; `mean` the clip's mean sliding
    speed (m/s) over all contact frames.
    """

    contact_joints: tuple[int, ...]
    feet: tuple[tuple[int, ...], ...]
    contacts: np.ndarray
    speeds: np.ndarray
    mean: float

    @classmethod
    def of(cls, joints: np.ndarray, topology: str, fps: float) -> "FootSliding":
        topo = get_topology(topology)
        speeds = sliding_speeds(joints, topo, fps)
        on_contact = speeds[np.isfinite(speeds)]
        return cls(
            contact_joints=topo.contact_joints,
            feet=topo.feet,
            contacts=np.isfinite(speeds),
            speeds=speeds,
            # = dtmr.skeleton.foot_sliding_speed, without computing the speeds a second time
            mean=float(on_contact.mean()) if on_contact.size else 0.0,
        )

    def per_frame(self) -> np.ndarray:
        """(T,) the fastest sliding contact joint of each frame, NaN on frames without contact."""
        speeds = self.speeds
        with np.errstate(invalid="ignore"):
            any_contact = np.isfinite(speeds).any(axis=1)
            fastest = np.where(np.isfinite(speeds), speeds, -np.inf).max(axis=1)
        return np.where(any_contact, fastest, np.nan).astype(np.float32)
