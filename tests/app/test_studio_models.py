"""Model, reference and predictions panels; inference in the worker (supersede, never blocking the UI)."""

import time

import numpy as np
import pytest
import torch
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QFileDialog

from app.core.retargeting import NO_MODEL_MESSAGE
from app.state.comparison import VIEWS, ViewKind
from dtmr.data.label_set import record_label_set
from app.ui.screenshots import coloured_pixels, view_pixels
from studio_fakes import ACTION_NAMES, FakeAnonymizer, load_named_recognizer, save_fake_checkpoint, settle


#: what a recognizer trained on `library_file` records (its class names are the library's, plus one more)
LIBRARY_DATA = record_label_set({"path": "clips.npz", "topology": "ntu25", "subjects": [0, 1, 2],
                                 "actions": [0, 1, 2], "action_names": ACTION_NAMES})
CLASS_NAMES = {"action": [*ACTION_NAMES, "jump"], "subject": [f"subject {i}" for i in range(4)]}


def save_library_recognizer(path, task):
    checkpoint = torch.load(save_fake_checkpoint(path, method="sgn", beta=None, task=task), weights_only=True)
    checkpoint.update(class_names=CLASS_NAMES[task], data=LIBRARY_DATA)
    torch.save(checkpoint, path)


@pytest.fixture
def models_dir(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    save_fake_checkpoint(folder / "dtmr_small_beta0.2.pt", beta=0.2)
    save_fake_checkpoint(folder / "dtmr_small_beta1.0.pt", beta=1.0)
    save_library_recognizer(folder / "action.pt", "action")
    save_library_recognizer(folder / "subject.pt", "subject")
    return folder


@pytest.fixture
def studio(make_studio, library_file, models_dir, fakes, qtbot):
    fakes.load_recognizer = load_named_recognizer
    window = make_studio(models_dir=models_dir)
    window.open_path(library_file)
    qtbot.waitUntil(lambda: window.comparison.recognition is not None, timeout=20000)
    settle(qtbot, window)
    return window


def test_catalog_beta_models_and_views(studio, models_dir, fakes, qtbot):
    panel = studio.model_panel
    assert [panel.list.item(i).text().splitlines()[0] for i in range(panel.list.count())] == [
        "DisentangledTMR β=0.2 small (dtmr_small_beta0.2.pt)", "DisentangledTMR β=1 small (dtmr_small_beta1.0.pt)"]
    assert panel.selected_path == str(models_dir / "dtmr_small_beta0.2.pt")  # the recommended β is chosen first
    assert "action: SGN action recognizer" in panel.recognizer_label.text()
    assert panel.device_box.currentText() == studio.controller.device == studio.controller.devices[0]
    source = studio.comparison.clips[ViewKind.SOURCE]
    reference = studio.comparison.reference
    full, _ = FakeAnonymizer(beta=1.0).retarget_pair(source, reference)
    np.testing.assert_allclose(studio.comparison.clips[ViewKind.RETARGETED].joints, full.joints, atol=1e-6)
    np.testing.assert_allclose(studio.comparison.clips[ViewKind.RELEASED].joints,
                               0.8 * source.joints + 0.2 * full.joints, atol=1e-5)
    assert "β=0.2" in studio.comparison.model_note and "retargeted view: DisentangledTMR β=1" in studio.comparison.model_note
    panel.list.setCurrentRow(1)  # choose β = 1: released becomes the full retarget
    qtbot.waitUntil(lambda: studio.comparison.model_note.startswith("DisentangledTMR β=1 small")
                    and not studio.controller.busy, timeout=20000)
    np.testing.assert_allclose(studio.comparison.clips[ViewKind.RELEASED].joints, full.joints, atol=1e-6)
    assert studio.settings.get("last_model") == str(models_dir / "dtmr_small_beta1.0.pt")


def test_predictions_top5_with_true_labels_and_tracks(studio, qtbot):
    result = studio.comparison.recognition
    assert set(result.tasks) == {"action", "subject"}
    assert set(result.tasks["action"].per_frame) == {v.value for v in VIEWS}
    studio.clock.seek(10)
    studio.coalescer.flush()
    source = studio.comparison.clips[ViewKind.SOURCE]
    cell = studio.predictions.cells[("action", ViewKind.SOURCE)].text()
    assert "<b>" in cell and f"{ACTION_NAMES[source.action]} ✔" in cell  # the fake favours the true action
    identity = studio.predictions.cells[("subject", ViewKind.SOURCE)].text()
    assert f"subject {source.subject} ✔" in identity
    assert "frame 11" in studio.predictions.header.text()
    assert cell.count("%") == 4  # the fake recognizers have 4 classes: all shown (top-5)
    studio.clock.seek(30)
    studio.coalescer.flush()
    assert "frame 31" in studio.predictions.header.text()
    x, y = studio.tracks.curves[("action", ViewKind.RELEASED)].getData()
    assert len(y) == studio.comparison.clips[ViewKind.RELEASED].num_frames and np.all((0 <= y) & (y <= 1))
    assert "true action" in studio.tracks.plots["action"].getPlotItem().titleLabel.text
    # the cells are as wide as the longest class name, whatever the top 5 shows
    cells = [studio.predictions.cells[("subject", kind)] for kind in VIEWS]
    longest = cells[0].fontMetrics().horizontalAdvance("100.0% subject 3 ✔")
    assert all(c.minimumWidth() >= longest and c.width() >= longest for c in cells)


def test_recognition_and_status_updates_never_resize_the_views(studio, qtbot):
    """A new top-5 list, a status line or the busy bar must not re-lay out the window: a relayout resizes
    and repaints the three GL views at once, the longest stall `dtmr bench studio` measured (80-90 ms)."""
    containers = [view.widget for view in studio.views.views.values()]
    sizes = [w.size() for w in containers]
    result = studio.comparison.recognition
    studio.docks["model"].raise_()  # tabbed with the predictions: its size is only real once shown
    QApplication.processEvents()
    docks = {name: dock.size() for name, dock in studio.docks.items()}
    for status, busy in (("Retargeting: running the β = 1 model with a long description of what it does "
                          "that wraps over more than one line of the dock (2/3)", True), ("Ready", False)):
        studio.comparison.set_status(status, busy=busy)
        QApplication.processEvents()
    studio.docks["predictions"].raise_()
    for pending in (True, False):
        studio.comparison.set_recognition(None if pending else result, pending=pending)
        studio.coalescer.flush()
        QApplication.processEvents()
    studio.predictions.cells[("action", ViewKind.SOURCE)].setText(
        "<u>Action</u><br>" + "<br>".join(f"a very long action class name number {i} 99.9%" for i in range(5)))
    qtbot.wait(100)  # the layout requests travel up to the main window over several event-loop passes
    assert [w.size() for w in containers] == sizes
    assert {name: dock.size() for name, dock in studio.docks.items()} == docks


def test_reference_random_seed_pin_and_context_menu(studio, qtbot):
    panel, selection = studio.reference_panel, studio.selection
    source_subject = studio.comparison.clips[ViewKind.SOURCE].subject
    qtbot.mouseClick(panel.random_button, Qt.MouseButton.LeftButton)
    assert selection.seed == 1 and panel.seed_box.value() == 1
    settle(qtbot, studio)
    assert studio.comparison.reference.subject != source_subject
    assert panel.thumbnail.has_pose and "subject" in panel.detail_label.text()
    panel.seed_box.setValue(7)
    assert selection.reference.seed == 7
    qtbot.mouseClick(panel.pin_box, Qt.MouseButton.LeftButton)
    assert selection.reference.pinned
    pinned = selection.reference.index
    studio.library_panel.select_clip(1)  # same subject as clip 0: the pin holds
    settle(qtbot, studio)
    assert selection.reference.index == pinned and panel.pin_box.isChecked()
    table = studio.library_panel.table
    row = studio.library_panel.proxy.proxy_row(8)  # subject 2
    studio.library_panel._context_menu(table.visualRect(studio.library_panel.proxy.index(row, 0)).center())
    studio.library_panel.pin_action.trigger()
    studio.library_panel.context_menu.close()
    assert selection.reference.index == 8 and selection.reference.pinned
    settle(qtbot, studio)
    assert studio.comparison.reference.sample_name == "S02A02V0"
    row = studio.library_panel.proxy.proxy_row(2)  # the source's own subject: refused with a message
    studio.library_panel._context_menu(table.visualRect(studio.library_panel.proxy.index(row, 0)).center())
    studio.library_panel.pin_action.trigger()
    studio.library_panel.context_menu.close()
    qtbot.waitUntil(lambda: bool(studio.message_boxes), timeout=2000)
    assert "cannot be the reference" in studio.message_boxes[0].text()
    studio.message_boxes[0].close()


def test_a_right_click_pins_its_row_without_making_it_the_source(studio, qtbot):
    """Issue 42: the right-click's press made the row the source, so "Use as pinned reference" always refused."""
    from PySide6.QtGui import QContextMenuEvent
    from PySide6.QtWidgets import QApplication

    panel, selection = studio.library_panel, studio.selection
    source = selection.source_index
    table = panel.table
    row = panel.proxy.proxy_row(8)  # subject 2, not the source's
    pos = table.visualRect(panel.proxy.index(row, 0)).center()
    qtbot.mousePress(table.viewport(), Qt.MouseButton.RightButton, pos=pos)
    qtbot.mouseRelease(table.viewport(), Qt.MouseButton.RightButton, pos=pos)
    QApplication.sendEvent(table.viewport(), QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos,
                                                               table.viewport().mapToGlobal(pos)))
    assert selection.source_index == source  # the clicked row did not become the source
    panel.pin_action.trigger()
    panel.context_menu.close()
    assert selection.reference.index == 8 and selection.reference.pinned and not studio.message_boxes


