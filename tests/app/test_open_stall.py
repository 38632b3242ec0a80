"""Opening N-UCLA (1,484 real clips) never freezes the Studio (issue 42): the longest event-loop stall from
File > Open until the clip table is shown, every clip's plausibility scored (in the Studio's child process)
and the Studio idle stays under 300 ms, measured with `dtmr bench studio`'s heartbeat
(`app.bench.measure_open_stall`). Before the numpy clip-table proxy and the scoring child process it was
760-909 ms (4.2-7.8 s before the sampled column widths); then 440-620 ms while the clip table fitted its
columns four times in the library-opened handler, and a full garbage collection took 137 ms of the GUI thread.

Measured after start-up, as a user meets it: a small library is opened first (the Studio starts on its demo
library), so the views' first drawing is not counted. The test runs beside other tests, where a wall-clock
stall also holds the time the process waited for a core. It asserts `open_own_stall_ms`: each gap capped by
the CPU time the Studio's process spent in it, so work on the GUI thread and a worker holding the GIL count in
full and a busy machine does not (app/bench.py)."""

from __future__ import annotations

import sys

import pytest

from app.bench import measure_open_stall
from app.core.cpu_sharing import share_cpu_with_ui

#: issue 42's limit for opening N-UCLA after start-up
MAX_STALL_MS = 300.0


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_opening_nwucla_never_stalls_the_event_loop_over_300_ms(make_studio, shared_data, library_file, qtbot,
                                                                 qapp):
    path = shared_data / "nwucla.npz"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    interval = sys.getswitchinterval()
    share_cpu_with_ui()  # as the Studio does at start-up (app/main.py)
    try:
        window = make_studio(scoring_process=True)
        # after start-up: the Studio opens its demo library first, so the views have drawn (OpenGL compiles
        # its shaders at the first clip shown, about 100 ms on Mesa's software renderer)
        measure_open_stall(qapp, window, library_file, timeout_s=120.0)
        result = measure_open_stall(qapp, window, path, timeout_s=300.0)
    finally:
        sys.setswitchinterval(interval)
    assert result["open_clips"] == 1484
    assert result["open_own_stall_ms"] <= MAX_STALL_MS, result
