"""The GUI-thread garbage collector: automatic collection off, due generations collected on the timer."""

import gc
import weakref

from app.main import application
from app.workers.gui_thread_gc import GuiThreadGarbageCollector


class Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_automatic_collection_is_off_and_due_garbage_is_collected_on_the_timer(qapp, qtbot):
    before = gc.isenabled()  # False: the Studio tests run under the application's collector (conftest)
    collector = GuiThreadGarbageCollector(interval_ms=10)
    try:
        assert not gc.isenabled()
        gc.collect()
        probe = weakref.ref(Node())
        for _ in range(gc.get_threshold()[0] + 10):  # push generation 0 past its threshold
            Node()
        assert probe() is not None  # nothing collected it yet: automatic collection is off
        qtbot.waitUntil(lambda: probe() is None, timeout=2000)
        assert collector.collect_due() is None  # nothing left due
    finally:
        collector.stop()
    assert gc.isenabled() == before


def test_the_studio_application_installs_one_collector(qapp):
    app = application()
    application()
    assert len(app.findChildren(GuiThreadGarbageCollector)) == 1
    assert not gc.isenabled()


def test_stop_collects_and_restores_automatic_collection():
    gc.enable()
    try:
        collector = GuiThreadGarbageCollector()
        probe = weakref.ref(Node())
        assert not gc.isenabled() and probe() is not None
        collector.stop()
        assert gc.isenabled() and probe() is None
    finally:
        gc.disable()  # back to the application collector's state


def test_full_collections_freeze_what_survives_the_first_and_wait_fifty_times_their_duration(monkeypatch):
    """A full collection walked every object of torch, Qt and the open library: 137 ms of the GUI thread on
    N-UCLA (issue 42). The first one freezes the survivors; the next waits FULL_SPACING times its duration."""
    from app.workers import gui_thread_gc

    clock = [1000.0]
    monkeypatch.setattr(gui_thread_gc.time, "monotonic", lambda: clock[0])
    collector = GuiThreadGarbageCollector(interval_ms=60_000)  # collect_due called by hand
    full = []

    def fake_collect(generation=2):
        full.append(generation)
        clock[0] += 0.1 if generation == 2 else 0.0  # a full collection takes 100 ms

    monkeypatch.setattr(gui_thread_gc.gc, "collect", fake_collect)
    frozen = []
    monkeypatch.setattr(gui_thread_gc.gc, "freeze", lambda: frozen.append(True))
    monkeypatch.setattr(gui_thread_gc.gc, "unfreeze", lambda: frozen.append(False))
    due = (10**6, 10**6, 10**6)
    monkeypatch.setattr(gui_thread_gc.gc, "get_count", lambda: due)
    try:
        assert collector.collect_due() == 2 and frozen == [True]
        clock[0] += 4.9  # 50 x 0.1 s after the end of the first one is 5 s
        assert collector.collect_due() == 1  # not yet: the younger generation instead
        clock[0] += 0.2
        assert collector.collect_due() == 2 and frozen == [True]  # frozen once
        assert full == [2, 1, 2]
    finally:
        collector.stop()
    assert frozen == [True, False]  # stop() gives the frozen objects back to the collector


def test_the_studio_collects_and_freezes_once_before_its_window_shows(monkeypatch):
    """app/main.py calls `collect_full()` before `window.show()`: the first, costly full collection (137-216 ms
    with torch and Qt loaded) happens while nothing is on screen, and the timer's next one waits."""
    from app.workers import gui_thread_gc

    calls = []
    monkeypatch.setattr(gui_thread_gc.gc, "collect", lambda generation=2: calls.append(("collect", generation)))
    monkeypatch.setattr(gui_thread_gc.gc, "freeze", lambda: calls.append(("freeze",)))
    monkeypatch.setattr(gui_thread_gc.gc, "unfreeze", lambda: calls.append(("unfreeze",)))
    monkeypatch.setattr(gui_thread_gc.gc, "get_count", lambda: (10**6, 10**6, 10**6))
    collector = GuiThreadGarbageCollector(interval_ms=60_000)
    try:
        collector.collect_full()
        assert calls == [("collect", 2), ("freeze",)]
        collector.collect_full()
        assert calls.count(("freeze",)) == 1
    finally:
        collector.stop()
    import inspect

    from app import main as studio_main

    source = inspect.getsource(studio_main.main)
    assert source.index("collect_full()") < source.index("window.show()")
