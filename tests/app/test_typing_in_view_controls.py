"""Issue 42: the views' own controls keep the keys typed into them: with the trail box or the β slider focused,
digits, Space, the arrows, Home/End and review mode's single keys (1, 0, N, [, ]) edit the control, never play,
step frames or record a verdict (real key events through Qt's shortcut override)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from review_helpers import open_reviewing, press, write_library


@pytest.fixture
def window(make_studio, qtbot, tmp_path):
    return open_reviewing(make_studio, qtbot, write_library(tmp_path / "review.npz"), tmp_path / "s.ini")


def unchanged(window, source: int, frame: int) -> None:
    assert window.selection.source_index == source and window.clock.frame == frame
    assert not window.clock.playing and window.clock.loop_range is None
    clip = window.review.state.clip(source)
    assert clip.verdict is None and clip.flags == () and window.review.state.pending_start is None


@pytest.mark.timeout(120)
def test_the_trail_box_takes_digits_and_arrows(window, qtbot):
    press(qtbot, window, Qt.Key.Key_Right)
    press(qtbot, window, Qt.Key.Key_Right)
    source, frame = window.selection.source_index, window.clock.frame
    box = window.views.trail_box
    box.setFocus()
    qtbot.waitUntil(box.hasFocus, timeout=2000)
    box.selectAll()
    for key in (Qt.Key.Key_1, Qt.Key.Key_0, Qt.Key.Key_0):
        press(qtbot, window, key)
    assert box.value() == 100 and window.settings.get("trail_length") == 100
    press(qtbot, window, Qt.Key.Key_Up)
    assert box.value() == 101
    for key in (Qt.Key.Key_Space, Qt.Key.Key_N, Qt.Key.Key_BracketLeft, Qt.Key.Key_Left, Qt.Key.Key_Home,
                Qt.Key.Key_End):
        press(qtbot, window, key)
    assert box.hasFocus()
    unchanged(window, source, frame)


@pytest.mark.timeout(120)
def test_the_beta_slider_takes_the_arrows_and_home_end(window, qtbot):
    press(qtbot, window, Qt.Key.Key_Right)
    source, frame = window.selection.source_index, window.clock.frame
    slider = window.views.beta.slider
    slider.setFocus()
    qtbot.waitUntil(slider.hasFocus, timeout=2000)
    start = slider.value()
    press(qtbot, window, Qt.Key.Key_Right)
    assert slider.value() == start + 1
    press(qtbot, window, Qt.Key.Key_Left)
    press(qtbot, window, Qt.Key.Key_Left)
    assert slider.value() == start - 1
    press(qtbot, window, Qt.Key.Key_End)
    assert slider.value() == 100
    press(qtbot, window, Qt.Key.Key_Home)
    assert slider.value() == 0
    unchanged(window, source, frame)
