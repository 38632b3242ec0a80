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
