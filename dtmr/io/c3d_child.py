"""The child side of `dtmr.io.c3d_file`: read one C3D file with ezc3d and save what the reader needs as an
`.npz` (plain arrays, no pickles).

Run as a script (`python c3d_child.py IN.c3d OUT.npz`; `-m dtmr.io.c3d_child` in a frozen build), in its own
process, because ezc3d is C++ that trusts the file: a damaged parameter section can make it crash the whole
process (measured: one of 40 files with one to three random bytes changed segfaulted). The parent turns a
crash, a hang or an exception here into one line naming the file. It imports only NumPy and ezc3d (not the
`dtmr` package: faster to start), limits its own address space, and prints the reason of a failure on one
line of stdout, exiting 3.

Saved: `points` (frames, points, 3) float64 as stored (NaN where ezc3d marks a point invalid), `residuals`
(frames, points), `labels` (the POINT:LABELS, LABELS2, ... names, as many as there are points), `units`
(POINT:UNITS, "" when absent), `rate` (POINT:RATE, else the header's), `declared_frames` (the most frames the
header or POINT:FRAMES declare: a file holding fewer was cut short, which ezc3d does not report).
"""

from __future__ import annotations

import os
import sys

FAILED = 3
#: the address space the child may use: the interpreter, NumPy and ezc3d, plus a multiple of the file
_BASE_BYTES = 3 << 30
_PER_FILE_BYTE = 24


def _limit_memory(path: str) -> None:
    try:
        import resource

        limit = _BASE_BYTES + _PER_FILE_BYTE * os.path.getsize(path)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, OSError, ValueError):
        pass  # no limit on this platform: ezc3d reads what the file holds, the parent's deadline still holds


def _values(group: dict, name: str) -> list:
    entry = group.get(name)
    if not isinstance(entry, dict) or "value" not in entry:
        return []
    value = entry["value"]
    return list(value) if not isinstance(value, str) else [value]


def _labels(point: dict, count: int) -> list[str]:
    """POINT:LABELS, then LABELS2, LABELS3, ... (files with more than 255 points continue there)."""
    labels = [str(v) for v in _values(point, "LABELS")]
    more = 2
    while len(labels) < count and f"LABELS{more}" in point:
        labels += [str(v) for v in _values(point, f"LABELS{more}")]
        more += 1
    return (labels + [""] * count)[:count]


def read(path: str, out: str) -> None:
    import ezc3d
    import numpy as np

    c3d = ezc3d.c3d(path)
    point = c3d["parameters"].get("POINT", {})
    data = c3d["data"]["points"]  # (4, points, frames)
    points = np.ascontiguousarray(np.asarray(data[:3], dtype=np.float64).transpose(2, 1, 0))
    residuals = c3d["data"].get("meta_points", {}).get("residuals")
    residuals = (np.zeros(points.shape[:2]) if residuals is None
                 else np.asarray(residuals, dtype=np.float64).reshape(points.shape[1], -1).T)
    units = [str(v) for v in _values(point, "UNITS")]
    rate = [float(v) for v in _values(point, "RATE")] or [float(c3d["header"]["points"]["frame_rate"])]
    header = c3d["header"]["points"]
    declared = [int(header["last_frame"]) - int(header["first_frame"]) + 1]
    declared += [int(v) for v in _values(point, "FRAMES")[:1]]
    np.savez(out, points=points, residuals=residuals, labels=np.array(_labels(point, points.shape[1]), dtype=str),
             units=np.array(units[0] if units else ""), rate=np.array(rate[0]),
             declared_frames=np.array(max(declared)))


def main(argv: list[str]) -> int:
    path, out = argv[1], argv[2]
    _limit_memory(path)
    try:
        read(path, out)
    except MemoryError:
        print("it declares more data than can be read", flush=True)
        return FAILED
    except Exception as exc:  # ezc3d's own errors are RuntimeError, OSError, ValueError, IndexError, ...
        print(" ".join(str(exc).split())[:200] or type(exc).__name__, flush=True)
        return FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
