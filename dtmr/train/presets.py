"""The training defaults of `dtmr train`: one table that the trainers, the CLI and the Studio's Trainer tab read.

A preset names both the model's sizes (`dtmr.models.config.DTMRConfig.preset`) and how it trains (here);
the names are the keys of both tables (`tests/train/test_presets.py` checks that they agree). This module
imports neither torch nor the models, so that building the CLI's parser and the Studio's Trainer tab stays
cheap. The table is described in `docs/training.md` ("Presets").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ..methods import DTMR, names


@dataclass(frozen=True)
class TrainingPreset:
    """How DisentangledTMR trains under one preset when `dtmr train` is given no --epochs, --lr or --batch."""

    name: str
    #: epochs of stages 1, 2 and 3 (`schedules.dtmr_stages`)
    epochs: tuple[int, int, int]
    #: stage 1's rate; stage 2's encoders train at 1 % of it, stage 3 at a tenth (`schedules`)
    base_lr: float
    #: quadruplets per optimizer step, over all processes (the paper: 32)
    batch: int
    description: str


PRESETS: Mapping[str, TrainingPreset] = MappingProxyType({
    "small": TrainingPreset("small", (4, 4, 3), 1e-3, 32,
                            "a narrow model that trains on two CPU cores in minutes"),
    "paper": TrainingPreset("paper", (20, 15, 20), 5e-4, 32,
                            "the published model and schedule (stage 3 at 5e-5); a GPU"),
})
DEFAULT_PRESET = "small"

#: the partial-retargeting ratios the project trains one checkpoint each for (DESIGN §3)
BETAS = (0.1, 0.2, 0.3, 0.5, 1.0)
#: the recommended one (dtmr.methods), `dtmr train`'s default
DEFAULT_BETA = DTMR.recommended["beta"]

DEFAULT_SEED = 0

#: `dtmr train --method`'s choices: the trained methods, DisentangledTMR (the default) first
TRAINABLE_METHODS = (DTMR.name, *(name for name in names("trained") if name != DTMR.name))

#: an epoch of DisentangledTMR defaults to twice the training clips in quadruplets, at most this many
#: (about NTU60's training set in the paper)
MAX_DEFAULT_QUADRUPLETS = 50_000
#: bounds of the sizes a user gives (issue 23): the paper trains with 32 quadruplets a step and at most 50k an
#: epoch; an epoch's quadruplet indices alone take 32 bytes each, a step's clips 4 x 64 frames x J x 3 floats
MAX_BATCH = 4096
MAX_QUADRUPLETS = 1_000_000


def quadruplets_per_epoch(requested: int | None, train_clips: int, batch: int) -> int:
    """Quadruplets in one DisentangledTMR epoch: `requested` (`--quadruplets`) or the default above,
    rounded down to whole batches and at least one batch."""
    wanted = requested or min(MAX_DEFAULT_QUADRUPLETS, 2 * train_clips)
    return max(batch, wanted - wanted % batch)


@dataclass(frozen=True)
class BaselineDefaults:
    """DMR and PMR (`--method dmr|pmr`): their stages and epochs are the public schedule
    (`dtmr.models.baselines.pmr_training`); an epoch is one pass over the training clips."""

    #: the public code's 1e-5 is tuned for 295 GPU epochs; 1e-4 (the May-2024 runs) suits short CPU schedules
    lr: float
    batch: int


BASELINE = BaselineDefaults(lr=1e-4, batch=32)

