"""`dtmr fit-motion-model`, and its files through the paths every consumer loads them by: `dtmr anonymize
--model`, `dtmr evaluate`'s `checkpoint_method` and the Studio's checkpoint header."""

import pytest
import torch

from dtmr.cli import main
from dtmr.cli.fit_motion_cmd import METHODS
from dtmr.data.synthetic import generate_clips
from dtmr.eval.methods import checkpoint_method
from dtmr.io.library import ClipLibrary
from dtmr.models.checkpoints.checkpoint import load_checkpoint
from dtmr.models.checkpoints.header import read_checkpoint_header
from dtmr.models.motion import MOTION_METHODS


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """3 subjects x 2 actions x 2 repetitions (split "synthetic": the last repetition is the test half)."""
    path = tmp_path_factory.mktemp("data") / "tiny.h5"
    ClipLibrary.create(path, generate_clips(subjects=3, actions=2, repetitions=2, seed=0)).close()
    return path


def test_the_cli_lists_every_method_and_partner_choice():
    from dtmr.cli.fit_motion_cmd import PARTNERS
    from dtmr.models.motion.ksame import PARTNERS as KSAME_PARTNERS

    assert METHODS == MOTION_METHODS and PARTNERS == KSAME_PARTNERS


def test_fit_then_anonymize_evaluate_and_list(library, tmp_path, capsys):
    out = tmp_path / "ksame_k2.pt"
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "ksame", "--k", "2",
                 "-o", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"wrote {out}: ksame k=2, 2 action templates, pool of 6 clips by 3 subjects; nearest")
    checkpoint = load_checkpoint(out)
    assert checkpoint["data"]["split"] == "synthetic" and checkpoint["data"]["train_clips"] == 6
    assert set(checkpoint["metrics"]) == {"templates", "nearest_template_accuracy", "pool_clips", "pool_subjects"}
    assert read_checkpoint_header(out).label == "k-same β=1 (ksame_k2.pt)"
    assert checkpoint_method(out, "cpu").label == "k-same k=2"
    release = tmp_path / "release.h5"
    assert main(["anonymize", str(library), "--model", str(out), "--device", "cpu", "-o", str(release)]) == 0
    assert release.is_file()


def test_retime_files_are_labelled_by_their_method(library, tmp_path, capsys):
    out = tmp_path / "retime.pt"
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "retime-naive",
                 "-o", str(out)]) == 0
    assert "retime-naive, 2 action templates; nearest template" in capsys.readouterr().out
    assert read_checkpoint_header(out).label == "re-timing + naive β=1 (retime.pt)"
    assert checkpoint_method(out, "cpu").label == "re-timing + naive"


def test_errors_are_one_line(library, tmp_path, capsys):
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "ksame", "--k", "4",
                 "-o", str(tmp_path / "k4.pt")]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the line saying what is fitted
    assert err == (f"dtmr: error: {library}, split synthetic: k = 4 needs 4 subjects per action in the pool; "
                   "action 1 has 3")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    good = tmp_path / "k2.pt"
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "ksame",
                 "-o", str(good)]) == 0
    tampered = load_checkpoint(good)
    del tampered["state_dict"]["pool"]
    torch.save(tampered, tmp_path / "tampered.pt")
    capsys.readouterr()
    no_pool = "invalid ksame configuration: the file holds no k-same pool"
    for path, why in ((bad, "not a valid checkpoint"), (tmp_path / "tampered.pt", no_pool)):
        assert main(["anonymize", str(library), "--model", str(path), "-o", str(tmp_path / "r.h5")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith(f"dtmr: error: {path}: {why}")


def test_an_action_embedder_is_fitted_into_the_file_and_serves_an_unlabelled_library(library, tmp_path, capsys):
    from dtmr.models.recognizers import Recognizer

    torch.manual_seed(0)
    embedder = Recognizer.create("action", [1, 2]).save(tmp_path / "action.pt")
    subject = Recognizer.create("subject", [1, 2, 3]).save(tmp_path / "subject.pt")
    out = tmp_path / "ksame_embedded.pt"
    assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", "--method", "ksame",
                 "--embedder", str(embedder), "-o", str(out)]) == 0
    line = capsys.readouterr().out.strip()
    assert "ksame k=2, action embedding" in line and "the nearest pool clip in the embedding names the action" in line
    assert "nearest_embedding_accuracy" in load_checkpoint(out)["metrics"]
    assert checkpoint_method(out, "cpu").label == "k-same k=2, action embedding"
    unlabelled = tmp_path / "unlabelled.h5"
    with ClipLibrary(library) as lib:
        ClipLibrary.create(unlabelled, [c.replace(action=None) for c in lib.read_all()]).close()
    assert main(["anonymize", str(unlabelled), "--model", str(out), "--device", "cpu",
                 "-o", str(tmp_path / "release.h5")]) == 0
    capsys.readouterr()
    for args, why in ((["--embedder", str(subject)], "must be an action recognizer of ntu25 clips"),
                      (["--embedder", str(embedder), "--method", "retime"], "an action embedder serves k-same only")):
        method = [] if "--method" in args else ["--method", "ksame"]
        assert main(["fit-motion-model", "--data", str(library), "--split", "synthetic", *method, *args,
                     "-o", str(tmp_path / "x.pt")]) == 2
        assert why in capsys.readouterr().err.strip().splitlines()[-1]
