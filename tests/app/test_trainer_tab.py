"""The Train tab against a fake `dtmr train` that prints JSON-line events: completion, cancel, resume, load."""

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from studio_fakes import save_fake_checkpoint

from app.core import training_command
from app.core.training_command import training_arguments
from app.ui.trainer_tab import TrainerTab
from dtmr.train.presets import DEFAULT_BETA, DEFAULT_PRESET, DEFAULT_SEED, PRESETS

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
    widget.show()
    widget.data_edit.setText(str(data))
    widget.out_edit.setText(str(tmp_path / "run"))
    widget.preset_box.setCurrentText("small")
    for box, epochs in zip(widget.epoch_boxes, (1, 2, 1)):
        box.setValue(epochs)
    yield widget
    widget.shutdown()
    widget.close()


def test_runs_to_completion_with_curves_rate_eta_and_log(tab, qtbot):
    qtbot.mouseClick(tab.start_button, LEFT)
    assert tab.running and not tab.start_button.isEnabled() and tab.cancel_button.isEnabled()
    qtbot.waitUntil(lambda: not tab.running, timeout=20000)
    assert tab.progress.done and "Done" in tab.state_label.text()
    assert set(tab.progress.curves) == {1, 2, 3}
    assert len(tab.progress.curves[2].steps) == 8  # 2 epochs x 4 steps
    assert tab.curves[(2, "total")].getData()[1].size == 8
    assert "samples/s" in tab.rate_label.text() and "ETA 0:00" in tab.rate_label.text()
    log = tab.log.toPlainText()
    assert "fake trainer starting" in log and "checkpoint" in log and "--events -" in log
    assert tab.load_button.isEnabled()
    with qtbot.waitSignal(tab.load_model_requested) as loaded:
        qtbot.mouseClick(tab.load_button, LEFT)
    assert loaded.args == [str(Path(tab.out_edit.text()) / "model.pt")]


def test_cancel_mid_way_then_resume_continues(tab, qtbot, monkeypatch):
    monkeypatch.setenv("FAKE_TRAINER_STEP_S", "0.15")
    qtbot.mouseClick(tab.start_button, LEFT)
    qtbot.waitUntil(lambda: tab.progress.stage == 2, timeout=20000)  # stage 1 finished and checkpointed
    qtbot.mouseClick(tab.cancel_button, LEFT)
    qtbot.waitUntil(lambda: not tab.running, timeout=10000)
    assert "Cancelled" in tab.state_label.text() and not tab.progress.done
    assert not tab.load_button.isEnabled()
    stage_one = list(tab.progress.curves[1].steps)
    monkeypatch.setenv("FAKE_TRAINER_STEP_S", "0.01")
    qtbot.mouseClick(tab.resume_button, LEFT)
    qtbot.waitUntil(lambda: not tab.running, timeout=20000)
    assert tab.progress.done
    assert tab.progress.curves[1].steps == stage_one  # stage 1 was not trained again
    assert "resumed" in tab.log.toPlainText() and "--resume" in tab.log.toPlainText()


def test_invalid_form_is_explained_not_started(tab, qtbot):
    tab.data_edit.setText("")
    qtbot.mouseClick(tab.start_button, LEFT)
    assert not tab.running and "training data" in tab.state_label.text()


def test_fields_are_locked_while_running(tab, qtbot, monkeypatch):
    monkeypatch.setenv("FAKE_TRAINER_STEP_S", "0.05")
    fields = tab._form_widgets()
    assert tab.quadruplets_box in fields and tab.loss_weights_edit in fields and tab.epoch_boxes[2] in fields
    qtbot.mouseClick(tab.start_button, LEFT)
    assert tab.running and not any(widget.isEnabled() for widget in fields)
    qtbot.waitUntil(lambda: not tab.running, timeout=20000)
    assert all(widget.isEnabled() for widget in fields)


