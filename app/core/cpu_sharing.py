"""Share the CPU between the UI thread and the model jobs.

The model jobs (retargeting, recognition) run in child processes (`app/workers/process_job.py`), each
with `model_threads()` torch threads: one core fewer than the machine has, which leaves one to the UI
(on two cores that is one thread, which is also much faster there: two OpenMP threads fighting the UI
for two cores spin). The jobs that stay in the Studio's process (opening a library, scanning the model
folders, exporting) share its GIL with the UI thread, so `share_cpu_with_ui()` (called once at
start-up) drops the GIL switch interval from 5 ms to 0.5 ms: every OpenGL call of the UI goes through
ctypes, which releases the GIL, and while a worker runs Python, taking it back costs up to one interval,
and a frame makes hundreds of such calls.
"""

from __future__ import annotations

import os
import sys

SWITCH_INTERVAL_S = 0.0005


def model_threads() -> int:
    """torch threads of a model job: one fewer than the machine's cores, at least one."""
    return max(1, (os.cpu_count() or 2) - 1)


def share_cpu_with_ui() -> None:
    sys.setswitchinterval(SWITCH_INTERVAL_S)
