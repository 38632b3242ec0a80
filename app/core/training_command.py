"""The command line of a training run started from the Trainer tab.

One process: ``python -m dtmr train ...``. Several GPUs: ``python -m torch.distributed.run
--nproc_per_node N -m dtmr train ...`` (what the `torchrun` script runs), so the same interpreter and
environment as the Studio are used whatever PATH says. Progress comes back as JSON lines on stdout
(`--events -`, format `dtmr.train.progress`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import dtmr
from dtmr.argtypes import parse_loss_weight
from dtmr.methods import NAIVE_RESIDUAL, display_name
from dtmr.train.fine_tuning import FineTuning
from dtmr.train.presets import MAX_BATCH, MAX_QUADRUPLETS, PRESETS, TRAINABLE_METHODS
from dtmr.train.progress import parse_event_line

#: `--model-option output_head=kinematic` (one of `dtmr.models.config.OUTPUT_HEADS`): root + bone directions on
#: the reference's bone lengths, a body by construction; the paper's head predicts joint coordinates
KINEMATIC_OUTPUT = "kinematic"
#: `dtmr train --method` choices and their names (dtmr.methods); the first is `dtmr train`'s default
DEFAULT_METHOD = TRAINABLE_METHODS[0]
METHODS = {name: display_name(name) for name in TRAINABLE_METHODS}
#: the file `dtmr train` keeps its resumable state in (`dtmr.train.loop.STATE_FILE`; that module loads torch)
STATE_FILE = "train_state.pt"
#: the training event log `dtmr train` appends to in its output folder (`dtmr.cli.train_cmd.EVENTS_FILE`)
EVENTS_FILE = "events.jsonl"
#: how much of the event log's end is read to find its last event
EVENTS_TAIL_BYTES = 64 * 1024


def resumable(out: str | Path) -> bool:
    """Whether `out` holds a run `dtmr train --resume` can continue: a training state, of a run that did not
    finish (a finished run's state stays; resuming it would only write its release again)."""
    return bool(str(out).strip()) and (Path(out) / STATE_FILE).is_file() and not run_finished(out)


def run_finished(out: str | Path) -> bool:
    """Whether the last run in `out` finished: the last event of its event log is "done"."""
    path = Path(out) / EVENTS_FILE
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(size - EVENTS_TAIL_BYTES, 0))
            lines = fh.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return False
    for line in reversed(lines):
        event = parse_event_line(line)
        if event is not None:
            return event.kind == "done"
    return False


@dataclass(frozen=True)
class TrainingConfig:
    """One `dtmr train` run. The fields from `epochs` on are left to `dtmr train` when None (or False, or
    empty): the Trainer tab sets them only where the user changed the library's default
    (`dtmr.train.presets`), so a run from the Studio trains like the same command typed by hand."""

    data: str
    split: str
    preset: str
    beta: float
    out: str
    device: str
    #: processes (one per GPU) when more than one GPU is chosen
    gpus: int = 1
    #: `--method`, passed only when not `DEFAULT_METHOD`
    method: str = DEFAULT_METHOD
    resume: bool = False
    epochs: tuple[int, int, int] | None = None
    batch: int | None = None
    lr: float | None = None
    quadruplets: int | None = None
    seed: int | None = None
    naive_residual: bool = False
    kinematic_output: bool = False
    warm_output_critics: bool = False
    output_adversary_lr: float | None = None
    #: (term, weight) pairs, `--loss-weight TERM=W` each
    loss_weights: tuple[tuple[str, float], ...] = ()
    #: `--init CHECKPOINT`: a new run that starts from this checkpoint's weights (fine-tuning)
    init: str | None = None
    #: further `--model-option KEY=VALUE` pairs (those of the checkpoint a run starts from, `form_fine_tuning`)
    model_options: tuple[tuple[str, object], ...] = ()

    def validate(self) -> None:
        """ValueError naming the first field a user must fix."""
        if not self.data:
            raise ValueError("choose the training data (a .npz data set or an .h5 library)")
        if not Path(self.data).exists():
            raise ValueError(f"the training data {self.data} does not exist")
        if not self.out:
            raise ValueError("choose an output folder for the checkpoints")
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r} (known: {', '.join(METHODS)})")
        if self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}")
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"β must be within [0, 1], got {self.beta}")
        if self.epochs is not None and (len(self.epochs) != 3 or min(self.epochs) < 0):
            raise ValueError("epochs per stage must be three numbers >= 0")
        if self.batch is not None and not 1 <= self.batch <= MAX_BATCH:
            raise ValueError(f"batch must be 1 to {MAX_BATCH}")
        if self.quadruplets is not None and not 1 <= self.quadruplets <= MAX_QUADRUPLETS:
            raise ValueError(f"quadruplets per epoch must be 1 to {MAX_QUADRUPLETS:,}")
        for name, rate in (("learning rate", self.lr), ("output adversary learning rate", self.output_adversary_lr)):
            if rate is not None and not rate > 0:
                raise ValueError(f"the {name} must be positive")
        if self.gpus < 1:
            raise ValueError("the GPU count must be positive")
        if self.init is not None and self.resume:
            raise ValueError("Resume continues the run's own weights: a start from a checkpoint is a new run")
        if self.init is not None and not Path(self.init).is_file():
            raise ValueError(f"the checkpoint to start from, {self.init}, does not exist")