def test_the_tab_shows_the_library_defaults_and_passes_none_of_them(qtbot, tmp_path):
    """The contract between the Studio and `dtmr train`: an untouched form leaves every default to the library."""
    data = tmp_path / "data.npz"
    data.write_bytes(b"")
    widget = TrainerTab()
    qtbot.addWidget(widget)
    widget.data_edit.setText(str(data))
    widget.out_edit.setText(str(tmp_path / "run"))
    offered = [widget.preset_box.itemText(i) for i in range(widget.preset_box.count())]
    assert offered == list(PRESETS) and widget.preset_box.currentText() == DEFAULT_PRESET
    assert float(widget.beta_box.currentText()) == DEFAULT_BETA and widget.seed_box.value() == DEFAULT_SEED
    for name, preset in [*PRESETS.items(), (DEFAULT_PRESET, PRESETS[DEFAULT_PRESET])]:
        widget.preset_box.setCurrentText(name)
        shown = (tuple(box.value() for box in widget.epoch_boxes), widget.batch_box.value(), widget.lr_box.value())
        assert shown == (preset.epochs, preset.batch, preset.base_lr)
        assert f"learning rate {preset.base_lr:g}" in widget.defaults_label.text()
        args = training_arguments(widget.form_config(resume=False))
        assert args[args.index("--preset") + 1] == name and args[args.index("--beta") + 1] == f"{DEFAULT_BETA:g}"
        for flag in ("--epochs", "--lr", "--batch", "--quadruplets", "--seed", "--model-option",
                     "--warm-output-critics", "--output-adversary-lr", "--loss-weight"):
            assert flag not in args


def test_changed_fields_and_the_best_settings_options_reach_the_command(tab):
    tab.preset_box.setCurrentText("paper")
    tab.epoch_boxes[1].setValue(8)
    tab.lr_box.setValue(1e-3)
    tab.quadruplets_box.setValue(1024)
    tab.seed_box.setValue(2)
    tab.naive_residual_box.setChecked(True)
    tab.kinematic_output_box.setChecked(True)
    tab.warm_critics_box.setChecked(True)
    tab.adversary_lr_box.setValue(1e-3)
    tab.loss_weights_edit.setText("output_identity_adversary=1, output_action_ce=0")
    args = " ".join(training_arguments(tab.form_config(resume=False)))
    assert "--preset paper" in args and "--epochs 20,8,20 " in args and "--batch" not in args
    assert "--lr 0.001 " in args and "--quadruplets 1024 " in args and "--seed 2 " in args
    assert "--model-option residual=naive --model-option output_head=kinematic" in args
    assert "--warm-output-critics" in args
    assert "--output-adversary-lr 0.001" in args
    assert "--loss-weight output_identity_adversary=1.0 --loss-weight output_action_ce=0.0" in args


def test_bad_loss_weights_are_explained_not_started(tab, qtbot):
    tab.loss_weights_edit.setText("output_action_ce=zero")
    qtbot.mouseClick(tab.start_button, LEFT)
    assert not tab.running and "loss weights" in tab.state_label.text()


def test_devices_offer_torchrun_for_several_gpus(tab):
    tab.set_devices(["cuda:0", "cuda:1", "cpu"])
    assert tab.device_box.itemText(0) == "all 2 GPUs (torchrun)" and tab.device_box.itemData(0) == ("cuda", 2)
    tab.set_devices(["cpu"])
    assert tab.device_box.count() == 1


def test_real_dtmr_train_accepts_the_form_and_streams_events(qtbot, tmp_path):
    """The real `dtmr train` (not the fake): its flags match the form and its events drive the tab."""
    from dtmr.data import generate_clips
    from dtmr.io.npz_dataset import write_npz_dataset

    data = tmp_path / "train.npz"
    write_npz_dataset(data, generate_clips(subjects=3, actions=2, repetitions=2, seed=0))
    widget = TrainerTab()
    qtbot.addWidget(widget)
    widget.data_edit.setText(str(data))
    widget.out_edit.setText(str(tmp_path / "run"))
    widget.split_box.setCurrentIndex(widget.split_box.findData("synthetic"))
    widget.batch_box.setValue(4)
    qtbot.mouseClick(widget.start_button, LEFT)
    qtbot.waitUntil(lambda: bool(widget.progress.curves) or not widget.running, timeout=120000)
    assert widget.running, widget.log.toPlainText()[-2000:]
    assert widget.progress.stage == 1 and widget.progress.curves[1].losses  # real loss names, plotted
    assert set(widget.progress.curves[1].losses) == {name for (stage, name) in widget.curves if stage == 1}
    assert "Training: stage 1/3" in widget.state_label.text()
    widget.cancel()
    qtbot.waitUntil(lambda: not widget.running, timeout=20000)
    assert "Cancelled" in widget.state_label.text()
    widget.close()


def test_cancel_before_any_epoch_ended_says_nothing_was_saved_and_offers_no_resume(tab, qtbot, monkeypatch):
    monkeypatch.setenv("FAKE_TRAINER_STEP_S", "0.5")
    assert not tab.resume_button.isEnabled()  # a new output folder: nothing to resume
    qtbot.mouseClick(tab.start_button, LEFT)
    qtbot.waitUntil(lambda: tab.progress.step is not None, timeout=20000)  # first step, no epoch ended
    qtbot.mouseClick(tab.cancel_button, LEFT)
    qtbot.waitUntil(lambda: not tab.running, timeout=10000)
    assert "nothing was saved" in tab.state_label.text() and "is saved" not in tab.state_label.text()
    assert not tab.resume_button.isEnabled() and tab.start_button.isEnabled()


