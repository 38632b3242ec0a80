"""The output guard: inputs, other kinds, folders and unwritable parents are refused before any work."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest
import torch

from dtmr.data.clip import Clip
from dtmr.errors import DtmrError
from dtmr.io.library import ClipLibrary
from dtmr.io.outputs import PRECIOUS, check_output


def _library(path):
    clip = Clip(joints=np.zeros((4, 25, 3), np.float32), topology="ntu25", fps=30.0, subject=1, action=1)
    ClipLibrary.create(path, [clip]).close()
    return path


def test_new_file_in_an_existing_folder_is_accepted(tmp_path):
    assert check_output(tmp_path / "new.h5", kind="clip-library") == tmp_path / "new.h5"


def test_output_equal_to_an_input_is_refused_even_with_overwrite(tmp_path, monkeypatch):
    lib = _library(tmp_path / "raw.h5")
    monkeypatch.chdir(tmp_path)
    for given in ("raw.h5", "./raw.h5", str(lib)):
        with pytest.raises(DtmrError, match=f"^{given}: the output is also an input"):
            check_output(given, kind="clip-library", inputs=["raw.h5"], overwrite=True)


def test_hard_and_symbolic_links_to_an_input_are_the_input(tmp_path):
    lib = _library(tmp_path / "raw.h5")
    os.link(lib, tmp_path / "hard.h5")
    (tmp_path / "soft.h5").symlink_to(lib)
    for name in ("hard.h5", "soft.h5"):
        with pytest.raises(DtmrError, match="also an input"):
            check_output(tmp_path / name, kind="clip-library", inputs=[lib])


def test_an_input_inside_a_folder_output_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    lib = _library(tmp_path / "run" / "data.h5")
    with pytest.raises(DtmrError, match="holds the input"):
        check_output(tmp_path / "run", kind="training-run", inputs=[lib], folder=True, overwrite=True)


def test_a_folder_where_a_file_is_wanted_and_the_reverse(tmp_path):
    (tmp_path / "adir.h5").mkdir()
    with pytest.raises(DtmrError, match=r"adir\.h5: is a folder"):
        check_output(tmp_path / "adir.h5", kind="clip-library", overwrite=True)
    (tmp_path / "file").write_text("x")
    with pytest.raises(DtmrError, match="file: is a file, not a folder"):
        check_output(tmp_path / "file", kind="audit", folder=True, overwrite=True)


def test_a_parent_that_is_a_file_or_unwritable(tmp_path, monkeypatch):
    # missing folders are created by the writer
    assert check_output(tmp_path / "a" / "b.h5", kind="clip-library") == tmp_path / "a" / "b.h5"
    assert check_output(tmp_path / "a" / "b", kind="audit", folder=True) == tmp_path / "a" / "b"
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(DtmrError, match=r"notes\.txt/sub/out\.h5: .*notes\.txt is not a folder"):
        check_output(tmp_path / "notes.txt" / "sub" / "out.h5", kind="clip-library")
    # (the tests run as root, for whom every folder is writable: ask os.access about this one as a user would)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real_access(p, mode))
    with pytest.raises(DtmrError, match=f"the folder {tmp_path} is not writable"):
        check_output(tmp_path / "out.h5", kind="clip-library")
    with pytest.raises(DtmrError, match="is not writable"):
        check_output(tmp_path / "new" / "out.h5", kind="clip-library")


def _write_kinds(tmp_path):
    """One file of each kind, and a plain text file."""
    files = {"clip-library": _library(tmp_path / "lib.h5")}
    files["release-key"] = tmp_path / "r.key.json"
    files["release-key"].write_text(json.dumps({"format": "dtmr-release-key", "version": 1}))
    files["checkpoint"] = tmp_path / "model.pt"
    torch.save({"w": torch.zeros(2)}, files["checkpoint"])
    files["video"] = tmp_path / "v.gif"
    files["video"].write_bytes(b"GIF89a" + bytes(20))
    files["npz"] = tmp_path / "d.npz"
    np.savez(files["npz"], x=np.zeros(3))
    files["pickle"] = tmp_path / "a.pkl"
    files["pickle"].write_bytes(pickle.dumps({"annotations": []}, protocol=4))
    files["skeleton"] = tmp_path / "s.skeleton"
    files["skeleton"].write_text("12\n1\n")
    return files


@pytest.mark.parametrize("kind", ["clip-library", "release-key", "checkpoint", "video", "npz", "pickle",
                                  "skeleton"])
def test_a_kept_file_needs_overwrite_whatever_the_writer_and_another_kind_too(tmp_path, kind):
    files = _write_kinds(tmp_path)
    files["review-sidecar"] = tmp_path / "lib.h5.review.ann.json"
    files["review-sidecar"].write_text(json.dumps({"format": "dtmr-review", "version": 1}))
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    if kind in PRECIOUS:  # a library, a key, a model: also a writer of their own kind needs --overwrite
        with pytest.raises(DtmrError, match="this file exists and is a .*; use --overwrite to replace it"):
            check_output(files[kind], kind=kind)
    else:  # an export of its kind is made again by its command: replaced
        check_output(files[kind], kind=kind)
    for other, path in [*files.items(), ("text", notes)]:
        if other == kind or {other, kind} == {"checkpoint", "npz"}:  # a torch checkpoint is a zip archive too
            continue
        with pytest.raises(DtmrError, match="exists and is .*; use --overwrite to replace it"):
            check_output(path, kind=kind)
        assert check_output(path, kind=kind, overwrite=True) == path


def test_an_npz_is_not_a_checkpoint(tmp_path):
    np.savez(tmp_path / "d.npz", x=np.zeros(3))
    with pytest.raises(DtmrError, match="not a torch checkpoint"):
        check_output(tmp_path / "d.npz", kind="checkpoint")


def test_folder_kinds(tmp_path):
    audit = tmp_path / "audit"
    audit.mkdir()
    check_output(audit, kind="audit", folder=True)  # empty
    (audit / "audit.json").write_text(json.dumps({"format": "dtmr-audit"}))
    check_output(audit, kind="audit", folder=True)
    killed = tmp_path / "killed"  # an audit killed before its audit.json: its rerun resumes from the parts
    (killed / "parts").mkdir(parents=True)
    (killed / "attackers").mkdir()
    (killed / "parts" / "sgn-raw-trained-fold0.json").write_text("{}")
    check_output(killed, kind="audit", folder=True)
    early = tmp_path / "early"  # killed before its first part was renamed into place
    (early / "parts").mkdir(parents=True)
    (early / "attackers").mkdir()
    (early / "parts" / ".sgn-raw-trained-fold0.json.host.123.abc.tmp").write_text("{")
    check_output(early, kind="audit", folder=True)
    (early / "parts" / "thesis.tex").write_text("x")
    with pytest.raises(DtmrError, match="this folder exists and is not a"):
        check_output(early, kind="audit", folder=True)
    (killed / "notes.txt").write_text("x")
    with pytest.raises(DtmrError, match="this folder exists and is not a"):
        check_output(killed, kind="audit", folder=True)
    home = tmp_path / "home"
    home.mkdir()
    (home / "thesis.tex").write_text("x")
    for kind in ("audit", "training-run"):
        with pytest.raises(DtmrError, match="this folder exists and is not a"):
            check_output(home, kind=kind, folder=True)
    (home / "events.jsonl").write_text("")
    check_output(home, kind="training-run", folder=True)


def test_unknown_kind_is_a_programming_error(tmp_path):
    with pytest.raises(ValueError):
        check_output(tmp_path / "x", kind="spreadsheet")
    with pytest.raises(ValueError, match="folder=True"):
        check_output(tmp_path / "x", kind="audit")


def test_a_file_named_bvh_that_is_not_bvh_is_not_replaced(tmp_path):
    """The guard tells a BVH file by its HIERARCHY keyword: `dtmr data export --clip 0 -o notes.bvh` replaced
    someone's notes.bvh because its name ends in .bvh."""
    notes = tmp_path / "notes.bvh"
    notes.write_text("my notes\n")
    with pytest.raises(DtmrError, match="notes.bvh: this file exists and is not a BVH motion file"):
        check_output(notes, kind="bvh")
    motion = tmp_path / "motion.bvh"
    motion.write_text("HIERARCHY\nROOT hips\n")
    assert check_output(motion, kind="bvh") == motion  # an export of its kind: made again


def test_a_writer_that_names_its_own_output_takes_the_first_unused_name(tmp_path):
    from dtmr.io.outputs import unused_path

    assert unused_path(tmp_path, "ksame_nwucla", ".pt") == tmp_path / "ksame_nwucla.pt"
    (tmp_path / "ksame_nwucla.pt").write_bytes(b"")
    (tmp_path / "ksame_nwucla_2.pt").write_bytes(b"")
    assert unused_path(tmp_path, "ksame_nwucla", ".pt") == tmp_path / "ksame_nwucla_3.pt"
