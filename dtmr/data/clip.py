"""`Clip`: one skeleton sequence with its metadata."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ..skeleton import get_topology


#: the frame rates a clip may have: a frame per 100 s to 100 kHz (motion capture runs at up to a few kHz); a
#: rate outside is a damaged field, and 1e300 or 1e-300 would overflow every time computed from it
MIN_FPS = 0.01
MAX_FPS = 100_000.0


@dataclass(eq=False)
class Clip:
    """A (T, J, 3) float32 sequence in metres (y up); a missing joint is NaN, never 0.

    Labels are integers as the data set numbers them (NTU: P003 -> subject 3, A017 -> action 17;
    the `.npz` sets keep their own 0-based numbers); None when unknown.
    """

    joints: np.ndarray
    topology: str = "ntu25"
    fps: float = 30.0
    subject: int | None = None
    action: int | None = None
    view: int | None = None
    repetition: int | None = None
    source_file: str | None = None
    sample_name: str | None = None
    #: free-form string metadata, e.g. provenance of an anonymized clip
    extra: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        with np.errstate(over="ignore"):  # a value beyond float32 becomes inf: refused below, one message
            joints = np.asarray(self.joints, dtype=np.float32)
        topo = get_topology(self.topology)
        self.topology = topo.name
        if joints.ndim != 3 or joints.shape[2] != 3:
            raise ValueError(f"clip joints must be (T, J, 3), got {joints.shape}")
        if joints.shape[0] == 0:
            raise ValueError("clip has no frames")
        if joints.shape[1] != topo.num_joints:
            raise ValueError(f"topology {topo.name} has {topo.num_joints} joints, clip has {joints.shape[1]}")
        if np.isinf(joints).any():
            raise ValueError("clip has infinite coordinates (or ones too large for float32)")
        if not (MIN_FPS <= self.fps <= MAX_FPS):  # also NaN
            raise ValueError(f"fps must be from {MIN_FPS:g} to {MAX_FPS:g}, got {self.fps:g}")
        self.joints = joints

    @property
    def num_frames(self) -> int:
        return int(self.joints.shape[0])

    @property
    def num_joints(self) -> int:
        return int(self.joints.shape[1])

    @property
    def name(self) -> str:
        return self.sample_name or (self.source_file or "clip")

    def replace(self, **changes) -> "Clip":
        """A copy with some fields changed (joints are not copied unless given)."""
        if "extra" not in changes:
            changes["extra"] = dict(self.extra)
        return dataclasses.replace(self, **changes)

    def metadata(self) -> dict:
        """Everything but the joints, as plain Python values."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "joints"}
