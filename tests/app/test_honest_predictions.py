"""Honest predictions (issue 42, item 3): a recognizer trained on another label set shows no class and no
probability, in the Predictions panel, the tracks and the export dialog, only a one-line reason that is
whole at the default window size; the bundled demo's own models are not flagged."""

import pytest
import torch
from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import QApplication

from app.state.comparison import VIEWS
from app.ui.model_panel import OTHER_DATA_SET_MARK, PATH_ROLE
from app.ui.predictions_panel import WITHHELD_CELL
from dtmr.data.label_set import record_label_set
from studio_fakes import load_named_recognizer, save_fake_checkpoint, settle

SYNTHETIC_ACTIONS = ["walk in place", "wave", "clap", "jump", "squat", "kick", "punch", "bow", "raise arms",
                     "phone call", "drink", "throw"]
#: what the bundled recognizers record: the synthetic set (12 named actions, subjects 1-40)
SYNTHETIC_DATA = record_label_set({"path": "synthetic.h5", "topology": "ntu25", "subjects": list(range(1, 41)),
                                   "actions": list(range(1, 13)), "action_names": SYNTHETIC_ACTIONS})


def save_synthetic_recognizer(path, task):
    checkpoint = torch.load(save_fake_checkpoint(path, method="sgn", beta=None, task=task), weights_only=True)
    labels = list(range(1, 13)) if task == "action" else list(range(1, 41))
    names = SYNTHETIC_ACTIONS if task == "action" else [f"subject {s}" for s in labels]
    checkpoint.update(labels=labels, class_names=names, data=SYNTHETIC_DATA)
    torch.save(checkpoint, path)


@pytest.fixture
def synthetic_models(tmp_path):
    """β models and the bundled recognizers' label sets; the library (`library_file`: wave, march, sway;
    subjects 0-2) shares one action name ("wave") with them, which does not make them its recognizers."""
    folder = tmp_path / "models"
    folder.mkdir()
    save_fake_checkpoint(folder / "dtmr_small_beta0.2.pt", beta=0.2)
    save_fake_checkpoint(folder / "dtmr_small_beta1.0.pt", beta=1.0)
    save_synthetic_recognizer(folder / "action.pt", "action")
    save_synthetic_recognizer(folder / "subject.pt", "subject")
    return folder


ACTION_LINE = "action recognizer trained on another label set (synthetic, 12 actions; 1 of this library's 3 among " \
              "them): no prediction"
SUBJECT_LINE = "subject recognizer trained on other people (synthetic, 40 subjects): no prediction"


def label_shows_all_of_its_text(label) -> bool:
    """The word-wrapped `label` is tall enough for its whole text at its width, and lies inside its window."""
    width = label.contentsRect().width()  # QLabel.heightForWidth never says less than a pinned height: measure
    wrapped = label.fontMetrics().boundingRect(QRect(0, 0, width, 10000), Qt.TextFlag.TextWordWrap, label.text())
    needed = wrapped.height()
    inside = label.window().rect().contains(label.mapTo(label.window(), label.rect().bottomRight()))
    return label.isVisible() and label.width() > 50 and needed <= label.contentsRect().height() and inside


@pytest.mark.timeout(120)
@pytest.mark.parametrize("size", [None, (1366, 768)])  # the default window size, and a small screen's
def test_a_recognizer_of_another_label_set_shows_only_its_reason(make_studio, synthetic_models, library_file,
                                                                  fakes, qtbot, size):
    fakes.load_recognizer = load_named_recognizer
    window = make_studio(models_dir=synthetic_models, size=size)
    window.open_path(library_file)
    qtbot.waitUntil(lambda: window.comparison.recognition is not None and not window.controller.busy, timeout=20000)
    settle(qtbot, window)
    window.docks["predictions"].raise_()
    QApplication.processEvents()
    panel = window.predictions
    for task in ("action", "subject"):
        for kind in VIEWS:
            cell = panel.cells[(task, kind)].text()
            assert cell.endswith(WITHHELD_CELL) and "%" not in cell and "wave" not in cell, (task, kind)
    assert panel.notes.text() == f"{ACTION_LINE}\n{SUBJECT_LINE}"
    assert label_shows_all_of_its_text(panel.notes)
    for task, line in (("action", ACTION_LINE), ("subject", SUBJECT_LINE)):
        plot = window.tracks.plots[task]
        assert all(len(window.tracks.curves[(task, kind)].getData()[1] or []) == 0 for kind in VIEWS)
        title = plot.getPlotItem().titleLabel
        assert title.text.endswith(line)
        assert title.item.boundingRect().width() <= plot.width()  # the whole line, not cut by the track


