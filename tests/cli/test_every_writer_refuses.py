"""Every `dtmr` writer (issue 43, item 1): an output that is one of the command's inputs, or an existing clip
library, release key, model or review sidecar, is refused before any work (exit 2, one line naming it) unless
`--overwrite`, and the file is left as it was, whatever the writer writes and whatever the file is called."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dtmr.cli import main
from dtmr.data.synthetic import generate_clips
from dtmr.io.library import ClipLibrary
from dtmr.resources import MODELS_DIR, resource_path
from dtmr.review.sidecar import ClipReview, LibraryFingerprint, Review, sidecar_path, write_review


@pytest.fixture(scope="module")
def kept(tmp_path_factory) -> dict[str, Path]:
    """What a user keeps: a library, a release key, a model and two review sidecars."""
    folder = tmp_path_factory.mktemp("kept")
    library = folder / "lib.h5"
    clips = generate_clips(subjects=3, actions=2, repetitions=2, seed=0)
    ClipLibrary.create(library, clips).close()
    assert main(["anonymize", str(library), "--method", "naive", "-o", str(folder / "release.h5")]) == 0
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "retime",
                 "-o", str(folder / "model.pt")]) == 0
    fingerprint = LibraryFingerprint.of(library, [c.name for c in clips])
    sidecars = []
    for annotator in ("ada", "bo"):
        path = sidecar_path(library, annotator)
        write_review(path, Review(fingerprint, annotator, {clips[0].name: ClipReview(verdict="plausible")}))
        sidecars.append(path)
    return {"library": library, "key": folder / "release.key.json", "model": folder / "model.pt",
            "sidecar": sidecars[0], "sidecar2": sidecars[1]}


#: writer -> (its argv with "{out}" for the output and "{library}", "{sidecar}"... for its inputs, the suffix
#: its output usually has, the inputs it reads)
WRITERS = {
    "data synth": (["data", "synth", "-o", "{out}", "--subjects", "2", "--actions", "2", "--repetitions", "1"],
                   ".h5", ()),
    "data import": (["data", "import", "{library}", "-o", "{out}"], ".h5", ("library",)),
    "data export": (["data", "export", "{library}", "-o", "{out}"], ".npz", ("library",)),
    "anonymize": (["anonymize", "{library}", "--method", "naive", "-o", "{out}"], ".h5", ("library",)),
    "export": (["export", "{library}", "--model", "{bundled}", "--clip", "0", "-o", "{out}"], ".gif",
               ("library",)),
    "fit-motion-model": (["fit-motion-model", "--data", "{library}", "--split", "synthetic", "--method", "retime",
                          "-o", "{out}"], ".pt", ("library",)),
    "review export": (["review", "export", "{sidecar}", "-o", "{out}"], ".csv", ("sidecar",)),
    "review merge": (["review", "merge", "{sidecar}", "{sidecar2}", "-o", "{out}"], ".json", ("sidecar", "sidecar2")),
}


def _argv(template, kept, out):
    names = {**{k: str(v) for k, v in kept.items()}, "out": str(out),
             "bundled": str(resource_path(*MODELS_DIR) / "dtmr_small_beta0.2.pt")}
    return [part.format(**names) for part in template]


def _refused(capsys, argv, path: Path) -> str:
    before = path.read_bytes()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert path.read_bytes() == before
    return err


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("victim", ["library", "key", "model", "sidecar"])
def test_a_kept_file_is_refused_whatever_it_is_called(writer, victim, kept, tmp_path, capsys):
    template, suffix, _ = WRITERS[writer]
    out = tmp_path / f"mine{suffix}"
    shutil.copyfile(kept[victim], out)
    err = _refused(capsys, _argv(template, kept, out), out)
    assert str(out) in err and ("--overwrite" in err or "also an input" in err)


@pytest.mark.parametrize("writer", [w for w, (_, _, inputs) in WRITERS.items() if inputs])
def test_an_input_is_refused_even_with_overwrite(writer, kept, tmp_path, capsys):
    """The output is an input by its own path (refused, whatever check comes first), or by a hard link named as
    the writer's outputs are (refused as an input)."""
    template, suffix, inputs = WRITERS[writer]
    copies = {name: tmp_path / Path(path).name for name, path in kept.items()}
    for name, path in kept.items():
        shutil.copyfile(path, copies[name])
    for name in inputs:
        _refused(capsys, [*_argv(template, copies, copies[name]), "--overwrite"], copies[name])
        link = tmp_path / f"{name}_link{suffix}"
        link.hardlink_to(copies[name])
        assert "also an input" in _refused(capsys, [*_argv(template, copies, link), "--overwrite"], copies[name])


def test_with_overwrite_a_kept_file_is_replaced(kept, tmp_path, capsys):
    out = tmp_path / "mine.h5"
    shutil.copyfile(kept["model"], out)
    assert main(["data", "synth", "-o", str(out), "--subjects", "2", "--actions", "2", "--repetitions", "1",
                 "--overwrite"]) == 0
    assert len(ClipLibrary(out)) == 4
