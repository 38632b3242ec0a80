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
