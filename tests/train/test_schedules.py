"""Teacher-forcing schedules, the per-batch draw, and the three DisentangledTMR stages."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from dtmr.errors import DtmrError
from dtmr.train.schedules import (
    INFERENCE_TEACHER_FORCING,
    OUTPUT_CRITICS,
    STAGE2_TEACHER_FORCING,
    STAGE3_TEACHER_FORCING,
    StageSpec,
    TeacherForcingSchedule,
    dtmr_stages,
    per_batch_teacher_forcing,
)


def test_stage_schedules_run_linearly_between_their_ends():
    assert STAGE2_TEACHER_FORCING.at(0, 11) == 1.0
    assert STAGE2_TEACHER_FORCING.at(5, 11) == pytest.approx(0.75)
    assert STAGE2_TEACHER_FORCING.at(10, 11) == pytest.approx(0.5)
    assert STAGE3_TEACHER_FORCING.at(0, 5) == 0.5
    assert STAGE3_TEACHER_FORCING.at(1, 5) == pytest.approx(0.45)
    assert STAGE3_TEACHER_FORCING.at(4, 5) == pytest.approx(0.3)
    assert STAGE3_TEACHER_FORCING.at(0, 1) == 0.5  # a one-step stage stays at its start
    assert INFERENCE_TEACHER_FORCING == 0.0


def test_schedule_rejects_bad_steps_and_probabilities():
    with pytest.raises(ValueError):
        STAGE2_TEACHER_FORCING.at(11, 11)
    with pytest.raises(ValueError):
        STAGE2_TEACHER_FORCING.at(0, 0)
    with pytest.raises(ValueError):
        TeacherForcingSchedule(1.2, 0.5)


def test_per_batch_draw_extremes_and_frequency():
    rng = np.random.default_rng(5)
    assert all(per_batch_teacher_forcing(1.0, rng) for _ in range(1000))
    assert not any(per_batch_teacher_forcing(0.0, rng) for _ in range(1000))
    draws = [per_batch_teacher_forcing(0.3, rng) for _ in range(20000)]
    assert np.mean(draws) == pytest.approx(0.3, abs=0.015)
    assert isinstance(draws[0], bool)


def test_per_batch_draw_is_reproducible_and_accepts_stdlib_random():
    a = [per_batch_teacher_forcing(0.5, np.random.default_rng(9)) for _ in range(3)]
    b = [per_batch_teacher_forcing(0.5, np.random.default_rng(9)) for _ in range(3)]
    assert a == b
    r1, r2 = random.Random(4), random.Random(4)
    assert [per_batch_teacher_forcing(0.5, r1) for _ in range(50)] == [per_batch_teacher_forcing(0.5, r2) for _ in range(50)]
    with pytest.raises(ValueError):
        per_batch_teacher_forcing(-0.1, r1)


def test_paper_stages():
    s1, s2, s3 = dtmr_stages("paper")
    assert (s1.epochs, s2.epochs, s3.epochs) == (20, 15, 20)
    assert [s.stage for s in (s1, s2, s3)] == [1, 2, 3]
    base = s1.learning_rates["action_encoder"]
    assert "decoder" not in s1.trainable and s1.teacher_forcing is None
    assert s2.learning_rates["decoder"] == base
    assert s2.learning_rates["action_encoder"] == pytest.approx(0.01 * base)
    assert s2.learning_rates["identity_encoder"] == pytest.approx(0.01 * base)
    assert s2.teacher_forcing == STAGE2_TEACHER_FORCING
    assert list(s3.learning_rates.values()) == pytest.approx([5e-5] * len(s3.learning_rates))
    assert s3.trainable >= s1.trainable | s2.trainable | {"discriminator", "output_adversary", "output_heads"}
    assert s3.teacher_forcing == STAGE3_TEACHER_FORCING


def test_small_preset_and_overrides():
    assert [s.epochs for s in dtmr_stages("small")] == [4, 4, 3]
    s1, s2, s3 = dtmr_stages("small", base_lr=2e-3, epochs=(1, 2, 0))
    assert [s.epochs for s in (s1, s2, s3)] == [1, 2, 0]
    assert s1.learning_rates["heads"] == 2e-3
    assert s3.learning_rates["decoder"] == pytest.approx(2e-4)
    with pytest.raises(DtmrError, match="paper"):
        dtmr_stages("huge")


def test_warmed_output_critics_also_learn_in_stage_2_at_the_base_rate():
    plain, warmed = dtmr_stages("small"), dtmr_stages("small", warm_output_critics=True)
    assert not plain[1].trainable & set(OUTPUT_CRITICS)
    assert {part: warmed[1].learning_rates[part] for part in OUTPUT_CRITICS} == {part: 1e-3 for part in OUTPUT_CRITICS}
    # everything else, and the other stages, as published
    assert {k: v for k, v in warmed[1].learning_rates.items() if k not in OUTPUT_CRITICS} == plain[1].learning_rates
    assert (warmed[0], warmed[2]) == (plain[0], plain[2])


def test_stage_spec_validates_and_serializes():
    with pytest.raises(ValueError):
        StageSpec(1, "x", -1)
    with pytest.raises(ValueError):
        StageSpec(1, "x", 1, {"decoder": 0.0})
    rates = {"decoder": 1e-3}
    spec = StageSpec(2, "x", 1, rates)
    rates["decoder"] = 5.0  # the spec keeps its own copy
    assert spec.learning_rates["decoder"] == 1e-3
    record = dataclasses.asdict(dtmr_stages()[1])
    assert record["teacher_forcing"] == {"start": 1.0, "end": 0.5}
    assert record["learning_rates"]["decoder"] == 5e-4
