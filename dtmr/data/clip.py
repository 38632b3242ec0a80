"""`Clip`: one skeleton sequence with its metadata.

A clip is one person (the main actor of a capture). A multi-person capture keeps the others in `partners`,
aligned with the clip's frames, so that the formats that hold several people (NTU `.skeleton`, PYSKL pickles,
the clip library) write them back; every model, metric and release works on `joints` alone.
"""

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
    #: the other people of a multi-person capture (NTU's two-person actions) in the clip's frames: (P, T, J, 3)
    #: float32, NaN where a partner is absent or a joint missing; None when the clip holds one person. Not
    #: metadata, and dropped by `replace` when the joints change (module docstring)
    partners: np.ndarray | None = None

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
        self.partners = _checked_partners(self.partners, joints.shape)

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
        """A copy with some fields changed (joints are not copied unless given). New `joints` or a new
        `topology` drop the partners unless `partners` is given too: they were the source's people, in the
        source's frames (an anonymized clip must not carry its partner's real motion)."""
        if "extra" not in changes:
            changes["extra"] = dict(self.extra)
        if ("joints" in changes or "topology" in changes) and "partners" not in changes:
            changes["partners"] = None
        return dataclasses.replace(self, **changes)

    @property
    def num_partners(self) -> int:
        return 0 if self.partners is None else int(self.partners.shape[0])

    def metadata(self) -> dict:
        """Everything but the joints and partners, as plain Python values."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _NOT_METADATA}


#: the fields of a Clip that are arrays of positions, not metadata
_NOT_METADATA = ("joints", "partners")
#: people beside the main one a clip may hold (NTU files: 2 people; PYSKL pickles pad to M = 2)
MAX_PARTNERS = 3


def _checked_partners(partners, shape: tuple[int, ...]) -> np.ndarray | None:
    """`partners` as (P, T, J, 3) float32 matching the clip's (T, J, 3) `shape`; None for none (P = 0)."""
    if partners is None:
        return None
    with np.errstate(over="ignore"):
        partners = np.asarray(partners, dtype=np.float32)
    if partners.ndim != 4 or tuple(partners.shape[1:]) != tuple(shape):
        raise ValueError(f"partners must be (P, {shape[0]}, {shape[1]}, 3), got {partners.shape}")
    if partners.shape[0] > MAX_PARTNERS:
        raise ValueError(f"a clip holds at most {MAX_PARTNERS} partners, got {partners.shape[0]}")
    if np.isinf(partners).any():
        raise ValueError("partners have infinite coordinates (or ones too large for float32)")
    return partners if partners.shape[0] else None
