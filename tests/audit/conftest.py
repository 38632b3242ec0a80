"""Fixtures of the audit's tests (releases are made by audit_releases.make_release)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dtmr.data.clip import Clip
from dtmr.io.library import ClipLibrary


@pytest.fixture(scope="session")
def synthetic_raw(tmp_path_factory) -> tuple[Path, list[Clip]]:
    """A tiny synthetic raw library: 4 subjects (distinct bodies) x 3 actions x 3 repetitions, clean."""
    from dtmr.data.synthetic import generate_clips

    clips = generate_clips(subjects=4, actions=3, repetitions=3, seed=3, noise=0.0)
    path = tmp_path_factory.mktemp("raw") / "raw.h5"
    ClipLibrary.create(path, clips).close()
    return path, ClipLibrary(path).read_all()
