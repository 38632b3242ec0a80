"""Issue 42's Train-tab defects, each in a shown tab driven by mouse clicks: the split proposed by the
library's layout, the progress line after a cancel, Resume after a finished run, the stage-3 legend."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from studio_fakes import save_fake_checkpoint, settle

from app.core import training_command
from app.core.training_command import training_arguments
from app.state.comparison import ViewKind
from app.ui.trainer_tab import TrainerTab
from dtmr.io.sources import open_clip_source
from dtmr.resources import DEMO_LIBRARY, resource_path
from dtmr.train.progress import ProgressEvent

FAKE_TRAINER = Path(__file__).with_name("fake_trainer.py")
LEFT = Qt.MouseButton.LeftButton


@pytest.fixture
def tab(qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(training_command, "STATE_FILE", "state.txt")  # the fake trainer's resumable state
    monkeypatch.setenv("FAKE_TRAINER_CHECKPOINT", str(save_fake_checkpoint(tmp_path / "trained.pt", beta=0.5)))
    data = tmp_path / "data.npz"
    data.write_bytes(b"")
    widget = TrainerTab(command=lambda config: [sys.executable, str(FAKE_TRAINER), *training_arguments(config)])
    qtbot.addWidget(widget)
    widget.resize(1200, 800)
    widget.show()
    qtbot.waitExposed(widget)
    widget.data_edit.setText(str(data))
    widget.out_edit.setText(str(tmp_path / "run"))
    widget.preset_box.setCurrentText("small")
    for box, epochs in zip(widget.epoch_boxes, (1, 2, 1)):
        box.setValue(epochs)
    yield widget
    widget.shutdown()
    widget.close()


def test_the_bundled_demo_opened_in_the_studio_proposes_the_synthetic_split(make_studio, qtbot):
    window = make_studio()
    window.open_path(resource_path(*DEMO_LIBRARY))
    qtbot.waitUntil(lambda: ViewKind.SOURCE in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    window.tabs.setCurrentWidget(window.trainer_page)
    trainer = window.trainer
    assert trainer.split_box.currentData() == "synthetic"  # was ntu_cs: its subjects 1-10 pass NTU's checks
    assert "dtmr synthetic" in trainer.split_note.text() and trainer.split_note.isVisible()


@pytest.mark.parametrize("data, split", [("nwucla.npz", "nwucla"), ("uiprmd_kinect.npz", "uiprmd"),
                                         ("ntu_samples", "ntu_cs")])
def test_the_real_data_sets_get_their_own_split(tab, shared_data, data, split):
    path = shared_data / data
    if not path.exists():
        pytest.skip(f"{path} is not present")
    tab.data_edit.setText("")
    tab.set_library(path, open_clip_source(path).metadata_table())
    assert tab.split_box.currentData() == split  # UI-PRMD and the NTU samples got "synthetic"
    if data == "ntu_samples":  # both samples are ntu_cs training performers: said, not hidden behind another split
        assert "leaves no test clips" in tab.split_note.text()


def test_after_cancel_the_progress_line_holds_nothing_of_the_cancelled_run(tab, qtbot, monkeypatch):
    monkeypatch.setenv("FAKE_TRAINER_STEP_S", "0.15")
    qtbot.mouseClick(tab.start_button, LEFT)
    qtbot.waitUntil(lambda: tab.progress.stage == 2 and (tab.progress.step or 0) >= 2, timeout=20000)
    assert tab.bar.value() > 0 and "ETA" in tab.rate_label.text()
    qtbot.mouseClick(tab.cancel_button, LEFT)
    qtbot.waitUntil(lambda: not tab.running, timeout=10000)
    assert "Cancelled" in tab.state_label.text()
    assert tab.bar.text() == "" and tab.bar.value() < tab.bar.minimum() + 1  # no 100 % / 33 % left
    assert "ETA" not in tab.rate_label.text() and "samples/s" not in tab.rate_label.text()
    assert "step" not in tab.state_label.text() and "epoch 1/" not in tab.state_label.text()

    monkeypatch.setenv("FAKE_TRAINER_STEP_S", "0.5")
    qtbot.mouseClick(tab.resume_button, LEFT)  # the resumed run starts from a clean line, not the old counts
    assert tab.bar.text() == "" and tab.rate_label.text() == ""
    assert tab.progress.stage is None and tab.progress.step is None
    tab.cancel()
    qtbot.waitUntil(lambda: not tab.running, timeout=10000)


def test_resume_is_not_offered_after_a_finished_run(tab, qtbot):
    qtbot.mouseClick(tab.start_button, LEFT)
    qtbot.waitUntil(lambda: not tab.running, timeout=20000)
    assert tab.progress.done and (Path(tab.out_edit.text()) / "state.txt").is_file()
    assert not tab.resume_button.isEnabled()
    assert "finished" in tab.resume_button.toolTip()
    assert tab.start_button.isEnabled() and tab.load_button.isEnabled()


def test_a_finished_runs_folder_offers_no_resume_after_a_restart(qtbot, tmp_path):
    """The real `dtmr train` keeps train_state.pt after its last epoch; its event log ends with "done"."""
    out = tmp_path / "run"
    out.mkdir()
    (out / training_command.STATE_FILE).write_bytes(b"")
    events = [ProgressEvent("start"), ProgressEvent("step", stage=3, step=4, steps=4), ProgressEvent("done")]
    log = out / "events.jsonl"  # dtmr train's event log (dtmr.cli.train_cmd.EVENTS_FILE)
    log.write_text("".join(e.to_json() + "\n" for e in events[:2]))
    widget = TrainerTab()
    qtbot.addWidget(widget)
    widget.out_edit.setText(str(out))
    assert widget.resume_button.isEnabled()  # a cancelled or crashed run: its state continues
    with open(log, "a") as fh:
        fh.write(events[2].to_json() + "\n")
    widget.out_edit.setText("")
    widget.out_edit.setText(str(out))
    assert not widget.resume_button.isEnabled()
    from dtmr.cli.train_cmd import EVENTS_FILE

    assert training_command.EVENTS_FILE == EVENTS_FILE


def _data_area(tab: TrainerTab, stage: int) -> QRect:
    """The plot's data area (its view box) in the tab's coordinates."""
    plot = tab.plots[stage]
    box = plot.getPlotItem().getViewBox()
    rect = plot.mapFromScene(box.sceneBoundingRect()).boundingRect()
    return QRect(plot.mapTo(tab, rect.topLeft()), rect.size())


def _legend_areas(tab: TrainerTab, stage: int) -> list[QRect]:
    """Every visible legend of the stage, in the tab's coordinates: one inside the plot or a widget beside it."""
    plot = tab.plots[stage]
    areas = []
    inside = plot.getPlotItem().legend
    if inside is not None and inside.isVisible() and inside.items:
        rect = plot.mapFromScene(inside.sceneBoundingRect()).boundingRect()
        areas.append(QRect(plot.mapTo(tab, rect.topLeft()), rect.size()))
    outside = getattr(tab, "legends", {}).get(stage)
    if outside is not None and outside.isVisible():
        areas.append(QRect(outside.mapTo(tab, QPoint(0, 0)), outside.size()))
    return areas


