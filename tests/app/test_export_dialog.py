"""Export dialog: GIF and MP4 files checked (frames, size, content), cancel, and frames equal to `dtmr export`."""

import os

import imageio.v2 as imageio
import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog
from studio_fakes import save_tiny_dtmr_checkpoint, settle

from app.core.retargeting import Retargeting
from app.state.comparison import ViewKind
from dtmr.cli import main as dtmr_main


def run_export(dialog, qtbot, timeout=60000):
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert dialog.running and not dialog.export_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.running, timeout=timeout)


def coloured(frame):
    rgb = frame[..., :3].astype(np.int16)
    return int(((rgb.max(axis=-1) - rgb.min(axis=-1)) > 60).sum())


def test_gif_export_with_range_fps_and_size(studio, tmp_path, qtbot, monkeypatch):
    studio.actions.export.trigger()
    dialog = studio.export_dialog
    assert dialog.isVisible() and not dialog.isModal()
    assert dialog.last_frame.value() == studio.comparison.length and dialog.fps_box.value() == 30.0
    target = tmp_path / "out.gif"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    qtbot.mouseClick(dialog.browse_button, Qt.MouseButton.LeftButton)
    assert dialog.path_edit.text() == str(target)
    dialog.first_frame.setValue(5)
    dialog.last_frame.setValue(16)
    dialog.fps_box.setValue(12.0)
    dialog.width_box.setValue(480)
    dialog.height_box.setValue(200)
    with qtbot.waitSignal(dialog.exported, timeout=60000) as done:
        run_export(dialog, qtbot)
    assert done.args == [str(target)] and "Wrote" in dialog.status.text()
    frames = imageio.mimread(target)
    assert len(frames) == 12 and frames[0].shape[:2] == (200, 480)
    assert all(coloured(f) > 30 for f in frames)  # every frame shows skeletons
    assert np.abs(frames[0].astype(int) - frames[-1].astype(int)).sum() > 0  # and they move
    dialog.close()


def test_mp4_export_even_size(studio, tmp_path, qtbot):
    studio.open_export_dialog()
    dialog = studio.export_dialog
    dialog.path_edit.setText(str(tmp_path / "clip.gif"))
    dialog.format_box.setCurrentIndex(dialog.format_box.findData(".mp4"))
    assert dialog.path_edit.text().endswith("clip.mp4")
    dialog.width_box.setValue(321)
    dialog.height_box.setValue(161)
    dialog.last_frame.setValue(8)
    dialog.camera_box.setCurrentIndex(dialog.camera_box.findData("front"))
    dialog.feet_box.setChecked(False)
    assert not dialog.predictions_box.isEnabled()  # no recognizers in this window
    run_export(dialog, qtbot)
    reader = imageio.get_reader(tmp_path / "clip.mp4", "ffmpeg")
    frames = [f for f in reader]
    reader.close()
    assert len(frames) == 8 and frames[0].shape[:2] == (162, 322)
    assert coloured(frames[3]) > 30
    dialog.close()


def test_cancel_leaves_no_file(studio, tmp_path, qtbot):
    studio.open_export_dialog()
    dialog = studio.export_dialog
    target = tmp_path / "big.gif"
    dialog.path_edit.setText(str(target))
    dialog.width_box.setValue(1600)
    dialog.height_box.setValue(600)
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.progress.maximum() > 1 and dialog.progress.value() >= 1, timeout=30000)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.running, timeout=30000)
    assert "cancelled" in dialog.status.text() and not target.exists()
    assert list(tmp_path.glob("big*")) == []
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)  # now "Close"
    assert not dialog.isVisible()


def test_nothing_to_export_before_the_model_views(make_studio, qtbot):
    window = make_studio()
    window.open_export_dialog()
    assert not window.export_dialog.export_button.isEnabled()
    assert "Nothing to export" in window.export_dialog.status.text()
    window.export_dialog.close()


@pytest.mark.parametrize("with_full_model", [False, True])
def test_gui_export_frames_equal_cli_export(make_studio, library_file, tmp_path, qtbot, monkeypatch, with_full_model):
    """With real checkpoints, the dialog and `dtmr export` write the same frames: the retargeted panel comes
    from the same model (the β = 1 partner when there is one, else the model's own decoder) with the same title."""
    models = tmp_path / "models"
    models.mkdir()
    checkpoint = save_tiny_dtmr_checkpoint(models / "dtmr_tiny_b02.pt", beta=0.2)
    if with_full_model:
        save_tiny_dtmr_checkpoint(models / "dtmr_tiny_b1.pt", beta=1.0, seed=1)
    empty_resources = tmp_path / "empty-resources"
    empty_resources.mkdir()  # must exist, or the bundled resources are used: the CLI finds no recognizers
    monkeypatch.setenv("DTMR_RESOURCES", str(empty_resources))
    window = make_studio(models_dir=models)
    window.controller.threads["inference"]._job = Retargeting()  # the real Anonymizer, no fakes
    window.open_path(library_file)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips and not window.controller.busy,
                    timeout=60000)
    assert window.controller.model.path == checkpoint
    window.open_export_dialog()
    dialog = window.export_dialog
    gui = tmp_path / "gui.gif"
    dialog.path_edit.setText(str(gui))
    dialog.width_box.setValue(480)
    dialog.height_box.setValue(160)
    run_export(dialog, qtbot)
    dialog.close()
    cli = tmp_path / "cli.gif"
    assert dtmr_main(["export", str(library_file), "--model", str(checkpoint), "--clip", "0", "--seed", "0",
                      "-o", str(cli), "--size", "480x160"]) == 0
    ours, theirs = imageio.mimread(gui), imageio.mimread(cli)
    assert len(ours) == len(theirs) == window.comparison.length
    difference = np.mean([np.abs(a.astype(int) - b.astype(int)).mean() for a, b in zip(ours, theirs)])
    assert difference < 0.05, difference


