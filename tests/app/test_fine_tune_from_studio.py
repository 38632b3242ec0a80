"""Fine-tuning a bundled model on the open library from the Trainer tab (issue 42, item 4): "Start from" takes a
model of the model list, locks the form to its network and passes `--init`; the real `dtmr train` accepts that
command line and starts from the bundled weights."""

import pytest
import torch

from app.core.training_command import TrainingConfig, form_fine_tuning, training_arguments
from app.ui.trainer_tab import NEW_WEIGHTS
from dtmr.cli import main
from dtmr.data import generate_clips
from dtmr.io.npz_dataset import write_npz_dataset
from dtmr.models.checkpoints.header import read_checkpoint_header
from dtmr.resources import MODELS_DIR, resource_path
from dtmr.train.fine_tuning import fine_tuning
from studio_fakes import settle

BUNDLED = resource_path(*MODELS_DIR) / "dtmr_small_beta0.2.pt"


@pytest.mark.timeout(300)
def test_the_trainer_tab_fine_tunes_a_bundled_model_on_the_open_library(make_studio, tmp_path, qtbot):
    data = tmp_path / "mine.npz"
    write_npz_dataset(data, generate_clips(subjects=3, actions=2, repetitions=2, seed=0))
    window = make_studio(models_dir=resource_path(*MODELS_DIR))
    window.open_path(data)
    tab = window.trainer
    qtbot.waitUntil(lambda: window.controller.library is not None and tab.start_box.count() >= 3, timeout=30000)
    settle(qtbot, window, timeout=60000)
    names = [tab.start_box.itemText(i) for i in range(tab.start_box.count())]
    assert names[0] == NEW_WEIGHTS and not any("k-same" in name for name in names)  # fitted models are not trained
    tab.start_box.setCurrentIndex(next(i for i in range(1, tab.start_box.count())
                                       if tab.start_box.itemData(i).path == BUNDLED))
    # the bundled model's network: DisentangledTMR, small, naive residual, kinematic output head; locked
    assert (tab.method_box.currentData(), tab.preset_box.currentText()) == ("dtmr", "small")
    assert tab.naive_residual_box.isChecked() and tab.kinematic_output_box.isChecked()
    assert not any(w.isEnabled() for w in (tab.method_box, tab.preset_box, tab.naive_residual_box,
                                           tab.kinematic_output_box))
    assert tab.beta_box.currentText() == "0.2" and tab.beta_box.isEnabled() and "Fine-tunes" in tab.start_note.text()
    tab.out_edit.setText(str(tmp_path / "tuned"))
    for box in tab.epoch_boxes:
        box.setValue(0)
    args = training_arguments(tab.form_config(resume=False))
    assert args[args.index("--init") + 1] == str(BUNDLED) and args[args.index("--data") + 1] == str(data)
    assert args[args.index("--split") + 1] == "synthetic"  # the split of the library's layout
    assert "--resume" not in args and "--init" not in training_arguments(tab.form_config(resume=True))
    # the real `dtmr train` runs this command line (no epochs: the release is the bundled network itself)
    assert main(args) == 0
    start = torch.load(BUNDLED, weights_only=True)["state_dict"]
    tuned = torch.load(tmp_path / "tuned" / "model.pt", weights_only=True)["state_dict"]
    assert all(torch.equal(start[k], tuned[k]) for k in start if k in tuned) and set(start) <= set(tuned)
    tab.start_box.setCurrentIndex(0)  # new weights again: the form is free
    assert tab.method_box.isEnabled() and tab.preset_box.isEnabled() and not tab.start_note.isVisible()


def test_the_command_line_passes_init_and_the_other_model_options(tmp_path):
    start = tmp_path / "start.pt"
    start.write_bytes(b"")
    config = TrainingConfig(data=str(tmp_path), split="synthetic", preset="small", beta=0.5, out=str(tmp_path / "o"),
                            device="cpu", init=str(start), model_options=(("decoder_dim", 32),))
    args = training_arguments(config)
    assert args[-4:] == ["--model-option", "decoder_dim=32", "--init", str(start)]
    with pytest.raises(ValueError, match="Resume continues the run's own weights"):
        TrainingConfig(**{**config.__dict__, "resume": True}).validate()


def test_the_form_shows_the_bundled_models_options_as_its_two_check_boxes():
    form = form_fine_tuning(fine_tuning(read_checkpoint_header(BUNDLED)))
    assert (form.naive_residual, form.kinematic_output, form.model_options) == (True, True, ())
