"""`dtmr anonymize` with a checkpoint: a whole library into a release and its key, references of other subjects,
and a resume that skips finished chunks and gives the same clips as an uninterrupted run."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.cli import main
from dtmr.data.synthetic import generate_clips
from dtmr.io.library import ClipLibrary
from dtmr.models.baselines.naive import NaiveRetargeter
from dtmr.models.checkpoints.checkpoint import save_checkpoint
from dtmr.release import anonymize
from dtmr.release.channels import RELEASE_FRAMES
from dtmr.release.key import key_path_for
from dtmr.release.release import open_release, release_attributes


@pytest.fixture
def setup(tmp_path, monkeypatch):
    monkeypatch.setattr(anonymize, "CHUNK", 8)
    library = tmp_path / "in.h5"
    ClipLibrary.create(library, generate_clips(subjects=3, actions=3, repetitions=2, seed=1))
    model = save_checkpoint(tmp_path / "naive.pt", NaiveRetargeter("ntu25"), data={}, metrics={})
    return library, model


def test_anonymizes_every_clip_into_a_release_and_its_key(setup, tmp_path, capsys):
    library, model = setup
    out = tmp_path / "out.h5"
    assert main(["anonymize", str(library), "--model", str(model), "--seed", "3", "-o", str(out)]) == 0
    assert str(key_path_for(out)) in capsys.readouterr().out
    released, key = open_release(out)
    with released, ClipLibrary(library) as src:
        assert len(released) == len(src) == len(key) == 18
        for k, entry in enumerate(key.entries):
            a, s, ref = released.read(k), src.read(entry.source_index), src.read(entry.reference_index)
            assert a.num_frames == RELEASE_FRAMES and a.subject is None and ref.subject != s.subject
            assert (entry.source_clip, entry.reference_clip, entry.reference_subject) == \
                (s.name, ref.name, ref.subject)
    attrs = release_attributes(out)
    assert (attrs["method"], attrs["model"], key.model, key.seed) == ("naive", "naive.pt", "naive.pt", 3)
    assert not (tmp_path / "out.h5.parts").exists()


def _interrupted(library, model, out, monkeypatch, *args) -> None:
    real_write = ClipLibrary.write

    def crash_on_second_part(path, clips, *a, **k):
        if str(path).endswith("part-00001.h5"):
            raise KeyboardInterrupt
        return real_write(path, clips, *a, **k)

    monkeypatch.setattr(ClipLibrary, "write", staticmethod(crash_on_second_part))
    assert main(["anonymize", str(library), "--model", str(model), *args, "-o", str(out)]) == 130
    monkeypatch.setattr(ClipLibrary, "write", staticmethod(real_write))
    assert (out.parent / (out.name + ".parts") / "part-00000.h5").is_file() and not out.exists()


def test_interrupted_run_resumes_and_matches(setup, tmp_path, monkeypatch):
    library, model = setup
    straight = tmp_path / "straight.h5"
    assert main(["anonymize", str(library), "--model", str(model), "-o", str(straight)]) == 0

    out = tmp_path / "out.h5"
    _interrupted(library, model, out, monkeypatch)
    real_write = ClipLibrary.write
    written = []
    monkeypatch.setattr(ClipLibrary, "write", staticmethod(
        lambda path, clips, *a, **k: written.append(path.name) or real_write(path, clips, *a, **k)))
    assert main(["anonymize", str(library), "--model", str(model), "-o", str(out)]) == 0
    assert written[:2] == ["part-00001.h5", "part-00002.h5"] and len(written) == 3  # part 0 kept; then the merge
    a, a_key = open_release(straight)
    b, b_key = open_release(out)
    with a, b:
        where = {e.source_index: k for k, e in enumerate(a_key.entries)}
        for k, e in enumerate(b_key.entries):
            assert np.array_equal(b.read(k).joints, a.read(where[e.source_index]).joints)


def test_resume_with_other_settings_is_refused(setup, tmp_path, monkeypatch, capsys):
    library, model = setup
    out = tmp_path / "out.h5"
    _interrupted(library, model, out, monkeypatch)
    assert main(["anonymize", str(library), "--model", str(model), "--seed", "1", "-o", str(out)]) == 2
    assert "other settings" in capsys.readouterr().err
