"""Projected synthetic clips for the lifter tests (performers of generator seed 1: never trained on)."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.data import generate_clips
from dtmr.lift.data import coco17_clip_joints


@pytest.fixture(scope="module")
def held_out_joints() -> list[np.ndarray]:
    clips = generate_clips(subjects=2, actions=6, repetitions=1, seed=1, noise=0.0)
    return [coco17_clip_joints(c.joints, c.topology) for c in clips]
