"""Settings survive a restart: window geometry, recent files, last model, device, view and playback options."""

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication

from app.state.comparison import ViewKind
from app.state.playback import LoopMode
from studio_fakes import save_fake_checkpoint, settle


def test_a_second_window_restores_the_first_ones_settings(make_studio, library_file, tmp_path, qtbot):
    models = tmp_path / "models"
    models.mkdir()
    save_fake_checkpoint(models / "b02.pt", beta=0.2)
    save_fake_checkpoint(models / "b05.pt", beta=0.5)
    ini = tmp_path / "studio.ini"
    first = make_studio(models_dir=models, settings_file=ini)
    first.open_path(library_file)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in first.comparison.clips, timeout=20000)
    settle(qtbot, first)
    first.model_panel.list.setCurrentRow(1)
    first.views.trail_box.setValue(12)
    first.views.link_box.setChecked(False)
    first.clock.set_speed(2.0)
    first.clock.set_loop_mode(LoopMode.BOUNCE)
    first.timeline.every_frame_box.setChecked(True)
    first.resize(1500, 900)
    first.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, first.docks["reference"])  # rearranged
    settle(qtbot, first)
    first.close()

    second = make_studio(models_dir=models, settings_file=ini, size=None)
    assert second.dockWidgetArea(second.docks["reference"]) == Qt.DockWidgetArea.RightDockWidgetArea
    screen = QApplication.primaryScreen().availableGeometry()
    if screen.width() >= 1500 and screen.height() >= 900:  # restoreGeometry fits windows to the screen
        assert (second.width(), second.height()) == (1500, 900)
    view = second.views.views[ViewKind.SOURCE]
    qtbot.waitUntil(lambda: view.ready, timeout=10000)
    assert second.views.trail_box.value() == 12 and view.feet.trail_length == 12
    assert not second.views.link_box.isChecked() and not second.views.link.enabled
    assert second.clock.speed == 2.0 and second.timeline.speed_box.currentText() == "2×"
    assert second.clock.loop_mode is LoopMode.BOUNCE and second.clock.play_every_frame
    assert [a.text() for a in second.actions.recent.actions()] == [str(library_file)]
    qtbot.waitUntil(lambda: second.model_panel.list.count() == 2, timeout=20000)
    assert second.model_panel.selected_path == str(models / "b05.pt")  # the last model
    stored = QSettings(str(ini), QSettings.Format.IniFormat)
    assert stored.value("studio/last_model") == str(models / "b05.pt")
    assert stored.value("window/state") is not None
