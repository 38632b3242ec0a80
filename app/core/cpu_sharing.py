"""Share the CPU between the UI thread and the model worker (called once at start-up).

Inference runs in a worker thread of the same process, so it competes with the UI thread for the GIL
and for cores. Two settings keep the UI responsive (measured by `dtmr bench studio`, docs/studio.md):

* torch uses one core fewer than the machine has, leaving one to the UI (on two cores that is one
  thread, which is also much faster there: two OpenMP threads fighting the UI for two cores spin);
* the GIL switch interval drops from 5 ms to 0.5 ms. Every OpenGL call of the UI goes through ctypes,
  which releases the GIL; while the worker runs Python, taking it back costs up to one interval, and a
  frame makes hundreds of such calls.
"""

from __future__ import annotations

import os
import sys

SWITCH_INTERVAL_S = 0.0005


def share_cpu_with_ui() -> None:
    import torch

    sys.setswitchinterval(SWITCH_INTERVAL_S)
    torch.set_num_threads(max(1, (os.cpu_count() or 2) - 1))
