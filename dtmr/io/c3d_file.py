"""The 3-D points of a C3D file (motion capture labs' format: Vicon, Qualisys, Motion Analysis), in metres,
read through ezc3d in a child process (`dtmr.io.c3d_child`: a damaged file can crash ezc3d, and a crash
there must not take the Studio or the CLI with it).

Checked here: the header's signature (byte 2 is 0x50 in every C3D file), the file size, the child's outcome
(a crash, `DEADLINE_S` passed, or ezc3d's refusal: one line naming the file), fewer frames than declared (a
cut file, which ezc3d reads without complaint), the units and the values. Rules: docs/io.md ("C3D").
"""

from __future__ import annotations

import os
import struct
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from .child_script import child_command

#: C3D files of a session are tens of MB; a 2 GiB file would be a day of 100-marker capture
MAX_FILE_BYTES = 2 << 30
#: seconds ezc3d may take to read one file (a healthy 100 MB file takes about one)
DEADLINE_S = 120.0
#: POINT:UNITS -> metres per unit; C3D writers use "mm" almost always, a few "m" or "cm"
UNIT_SCALE = {"mm": 0.001, "millimeters": 0.001, "millimetres": 0.001, "cm": 0.01, "m": 1.0, "meters": 1.0,
              "metres": 1.0, "in": 0.0254, "inch": 0.0254, "inches": 0.0254}
#: no POINT:UNITS: C3D's documented default is millimetres
DEFAULT_UNITS = "mm"
#: the processor type (byte 4 of the parameter section) of big-endian files; 84 (Intel) and 85 (DEC) are not
MIPS_PROCESSOR = 86
#: values beyond this (in the file's units) are refused as absurd (100 km in mm)
MAX_COORDINATE = 1e8


@dataclass(frozen=True, eq=False)
class C3DPoints:
    """`points` (T, N, 3) float64 metres in the lab's axes, NaN where the file marks a point invalid;
    `labels` the N point names as written (`Subject:LASI` included); `units` as the file names them."""

    path: str
    points: np.ndarray
    labels: tuple[str, ...]
    rate: float
    units: str


def is_c3d(path: str | Path) -> bool:
    """A path named `.c3d` (the suffix every C3D writer uses); never raises."""
    return Path(path).suffix.lower() == ".c3d"


def read_c3d_points(path: str | Path) -> C3DPoints:
    """Every 3-D point of `path` in metres; InputError naming the file for anything unreadable."""
    path = str(path)
    header_frames = _check_header(path)
    with tempfile.TemporaryDirectory(prefix="dtmr-c3d-") as folder:
        out = os.path.join(folder, "points.npz")
        _run_child(path, out)
        try:
            with np.load(out, allow_pickle=False) as saved:
                fields = {name: saved[name] for name in saved.files}
        except (OSError, ValueError, KeyError) as exc:
            raise InputError(path, f"the C3D reader's answer could not be read ({exc})") from None
    points, residuals = fields["points"], fields["residuals"]
    labels = tuple(str(v) for v in fields["labels"].tolist())
    frames = points.shape[0]
    declared = max(int(fields["declared_frames"]), header_frames)
    if frames == 0 or points.shape[1] == 0:
        raise InputError(path, "no 3-D points in the file" if frames else "no frames in the file")
    if frames < declared:
        raise InputError(path, f"file ends after {frames} of {declared} frames")
    rate = float(fields["rate"])
    if not 0.01 <= rate <= 100_000:
        raise InputError(path, f"POINT:RATE {rate:g} is not a frame rate (0.01 to 100 000 per second)")
    units = str(fields["units"]).strip()
    scale = UNIT_SCALE.get((units or DEFAULT_UNITS).lower())
    if scale is None:
        raise InputError(path, f"POINT:UNITS {units[:20]!r} is not a length unit (mm, cm, m or in)")
    invalid = ~np.isfinite(points).all(axis=2) | (residuals < 0)  # C3D: a negative residual = invalid point
    if (np.abs(points[~invalid]) > MAX_COORDINATE).any():
        raise InputError(path, f"a point lies beyond ±{MAX_COORDINATE:g} {units or DEFAULT_UNITS}")
    metres = np.where(invalid[..., None], np.nan, points) * scale
    return C3DPoints(path=path, points=metres, labels=labels, rate=rate, units=units or DEFAULT_UNITS)


def _check_header(path: str) -> int:
    """Refuse what is not a C3D file; return the frame count its header declares (0: more than the header's
    16 bits hold). ezc3d reports the frames it could read as the file's, so a cut file is caught here."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as fh:
            head = fh.read(512)
            fh.seek(max(head[0] - 1, 0) * 512 + 3 if len(head) > 1 else 0)
            processor = fh.read(1)
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if size > MAX_FILE_BYTES:
        raise InputError(path, f"{size} bytes: over the {MAX_FILE_BYTES}-byte limit for a C3D file")
    if len(head) < 512 or head[1] != 0x50 or head[0] < 2:
        raise InputError(path, "not a C3D file (no C3D header: its second byte must be 0x50)")
    if head[0] * 512 > size:
        raise InputError(path, f"file ends before its parameter section (block {head[0]})")
    order = ">" if processor == bytes([MIPS_PROCESSOR]) else "<"  # Intel and DEC store integers little-endian
    first, last = struct.unpack(order + "HH", head[6:10])
    return 0 if last == 0xFFFF else max(last - first + 1, 0)


def _child_command() -> list[str]:
    return child_command("c3d_child")


def _run_child(path: str, out: str) -> None:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    try:
        done = subprocess.run([*_child_command(), path, out], capture_output=True, text=True, timeout=DEADLINE_S,
                              env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise InputError(path, f"damaged C3D file (reading did not finish in {DEADLINE_S:g} s)") from None
    if done.returncode == 0:
        return
    reason = " ".join(done.stdout.split())[:200]
    if done.returncode < 0:
        raise InputError(path, "damaged C3D file (reading it crashed the C3D library)")
    if done.returncode == 3 and reason:
        raise InputError(path, f"not a readable C3D file ({reason})")
    tail = " ".join(done.stderr.split())[-200:]
    if "No module named 'ezc3d'" in tail:
        raise InputError(path, "reading C3D files needs the ezc3d package (pip install ezc3d)")
    raise InputError(path, f"the C3D reader failed (exit status {done.returncode}: {tail or 'no message'})")