def test_dialog_opened_early_follows_the_clip_and_model(make_studio, library_file, qtbot):
    """Opened before anything is shown, the dialog fills in when the views arrive and follows the clip."""
    window = make_studio()
    window.open_export_dialog()
    dialog = window.export_dialog
    assert not dialog.export_button.isEnabled()
    window.open_path(library_file)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    first = window.comparison.clips[ViewKind.SOURCE]
    assert dialog.export_button.isEnabled() and "Nothing to export" not in dialog.status.text()
    assert dialog.last_frame.value() == window.comparison.length and first.name in dialog.path_edit.text()
    window.library_panel.select_clip(8)
    qtbot.waitUntil(lambda: window.comparison.clips.get(ViewKind.SOURCE) is not first
                    and ViewKind.RELEASED in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    second = window.comparison.clips[ViewKind.SOURCE]
    assert second.name != first.name and second.name in dialog.path_edit.text()
    assert dialog.last_frame.maximum() == dialog.last_frame.value() == window.comparison.length
    assert dialog.request().source is second
    dialog.close()


def test_a_path_the_user_typed_stays_when_the_clip_changes(studio, tmp_path, qtbot):
    studio.open_export_dialog()
    dialog = studio.export_dialog
    mine = str(tmp_path / "mine.gif")
    dialog.path_edit.setText(mine)
    first = studio.comparison.clips[ViewKind.SOURCE]
    studio.library_panel.select_clip(8)
    qtbot.waitUntil(lambda: studio.comparison.clips.get(ViewKind.SOURCE) is not first
                    and ViewKind.RELEASED in studio.comparison.clips, timeout=20000)
    settle(qtbot, studio)
    assert dialog.path_edit.text() == mine
    dialog.close()


def test_format_follows_the_typed_suffix_and_the_suffix_the_format(studio, tmp_path, qtbot):
    studio.open_export_dialog()
    dialog = studio.export_dialog
    dialog.path_edit.clear()
    qtbot.keyClicks(dialog.path_edit, str(tmp_path / "typed.mp4"))
    assert dialog.format_box.currentData() == ".mp4"
    qtbot.keyClicks(dialog.path_edit, "x")  # "typed.mp4x": no known suffix, the format stays
    assert dialog.format_box.currentData() == ".mp4"
    dialog.path_edit.clear()
    qtbot.keyClicks(dialog.path_edit, str(tmp_path / "typed.gif"))
    assert dialog.format_box.currentData() == ".gif"
    dialog.format_box.setCurrentIndex(dialog.format_box.findData(".mp4"))
    assert dialog.path_edit.text() == str(tmp_path / "typed.mp4")
    dialog.close()


def test_default_folder_is_the_users_never_the_installations(make_studio, tmp_path, qtbot, monkeypatch):
    from app.core.export_job import default_export_folder

    home = tmp_path / "home"
    home.mkdir()
    resources = tmp_path / "resources"
    (resources / "demo").mkdir(parents=True)
    monkeypatch.setenv("DTMR_RESOURCES", str(resources))
    users = tmp_path / "mine"
    users.mkdir()
    assert default_export_folder(users, home=home) == users.resolve()
    assert default_export_folder(resources / "demo", home=home) == home  # the bundled demo's folder: not there
    assert default_export_folder("", home=home) == home
    (home / "Videos").mkdir()
    assert default_export_folder(resources / "demo", home=home) == home / "Videos"
    users.chmod(0o500)
    try:
        if not os.access(users, os.W_OK):  # (root may write anywhere)
            assert default_export_folder(users, home=home) == home / "Videos"
    finally:
        users.chmod(0o700)


def test_gif_faster_than_50_fps_is_explained_not_started(studio, tmp_path, qtbot):
    studio.open_export_dialog()
    dialog = studio.export_dialog
    dialog.path_edit.setText(str(tmp_path / "fast.gif"))
    dialog.fps_box.setValue(60.0)
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)
    assert not dialog.running and "at most 50" in dialog.status.text()
    assert not (tmp_path / "fast.gif").exists()
    dialog.close()
