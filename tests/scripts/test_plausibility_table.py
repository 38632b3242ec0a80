"""scripts/plausibility_table.py: plausibility of libraries side by side, and MPJPE against another release."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from dtmr.data.synthetic import generate_clips
from dtmr.io.library import ClipLibrary
from dtmr.release.anonymize import anonymize_source

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "plausibility_table.py"


def _script():
    spec = importlib.util.spec_from_file_location("plausibility_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mpjpe_against_a_release_matches_clips_by_source_through_the_keys(tmp_path, capsys):
    library = tmp_path / "raw.h5"
    ClipLibrary.create(library, generate_clips(subjects=3, actions=2, repetitions=1, seed=0)).close()
    naive, noise = tmp_path / "naive.h5", tmp_path / "noise.h5"
    anonymize_source(library, naive, method="naive", seed=0)
    anonymize_source(library, noise, method="noise", seed=0)
    script = _script()
    itself = script.library_rows(naive, against=naive)
    assert np.allclose(itself["mpjpe"], 0.0) and (itself["smoothness"] > 0).all()
    noisy = script.library_rows(noise, against=naive)
    assert (noisy["mpjpe"] > 0.01).all()  # 5 cm noise on another body: centimetres away
    assert script.main([str(naive), str(noise), "--labels", "naive,noise", "--against", str(naive)]) == 0
    out = capsys.readouterr().out
    assert "mpjpe (m, against --against)" in out and out.count("\n| n") == 2
    assert script.main([str(library), "--against", str(naive)]) == 1  # a raw library has no key
    assert "needs every release's key" in capsys.readouterr().err
