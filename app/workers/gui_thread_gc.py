"""Python's cyclic garbage collector, run on the GUI thread only.

Automatic collection runs in whichever thread allocates when a threshold is crossed. When that is a
worker thread and the garbage holds Qt objects (the widgets of a closed window, kept in a reference
cycle), their C++ destructors run off the GUI thread. Qt does not allow that, and with PySide6 it can
deadlock: the worker's destructor holds a Qt connection lock and waits for the GIL, while the GUI
thread holds the GIL and waits for that lock. The Studio's test suite hung this way about one run in
two (py-spy: `QObject::~QObject` under `gc_collect_main` in the library-loading worker, against
`QObject::~QObject` under `runDeletionInMainThread` in the GUI thread).

So automatic collection is switched off while the Studio runs, and a timer on the GUI thread collects
instead, the oldest generation whose threshold is crossed.

A full collection (generation 2) walks every object the collector tracks: with torch, Qt and an open library
that took 137 ms of the GUI thread (207 ms wall) on N-UCLA, the longest stall left while it opened (issue 42).
Two rules keep it short and rare. The first full collection freezes what survives it (`gc.freeze()`: the
modules, widgets and models of start-up, which live as long as the Studio), so later ones walk only what came
after. And a full collection waits at least `FULL_SPACING` times the last one's duration (the interpreter's
own collector also defers full collections, until a quarter of the long-lived objects are new).
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QTimer

#: how often the GUI thread looks at the collector's counts (a generation-0 pass takes well under 1 ms)
INTERVAL_MS = 250
#: a full collection is at least this many times its last duration after it (at most 2 % of the GUI thread)
FULL_SPACING = 50.0


class GuiThreadGarbageCollector(QObject):
    """Disables automatic garbage collection on creation; `stop()` unfreezes, collects once more and re-enables
    it."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        self._frozen = False
        self._next_full = 0.0  # time.monotonic() from which a full collection may run
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.collect_due)
        self._timer.start(interval_ms)

    def collect_due(self) -> int | None:
        """Collect the oldest generation whose count passed its threshold (a full one only when it is due,
        module docstring); the generation, or None."""
        counts, thresholds = gc.get_count(), gc.get_threshold()
        if counts[2] > thresholds[2] and time.monotonic() >= self._next_full:
            self.collect_full()
            return 2
        for generation in (1, 0):
            if counts[generation] > thresholds[generation]:
                gc.collect(generation)
                return generation
        return None

    def collect_full(self) -> None:
        """A full collection now, freezing what survives the first; the next waits `FULL_SPACING` times its
        duration. The Studio calls it once before its window shows (app/main.py), so that the costly first one
        happens while nothing is on screen."""
        started = time.monotonic()
        gc.collect(2)
        if not self._frozen:
            gc.freeze()
            self._frozen = True
        finished = time.monotonic()
        self._next_full = finished + FULL_SPACING * (finished - started)

    def stop(self) -> None:
        self._timer.stop()
        if self._frozen:
            gc.unfreeze()
        gc.collect()
        if self._was_enabled:
            gc.enable()


def install_gui_thread_gc(app: QObject) -> GuiThreadGarbageCollector:
    """The application's collector, created on the first call."""
    return app.findChild(GuiThreadGarbageCollector) or GuiThreadGarbageCollector(app)
