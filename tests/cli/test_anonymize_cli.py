"""`dtmr anonymize`: a whole library with provenance, references of other subjects, and a resume that
skips finished chunks and gives the same result as an uninterrupted run."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr import anonymize_library
from dtmr.cli import main
from dtmr.data.synthetic import generate_clips
from dtmr.io.library import ClipLibrary
from dtmr.models.baselines.naive import NaiveRetargeter
from dtmr.models.checkpoint import save_checkpoint


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setattr(anonymize_library, "CHUNK", 8)
    library = tmp_path / "in.h5"
    ClipLibrary.create(library, generate_clips(subjects=3, actions=3, repetitions=2, seed=1))
    model = save_checkpoint(tmp_path / "naive.pt", NaiveRetargeter("ntu25"), data={}, metrics={})
    return library, model


def test_anonymizes_every_clip_with_provenance(setup, tmp_path):
    library, model = setup
    out = tmp_path / "out.h5"
    assert main(["anonymize", str(library), "--model", str(model), "--seed", "3", "-o", str(out)]) == 0
    with ClipLibrary(library) as src, ClipLibrary(out) as anon:
        assert len(anon) == len(src) == 18
        for i in range(len(src)):
            a, s = anon.read(i), src.read(i)
            ref = src.read(int(a.extra["reference_index"]))
            assert a.num_frames == s.num_frames and ref.subject != s.subject
            assert a.extra["source_clip"] == s.name and a.extra["reference_clip"] == ref.name
            assert a.extra["method"] == "naive" and a.extra["model"] == "naive.pt" and a.extra["seed"] == "3"
    assert not (tmp_path / "out.h5.parts").exists()


def test_interrupted_run_resumes_and_matches(setup, tmp_path, monkeypatch):
    library, model = setup
    straight = tmp_path / "straight.h5"
    assert main(["anonymize", str(library), "--model", str(model), "-o", str(straight)]) == 0

    out = tmp_path / "out.h5"
    real_create = ClipLibrary.create
    calls = {"n": 0}

    def crash_on_second_part(path, clips, *args, **kwargs):
        if str(path).endswith("part-00001.h5"):
            raise KeyboardInterrupt
        calls["n"] += 1
        return real_create(path, clips, *args, **kwargs)

    monkeypatch.setattr(ClipLibrary, "create", staticmethod(crash_on_second_part))
    assert main(["anonymize", str(library), "--model", str(model), "-o", str(out)]) == 130
    assert (tmp_path / "out.h5.parts" / "part-00000.h5").is_file() and not out.exists()
    monkeypatch.setattr(ClipLibrary, "create", staticmethod(real_create))

    written = []
    monkeypatch.setattr(anonymize_library.ClipLibrary, "create",
                        staticmethod(lambda path, clips, *a, **k: written.append(path) or real_create(path, clips, *a, **k)))
    assert main(["anonymize", str(library), "--model", str(model), "-o", str(out)]) == 0
    assert [p.name for p in written] == ["part-00001.h5", "part-00002.h5", "out.h5"]  # part 0 was kept
    with ClipLibrary(straight) as a, ClipLibrary(out) as b:
        for i in range(len(a)):
            assert np.array_equal(a.read(i).joints, b.read(i).joints)


def test_resume_with_other_settings_is_refused(setup, tmp_path, capsys):
    library, model = setup
    parts = tmp_path / "out.h5.parts"
    parts.mkdir()
    (parts / "run.json").write_text("{}")
    assert main(["anonymize", str(library), "--model", str(model), "-o", str(tmp_path / "out.h5")]) == 2
    assert "other settings" in capsys.readouterr().err
