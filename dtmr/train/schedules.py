"""The three DisentangledTMR training stages, their learning rates, and the teacher-forcing schedules.

Teacher forcing decays linearly over a stage (1.0 -> 0.5 in stage 2, 0.5 -> 0.3 in stage 3, 0 at
inference) and is drawn once per batch: a batch is decoded either fully teacher-forced or fully
autoregressively (`../seeds/001_*` "Loss & Training").

Model parts named in `StageSpec.learning_rates` (the trainer maps each to its parameter group):

* ``action_encoder``, ``identity_encoder``, ``decoder`` — the retargeter itself;
* ``heads`` — stage-1 auxiliary heads on the encoders (action and identity classifiers, contrastive projection);
* ``adversary`` — the identity adversary on action features (its own optimizer step);
* ``output_heads`` — the stage-3 action classifier on the output;
* ``output_adversary`` — the stage-3 identity adversary on the output (its own optimizer step);
* ``discriminator`` — the stage-3 sequence discriminator (its own optimizer step).

A part absent from a stage's `learning_rates` is frozen in that stage.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import DtmrError
from .presets import PRESETS

INFERENCE_TEACHER_FORCING = 0.0
#: Stage-2 encoders train at this fraction of the base learning rate.
STAGE2_ENCODER_LR_FACTOR = 0.01
#: Stage 3 trains everything at base / 10 (5e-5 for the paper, so the paper's base rate is 5e-4).
STAGE3_LR_DIVISOR = 10.0


@dataclass(frozen=True)
class TeacherForcingSchedule:
    """Probability of teacher forcing, linear from `start` (first step) to `end` (last step) of a stage."""

    start: float
    end: float

    def __post_init__(self) -> None:
        for value in (self.start, self.end):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"teacher-forcing probabilities must lie in [0, 1], got {value}")

    def at(self, step: int, steps: int) -> float:
        """Probability at 0-based `step` of `steps` (steps within the stage, or epochs for a per-epoch schedule)."""
        if steps < 1 or not 0 <= step < steps:
            raise ValueError(f"step {step} is outside a schedule of {steps} steps")
        if steps == 1:
            return self.start
        return self.start + (self.end - self.start) * step / (steps - 1)


STAGE2_TEACHER_FORCING = TeacherForcingSchedule(1.0, 0.5)
STAGE3_TEACHER_FORCING = TeacherForcingSchedule(0.5, 0.3)


def per_batch_teacher_forcing(prob: float, rng: np.random.Generator | random.Random) -> bool:
    """Whether this batch is teacher-forced: one draw, True with probability `prob` (1 always, 0 never)."""
    if not 0.0 <= prob <= 1.0:
        raise ValueError(f"teacher-forcing probability must lie in [0, 1], got {prob}")
    return bool(rng.random() < prob)


@dataclass(frozen=True)
class StageSpec:
    """One training stage: its length, the learning rate of every part it trains, and its teacher forcing."""

    stage: int
    name: str
    epochs: int
    learning_rates: Mapping[str, float] = field(default_factory=dict)
    #: None when the stage does not run the decoder (stage 1).
    teacher_forcing: TeacherForcingSchedule | None = None

    def __post_init__(self) -> None:
        if self.epochs < 0:
            raise ValueError(f"stage {self.stage}: epochs must be >= 0, got {self.epochs}")
        for part, lr in self.learning_rates.items():
            if not lr > 0:
                raise ValueError(f"stage {self.stage}: learning rate of {part} must be positive, got {lr}")
        # a private plain-dict copy: callers' dicts stay theirs, and `dataclasses.asdict` still works
        object.__setattr__(self, "learning_rates", dict(self.learning_rates))

    @property
    def trainable(self) -> frozenset[str]:
        return frozenset(self.learning_rates)


#: the stage-3 critics that read the output: `warm_output_critics` lets them learn in stage 2 already
OUTPUT_CRITICS = ("output_heads", "output_adversary", "discriminator")


def dtmr_stages(
    preset: str = "paper", base_lr: float | None = None, epochs: tuple[int, int, int] | None = None,
    warm_output_critics: bool = False,
) -> tuple[StageSpec, StageSpec, StageSpec]:
    """The three stages for a preset (its epochs and base rate: `presets.PRESETS`).

    `base_lr` and `epochs` override the preset's values (e.g. from the trainer's command line).
    `warm_output_critics` (our option, not the paper's) also trains the output critics in stage 2, at the
    base rate, on that stage's outputs: they are created untrained, and at stage 3's base/10 they stay
    near chance, so the stage-3 terms that read them have little to push against. Stage 2's generator
    losses do not change.
    """
    if preset not in PRESETS:
        raise DtmrError(f"unknown training preset {preset!r} (known: {', '.join(sorted(PRESETS))})")
    lr = PRESETS[preset].base_lr if base_lr is None else base_lr
    e1, e2, e3 = PRESETS[preset].epochs if epochs is None else epochs
    encoders_slow = lr * STAGE2_ENCODER_LR_FACTOR
    fine = lr / STAGE3_LR_DIVISOR
    stage3_parts = ("action_encoder", "identity_encoder", "decoder", "heads", "adversary", *OUTPUT_CRITICS)
    warmed = {part: lr for part in OUTPUT_CRITICS} if warm_output_critics else {}
    return (
        StageSpec(
            1, "disentangle", e1,
            {"action_encoder": lr, "identity_encoder": lr, "heads": lr, "adversary": lr},
        ),
        StageSpec(
            2, "reconstruct", e2,
            {"action_encoder": encoders_slow, "identity_encoder": encoders_slow, "decoder": lr, **warmed},
            STAGE2_TEACHER_FORCING,
        ),
        StageSpec(3, "joint", e3, {part: fine for part in stage3_parts}, STAGE3_TEACHER_FORCING),
    )
