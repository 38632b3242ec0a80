"""`dtmr bench train`: the step timer, the teacher-forcing split of DisentangledTMR's decoding stages, and
the projections on a tiny synthetic library (the measured figures are in docs/training.md)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch
from tiny_training import TINY, create_tiny_library

from dtmr.bench import train as bench_train
from dtmr.cli import main
from dtmr.train.data import load_training_data
from dtmr.train.schedules import TeacherForcingSchedule


class CountingTrainer:
    """Epochs of `steps_per_epoch` steps that record which (epoch, step) ran and the forcing in force."""

    def __init__(self, steps_per_epoch: int, teacher_forcing=None):
        self.ctx = SimpleNamespace(device=torch.device("cpu"))
        self.per_epoch = steps_per_epoch
        self.teacher_forcing = teacher_forcing
        self.ran: list[tuple[int, int, float | None]] = []

    def start_stage(self, stage: int) -> None:
        self.started = stage

    def epoch_steps(self, stage: int, epoch: int):
        for step in range(self.per_epoch):
            forcing = self.teacher_forcing.at(0, 1) if self.teacher_forcing else None
            self.ran.append((epoch, step, forcing))
            yield {"total": 1.0}, 4


def test_a_timing_runs_one_warm_up_step_then_the_timed_steps_across_epochs():
    trainer = CountingTrainer(steps_per_epoch=2)
    seconds = bench_train.seconds_per_step(trainer, stage=1, steps=4)
    assert seconds >= 0
    assert [(e, s) for e, s, _ in trainer.ran] == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0)]


def test_decoding_stages_time_teacher_forced_and_free_running_batches_apart():
    schedule = TeacherForcingSchedule(1.0, 0.5)
    trainer = CountingTrainer(steps_per_epoch=10, teacher_forcing=schedule)
    timing = bench_train._measure_dtmr_stage(trainer, stage=2, steps=2)
    assert trainer.started == 2
    assert [f for _, _, f in trainer.ran] == [1.0] * 3 + [0.0] * 3  # warm-up + 2 timed, each mode
    assert timing["teacher_forcing_mean"] == pytest.approx(0.75)
    expected = 0.75 * timing["seconds_per_step_teacher_forced"] + 0.25 * timing["seconds_per_step_free_running"]
    assert timing["seconds_per_step"] == pytest.approx(expected)

    encoder_stage = CountingTrainer(steps_per_epoch=10)
    assert set(bench_train._measure_dtmr_stage(encoder_stage, stage=1, steps=1)) == {"seconds_per_step"}


@pytest.fixture(scope="module")
def tiny_library(tmp_path_factory):
    return create_tiny_library(tmp_path_factory.mktemp("data") / "tiny.h5")


def test_disentangled_tmr_projection_is_steps_times_epochs_of_each_stage(tiny_library):
    data = load_training_data(tiny_library, "synthetic")
    result = bench_train.measure_training(data, "dtmr", preset="small", batch=4, quadruplets=8, epochs=(2, 1, 3),
                                          steps=1, device="cpu", model_overrides=TINY)
    assert result["method"] == "dtmr" and result["batch"] == 4 and result["device"] == "cpu"
    assert [(s["stage"], s["epochs"], s["steps_per_epoch"]) for s in result["stages"]] == [(1, 2, 2), (2, 1, 2),
                                                                                            (3, 3, 2)]
    for s in result["stages"]:
        assert s["seconds_per_step"] > 0
        assert s["projected_s"] == pytest.approx(s["seconds_per_step"] * s["steps_per_epoch"] * s["epochs"])
    assert ("teacher_forcing_mean" in result["stages"][0], "teacher_forcing_mean" in result["stages"][1]) == (False,
                                                                                                              True)
    assert result["projected_s"] == pytest.approx(sum(s["projected_s"] for s in result["stages"]))


def test_bench_train_command_reports_the_public_dmr_schedule(tiny_library, capsys):
    code = main(["bench", "train", "--data", str(tiny_library), "--split", "synthetic", "--methods", "dmr",
                 "--batch", "2", "--quadruplets", "4", "--steps", "1", "--device", "cpu", "--threads", "1", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (dmr,) = json.loads(out)["results"]
    assert dmr["method"] == "dmr" and dmr["batch"] == 2
    assert [s["epochs"] for s in dmr["stages"]] == [5, 20, 100, 100]  # DMR: PMR's schedule without the critics
    assert dmr["projected_s"] > 0

    assert main(["bench", "train", "--data", str(tiny_library), "--split", "synthetic", "--methods", "dmr,gan"]) == 2
    assert "gan" in capsys.readouterr().err


def test_bf16_training_is_timed_for_disentangled_tmr_only(tiny_library, capsys):
    """Issue 44: `dtmr bench train --precision bf16` times bfloat16 autocast training (CPU autocast here; the
    GPU figures wait for a lent GPU)."""
    code = main(["bench", "train", "--data", str(tiny_library), "--split", "synthetic", "--methods", "dtmr",
                 "--preset", "small", "--batch", "2", "--quadruplets", "4", "--steps", "1", "--device", "cpu",
                 "--threads", "1", "--precision", "bf16", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    (dtmr,) = json.loads(out)["results"]
    assert dtmr["precision"] == "bf16" and all(s["seconds_per_step"] > 0 for s in dtmr["stages"])
    assert main(["bench", "train", "--data", str(tiny_library), "--split", "synthetic", "--methods", "dmr",
                 "--precision", "bf16"]) == 2
    assert "DisentangledTMR only" in capsys.readouterr().err
