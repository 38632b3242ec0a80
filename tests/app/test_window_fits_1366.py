"""Issue 42: the main window fits a 1366×768 screen (about 1366×728 available beside a panel): its minimum size is
under that, and at that size every dock (each tab of a dock group brought to the front in turn) and every key
widget lies inside the window, shown, at least at its minimum size."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QDockWidget

from app.state.comparison import VIEWS, ViewKind
from studio_fakes import settle

AVAILABLE = (1366, 728)


def window_rect(window, widget) -> QRect:
    return QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())


def assert_inside(window, widget, name: str) -> None:
    rect = window_rect(window, widget)
    assert widget.isVisible(), name
    assert window.rect().contains(rect), (name, rect, window.rect())
    hint = widget.minimumSizeHint()
    minimum = widget.minimumSize()
    assert rect.width() >= max(hint.width(), minimum.width(), 1), (name, rect, hint)
    assert rect.height() >= max(hint.height(), minimum.height(), 1), (name, rect, hint)


@pytest.mark.timeout(120)
def test_the_window_and_its_docks_fit_1366_by_728(make_studio, library_file, qtbot):
    window = make_studio(size=AVAILABLE)
    window.open_path(library_file)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    hint = window.minimumSizeHint()
    assert hint.width() <= AVAILABLE[0] and hint.height() <= AVAILABLE[1], hint
    window.resize(*AVAILABLE)
    QApplication.processEvents()
    assert (window.width(), window.height()) == AVAILABLE
    docks = [d for d in window.findChildren(QDockWidget) if not d.isHidden()]
    assert {"Library", "Reference", "Predictions", "Model", "Privacy"} <= {d.windowTitle() for d in docks}
    for dock in docks:
        dock.raise_()  # a tabbed dock is measured in front
        QApplication.processEvents()
        assert_inside(window, dock, dock.windowTitle())
        assert_inside(window, dock.widget(), dock.windowTitle())
    right = window.docks["predictions"]
    assert window_rect(window, right).right() <= window.rect().right()  # the right dock is not cut
    window.docks["predictions"].raise_()
    QApplication.processEvents()
    key = {
        "views panel": window.views, "timeline": window.timeline, "tracks": window.tracks,
        "β slider": window.views.beta, "reset cameras": window.views.reset_button,
        "overlay box": window.views.overlay_box, "trail box": window.views.trail_box,
        "status bar": window.statusBar(), "menu bar": window.menuBar(),
        **{f"{kind.value} view": window.views.views[kind].widget for kind in VIEWS},
        **{f"{kind.value} caption": window.views.notes[kind] for kind in VIEWS},
    }
    for name, widget in key.items():
        assert_inside(window, widget, name)


@pytest.mark.timeout(60)
def test_a_first_start_opens_within_the_screen(make_studio, monkeypatch, qtbot):
    from PySide6.QtGui import QScreen

    monkeypatch.setattr(QScreen, "availableGeometry", lambda self: QRect(0, 0, *AVAILABLE))
    window = make_studio(size=None)  # no saved geometry: the window's own first size
    assert window.width() <= AVAILABLE[0] and window.height() <= AVAILABLE[1], window.size()
