"""The evaluation protocol end to end on a small synthetic split: raw AR far above chance, noise lowers it,
and the three reports are written."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from dtmr.cli import main
from dtmr.data.synthetic import generate_clips
from dtmr.eval.attacks import nearest_is_source, top_k_accuracy
from dtmr.data.reference_pool import ReferencePool
from dtmr.eval.references import paired_targets
from dtmr.io.library import ClipLibrary
from dtmr.models.recognizers import Recognizer


def test_references_come_from_other_subjects_and_are_seeded():
    subjects = np.array([1, 1, 2, 2, 3, 3, 3])
    pool = ReferencePool(subjects)
    a = pool.draw_all(np.random.default_rng(0))
    b = pool.draw_all(np.random.default_rng(0))
    assert np.array_equal(a, b)
    assert (subjects[a] != subjects).all()
    many = np.stack([pool.draw_all(np.random.default_rng(s)) for s in range(200)])
    assert set(many[:, 0]) == {2, 3, 4, 5, 6}  # uniform over every clip of another subject


def test_paired_target_is_the_reference_subject_doing_the_source_action_in_the_source_view():
    subjects, actions, views = np.array([1, 1, 2, 2]), np.array([5, 6, 5, 6]), np.array([1, 1, 1, 2])
    targets = paired_targets(actions, views, np.array([2, 2, 1, 1]), subjects, actions, views)
    # clip 0 (P1, A5, V1) with a P2 reference -> clip 2 (P2, A5, V1); clip 1 (P1, A6, V1): P2 did A6 only in V2
    assert targets.tolist() == [2, -1, 0, -1]  # clip 3 (P2, A6, V2): P1 did A6 only in V1
    unknown = np.array([-1, -1, 2, 2])  # clip 0 (unknown, A5, V1) would pair with itself: unknown is nobody
    targets = paired_targets(actions, views, np.array([-1, 2, -1, -1]), unknown, actions, views)
    assert targets.tolist() == [-1, -1, -1, -1]


def test_accuracy_and_linkage_helpers():
    proba = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
    assert top_k_accuracy(proba, np.array([1, 1, -1]), 1) == pytest.approx(100 / 3)
    assert top_k_accuracy(proba, np.array([1, 1, -1]), 2) == pytest.approx(200 / 3)
    raw = np.eye(4)
    assert nearest_is_source(raw + 0.1, raw) == 100.0
    assert nearest_is_source(raw[[1, 0, 2, 3]], raw) == 50.0


@pytest.mark.slow
def test_raw_is_far_above_chance_and_noise_lowers_it(tmp_path):
    library = tmp_path / "synthetic.h5"
    ClipLibrary.create(library, generate_clips(subjects=6, actions=4, repetitions=2, seed=3))
    out = tmp_path / "eval"
    assert main(["evaluate", "--data", str(library), "--split", "synthetic", "--baselines", "raw,noise,naive",
                 "--seeds", "2", "--out", str(out), "--recognizer-epochs", "30", "--no-retrain"]) == 0
    rows = {r["method"]: r for r in json.loads((out / "results.json").read_text())}
    assert set(rows) == {"raw", "noise", "naive"}
    chance = 100 / 4
    assert rows["raw"]["ar_top1"]["mean"] > 2.5 * chance
    assert rows["noise"]["ar_top1"]["mean"] < rows["raw"]["ar_top1"]["mean"] - 10
    assert rows["raw"]["linkage"]["mean"] == 100.0  # a raw clip is its own nearest neighbour
    for key in ("ar_top5", "ri_top1", "ri_top5", "mse", "mpjpe", "bone_error", "foot_sliding"):
        assert set(rows["naive"][key]) == {"mean", "std"}
    assert rows["raw"]["mse"]["mean"] >= 0
    text = (out / "results.md").read_text()
    assert "dtmr evaluate --data" in text and "| naive retarget |" in text
    assert (out / "tradeoff.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "recognizers" / "action.pt").is_file()
    assert "raw train split (30 epochs)" in text
    # evaluators loaded from a folder: the report gives the epochs their checkpoints record, not the option's
    again = tmp_path / "again"
    assert main(["evaluate", "--data", str(library), "--split", "synthetic", "--baselines", "raw", "--seeds", "1",
                 "--out", str(again), "--recognizers", str(out / "recognizers"), "--no-retrain",
                 "--device", "cpu"]) == 0
    text = (again / "results.md").read_text()
    assert "raw train split (30 epochs)" in text and "--recognizer-epochs" not in text
    assert "--device cpu` (device: cpu)" in text
    run = json.loads((again / "run.json").read_text())
    assert run["evaluator_epochs"] == {"action": 30, "subject": 30} and run["device"] == "cpu"
    assert run["evaluator_weights"] == {task: Recognizer.from_checkpoint(out / "recognizers" / f"{task}.pt",
                                                                          device="cpu").weights_fingerprint()
                                        for task in ("action", "subject")}
    # a later run adds its rows to that table
    assert main(["evaluate", "--data", str(library), "--split", "synthetic", "--baselines", "naive", "--seeds", "1",
                 "--out", str(again), "--recognizers", str(out / "recognizers"), "--no-retrain", "--append"]) == 0
    assert [r["method"] for r in json.loads((again / "results.json").read_text())] == ["raw", "naive"]
    assert " && dtmr evaluate " in (again / "results.md").read_text()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_the_whole_protocol_runs_on_cuda(tmp_path):
    """Evaluators, a DMR trained here, the retrained models and the attacks, all on the GPU."""
    library = tmp_path / "synthetic.h5"
    ClipLibrary.create(library, generate_clips(subjects=4, actions=3, repetitions=2, seed=5))
    out = tmp_path / "eval"
    assert main(["evaluate", "--data", str(library), "--split", "synthetic", "--baselines", "raw,naive,dmr",
                 "--seeds", "2", "--out", str(out), "--recognizer-epochs", "2", "--retrain-epochs", "1",
                 "--baseline-epochs", "dmr=1,1,1,1", "--device", "cuda"]) == 0
    rows = json.loads((out / "results.json").read_text())
    assert [r["method"] for r in rows] == ["raw", "naive", "dmr"]
    for row in rows:
        for key in ("ar_top1", "ri_top1", "ar_retrained_top1", "ri_adaptive_top1", "linkage", "mpjpe"):
            assert np.isfinite(row[key]["mean"]), (row["method"], key)
    assert json.loads((out / "run.json").read_text())["device"] == "cuda:0"


def test_checkpoint_rows_name_the_method_beta_and_size():
    from dtmr.eval.methods import EvalMethod, checkpoint_method
    from dtmr.resources import resource_path

    path = resource_path("models", "dtmr_small_beta0.2.pt")
    method = checkpoint_method(path, "cpu")
    variant = "small, naive residual, kinematic output, joint_angle=10, limb_overlap=1000"  # make models' options
    assert (method.method, method.beta, method.variant) == ("dtmr", pytest.approx(0.2), variant)
    assert method.label == f"DisentangledTMR β=0.2 {variant}" and method.anonymizer.device.type == "cpu"
    assert EvalMethod("naive").label == "naive retarget"


def test_a_retrained_model_does_not_depend_on_what_was_drawn_before_it(tmp_path):
    """A method's retrained models, hence its row, depend on its seed only, not on the methods evaluated
    before it in the run: evaluations run side by side and joined (`--append`, scripts/merge_evaluations.py)
    give the rows one run would give."""
    from dtmr.eval.protocol import _retrained
    from dtmr.train.data import load_training_data

    library = tmp_path / "synthetic.h5"
    ClipLibrary.create(library, generate_clips(subjects=3, actions=2, repetitions=2, seed=7))
    data = load_training_data(library, "synthetic")
    clips = data.train.clips
    models = []
    for earlier_draws in (1, 50):
        torch.rand(earlier_draws)
        models.append(_retrained("action", data, clips, [c.action for c in clips], 3, 1, "cpu"))
    first, second = (m.model.state_dict() for m in models)
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_a_method_gets_the_librarys_action_names_as_dtmr_anonymize_does(tmp_path):
    """k-same and re-timing use the action labels the library names as their fitted file does: the protocol
    must pass the library's names, or every evaluated clip would take the nearest template's action."""
    from dtmr.eval.methods import EvalMethod
    from dtmr.eval.protocol import EvalSettings, draw_seed, seed_values
    from dtmr.train.data import load_training_data

    library = tmp_path / "synthetic.h5"
    clips = generate_clips(subjects=3, actions=2, repetitions=2, seed=0)
    ClipLibrary.create(library, clips, action_names=["wave", "clap"]).close()
    data = load_training_data(library, "synthetic")

    class Recording:
        def __init__(self):
            self.names = []

        def anonymize_batch(self, clips, references, action_names=None):
            self.names.append(action_names)
            return list(clips)

    recording = Recording()
    method = EvalMethod("ksame", checkpoint="k.pt", _anonymizer=recording)
    torch.manual_seed(0)
    evaluators = (Recognizer.create("action", data.action_labels), Recognizer.create("subject", data.subject_labels))
    draw = draw_seed(data, 0)
    raw = {0: evaluators[1].embed(data.test.clips, 5, 0)}
    seed_values(method, data, [draw], evaluators, EvalSettings(seeds=1, retrain=False), lambda _: None, raw)
    assert recording.names == [["wave", "clap"]]
