"""The command line of a training run started from the Trainer tab.

One process: ``python -m dtmr train ...``. Several GPUs: ``python -m torch.distributed.run
--nproc_per_node N -m dtmr train ...`` (what the `torchrun` script runs), so the same interpreter and
environment as the Studio are used whatever PATH says. Progress comes back as JSON lines on stdout
(`--events -`, format `dtmr.train.progress`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import dtmr

PRESETS = ("small", "paper")
#: one checkpoint is trained per β (DESIGN §3); 0.2 is recommended
BETAS = (0.1, 0.2, 0.3, 0.5, 1.0)
#: epochs per stage by preset (DESIGN §4 for `paper`; `small` trains on two CPU cores in minutes)
DEFAULT_EPOCHS = {"paper": (20, 15, 20), "small": (3, 3, 3)}
DEFAULT_BATCH = {"paper": 128, "small": 32}
DEFAULT_LR = 5e-4


@dataclass(frozen=True)
class TrainingConfig:
    data: str
    split: str
    preset: str
    beta: float
    out: str
    epochs: tuple[int, int, int]
    batch: int
    lr: float
    device: str
    #: processes (one per GPU) when more than one GPU is chosen
    gpus: int = 1
    resume: bool = False

    def validate(self) -> None:
        """ValueError naming the first field a user must fix."""
        if not self.data:
            raise ValueError("choose the training data (a .npz data set or an .h5 library)")
        if not Path(self.data).exists():
            raise ValueError(f"the training data {self.data} does not exist")
        if not self.out:
            raise ValueError("choose an output folder for the checkpoints")
        if self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}")
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"β must be within [0, 1], got {self.beta}")
        if min(self.epochs) < 0 or len(self.epochs) != 3:
            raise ValueError("epochs per stage must be three numbers >= 0")
        if self.batch < 1 or not self.lr > 0 or self.gpus < 1:
            raise ValueError("batch, learning rate and GPU count must be positive")


def training_arguments(config: TrainingConfig) -> list[str]:
    """The `dtmr train` arguments (after the program)."""
    args = [
        "train", "--data", config.data, "--split", config.split, "--preset", config.preset,
        "--beta", f"{config.beta:g}", "--out", config.out, "--epochs", ",".join(map(str, config.epochs)),
        "--batch", str(config.batch), "--lr", f"{config.lr:g}", "--device", config.device, "--events", "-",
    ]
    if config.resume:
        args.append("--resume")
    return args


def training_command(config: TrainingConfig, python: str = sys.executable) -> list[str]:
    """[program, *arguments] for QProcess."""
    if config.gpus > 1:
        launcher = [python, "-m", "torch.distributed.run", "--nproc_per_node", str(config.gpus)]
    else:
        launcher = [python]
    return [*launcher, "-m", "dtmr", *training_arguments(config)]


def child_environment(environment: dict[str, str]) -> dict[str, str]:
    """`environment` with the folder holding the Studio's `dtmr` package first on PYTHONPATH.

    The training process must import the same `dtmr` as the Studio, also from a source checkout that is
    not pip-installed.
    """
    root = str(Path(dtmr.__file__).resolve().parent.parent)
    paths = [p for p in environment.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]
    return {**environment, "PYTHONPATH": os.pathsep.join([root, *paths])}