@pytest.mark.timeout(120)
def test_the_export_dialog_says_why_the_video_has_no_prediction(make_studio, synthetic_models, library_file,
                                                                 fakes, qtbot):
    fakes.load_recognizer = load_named_recognizer
    window = make_studio(models_dir=synthetic_models)
    window.open_path(library_file)
    qtbot.waitUntil(lambda: window.comparison.recognition is not None and not window.controller.busy, timeout=20000)
    settle(qtbot, window)
    window.open_export_dialog()
    dialog = window.export_dialog
    qtbot.waitUntil(dialog.isVisible, timeout=5000)
    assert dialog.predictions_note.text() == f"{ACTION_LINE}\n{SUBJECT_LINE}"
    assert label_shows_all_of_its_text(dialog.predictions_note)
    dialog.close()


@pytest.mark.timeout(120)
def test_the_bundled_demos_own_models_are_not_flagged(make_studio, tmp_path, qtbot):
    """On the bundled demo (subjects 1-10 of the synthetic set) no bundled model is marked ⚠."""
    from dtmr.resources import DEMO_LIBRARY, MODELS_DIR, resource_path

    window = make_studio(models_dir=resource_path(*MODELS_DIR))
    window.open_path(resource_path(*DEMO_LIBRARY))
    qtbot.waitUntil(lambda: window.controller.catalog.library is not None
                    and window.model_panel.list.count() >= 3, timeout=30000)
    settle(qtbot, window, timeout=60000)
    panel = window.model_panel
    rows = [panel.list.item(i).text() for i in range(panel.list.count())]
    assert rows and not any(OTHER_DATA_SET_MARK.strip() in row for row in rows), rows
    assert all(row.splitlines()[1].strip() in ("trained on synthetic — this library's data set",
                                               "trained on synthetic_pool — this library's data set") for row in rows)
    assert OTHER_DATA_SET_MARK.strip() not in panel.recognizer_label.text()
    assert panel.recognizer_label.text().count("trained on synthetic — this library's data set") == 2


def list_rows_show_all_of_their_text(widget) -> bool:
    """Every row of the QListWidget is as wide as its viewport at most and tall enough for its wrapped text."""
    viewport = widget.viewport().rect()
    for i in range(widget.count()):
        rect = widget.visualItemRect(widget.item(i))
        wrapped = widget.fontMetrics().boundingRect(QRect(0, 0, rect.width(), 10000), Qt.TextFlag.TextWordWrap,
                                                    widget.item(i).text())
        if rect.width() > viewport.width() or wrapped.height() > rect.height():
            return False
    return True


@pytest.mark.timeout(120)
def test_the_model_list_says_which_model_fits_which_data(make_studio, synthetic_models, library_file, tmp_path,
                                                          fakes, qtbot):
    """A model fitted on the open library says so; one of the synthetic set is ⚠ and says what differs."""
    fitted = torch.load(save_fake_checkpoint(synthetic_models / "ksame_mine.pt", method="ksame", beta=1.0),
                        weights_only=True)
    fitted["data"] = record_label_set({"path": str(library_file), "topology": "ntu25", "subjects": [0, 1, 2],
                                       "actions": [0, 1, 2], "action_names": ["wave", "march", "sway"]})
    torch.save(fitted, synthetic_models / "ksame_mine.pt")
    synthetic = torch.load(synthetic_models / "dtmr_small_beta0.2.pt", weights_only=True)
    synthetic["data"] = SYNTHETIC_DATA
    torch.save(synthetic, synthetic_models / "dtmr_small_beta0.2.pt")
    fakes.load_recognizer = load_named_recognizer
    window = make_studio(models_dir=synthetic_models, size=None)
    window.open_path(library_file)
    qtbot.waitUntil(lambda: window.controller.catalog.library is not None and not window.controller.busy,
                    timeout=20000)
    settle(qtbot, window)
    window.docks["model"].raise_()
    QApplication.processEvents()
    panel = window.model_panel
    rows = {panel.list.item(i).data(PATH_ROLE): panel.list.item(i) for i in range(panel.list.count())}
    mine = rows[str(synthetic_models / "ksame_mine.pt")]
    assert mine.text().splitlines()[1].strip() == "fitted on this library"
    assert "this library: clips (3 actions, 3 subjects), skeleton ntu25" in mine.toolTip()
    other = rows[str(synthetic_models / "dtmr_small_beta0.2.pt")]
    assert other.text().startswith(OTHER_DATA_SET_MARK)
    assert other.text().splitlines()[1].strip() == "trained on synthetic — not this library's actions, people"
    assert "differs: actions, people" in other.toolTip()
    assert "trained on synthetic — not this library's actions, people" in panel.recognizer_label.text()
    assert list_rows_show_all_of_their_text(panel.list)
