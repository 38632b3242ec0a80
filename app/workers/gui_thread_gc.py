"""Python's cyclic garbage collector, run on the GUI thread only.

Automatic collection runs in whichever thread allocates when a threshold is crossed. When that is a
worker thread and the garbage holds Qt objects (the widgets of a closed window, kept in a reference
cycle), their C++ destructors run off the GUI thread. Qt does not allow that, and with PySide6 it can
deadlock: the worker's destructor holds a Qt connection lock and waits for the GIL, while the GUI
thread holds the GIL and waits for that lock. The Studio's test suite hung this way about one run in
two (py-spy: `QObject::~QObject` under `gc_collect_main` in the library-loading worker, against
`QObject::~QObject` under `runDeletionInMainThread` in the GUI thread).

So automatic collection is switched off while the Studio runs, and a timer on the GUI thread collects
instead, the youngest generation whose threshold is crossed, as the interpreter itself would.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

#: how often the GUI thread looks at the collector's counts (a generation-0 pass takes well under 1 ms)
INTERVAL_MS = 250


class GuiThreadGarbageCollector(QObject):
    """Disables automatic garbage collection on creation; `stop()` collects once more and re-enables it."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.collect_due)
        self._timer.start(interval_ms)

    def collect_due(self) -> int | None:
        """Collect the oldest generation whose count passed its threshold; the generation, or None."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        for generation in (2, 1, 0):
            if counts[generation] > thresholds[generation]:
                gc.collect(generation)
                return generation
        return None

    def stop(self) -> None:
        self._timer.stop()
        gc.collect()
        if self._was_enabled:
            gc.enable()


def install_gui_thread_gc(app: QObject) -> GuiThreadGarbageCollector:
    """The application's collector, created on the first call."""
    return app.findChild(GuiThreadGarbageCollector) or GuiThreadGarbageCollector(app)
