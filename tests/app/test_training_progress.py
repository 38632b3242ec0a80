"""The training command line and the Qt-free progress model fed by JSON-line events."""

import math
import sys

import pytest

from app.core.training_command import (
    TrainingConfig,
    parse_loss_weights,
    training_arguments,
    training_command,
)
from app.state.training import TrainingProgress
from dtmr.train.progress import ProgressEvent


def config(tmp_path, **changes):
    data = tmp_path / "d.npz"
    data.write_bytes(b"")
    values = dict(data=str(data), split="synthetic", preset="small", beta=0.2, out=str(tmp_path / "run"),
                  epochs=(1, 2, 3), batch=16, lr=5e-4, device="cpu")
    values.update(changes)
    return TrainingConfig(**values)


def test_single_process_command(tmp_path):
    c = config(tmp_path, resume=True)
    c.validate()
    cmd = training_command(c, python="py")
    assert cmd[:4] == ["py", "-m", "dtmr", "train"]
    args = training_arguments(c)
    pairs = dict(zip(args[1::2], args[2::2]))
    assert pairs["--epochs"] == "1,2,3" and pairs["--beta"] == "0.2" and pairs["--events"] == "-"
    assert pairs["--preset"] == "small" and pairs["--device"] == "cpu" and args[-1] == "--resume"


def test_several_gpus_run_under_torchrun(tmp_path):
    cmd = training_command(config(tmp_path, device="cuda", gpus=4), python=sys.executable)
    assert cmd[1:5] == ["-m", "torch.distributed.run", "--nproc_per_node", "4"]
    assert cmd[5:8] == ["-m", "dtmr", "train"]


@pytest.mark.parametrize("changes, word", [({"data": ""}, "data"), ({"out": ""}, "output"),
                                            ({"beta": 1.5}, "β"), ({"batch": 0}, "batch"),
                                            ({"epochs": (1, 2)}, "epochs"), ({"lr": 0.0}, "learning rate"),
                                            ({"quadruplets": 0}, "quadruplets"),
                                            ({"output_adversary_lr": -1.0}, "adversary")])
def test_invalid_forms_name_the_field(tmp_path, changes, word):
    with pytest.raises(ValueError, match=word):
        config(tmp_path, **changes).validate()


def test_settings_left_unset_are_left_to_dtmr_train(tmp_path):
    c = config(tmp_path, epochs=None, batch=None, lr=None)
    c.validate()
    args = training_arguments(c)
    for flag in ("--epochs", "--batch", "--lr", "--quadruplets", "--seed", "--model-option",
                 "--warm-output-critics", "--output-adversary-lr", "--loss-weight", "--resume"):
        assert flag not in args


def test_the_options_of_the_best_settings_become_flags(tmp_path):
    c = config(tmp_path, quadruplets=1024, seed=1, naive_residual=True, kinematic_output=True,
               warm_output_critics=True, output_adversary_lr=1e-3, loss_weights=(("output_action_ce", 0.0), ("output_identity_adversary", 1.5)))
    c.validate()
    args = training_arguments(c)
    tail = " ".join(args[args.index("-") + 1:])
    assert tail == ("--epochs 1,2,3 --batch 16 --quadruplets 1024 --seed 1 --lr 0.0005 --output-adversary-lr 0.001 "
                    "--model-option residual=naive --model-option output_head=kinematic --warm-output-critics --loss-weight output_action_ce=0.0 "
                    "--loss-weight output_identity_adversary=1.5")


def test_loss_weights_are_read_from_a_free_text_list():
    assert parse_loss_weights("") == ()
    assert parse_loss_weights(" a=1, b=0.5  c=2,") == (("a", 1.0), ("b", 0.5), ("c", 2.0))
    for bad in ("a", "a=x", "=1"):
        with pytest.raises(ValueError, match="loss weights: expected TERM=WEIGHT"):
            parse_loss_weights(bad)


def test_progress_curves_per_stage_and_state():
    progress = TrainingProgress()
    seen = []
    progress.changed.connect(lambda e: seen.append(e.kind))
    progress.add(ProgressEvent("start"))
    for epoch in (1, 2):
        for step in (1, 2):
            losses = {"total": 1.0 / (epoch + step)}
            if step == 2:
                losses["mse"] = 0.1
            progress.add(ProgressEvent("step", stage=2, epoch=epoch, epochs=2, step=step, steps=2, losses=losses,
                                       samples_per_s=50.0, eta_s=9.0))
    progress.add(ProgressEvent("checkpoint", stage=2, epoch=2, message="/run/model.pt"))
    curves = progress.curves[2]
    assert curves.steps == [1.0, 2.0, 3.0, 4.0]
    assert math.isnan(curves.losses["mse"][0]) and curves.losses["mse"][1] == 0.1
    assert len(curves.losses["mse"]) == len(curves.losses["total"]) == 4
    assert (progress.stage, progress.epoch, progress.samples_per_s, progress.eta_s) == (2, 2, 50.0, 9.0)
    assert progress.checkpoints == ["/run/model.pt"] and not progress.done
    progress.add(ProgressEvent("done"))
    assert progress.done and progress.eta_s == 0.0 and seen[0] == "start"
    progress.add(ProgressEvent("error", message="diverged"))
    assert progress.error == "diverged"


def test_child_environment_puts_the_studio_dtmr_first(tmp_path):
    from pathlib import Path

    import dtmr
    from app.core.training_command import child_environment

    root = str(Path(dtmr.__file__).resolve().parent.parent)
    env = child_environment({"PYTHONPATH": f"/elsewhere:{root}", "HOME": "/h"})
    assert env["PYTHONPATH"] == f"{root}:/elsewhere" and env["HOME"] == "/h"
    assert child_environment({})["PYTHONPATH"] == root


def test_state_file_and_resumable_folders_are_those_of_dtmr_train(tmp_path):
    from app.core.training_command import STATE_FILE, resumable
    from dtmr.train.loop import STATE_FILE as LIBRARY_STATE_FILE

    assert STATE_FILE == LIBRARY_STATE_FILE
    assert not resumable(tmp_path) and not resumable("")
    (tmp_path / STATE_FILE).write_bytes(b"")
    assert resumable(tmp_path)


def test_method_is_passed_only_when_not_the_default(tmp_path):
    assert "--method" not in training_arguments(config(tmp_path))
    args = training_arguments(config(tmp_path, method="dmr"))
    assert args[args.index("--method") + 1] == "dmr"
    with pytest.raises(ValueError, match="unknown method"):
        config(tmp_path, method="xyz").validate()