@dataclass(frozen=True)
class FineTuningForm:
    """How the Trainer tab shows a `FineTuning`: its two model-option check boxes and the other options."""

    naive_residual: bool
    kinematic_output: bool
    model_options: tuple[tuple[str, object], ...]


def form_fine_tuning(tuning: FineTuning) -> FineTuningForm:
    """The check boxes `residual=naive` and `output_head=kinematic` of `tuning`'s model options, and the rest."""
    options = dict(tuning.model_options)
    naive = options.pop("residual", None) == NAIVE_RESIDUAL.name
    kinematic = options.get("output_head") == KINEMATIC_OUTPUT
    if kinematic:
        options.pop("output_head")
    residual = dict(tuning.model_options).get("residual")
    if residual is not None and not naive:  # another residual than the two the check box chooses between
        options["residual"] = residual
    return FineTuningForm(naive, kinematic, tuple(sorted(options.items())))


def parse_loss_weights(text: str) -> tuple[tuple[str, float], ...]:
    """"TERM=W, TERM=W" (commas or spaces between) as (term, weight) pairs; ValueError naming the bad one."""
    pairs = []
    for item in re.split(r"[,\s]+", text.strip()):
        if item:
            try:
                pairs.append(parse_loss_weight(item))
            except argparse.ArgumentTypeError as exc:
                raise ValueError(f"loss weights: {exc}") from None
    return tuple(pairs)


def training_arguments(config: TrainingConfig) -> list[str]:
    """The `dtmr train` arguments (after the program): only the settings the config sets."""
    args = [
        "train", "--data", config.data, "--split", config.split, "--preset", config.preset,
        "--beta", f"{config.beta:g}", "--out", config.out, "--device", config.device, "--events", "-",
    ]
    if config.method != DEFAULT_METHOD:
        args += ["--method", config.method]
    if config.epochs is not None:
        args += ["--epochs", ",".join(map(str, config.epochs))]
    for flag, value in (("--batch", config.batch), ("--quadruplets", config.quadruplets), ("--seed", config.seed)):
        if value is not None:
            args += [flag, str(value)]
    for flag, rate in (("--lr", config.lr), ("--output-adversary-lr", config.output_adversary_lr)):
        if rate is not None:
            args += [flag, f"{rate:g}"]
    if config.naive_residual:
        args += ["--model-option", f"residual={NAIVE_RESIDUAL.name}"]
    if config.kinematic_output:
        args += ["--model-option", f"output_head={KINEMATIC_OUTPUT}"]
    if config.warm_output_critics:
        args.append("--warm-output-critics")
    for term, weight in config.loss_weights:
        args += ["--loss-weight", f"{term}={weight!r}"]
    for key, value in config.model_options:
        args += ["--model-option", f"{key}={json.dumps(value)}"]
    if config.init is not None:
        args += ["--init", config.init]
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
