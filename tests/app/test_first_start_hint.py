"""Issue 42: a first start (a settings file without the hint's key) shows what the three views are above them;
"Got it" hides it and stores that, and the next start does not show it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt

from app.state.comparison import ViewKind
from app.ui.first_start_hint import DISMISSED_KEY


@pytest.mark.timeout(120)
def test_the_hint_is_shown_on_a_first_start_and_never_after_it_is_dismissed(make_studio, tmp_path, qtbot):
    settings_file = tmp_path / "fresh.ini"
    window = make_studio(settings_file=settings_file)
    hint = window.first_start_hint
    assert hint.isVisible()
    text = hint.label.text()
    assert all(name in text for name in ("Source", "Retargeted", "Released"))
    view = window.views.views[ViewKind.SOURCE].widget
    assert hint.mapTo(window, QPoint(0, hint.height())).y() <= view.mapTo(window, QPoint(0, 0)).y()  # above
    qtbot.mouseClick(hint.dismiss_button, Qt.MouseButton.LeftButton)
    assert not hint.isVisible()
    assert QSettings(str(settings_file), QSettings.Format.IniFormat).value(DISMISSED_KEY) in (True, "true")
    window.close()
    again = make_studio(settings_file=settings_file)
    assert not again.first_start_hint.isVisible()


@pytest.mark.timeout(60)
def test_a_studio_whose_hint_was_never_dismissed_shows_it(make_studio, tmp_path):
    settings_file = tmp_path / "used.ini"
    used = QSettings(str(settings_file), QSettings.Format.IniFormat)
    used.setValue("studio/speed", 1.5)  # settings from an earlier start, without the hint's key
    used.sync()
    window = make_studio(settings_file=settings_file)
    assert window.first_start_hint.isVisible() and window.clock.speed == 1.5
