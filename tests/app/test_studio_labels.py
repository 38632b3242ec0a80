"""Labels by name in the Studio (issue 18): explicit notes instead of a false ✔, no "no recognizer" flash,
*Random* keeps the source's predictions, a readable tracks legend, broken checkpoints one removable line."""

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QPushButton

from app.state.comparison import VIEWS, ViewKind
from app.ui.model_panel import PROBLEM_WIDTH
from app.ui.predictions_panel import WITHHELD_CELL
from studio_fakes import FakeAnonymizer, FakeRecognizer, save_fake_checkpoint, settle


@pytest.fixture
def models_dir(tmp_path):
    """β models and recognizers whose classes are "action 0".."action 3" (not the library's names)."""
    folder = tmp_path / "models"
    folder.mkdir()
    save_fake_checkpoint(folder / "dtmr_small_beta0.2.pt", beta=0.2)
    save_fake_checkpoint(folder / "dtmr_small_beta1.0.pt", beta=1.0)
    save_fake_checkpoint(folder / "action.pt", method="sgn", beta=None, task="action")
    save_fake_checkpoint(folder / "subject.pt", method="sgn", beta=None, task="subject")
    return folder


def open_studio(make_studio, models_dir, library_file, qtbot):
    window = make_studio(models_dir=models_dir)
    window.open_path(library_file)
    qtbot.waitUntil(lambda: window.comparison.recognition is not None and not window.controller.busy, timeout=20000)
    settle(qtbot, window)
    return window


def test_a_recognizer_of_other_classes_gets_an_explicit_note_not_a_check(make_studio, models_dir, library_file, qtbot):
    window = open_studio(make_studio, models_dir, library_file, qtbot)
    cells = [window.predictions.cells[(task, kind)].text() for task in ("action", "subject") for kind in VIEWS]
    # issue 42: no class and no probability at all, not even unmarked ones
    assert all(cell.endswith(WITHHELD_CELL) and "%" not in cell for cell in cells)
    notes = window.predictions.notes.text()
    assert "action recognizer trained on another label set (unrecorded data set, 4 actions): no prediction" in notes
    assert "subject recognizer without recorded training subjects (unrecorded data set, 4 subjects)" in notes
    for task in ("action", "subject"):  # the tracks plot nothing false
        assert all(len(window.tracks.curves[(task, kind)].getData()[1] or []) == 0 for kind in VIEWS)
    assert "another label set" in window.tracks.plots["action"].getPlotItem().titleLabel.text


def test_no_recognizer_never_flashes_while_the_model_views_are_computed(make_studio, models_dir, library_file,
                                                                        fakes, qtbot):
    fakes.anonymizers[str(models_dir / "dtmr_small_beta0.2.pt")] = FakeAnonymizer(beta=0.2, delay=0.4)
    fakes.anonymizers[str(models_dir / "dtmr_small_beta1.0.pt")] = FakeAnonymizer(beta=1.0, delay=0.4)
    window = open_studio(make_studio, models_dir, library_file, qtbot)
    seen = []
    record = lambda: seen.extend(window.predictions.cells[("action", k)].text() for k in VIEWS)  # noqa: E731
    window.comparison.recognition_changed.connect(record)
    window.comparison.clips_changed.connect(record)
    window.library_panel.clip_selected.emit(4)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    record()
    assert seen and not any("no recognizer" in text for text in seen)
    assert all(window.predictions.cells[("action", k)].text().endswith(WITHHELD_CELL) for k in VIEWS)


def test_random_keeps_the_sources_predictions(make_studio, models_dir, library_file, fakes, qtbot):
    recognized = []

    class Recording(FakeRecognizer):
        def window_probabilities(self, clip, window=32, stride=1):
            recognized.append(clip)
            return super().window_probabilities(clip, window, stride)

    fakes.load_recognizer = lambda info, device: Recording(info.task, 4)
    window = open_studio(make_studio, models_dir, library_file, qtbot)
    source = window.comparison.clips[ViewKind.SOURCE]
    recognized.clear()
    before = window.comparison.reference
    qtbot.mouseClick(window.reference_panel.random_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.comparison.reference is not before, timeout=5000)
    settle(qtbot, window)
    assert window.comparison.clips[ViewKind.SOURCE] is source
    assert recognized and not any(clip is source for clip in recognized)  # only the two model views, per task
    assert set(window.comparison.recognition.tasks["action"].per_frame) == {v.value for v in VIEWS}


def test_the_tracks_legend_shows_every_view_inside_its_track(make_studio, models_dir, library_file, qtbot):
    window = open_studio(make_studio, models_dir, library_file, qtbot)
    QApplication.processEvents()
    plot = window.tracks.plots["action"]
    legend = plot.getPlotItem().legend
    view = plot.getPlotItem().vb.sceneBoundingRect()
    labels = [label for _, label in legend.items]
    assert [label.text for label in labels] == [kind.title for kind in VIEWS]
    assert all(label.isVisible() and view.contains(label.sceneBoundingRect()) for label in labels)
    for name, track in window.tracks.plots.items():  # names are titles: no rotated label crowds a short track
        assert not track.getAxis("left").label.isVisible(), name
        assert track.getPlotItem().titleLabel.text


def test_a_broken_checkpoint_is_one_short_line_that_can_be_removed(make_studio, models_dir, library_file, tmp_path,
                                                                    qtbot):
    window = open_studio(make_studio, models_dir, library_file, qtbot)
    broken = tmp_path / ("a_checkpoint_with_a_rather_long_name_" * 3 + ".pt")
    broken.write_bytes(b"not a zip archive" * 20)
    panel, controller = window.model_panel, window.controller
    panel.remove_requested.connect(controller.remove_checkpoint)  # MainWindow's connection
    width = window.docks["model"].width()
    controller.add_checkpoint(broken)
    qtbot.waitUntil(lambda: len(panel.problem_rows) == 1, timeout=20000)
    settle(qtbot, window)
    label = panel.problem_rows[0].findChild(QLabel)
    assert label.maximumWidth() <= PROBLEM_WIDTH and label.toolTip().startswith(str(broken))
    assert "torch.save your checkpoint" not in label.toolTip() and "\n" not in label.toolTip()
    assert window.docks["model"].width() == width
    remove = panel.problem_rows[0].findChild(QPushButton)
    qtbot.mouseClick(remove, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not panel.problem_rows, timeout=20000)
    settle(qtbot, window)
    assert window.settings.get("user_checkpoints") == []
    assert Path(broken).is_file()  # forgotten, not deleted
