"""Viewer conventions: frame box, screenshot key, A–B loop, overlay mode, joint on hover, View ▸ Panels, layout."""

import itertools

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QPointF, Qt
from PySide6.QtGui import QImage, QMouseEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QLabel, QMainWindow

from app.state.comparison import ViewKind
from app.state.playback import LoopMode, PlaybackClock
from app.ui.screenshots import coloured_pixels, image_array, view_pixels
from studio_fakes import save_fake_checkpoint, settle


class FakeTime:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


@pytest.fixture
def studio(studio, qtbot):
    """The shared `studio` (tests/app/conftest.py), its window active: keys go to it."""
    window = studio
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    return window


def key(qtbot, window, k, modifier=Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(window, k, modifier)
    window.coalescer.flush()


def panel_entries(window) -> dict:
    """View ▸ Panels as the user sees it when opening it."""
    menu = window.actions.panels
    menu.aboutToShow.emit()
    return {action.text(): action for action in menu.actions()}


# --- the clock's A–B range (Qt-free) ----------------------------------------------------------------
def played_frames(clock, seconds, step=0.05):
    frames = []
    for _ in range(round(seconds / step)):
        clock.now.t += step
        clock.tick()
        frames.append(clock.frame)
    return frames


@pytest.mark.parametrize("mode", list(LoopMode))
def test_playback_stays_within_the_loop_range(mode):
    clock = PlaybackClock(now=FakeTime())
    clock.now = clock._now
    clock.set_length(40, fps=20.0)
    clock.set_loop_mode(mode)
    clock.seek(10)
    clock.set_loop_start(clock.frame)
    clock.seek(16)
    clock.set_loop_end(clock.frame)
    clock.seek(30)  # outside the range: play starts at A
    clock.play()
    assert clock.frame == 10
    frames = played_frames(clock, 3.0)
    assert min(frames) >= 10 and max(frames) == 16
    if mode is LoopMode.ONCE:
        assert not clock.playing and frames[-1] == 16
    else:
        assert clock.playing and frames[-1] < 16  # it came back into the range and goes on


def test_loop_range_points_and_new_lengths():
    clock = PlaybackClock(now=FakeTime())
    clock.set_length(40, fps=30.0)
    clock.set_loop_end(5)
    assert clock.loop_range == (0, 5)
    clock.set_loop_start(20)  # after B: B becomes the last frame
    assert clock.loop_range == (20, 39)
    clock.set_loop_end(8)  # before A: A becomes the first frame
    assert clock.loop_range == (0, 8)
    clock.set_loop_start(3)
    clock.set_length(6, fps=30.0)  # a shorter comparison clips the range
    assert clock.loop_range == (3, 5)
    clock.set_length(2, fps=30.0)  # one that no longer has A drops it
    assert clock.loop_range is None
    clock.set_loop_start(1)
    clock.clear_loop_range()
    assert clock.loop_range is None and clock.play_bounds == (0, 1)


# --- the window --------------------------------------------------------------------------------------
def test_a_typed_frame_number_moves_the_playback(studio, qtbot):
    box, clock = studio.timeline.frame_box, studio.clock
    key(qtbot, studio, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)
    assert box.hasFocus()
    qtbot.keyClicks(box, "17")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    studio.coalescer.flush()
    assert clock.frame == 16 and studio.timeline.slider.value() == 16
    assert studio.timeline.frame_label.text().startswith("frame 17 ")
    assert box.text() == "" and not box.hasFocus()  # the keys go back to the transport
    key(qtbot, studio, Qt.Key.Key_Right)
    assert clock.frame == 17
    for typed in ("999", "0", "abc"):
        box.setFocus()
        qtbot.keyClicks(box, typed)
        qtbot.keyClick(box, Qt.Key.Key_Return)
        assert clock.frame == 17, typed
        assert f"from 1 to {clock.num_frames}" in studio.status_label.text() and box.styleSheet()
        box.clear()


def test_p_writes_a_png_of_the_three_views(studio, qtbot, tmp_path):
    folder = tmp_path / "shots"
    studio.settings.set("screenshot_dir", str(folder))
    studio.clock.seek(11)
    key(qtbot, studio, Qt.Key.Key_P)
    source = studio.comparison.clips[ViewKind.SOURCE]
    path = folder / f"{source.name}_frame0012.png"
    assert path.is_file() and str(path) in studio.status_label.text()
    image = QImage(str(path))
    assert (image.width(), image.height()) == (studio.views.width(), studio.views.height())
    pixels = image_array(image)
    third = pixels.shape[1] // 3
    for column in range(3):  # every view has a skeleton in it
        assert coloured_pixels(pixels[:, column * third: (column + 1) * third]) > 50, column
    key(qtbot, studio, Qt.Key.Key_P)
    assert (folder / f"{source.name}_frame0012_2.png").is_file()  # never overwrites


def test_a_screenshot_folder_that_cannot_be_made_is_a_message(studio, qtbot, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    studio.settings.set("screenshot_dir", str(blocker / "shots"))
    key(qtbot, studio, Qt.Key.Key_P)
    status = studio.status_label.text()
    assert status.startswith("Screenshot not written") and str(blocker) in status


def test_the_ab_loop_keeps_the_frame_within_a_and_b_while_playing(studio, qtbot):
    clock = studio.clock
    clock.seek(5)
    key(qtbot, studio, Qt.Key.Key_A)
    clock.seek(14)
    key(qtbot, studio, Qt.Key.Key_B)
    assert clock.loop_range == (5, 14)
    label = studio.timeline.range_label
    assert label.isVisible() and label.text() == "A–B loop: 6–15"
    slider = studio.timeline.slider  # the range drawn on the timeline, under the frames it covers
    left, right = slider.loop_span()
    assert slider.frame_x(4) < left < slider.frame_x(5) < slider.frame_x(14) < right < slider.frame_x(15)
    image = slider.grab().toImage()
    column = [image.pixelColor((left + right) // 2, y) for y in range(image.height())]
    assert sum(c.blue() - c.red() > 40 for c in column) >= slider.LOOP_HEIGHT - 2  # translucent blue band
    assert "A–B loop: frames 6–15" in slider.toolTip()
    clock.seek(30)
    key(qtbot, studio, Qt.Key.Key_Space)
    seen = []
    for _ in range(60):  # 1.2 s at 30 fps: more than three passes over the 10 frames
        qtbot.wait(20)
        seen.append(clock.frame)
    key(qtbot, studio, Qt.Key.Key_Space)
    assert min(seen) >= 5 and max(seen) <= 14
    assert any(b < a for a, b in itertools.pairwise(seen))  # it looped
    key(qtbot, studio, Qt.Key.Key_X)
    assert clock.loop_range is None and not label.isVisible() and slider.loop_span() is None


def ghost_pixels(pixels: np.ndarray) -> int:
    """Pixels of the overlay's translucent teal (green and blue alike, both well above red)."""
    r, g, b = (pixels[..., k].astype(np.int16) for k in range(3))
    return int(((g - r > 40) & (b - r > 40) & (np.abs(g - b) < 25)).sum())


def test_overlay_mode_draws_the_source_under_the_released_clip(make_studio, library_file, tmp_path, qtbot):
    models = tmp_path / "beta1"
    models.mkdir()
    save_fake_checkpoint(models / "dtmr_small_beta1.0.pt", beta=1.0)  # released = the reference's body
    studio = make_studio(models_dir=models)
    studio.open_path(library_file)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in studio.comparison.clips, timeout=20000)
    studio.settings.set("show_feet", False)
    studio.pin_reference(8)  # the tallest subject: its body is clearly not the source's
    settle(qtbot, studio)
    studio.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is studio, timeout=5000)
    studio.clock.seek(10)
    studio.coalescer.flush()
    view = studio.views.views[ViewKind.RELEASED]
    before = view_pixels(view)
    assert ghost_pixels(before) < 20
    key(qtbot, studio, Qt.Key.Key_G)  # View ▸ Source under released
    assert studio.actions.overlay.isChecked() and studio.views.overlay_box.isChecked()
    assert studio.settings.get("overlay_source")
    after = view_pixels(view)
    assert ghost_pixels(after) > 100  # the source, ghosted
    assert coloured_pixels(after) > 50  # and the released skeleton in its side colours
    assert ghost_pixels(view_pixels(studio.views.views[ViewKind.SOURCE])) < 20  # one view only
    studio.actions.overlay.trigger()
    assert ghost_pixels(view_pixels(view)) < 20


def move_mouse(view, x, y):
    event = QMouseEvent(QEvent.Type.MouseMove, QPointF(x, y), view.mapToGlobal(QPointF(x, y)),
                        Qt.MouseButton.NoButton, Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(view, event)


def test_hovering_near_a_joint_names_it_with_its_coordinates(studio, qtbot):
    studio.clock.seek(3)
    studio.coalescer.flush()
    view = studio.views.views[ViewKind.SOURCE]
    head = view.joint_pixels()[3]  # ntu25 joint 3: the head
    pixels = view_pixels(view)
    scale = pixels.shape[1] / view.width()
    y, x = int(head[1] * scale), int(head[0] * scale)
    around = pixels[max(y - 3, 0): y + 4, max(x - 3, 0): x + 4, :3].astype(int)
    assert around.sum(axis=-1).min() < 600  # a joint is drawn where the head projects
    move_mouse(view, head[0] + 3, head[1] - 2)
    text = studio.hover_label.text()
    joint = studio.comparison.clips[ViewKind.SOURCE].joints[3, 3]
    assert text.startswith("Source") and "head" in text
    assert f"y {joint[1]:+.3f}" in text and f"z {joint[2]:+.3f}" in text
    move_mouse(view, 2, 2)  # a corner: nothing there
    assert studio.hover_label.text() == ""


def test_a_closed_dock_is_reopened_from_the_view_menu(studio, qtbot):
    entries = panel_entries(studio)
    assert {"Library", "Reference", "Model", "Predictions", "Privacy"} <= set(entries)
    dock = studio.docks["predictions"]
    dock.close()
    assert not dock.isVisible() and not panel_entries(studio)["Predictions"].isChecked()
    panel_entries(studio)["Predictions"].trigger()
    assert dock.isVisible()
    late = QDockWidget("Added later", studio)  # a dock another part of the Studio adds after the menus
    late.setObjectName("dock-added-later")
    late.setWidget(QLabel("later"))
    studio.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, late)
    assert "Added later" in panel_entries(studio)


def test_the_layout_saved_on_close_is_restored_and_can_be_reset(make_studio, tmp_path, qtbot):
    ini = tmp_path / "layout.ini"
    first = make_studio(settings_file=ini)
    first.docks["privacy"].close()
    first.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, first.docks["predictions"])
    first.close()

    second = make_studio(settings_file=ini, size=None)
    assert second.dockWidgetArea(second.docks["predictions"]) == Qt.DockWidgetArea.LeftDockWidgetArea
    assert second.docks["privacy"].isHidden()
    second.actions.reset_layout.trigger()
    assert second.dockWidgetArea(second.docks["predictions"]) == Qt.DockWidgetArea.RightDockWidgetArea
    assert not any(dock.isHidden() for dock in second.docks.values())
    assert second.docks["predictions"] in second.tabifiedDockWidgets(second.docks["model"])


def test_no_two_actions_share_a_key(studio):
    owners: dict[str, str] = {}
    for action in QMainWindow.actions(studio):  # every window-wide shortcut: the menus' and review mode's
        for sequence in action.shortcuts():
            text = sequence.toString()
            assert text not in owners, f"{text}: {owners[text]!r} and {action.text()!r}"
            owners[text] = action.text()
    assert {"A", "B", "X", "P", "G", "Ctrl+G"} <= set(owners)
