"""`Panel`: one titled skeleton sequence of a side-by-side comparison, with its optional overlays."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..data.clip import Clip
from ..skeleton import get_topology, sliding_speeds

#: prediction lines a panel can show under its title
MAX_PREDICTION_LINES = 5


@dataclass(frozen=True, eq=False)
class Panel:
    """What one view of the comparison shows.

    `predictions[t]` are the text lines (at most `MAX_PREDICTION_LINES`) shown at the clip's frame t;
    `foot_speeds` is (T, C) horizontal speed in m/s of each `Topology.contact_joints` joint, NaN where
    the joint is not in ground contact (what `dtmr.skeleton.sliding_speeds` returns).
    """

    title: str
    joints: np.ndarray
    topology: str = "ntu25"
    predictions: Sequence[Sequence[str]] | None = None
    foot_speeds: np.ndarray | None = None

    def __post_init__(self) -> None:
        topo = get_topology(self.topology)
        object.__setattr__(self, "topology", topo.name)
        joints = np.asarray(self.joints, dtype=np.float32)
        if joints.ndim != 3 or joints.shape[0] < 1 or joints.shape[1:] != (topo.num_joints, 3):
            raise ValueError(f"panel {self.title!r}: joints must be (T, {topo.num_joints}, 3), got {joints.shape}")
        object.__setattr__(self, "joints", joints)
        if self.predictions is not None:
            predictions = tuple(tuple(str(line) for line in lines) for lines in self.predictions)
            if len(predictions) != self.num_frames:
                raise ValueError(f"panel {self.title!r}: {len(predictions)} prediction frames for {self.num_frames} frames")
            if any(len(lines) > MAX_PREDICTION_LINES for lines in predictions):
                raise ValueError(f"panel {self.title!r}: more than {MAX_PREDICTION_LINES} prediction lines on a frame")
            object.__setattr__(self, "predictions", predictions)
        if self.foot_speeds is not None:
            speeds = np.asarray(self.foot_speeds, dtype=np.float32)
            expected = (self.num_frames, len(topo.contact_joints))
            if speeds.shape != expected:
                raise ValueError(f"panel {self.title!r}: foot_speeds must be {expected}, got {speeds.shape}")
            object.__setattr__(self, "foot_speeds", speeds)

    @property
    def num_frames(self) -> int:
        return int(self.joints.shape[0])

    @classmethod
    def from_clip(
        cls,
        clip: Clip,
        title: str,
        predictions: Sequence[Sequence[str]] | None = None,
        foot_sliding: bool = True,
    ) -> "Panel":
        """A panel of `clip`; with `foot_sliding`, feet are coloured by their sliding speed on contact."""
        speeds = sliding_speeds(clip.joints, clip.topology, clip.fps) if foot_sliding else None
        return cls(title=title, joints=clip.joints, topology=clip.topology, predictions=predictions, foot_speeds=speeds)
