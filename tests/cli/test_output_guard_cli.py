"""Writers never destroy what a user has (issue 23, items 2, 3, 6, 12): `dtmr data import`, `dtmr data export
--clip`, `dtmr export` and `dtmr train` refuse an output that is an input, a folder, or a file of another kind
(unless --overwrite), before any work, naming the path given; sizes are bounded; a killed import's temporary
file is removed by the next import."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dtmr.cli import main
from dtmr.data.synthetic import generate_clips
from dtmr.io.library import ClipLibrary

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}

#: `dtmr data import` in a child that kill -9s itself after writing 5 clips into its temporary file
KILLED_IMPORT = """
import os, signal, sys
from dtmr.cli import main
from dtmr.io import library

add, written = library._ClipWriter.add, []

def add_then_die(self, clip):
    add(self, clip)
    written.append(clip)
    if len(written) == 5:
        self.flush()
        os.kill(os.getpid(), signal.SIGKILL)

library._ClipWriter.add = add_then_die
sys.exit(main(sys.argv[1:]))
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("lib") / "raw.h5"
    ClipLibrary.create(path, generate_clips(subjects=2, actions=2, repetitions=2, seed=0)).close()
    return path


def _error(capsys, argv) -> str:
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


# -- data import ----------------------------------------------------------------------------------------
def test_import_into_its_own_input_is_refused(tmp_path, library, capsys):
    copy = tmp_path / "X.h5"
    copy.write_bytes(library.read_bytes())
    os.link(copy, tmp_path / "same.h5")
    for output in (copy, tmp_path / "same.h5"):
        err = _error(capsys, ["data", "import", copy, "-o", output, "--overwrite"])
        assert f"{output}: the output is also an input" in err
    assert copy.read_bytes() == library.read_bytes()
    assert sorted(os.listdir(tmp_path)) == ["X.h5", "same.h5"]


def test_import_over_a_file_of_another_kind_needs_overwrite(tmp_path, library, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    err = _error(capsys, ["data", "import", library, "-o", notes])
    assert err == (f"dtmr: error: {notes}: this file exists and is not a DTMR clip library; "
                   "use --overwrite to replace it")
    assert notes.read_text() == "my notes\n"
    assert main(["data", "import", str(library), "-o", str(notes), "--overwrite"]) == 0
    with ClipLibrary(notes) as replaced:
        assert len(replaced) == 8
    err = _error(capsys, ["data", "import", library, "-o", notes])  # now a library: kept unless --overwrite
    assert err.endswith("this file exists and is a DTMR clip library; use --overwrite to replace it")


def test_import_to_a_folder_is_refused_before_any_work(tmp_path, library, capsys, monkeypatch):
    (tmp_path / "adir.h5").mkdir()
    opened = []
    monkeypatch.setattr("dtmr.io.sources.open_clip_source", lambda *a, **k: opened.append(a))
    err = _error(capsys, ["data", "import", library, "-o", tmp_path / "adir.h5"])
    assert f"{tmp_path / 'adir.h5'}: is a folder" in err and ".tmp" not in err
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: False if str(p) == str(tmp_path) else real_access(p, m))
    err = _error(capsys, ["data", "import", library, "-o", tmp_path / "new.h5"])
    assert f"{tmp_path / 'new.h5'}: the folder {tmp_path} is not writable" in err
    assert opened == [] and os.listdir(tmp_path) == ["adir.h5"]


def test_a_killed_imports_temporary_file_is_removed_by_the_next_import(tmp_path, library):
    out = tmp_path / "out.h5"
    args = ["data", "import", str(library), "-o", str(out)]
    child = subprocess.run([sys.executable, "-c", KILLED_IMPORT, *args], env=ENV, capture_output=True, text=True)
    assert child.returncode == -signal.SIGKILL, child.stderr
    left = os.listdir(tmp_path)
    assert len(left) == 1 and left[0].startswith(".out.h5.") and left[0].endswith(".tmp")
    assert main(args) == 0
    assert os.listdir(tmp_path) == ["out.h5"]
    with ClipLibrary(out) as imported, ClipLibrary(library) as raw:
        np.testing.assert_array_equal(imported.read_all_joints()[0], raw.read_all_joints()[0])