def test_newer_request_supersedes_and_ui_stays_responsive(studio, fakes, models_dir, qtbot):
    slow = fakes.anonymizers[str(models_dir / "dtmr_small_beta0.2.pt")]
    # the start-up preview first: with it still running, the first request below waits too and is superseded,
    # and the middle one runs (a race the test lost once in CI)
    qtbot.waitUntil(lambda: not studio.controller.busy, timeout=20000)
    slow.delay = 0.6
    beats = []
    timer_start = time.perf_counter()
    studio.library_panel.select_clip(3)
    studio.library_panel.select_clip(4)
    studio.library_panel.select_clip(5)
    while studio.controller.busy and time.perf_counter() - timer_start < 20:
        beats.append(time.perf_counter())
        QApplication.processEvents()
        time.sleep(0.002)
    slow.delay = 0.0
    settle(qtbot, studio)
    gaps = np.diff(beats) if len(beats) > 1 else np.array([0.0])
    assert gaps.max() < 0.25  # the UI kept running while the model worked
    assert studio.comparison.clips[ViewKind.SOURCE].sample_name == "S01A02V0"
    assert studio.comparison.clips[ViewKind.RELEASED].extra["source_clip"] == "S01A02V0"
    ran = [call[0] for call in slow.calls]
    assert ran[-1] == "S01A02V0" and "S01A01V0" not in ran  # the middle request never ran
    # the open library's action names go with every request (re-timing and k-same use the shared labels)
    assert slow.action_names[-1] == tuple(studio.controller.library.source.action_names)


