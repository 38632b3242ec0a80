"""Shared fixtures. Data-set tests skip when ../shared/data is absent (it is research-only and never copied)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("DTMR_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(autouse=True, scope="session")
def one_torch_thread():
    """Tests run with one torch thread: on two shared cores, two OpenMP threads made small tensor work up to
    10x slower, and single-threaded float results are reproducible."""
    import torch

    torch.set_num_threads(1)
    yield


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


@pytest.fixture(scope="session")
def synthetic_raw(tmp_path_factory) -> tuple[Path, list]:
    """A tiny synthetic raw library of the audit's and the attackers' tests: 4 subjects (distinct bodies) x 3
    actions x 3 repetitions, clean."""
    from dtmr.data.synthetic import generate_clips
    from dtmr.io.library import ClipLibrary

    clips = generate_clips(subjects=4, actions=3, repetitions=3, seed=3, noise=0.0)
    path = tmp_path_factory.mktemp("raw") / "raw.h5"
    ClipLibrary.create(path, clips).close()
    return path, ClipLibrary(path).read_all()