# -- data export --clip -----------------------------------------------------------------------------------
def test_single_clip_export_refuses_inputs_and_other_kinds(tmp_path, library, capsys):
    os.link(library, tmp_path / "lib.npz")
    err = _error(capsys, ["data", "export", tmp_path / "lib.npz", "--clip", "0", "-o", tmp_path / "lib.npz"])
    assert "lib.npz: the output is also an input" in err
    (tmp_path / "notes.skeleton").write_text("not frames\n")
    err = _error(capsys, ["data", "export", library, "--clip", "0", "-o", tmp_path / "notes.skeleton"])
    assert "is not a NTU .skeleton file; use --overwrite" in err
    assert (tmp_path / "notes.skeleton").read_text() == "not frames\n"
    for name in ("clip.skeleton", "clip.npz"):
        assert main(["data", "export", str(library), "--clip", "0", "-o", str(tmp_path / name)]) == 0
        assert main(["data", "export", str(library), "--clip", "1", "-o", str(tmp_path / name)]) == 0  # same kind
    assert main(["data", "export", str(library), "--clip", "0", "-o", str(tmp_path / "notes.skeleton"),
                 "--overwrite"]) == 0


# -- dtmr export ------------------------------------------------------------------------------------------
@pytest.fixture
def model(tmp_path) -> Path:
    from dtmr.models.baselines import NaiveRetargeter
    from dtmr.models.checkpoints.checkpoint import save_checkpoint

    return save_checkpoint(tmp_path / "naive.pt", NaiveRetargeter("ntu25"), data={}, metrics={})


def test_video_export_refuses_inputs_and_other_kinds_before_rendering(tmp_path, library, model, capsys,
                                                                      monkeypatch):
    monkeypatch.setenv("DTMR_RESOURCES", str(tmp_path / "no_resources"))
    os.link(model, tmp_path / "model.gif")
    err = _error(capsys, ["export", library, "--model", model, "-o", tmp_path / "model.gif"])
    assert f"{tmp_path / 'model.gif'}: the output is also an input" in err
    notes = tmp_path / "notes.mp4"
    notes.write_text("x")
    err = _error(capsys, ["export", library, "--model", model, "-o", notes])
    assert "is not a GIF or MP4 video; use --overwrite to replace it" in err
    (tmp_path / "adir.gif").mkdir()
    assert "adir.gif: is a folder" in _error(capsys, ["export", library, "--model", model, "-o", tmp_path / "adir.gif"])
    assert notes.read_text() == "x"
    assert main(["export", str(library), "--model", str(model), "-o", str(notes), "--overwrite",
                 "--size", "96x40", "--frames", "0:2"]) == 0
    assert notes.read_bytes()[4:8] == b"ftyp"
    assert main(["export", str(library), "--model", str(model), "-o", str(notes), "--size", "96x40",
                 "--frames", "0:2"]) == 0  # a video is replaced without --overwrite


def test_video_export_size_is_bounded_before_anything_is_read(tmp_path, model, capsys):
    missing = tmp_path / "missing.h5"
    err = _error(capsys, ["export", missing, "--model", model, "-o", tmp_path / "x.gif", "--size", "100000x100000"])
    assert "--size 100000x100000 is too large: rendering it needs about 200 GB" in err
    assert "--size 16385x32 is too large" in _error(capsys, ["export", missing, "--model", model, "-o",
                                                             tmp_path / "x.gif", "--size", "16385x32"])
    # the largest allowed frame passes the bound (and the missing source is the next error)
    err = _error(capsys, ["export", missing, "--model", model, "-o", tmp_path / "x.gif", "--size", "8192x4320"])
    assert "missing.h5" in err and "too large" not in err
    assert os.listdir(tmp_path) == ["naive.pt"]


# -- dtmr train --out -------------------------------------------------------------------------------------
def test_train_out_holding_other_files_is_refused_before_any_work(tmp_path, library, capsys, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("x")
    loaded = []
    monkeypatch.setattr("dtmr.train.data.load_training_data", lambda *a, **k: loaded.append(a))
    base = ["--data", library, "--split", "synthetic", "--device", "cpu", "--out", home]
    err = _error(capsys, ["train", *base])
    assert f"{home}: this folder exists and is not a training run folder; use --overwrite" in err
    assert "not a training run folder" in _error(capsys, ["train-recognizer", "--task", "action", *base])
    assert "holds the input" in _error(capsys, ["train", "--data", library, "--split", "synthetic",
                                                "--out", library.parent, "--overwrite"])
    (tmp_path / "file").write_text("x")
    assert "is a file, not a folder" in _error(capsys, ["train", "--data", library, "--split", "synthetic",
                                                        "--out", tmp_path / "file"])
    assert loaded == [] and os.listdir(home) == ["thesis.tex"]


@pytest.mark.parametrize("option, value", [("--batch", "1000000000"), ("--batch", "0"),
                                           ("--quadruplets", "10000000000")])
def test_train_sizes_are_bounded(tmp_path, library, capsys, option, value):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--data", str(library), "--split", "synthetic", "--out", str(tmp_path), option, value])
    assert exit_.value.code == 2
    assert f"argument {option}: must be 1 to" in capsys.readouterr().err
