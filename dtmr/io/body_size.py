"""How tall an imported body is, the file unit that makes it a person, and the check that it is one.

Formats without a unit (BVH) or with several in use (pose arrays) are read in the unit that gives a body of
a person's size. The height is measured along the body, not along an axis, so it needs neither the up axis
nor a standing pose: the length of the joint chain ankle -> knee -> hip -> pelvis -> spine -> neck -> head of the
NTU-25 mapping (both legs averaged, median over frames). On the synthetic NTU-25 bodies of `dtmr.data` it is
within 1 % of the head centre's height above the feet when standing; `HEIGHT_FACTOR` adds the top of the head.
A body from `MIN_HEIGHT_M` to `MAX_HEIGHT_M` is a person; outside, the unit is asked for.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import InputError
from ..skeleton import NTU25, to_ntu25

#: metres per file unit
UNITS = {"m": 1.0, "cm": 0.01, "mm": 0.001, "in": 0.0254}
MIN_HEIGHT_M = 0.8
MAX_HEIGHT_M = 2.5
#: the height a unit is chosen to come closest to (in ratio)
TYPICAL_HEIGHT_M = 1.7
#: stature / chain length (ankle to head centre): the top half of the head, about 6 % of a person's height
HEIGHT_FACTOR = 1.06
_CHAINS = tuple(
    tuple(NTU25.index(n) for n in (f"{side}_ankle", f"{side}_knee", f"{side}_hip", "spine_base", "spine_mid",
                                   "spine_shoulder", "neck", "head"))
    for side in ("left", "right")
)


def body_height(joints: np.ndarray, topology: str) -> float:
    """The body's height in the joints' own unit (NaN when no frame has a whole leg and spine)."""
    ntu = to_ntu25(joints, topology).astype(np.float64)
    lengths = []
    for chain in _CHAINS:
        points = ntu[:, list(chain)]
        lengths.append(np.linalg.norm(np.diff(points, axis=1), axis=-1).sum(axis=1))
    with warnings.catch_warnings():  # frames with neither leg known: NaN, without "Mean of empty slice"
        warnings.simplefilter("ignore", RuntimeWarning)
        per_frame = np.nanmean(np.stack(lengths), axis=0)
    per_frame = per_frame[np.isfinite(per_frame)]
    return float(np.median(per_frame)) * HEIGHT_FACTOR if per_frame.size else math.nan


def infer_unit(height: float) -> str | None:
    """The unit (of `UNITS`) that makes a body `height` units tall a person closest to 1.7 m; None if none does."""
    fitting = [unit for unit, metres in UNITS.items() if MIN_HEIGHT_M <= height * metres <= MAX_HEIGHT_M]
    if not fitting:
        return None
    return min(fitting, key=lambda unit: abs(math.log(height * UNITS[unit] / TYPICAL_HEIGHT_M)))


def metres_per_unit(path, height: float, units: str | None, scale: float | None, default: str | None = None
                    ) -> tuple[float, str]:
    """(metres per file unit, a note saying which and why) for a body `height` file units tall.

    `scale` (metres per unit) or `units` when given; else `default` (a format's own rule) when it makes a person
    or the body cannot be measured, else the inferred unit. No unit making a person: InputError asking for
    --units or --scale.
    """
    if scale is not None:
        return float(scale), f"scale {scale:g} m per unit (given)"
    if units is not None:
        return UNITS[units], f"units {units} (given)"
    if default is not None and not math.isfinite(height):
        return UNITS[default], f"units {default} (the body cannot be measured)"
    if default is not None and _is_person(height * UNITS[default]):
        return UNITS[default], f"units {default}"
    unit = infer_unit(height)
    if unit is None:
        raise InputError(path, _size_problem(height))
    return UNITS[unit], f"units {unit} (inferred from a body {height:.4g} units tall)"


def check_height(path, height_m: float, given: bool) -> str:
    """"" for a body of a person's height (or one that cannot be measured); otherwise an InputError, or a warning
    when the unit was `given`."""
    if passes_as_person(height_m):
        return ""
    problem = f"the body is {height_m:.3g} m tall, outside {MIN_HEIGHT_M:g}-{MAX_HEIGHT_M:g} m"
    if not given:
        raise InputError(path, f"{problem}: give its unit with --units (m, cm, mm, in) or --scale METRES_PER_UNIT")
    return f"{problem} with the unit given"


def _is_person(height_m: float) -> bool:
    return bool(MIN_HEIGHT_M <= height_m <= MAX_HEIGHT_M)


def passes_as_person(height_m: float) -> bool:
    """A body `height_m` metres tall needs no word: a person's height, or one that cannot be measured."""
    return not math.isfinite(height_m) or _is_person(height_m)


def _size_problem(height: float) -> str:
    if not math.isfinite(height) or height <= 0:
        return "cannot measure the body (no frame with a whole leg and spine), so its unit cannot be told"
    options = ", ".join(f"{height * metres:.3g} m in {unit}" for unit, metres in UNITS.items())
    return (f"a body {height:.4g} units tall is no person's height in any unit ({options}): give its unit with "
            "--units (m, cm, mm, in) or --scale METRES_PER_UNIT (a file kept in CMU's ASF unit, 1/0.45 inch: "
            "--scale 0.05644)")