def test_resume_is_offered_only_where_a_run_state_is(tab, tmp_path):
    out = Path(tab.out_edit.text())
    assert not tab.resume_button.isEnabled()
    out.mkdir()
    (out / "state.txt").write_text("1 1")
    tab.out_edit.setText("")
    tab.out_edit.setText(str(out))
    assert tab.resume_button.isEnabled()
    tab.out_edit.setText(str(tmp_path / "elsewhere"))
    assert not tab.resume_button.isEnabled()


def test_a_failure_shows_the_process_last_error_line(qtbot, tmp_path):
    failing = "import sys; print('noise', file=sys.stderr); print('dtmr: error: no training state', file=sys.stderr); sys.exit(2)"
    widget = TrainerTab(command=lambda config: [sys.executable, "-c", failing])
    qtbot.addWidget(widget)
    data = tmp_path / "data.npz"
    data.write_bytes(b"")
    widget.data_edit.setText(str(data))
    widget.out_edit.setText(str(tmp_path / "run"))
    widget.start()
    qtbot.waitUntil(lambda: not widget.running, timeout=20000)
    assert "exit status 2" in widget.state_label.text() and "no training state" in widget.state_label.text()


def test_the_log_keeps_its_end_in_view(tab, qtbot):
    for i in range(400):
        tab._append_log(f"line {i}")
    bar = tab.log.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()


def test_loss_plots_fill_the_tab_at_the_default_window_size(make_studio, qtbot):
    window = make_studio()
    window.resize(1500, 920)  # MainWindow's size without a saved layout
    window.tabs.setCurrentWidget(window.trainer_page)
    qtbot.waitUntil(lambda: window.trainer.plots[1].isVisible())
    trainer = window.trainer
    plot = trainer.plots[1]
    assert plot.width() >= 0.45 * trainer.width() and plot.height() >= 220, (plot.size(), trainer.size())
    legend = trainer.legends[1]  # below the plot (issue 42: 24 entries inside it covered the curves)
    assert legend.font().pointSizeF() >= 9


def test_the_open_library_and_its_split_are_the_default_data(tab, tmp_path):
    import numpy as np

    tab.data_edit.setText("")
    ntu = {"action": np.array([1, 2, 3, 55]), "subject": np.array([1, 3, 1, 3]), "view": np.array([1, 2, 3, 1]),
           "sample_name": np.array(["S001C001P001R001A001", "S001C002P003R001A002", "S001C003P001R001A003",
                                    "S001C001P003R001A055"])}
    tab.set_library(tmp_path / "ntu.h5", ntu)
    assert tab.data_edit.text() == str(tmp_path / "ntu.h5") and tab.split_box.currentData() == "ntu_cs"
    ucla = {"action": np.array([0, 1, 2]), "subject": np.array([0, 1, 2]), "view": np.array([0, 1, 2]),
            "repetition": np.array([0, 0, 0]),
            "sample_name": np.array(["a01_s01_e00_v01", "a02_s02_e00_v02", "a03_s03_e00_v03"])}
    tab.set_library(tmp_path / "nwucla.npz", ucla)  # the next library replaces the previous one
    assert tab.data_edit.text() == str(tmp_path / "nwucla.npz") and tab.split_box.currentData() == "nwucla"
    tab.data_edit.setText(str(tmp_path / "mine.npz"))
    tab.set_library(tmp_path / "ntu.h5", ntu)  # data the user chose stays
    assert tab.data_edit.text() == str(tmp_path / "mine.npz") and tab.split_box.currentData() == "nwucla"


def test_method_choice_passes_only_method_and_changes(tab):
    tab.method_box.setCurrentIndex(tab.method_box.findData("pmr"))
    assert not tab.epoch_boxes[0].isEnabled() and not tab.loss_weights_edit.isEnabled()
    args = training_arguments(tab.form_config(resume=False))
    assert args[args.index("--method") + 1] == "pmr"
    for flag in ("--epochs", "--batch", "--lr", "--loss-weight", "--warm-output-critics"):
        assert flag not in args
    tab.batch_box.setValue(8)
    assert "--batch" in training_arguments(tab.form_config(resume=False))
    tab.method_box.setCurrentIndex(tab.method_box.findData("dtmr"))
    assert tab.epoch_boxes[0].isEnabled() and "--method" not in training_arguments(tab.form_config(resume=False))
