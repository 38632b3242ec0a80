"""Timeline and transport driven by keys, slider, buttons and menus; coalesced rendering; tracks."""

import time

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication

from app.state.comparison import LENGTH_POLICY, ViewKind
from app.state.playback import LoopMode


@pytest.fixture
def studio(studio, qtbot):
    """The shared `studio` (tests/app/conftest.py), its window active: keys go to it."""
    window = studio
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    return window


def key(qtbot, window, k, times=1):
    for _ in range(times):
        qtbot.keyClick(window, k)
    window.coalescer.flush()


def test_frame_keys(studio, qtbot):
    clock = studio.clock
    last = clock.num_frames - 1
    key(qtbot, studio, Qt.Key.Key_Right, 3)
    assert clock.frame == 3
    key(qtbot, studio, Qt.Key.Key_Period)
    assert clock.frame == 4
    key(qtbot, studio, Qt.Key.Key_Comma, 2)
    assert clock.frame == 2
    key(qtbot, studio, Qt.Key.Key_Left)
    assert clock.frame == 1
    key(qtbot, studio, Qt.Key.Key_Up)
    assert clock.frame == 11
    key(qtbot, studio, Qt.Key.Key_Down, 2)
    assert clock.frame == 0
    key(qtbot, studio, Qt.Key.Key_End)
    assert clock.frame == last
    assert studio.timeline.slider.value() == last
    assert studio.timeline.frame_label.text() == f"frame {last + 1} / {last + 1}"
    key(qtbot, studio, Qt.Key.Key_Home)
    assert clock.frame == 0 and studio.timeline.slider.value() == 0


def test_space_plays_in_real_time_and_pauses(studio, qtbot):
    clock = studio.clock
    key(qtbot, studio, Qt.Key.Key_Space)
    assert clock.playing and studio.driver.active
    qtbot.wait(400)
    key(qtbot, studio, Qt.Key.Key_Space)
    assert not clock.playing and not studio.driver.active
    assert 3 <= clock.frame  # ~12 frames at 30 fps; slow machines drop frames but keep time
    assert studio.timeline.slider.value() == clock.frame


def test_speed_loop_and_every_frame_controls(studio, qtbot):
    clock, timeline = studio.clock, studio.timeline
    timeline.speed_box.setCurrentIndex(timeline.speed_box.findText("1.5×"))
    assert clock.speed == 1.5 and "1.5× speed" in timeline.speed_label.text()
    key(qtbot, studio, Qt.Key.Key_Minus)
    assert clock.speed == 1.25 and timeline.speed_box.currentText() == "1.25×"
    key(qtbot, studio, Qt.Key.Key_Plus)
    assert clock.speed == 1.5 and studio.settings.get("speed") == 1.5
    timeline.loop_box.setCurrentIndex(timeline.loop_box.findText("Back-and-forth"))
    assert clock.loop_mode is LoopMode.BOUNCE and studio.actions.loop_modes[LoopMode.BOUNCE].isChecked()
    key(qtbot, studio, Qt.Key.Key_L)
    assert clock.loop_mode is LoopMode.ONCE and timeline.loop_box.currentText() == "Play once"
    studio.actions.loop_modes[LoopMode.LOOP].trigger()
    assert clock.loop_mode is LoopMode.LOOP and studio.settings.get("loop_mode") == "loop"
    qtbot.mouseClick(timeline.every_frame_box, Qt.MouseButton.LeftButton)
    assert clock.play_every_frame and studio.actions.every_frame.isChecked()
    clock.set_loop_mode(LoopMode.ONCE)
    clock.end()
    qtbot.mouseClick(timeline.play_button, Qt.MouseButton.LeftButton)  # once mode at the end: replays
    assert clock.playing and clock.frame == 0
    qtbot.waitUntil(lambda: clock.frame >= 3, timeout=5000)
    qtbot.mouseClick(timeline.play_button, Qt.MouseButton.LeftButton)
    assert not clock.playing
    for button, expected in ((timeline.end_button, clock.num_frames - 1), (timeline.back_button, clock.num_frames - 2),
                             (timeline.home_button, 0), (timeline.forward_button, 1)):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
        assert clock.frame == expected
    assert LENGTH_POLICY in timeline.policy_label.text()


def test_slider_scrubbing_is_coalesced(studio, qtbot):
    rendered = []
    studio.coalescer._render = lambda frame, original=studio.coalescer._render: (rendered.append(frame),
                                                                                 original(frame))
    slider = studio.timeline.slider
    for value in range(1, 30):  # a fast drag: many values before the event loop runs
        slider.setValue(value)
    assert studio.clock.frame == 29 and rendered == []
    qtbot.waitUntil(lambda: bool(rendered), timeout=2000)
    QApplication.processEvents()
    assert rendered == [29]
    view = studio.views.views[ViewKind.SOURCE]
    assert view._frame == 29


def test_tracks_plot_sliding_and_clicking_seeks(studio, qtbot):
    tracks = studio.tracks
    x, y = tracks.curves[("sliding", ViewKind.SOURCE)].getData()
    assert len(x) == studio.comparison.clips[ViewKind.SOURCE].num_frames
    studio.clock.seek(12)
    studio.coalescer.flush()
    assert all(line.value() == 12 for line in tracks.playheads)
    plot = tracks.plots["sliding"]
    vb = plot.getPlotItem().vb
    scene_point = vb.mapViewToScene(QPointF(25, 0.1))
    widget_point = plot.mapFromScene(scene_point)
    qtbot.mouseClick(plot.viewport(), Qt.MouseButton.LeftButton, pos=widget_point)
    qtbot.waitUntil(lambda: studio.clock.frame == 25, timeout=2000)


def test_play_runs_on_wall_time_while_ui_is_busy(studio, qtbot):
    clock = studio.clock
    clock.seek(0)
    clock.play()
    start = time.monotonic()
    time.sleep(0.3)  # the UI thread is blocked: no ticks
    qtbot.wait(30)
    elapsed = time.monotonic() - start
    clock.pause()
    assert clock.frame >= int(0.8 * elapsed * 30) - 1  # caught up from wall time, not from tick count