def test_the_stage_3_legend_does_not_cover_the_curves(tab, qtbot):
    names = ["total", *(f"loss_term_{i:02d}" for i in range(23))]  # stage 3 logs 24 losses
    tab.progress.add(ProgressEvent("stage", stage=3, epochs=1))
    for step in range(1, 5):
        tab.progress.add(ProgressEvent("step", stage=3, epoch=1, epochs=1, step=step, steps=4,
                                       losses={n: 1.0 / (step + i) for i, n in enumerate(names)}))
    qtbot.waitUntil(lambda: tab.plots[3].isVisible(), timeout=5000)
    qtbot.wait(50)
    data = _data_area(tab, 3)
    legends = _legend_areas(tab, 3)
    assert legends, "no legend shown"
    for legend in legends:
        overlap = legend.intersected(data)
        assert overlap.width() * overlap.height() == 0, (legend, data)
    assert tab.legends[3].names() == names
    assert data.height() >= 150 and data.width() >= 250
    legend = tab.legends[3]  # unticking a loss hides its curve
    item = legend.item(1)
    rect = legend.visualItemRect(item)
    qtbot.mouseClick(legend.viewport(), LEFT, pos=QPoint(rect.left() + 6, rect.center().y()))
    assert item.checkState() == Qt.CheckState.Unchecked and not tab.curves[(3, names[1])].isVisible()
    assert np.isfinite(tab.curves[(3, "total")].getData()[1]).all()
