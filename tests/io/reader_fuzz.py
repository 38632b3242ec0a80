"""The bounded property tests shared by readers of whole files (PYSKL pickles, SGN arrays): a truncated or
byte-damaged copy of a valid file is either read as ntu25 clips or refused with one line naming the file."""

from __future__ import annotations

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from dtmr.errors import InputError

FUZZ = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
#: where in the file (a fraction of its length) the cut falls
CUTS = st.floats(0, 1)
#: up to four bytes, each at a fraction of the file's length, set to a value
CHANGES = st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=4)


def truncated(data: bytes, cut: float) -> bytes:
    return data[: int(len(data) * cut)]


def damaged(data: bytes, changes: list[tuple[float, int]]) -> bytes:
    out = bytearray(data)
    for where, value in changes:
        out[int(where * len(out))] = value
    return bytes(out)


def assert_clips_or_one_line_error(read, path, data: bytes) -> None:
    """`read(path)` of `data` gives ntu25 clips with frames, or an InputError of one line naming `path`."""
    path.write_bytes(data)
    try:
        dataset = read(path)
    except InputError as exc:
        assert exc.path == str(path) and "\n" not in str(exc)
        return
    assert all(c.topology == "ntu25" and c.num_frames > 0 for c in dataset.clips)


def hostile_families():
    """scripts/fuzz_hostile.py (issue 43): the families of files built to exhaust a reader, each of which must
    be refused with one line. Loaded from its file: scripts/ is not a package."""
    import importlib.util
    import sys
    from pathlib import Path

    if "fuzz_hostile" in sys.modules:
        return sys.modules["fuzz_hostile"]
    path = Path(__file__).resolve().parents[2] / "scripts" / "fuzz_hostile.py"
    spec = importlib.util.spec_from_file_location("fuzz_hostile", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_hostile"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
