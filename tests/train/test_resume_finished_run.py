"""`dtmr train --resume` of a finished run keeps the trained model (issue 23, item 1), also after a kill -9
between the last state save and the release save."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from tiny_training import TINY, create_tiny_library

from dtmr.cli import main

ENV = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

#: run in a child: train, but kill -9 itself right after the last epoch's state is saved (before the release)
KILL_AFTER_LAST_STATE = """
import os, signal, sys
from dtmr.cli import main
from dtmr.train.loop import EpochTrainer

save_state = EpochTrainer._save_state

def save_then_die(self, stage_index, next_epoch):
    state = save_state(self, stage_index, next_epoch)
    plan = self.stage_plan()
    if stage_index == len(plan) - 1 and next_epoch == plan[-1][2]:
        os.kill(os.getpid(), signal.SIGKILL)
    return state

EpochTrainer._save_state = save_then_die
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def tiny_library(tmp_path_factory) -> Path:
    return create_tiny_library(tmp_path_factory.mktemp("data") / "tiny.h5")


def _train_args(library: Path, out: Path) -> list[str]:
    args = ["train", "--data", str(library), "--split", "synthetic", "--preset", "small", "--beta", "0.5",
            "--out", str(out), "--epochs", "1,1,1", "--batch", "4", "--quadruplets", "8", "--device", "cpu"]
    for key, value in TINY.items():
        args += ["--model-option", f"{key}={json.dumps(value)}"]
    return args


def _model(out: Path) -> dict:
    return torch.load(out / "model.pt", weights_only=True)


def _assert_same_model(a: dict, b: dict) -> None:
    """Every tensor bitwise equal, everything else (metrics with every epoch's losses, config, data) equal."""
    assert a["state_dict"].keys() == b["state_dict"].keys()
    for key in a["state_dict"]:
        assert torch.equal(a["state_dict"][key], b["state_dict"][key]), key
    rest = {k: v for k, v in a.items() if k != "state_dict"}
    assert rest == {k: v for k, v in b.items() if k != "state_dict"}


@pytest.mark.slow
def test_resume_of_a_finished_run_keeps_the_trained_model(tiny_library, tmp_path):
    run = tmp_path / "R"
    assert main(_train_args(tiny_library, run)) == 0
    trained = _model(run)
    assert len(trained["metrics"]["history"]) == 3 and trained["metrics"]["stage"] == 3
    assert main(_train_args(tiny_library, run) + ["--resume"]) == 0
    _assert_same_model(trained, _model(run))


@pytest.mark.slow
def test_a_kill_between_the_last_state_and_the_release_loses_no_model(tiny_library, tmp_path):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    assert main(_train_args(tiny_library, straight)) == 0
    child = subprocess.run([sys.executable, "-c", KILL_AFTER_LAST_STATE, *_train_args(tiny_library, killed)],
                           env=ENV, capture_output=True, text=True)
    assert child.returncode == -signal.SIGKILL, child.stderr
    before = _model(killed)
    assert before["metrics"]["stage"] == 2  # the release of the epoch before the kill
    assert main(_train_args(tiny_library, killed) + ["--resume"]) == 0
    _assert_same_model(_model(straight), _model(killed))


@pytest.mark.slow
def test_resume_from_a_damaged_training_state_is_a_one_line_error_naming_it(tiny_library, tmp_path, capsys):
    run = tmp_path / "R"
    assert main(_train_args(tiny_library, run)) == 0
    state = run / "train_state.pt"
    state.write_bytes(state.read_bytes()[:2000])
    capsys.readouterr()
    assert main(_train_args(tiny_library, run) + ["--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert str(state) in err and "training state" in err and len(err.splitlines()) == 1