def test_add_checkpoint_dialog_and_device(studio, tmp_path, monkeypatch, qtbot):
    extra = save_fake_checkpoint(tmp_path / "mine_b05.pt", beta=0.5)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(extra), ""))
    qtbot.mouseClick(studio.model_panel.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: studio.model_panel.list.count() == 3, timeout=20000)
    settle(qtbot, studio)
    assert studio.model_panel.selected_path == str(extra)
    assert studio.settings.get("user_checkpoints") == [str(extra)]
    assert "β=0.5" in studio.comparison.model_note
    studio.model_panel.show_devices(["cpu", "cuda:0"], "cpu")  # as on a machine with a GPU
    studio.model_panel.device_box.setCurrentIndex(1)
    assert studio.controller.device == "cuda:0" and studio.settings.get("device") == "cuda:0"
    settle(qtbot, studio)
    assert studio.controller.last_result.request.device == "cuda:0"


def test_without_a_checkpoint_the_model_views_say_so_until_one_is_added(make_studio, library_file, tmp_path, fakes,
                                                                       monkeypatch, qtbot):
    window = make_studio(models_dir=tmp_path / "empty-models")  # nothing bundled, nothing added
    window.open_path(library_file)
    qtbot.waitUntil(lambda: window.controller.library is not None and window.controller.catalog_scanned,
                    timeout=20000)
    settle(qtbot, window)
    views = window.views
    for kind in (ViewKind.RETARGETED, ViewKind.RELEASED):
        assert views.stacks[kind].currentWidget() is views.messages[kind]
        assert views.messages[kind].isVisible() and not views.views[kind].widget.isVisible()
        assert views.messages[kind].text() == NO_MODEL_MESSAGE
    assert set(window.comparison.clips) == {ViewKind.SOURCE} and fakes.anonymizers == {}
    assert coloured_pixels(view_pixels(views.views[ViewKind.SOURCE])) > 50  # the source still plays
    window.clock.seek(10)
    window.coalescer.flush()
    assert "No retargeting checkpoint in" in window.model_panel.empty_label.text()
    assert window.model_panel.status_label.text() == NO_MODEL_MESSAGE
    assert not window.docks["model"].visibleRegion().isEmpty() and not window.message_boxes  # raised, no error
    assert "No action or subject recognizer" in window.predictions.header.text()
    window.open_export_dialog()
    assert not window.export_dialog.export_button.isEnabled()
    window.export_dialog.close()

    added = save_fake_checkpoint(tmp_path / "mine.pt", beta=0.2)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(added), ""))
    qtbot.mouseClick(window.model_panel.add_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    for kind in (ViewKind.RETARGETED, ViewKind.RELEASED):
        assert views.stacks[kind].currentWidget() is views.views[kind].widget and views.views[kind].widget.isVisible()
        assert coloured_pixels(view_pixels(views.views[kind])) > 50, kind
    assert window.comparison.unavailable == "" and "mine.pt" in views.notes[ViewKind.RELEASED].toolTip()


def test_rescan_help_dialogs_and_quit(studio, models_dir, qtbot):
    save_fake_checkpoint(models_dir / "dtmr_b05.pt", beta=0.5)
    qtbot.mouseClick(studio.model_panel.rescan_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: studio.model_panel.list.count() == 3, timeout=20000)
    studio.actions.shortcuts_help.trigger()
    studio.actions.about.trigger()
    assert len(studio.message_boxes) == 2
    assert "Space" in studio.message_boxes[0].text() and "DTMR Studio" in studio.message_boxes[1].text()
    studio.actions.quit.trigger()  # File > Quit closes the window, its dialogs and its workers
    assert not studio.isVisible() and not studio.message_boxes
    assert not any(t.isRunning() for t in studio.controller.threads.values())
