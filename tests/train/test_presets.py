"""The training presets table (`dtmr.train.presets`): its published values, and that the trainers, the
schedules and `dtmr train` read their defaults from it."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest
from tiny_training import TINY, create_tiny_library

from dtmr.cli import main
from dtmr.models.config import PRESET_NAMES
from dtmr.train.presets import (
    BASELINE,
    BETAS,
    DEFAULT_BETA,
    DEFAULT_PRESET,
    DEFAULT_SEED,
    MAX_DEFAULT_QUADRUPLETS,
    PRESETS,
    quadruplets_per_epoch,
)
from dtmr.train.schedules import dtmr_stages


@pytest.fixture(scope="module")
def tiny_library(tmp_path_factory) -> Path:
    return create_tiny_library(tmp_path_factory.mktemp("data") / "tiny.h5")


def test_the_published_schedules_and_the_small_one():
    paper, small = PRESETS["paper"], PRESETS["small"]
    assert (paper.epochs, paper.base_lr, paper.batch) == ((20, 15, 20), 5e-4, 32)  # 32 quadruplets a step
    assert (small.epochs, small.base_lr, small.batch) == ((4, 4, 3), 1e-3, 32)
    assert all(name == preset.name and preset.description for name, preset in PRESETS.items())
    assert DEFAULT_PRESET == "small" and DEFAULT_SEED == 0
    assert (BASELINE.lr, BASELINE.batch) == (1e-4, 32)


def test_the_training_presets_are_the_model_presets():
    assert sorted(PRESETS) == sorted(PRESET_NAMES)


def test_betas_hold_the_recommended_one():
    assert BETAS == (0.1, 0.2, 0.3, 0.5, 1.0) and DEFAULT_BETA == 0.2 and DEFAULT_BETA in BETAS


def test_the_table_cannot_be_changed_in_place():
    with pytest.raises(TypeError):
        PRESETS["small"] = PRESETS["paper"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        PRESETS["small"].base_lr = 1.0


def test_stages_follow_the_table():
    for name, preset in PRESETS.items():
        stages = dtmr_stages(name)
        assert tuple(s.epochs for s in stages) == preset.epochs
        assert stages[0].learning_rates["action_encoder"] == preset.base_lr


def test_default_quadruplets_are_twice_the_clips_capped_and_in_whole_batches():
    assert quadruplets_per_epoch(None, 100, 32) == 192  # 200 rounded down to whole batches of 32
    assert quadruplets_per_epoch(None, 10**6, 32) == MAX_DEFAULT_QUADRUPLETS - MAX_DEFAULT_QUADRUPLETS % 32
    assert quadruplets_per_epoch(1024, 100, 8) == 1024
    assert quadruplets_per_epoch(5, 100, 8) == 8  # at least one batch


def test_the_trainers_own_defaults_agree_with_the_table(tiny_library):
    from dtmr.train.baseline_trainer import BaselineTrainer
    from dtmr.train.data import load_training_data
    from dtmr.train.distributed import DistributedContext
    from dtmr.train.dtmr_trainer import DTMRTrainer, TrainConfig

    config = TrainConfig(data=str(tiny_library), split="synthetic", out="unused", model_overrides=dict(TINY))
    assert config.preset == DEFAULT_PRESET and config.beta == DEFAULT_BETA and config.seed == DEFAULT_SEED
    assert config.batch == PRESETS[config.preset].batch
    defaults = inspect.signature(BaselineTrainer).parameters
    assert (defaults["lr"].default, defaults["batch"].default) == (BASELINE.lr, BASELINE.batch)

    data = load_training_data(tiny_library, "synthetic")
    for requested, batch in ((None, 4), (10, 4)):
        config = dataclasses.replace(config, batch=batch, quadruplets_per_epoch=requested)
        trainer = DTMRTrainer(config, data, DistributedContext())
        assert trainer.quadruplets_per_epoch == quadruplets_per_epoch(requested, len(data.train), batch)


class _Recorder:
    """Stands in for a trainer class: records what `dtmr train` built it with."""

    calls: list[tuple[tuple, dict]] = []

    def __init__(self, *args, **kwargs) -> None:
        _Recorder.calls.append((args, kwargs))

    def run(self) -> None:
        pass


@pytest.mark.parametrize("preset", [None, *PRESETS])
def test_dtmr_train_without_epochs_lr_or_batch_trains_with_the_preset(tiny_library, tmp_path, monkeypatch, preset):
    monkeypatch.setattr("dtmr.train.dtmr_trainer.DTMRTrainer", _Recorder)
    _Recorder.calls = []
    args = ["train", "--data", str(tiny_library), "--split", "synthetic", "--out", str(tmp_path / "run"),
            "--device", "cpu"]
    assert main(args + (["--preset", preset] if preset else [])) == 0
    (config, *_), _ = _Recorder.calls[0]
    expected = PRESETS[preset or DEFAULT_PRESET]
    assert (config.preset, config.epochs, config.lr, config.batch) == (expected.name, None, None, expected.batch)
    assert (config.beta, config.seed, config.quadruplets_per_epoch) == (DEFAULT_BETA, DEFAULT_SEED, None)
    stages = dtmr_stages(config.preset, config.lr, config.epochs)
    assert tuple(s.epochs for s in stages) == expected.epochs
    assert stages[0].learning_rates["action_encoder"] == expected.base_lr


@pytest.mark.parametrize("method", ["dmr", "pmr"])
def test_dtmr_train_gives_the_baselines_their_defaults(tiny_library, tmp_path, monkeypatch, method):
    monkeypatch.setattr("dtmr.train.baseline_trainer.BaselineTrainer", _Recorder)
    _Recorder.calls = []
    assert main(["train", "--data", str(tiny_library), "--split", "synthetic", "--out", str(tmp_path / "run"),
                 "--device", "cpu", "--method", method]) == 0
    (name, *_), kwargs = _Recorder.calls[0]
    assert name == method and kwargs["epochs"] is None and kwargs["quadruplets_per_epoch"] is None
    assert (kwargs["lr"], kwargs["batch"], kwargs["seed"]) == (BASELINE.lr, BASELINE.batch, DEFAULT_SEED)
