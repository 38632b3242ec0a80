"""What a person may tell the importers of formats that leave it open: the up axis, the unit, a joint map.

`dtmr data import/info` (`--up`, `--units`, `--scale`, `--joint-map`) and the Studio's File > Open with options
build one `ImportOptions`; `open_clip_source` hands it to the readers that use it: BVH (all four) and 3-D pose
arrays (all but the joint map). The other formats fix their axes and units, and ignore it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import DtmrError
from .body_size import UNITS
from .up_axis import normalize_up


@dataclass(frozen=True)
class ImportOptions:
    #: the file's up axis ("+x" ... "-z"; "x" is read as "+x"); None: detected (the format's convention first)
    up: str | None = None
    #: "m", "cm", "mm" or "in"; None: the unit that makes the body a person's size
    units: str | None = None
    #: metres per file unit, instead of `units`
    scale: float | None = None
    #: a JSON object {BVH joint name: NTU-25 joint name} (BVH only)
    joint_map: Path | None = None

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "up", normalize_up(self.up))
        except ValueError as exc:
            raise DtmrError(str(exc)) from None
        if self.units is not None and self.units not in UNITS:
            raise DtmrError(f"unknown unit {self.units!r} (known: {', '.join(UNITS)})")
        if self.scale is not None:
            if not (isinstance(self.scale, (int, float)) and math.isfinite(self.scale) and self.scale > 0):
                raise DtmrError(f"the scale must be a positive number of metres per unit, got {self.scale!r}")
            if self.units is not None:
                raise DtmrError("give the unit or the scale, not both")
        if self.joint_map is not None:
            object.__setattr__(self, "joint_map", Path(self.joint_map))

    @property
    def any(self) -> bool:
        """True when something was given (all None: every reader decides for itself)."""
        return any(v is not None for v in (self.up, self.units, self.scale, self.joint_map))

    def bvh_kwargs(self) -> dict:
        return {"up": self.up, "unit": self.units, "scale": self.scale, "joint_map": self.joint_map}

    def pose_kwargs(self) -> dict:
        return {"up": self.up, "units": self.units, "scale": self.scale}
