"""Which data a checkpoint fits (dtmr.models.checkpoints.data_fit): the model list's line per model."""

from pathlib import Path

from dtmr.data.label_set import LabelSet, TrainedOn, record_label_set
from dtmr.models.checkpoints.data_fit import data_fit
from dtmr.models.checkpoints.header import CheckpointHeader

SYNTHETIC = LabelSet.build("synthetic", "ntu25", [1, 2, 3], ["", "wave", "clap", "throw"], range(1, 41))


def header(labels: LabelSet | None, topology: str = "ntu25") -> CheckpointHeader:
    if labels is None:
        return CheckpointHeader(Path("old.pt"), "dtmr", topology, beta=0.2, trained_on=TrainedOn("synthetic"))
    data = record_label_set({"path": f"{labels.name}.h5", "topology": labels.topology,
                             "subjects": list(labels.subjects),
                             "actions": [a for a, _ in labels.actions],
                             "action_names": [n or f"action {a}" for a, n in labels.actions]})
    return CheckpointHeader(Path("m.pt"), "dtmr", topology, beta=0.2, trained_on=TrainedOn.of_checkpoint_data(data))


def test_a_model_fitted_on_the_library_says_so():
    fit = data_fit(header(SYNTHETIC), SYNTHETIC)
    assert (fit.fits, fit.line) == (True, "fitted on this library")


def test_a_part_of_the_training_data_is_its_data_set():
    demo = LabelSet.build("demo", "ntu25", [1, 2, 3], ["", "wave", "clap", "throw"], range(1, 11))
    fit = data_fit(header(SYNTHETIC), demo)
    assert (fit.fits, fit.line) == (True, "trained on synthetic — this library's data set")
    assert "this library: demo (3 actions, 10 subjects), skeleton ntu25" in fit.details


def test_another_data_set_says_what_differs():
    nwucla = LabelSet.build("nwucla", "kinect_v1_20", [0, 1], ["pick up", "throw"], range(10))
    fit = data_fit(header(SYNTHETIC), nwucla)
    assert (fit.fits, fit.line) == (False, "trained on synthetic — not this library's skeleton, actions, people")
    renamed = LabelSet.build("other", "ntu25", [0, 1], ["wave", "throw"], [1, 2])  # same names, other people
    assert data_fit(header(SYNTHETIC), renamed).line == "trained on synthetic — not this library's people"


def test_unrecorded_training_data_cannot_be_checked():
    fit = data_fit(header(None), SYNTHETIC)
    assert fit.fits is None and fit.line == "trained on synthetic — cannot be checked against this library"
    assert fit.details.endswith("the checkpoint records no training labels")
    assert data_fit(header(None), None).line == "trained on synthetic"
    unlabelled = LabelSet.build("raw", "ntu25", [], None, [])
    fit = data_fit(header(SYNTHETIC), unlabelled)
    assert fit.fits is None and fit.details.endswith("this library has no action labels")
