"""Checkpoint headers (read without the weights) and the β = 1 partner that makes the retargeted view."""

from pathlib import Path

import pytest
import torch

from dtmr.data.label_set import LabelSet, RecognizerClasses, TrainedOn, record_label_set
from dtmr.errors import CheckpointError
from dtmr.models.checkpoints.checkpoint import CheckpointHeader, read_checkpoint_header
from dtmr.models.pairing import find_full_model, full_model_for, is_full, scan_checkpoints


def write_checkpoint(path: Path, beta=0.2, method="dtmr", topology="ntu25", preset="small", **extra) -> Path:
    """A checkpoint of the documented layout with one small weight (headers never build the model)."""
    torch.save({"format": "dtmr-checkpoint", "version": 1, "method": method, "config": {"preset_name": preset},
                "topology": topology, "beta": beta, "data": {}, "metrics": {}, "state_dict": {"w": torch.ones(3)},
                **extra}, path)  # `extra` may replace "data"
    return path


def header(name: str, beta=0.2, method="dtmr", topology="ntu25", preset="small") -> CheckpointHeader:
    return CheckpointHeader(Path(name), method, topology, beta, preset=preset)


def test_header_holds_the_metadata_and_a_label(tmp_path):
    path = write_checkpoint(tmp_path / "b02.pt", training={"seed": 3})
    info = read_checkpoint_header(path)
    assert (info.path, info.method, info.topology, info.beta, info.task) == (path, "dtmr", "ntu25", 0.2, None)
    assert info.preset == "small, training seed 3" and info.modified == path.stat().st_mtime
    assert info.label == "DisentangledTMR β=0.2 small, training seed 3 (b02.pt)" and not info.is_recognizer
    sgn = read_checkpoint_header(write_checkpoint(tmp_path / "action.pt", beta=None, method="sgn", task="action",
                                                  labels=[4, 7], class_names=["wave", "clap"]))
    assert sgn.is_recognizer and sgn.label == "SGN action recognizer (action.pt)"
    assert sgn.classes == RecognizerClasses("action", (4, 7), ("wave", "clap"))  # no data set recorded: unknown
    assert info.classes is None and info.trained_on == TrainedOn()


def test_header_refuses_a_recognizer_without_its_class_names(tmp_path):
    path = write_checkpoint(tmp_path / "action.pt", beta=None, method="sgn", task="action", labels=[4, 7])
    with pytest.raises(CheckpointError, match="one class name per class"):
        read_checkpoint_header(path)


def test_header_reads_the_recorded_training_data_set(tmp_path):
    data = {"path": "/data/nwucla.npz", "topology": "ntu25", "subjects": [1, 2], "actions": [0, 1],
            "action_names": ["pick up", "action 1"]}
    recorded = record_label_set(data)
    assert recorded["label_set"]["actions"] == [[0, "pick up"], [1, None]]  # "action 1" is the unnamed stand-in
    info = read_checkpoint_header(write_checkpoint(tmp_path / "m.pt", data=recorded))
    expected = LabelSet.build("nwucla", "kinect_v1_20", [0, 1, 1], ["pick up", ""], [1, 2, -1])
    assert info.trained_on == TrainedOn("nwucla", expected.fingerprint)
    old = read_checkpoint_header(write_checkpoint(tmp_path / "old.pt", data={"path": "synthetic.h5"}))
    assert old.trained_on == TrainedOn("synthetic", None) and old.trained_on.same_data_set(expected) is None


@pytest.mark.parametrize("beta, message", [(float("nan"), "not a finite number"), (True, "not a finite number"),
                                           ("0.2", "wrong type")])
def test_header_refuses_a_beta_that_is_not_a_number(tmp_path, beta, message):
    path = write_checkpoint(tmp_path / "bad.pt", beta=beta)
    with pytest.raises(CheckpointError, match=message) as err:
        read_checkpoint_header(path)
    assert err.value.path == str(path) and "beta" in str(err.value)


def test_header_errors_name_the_file(tmp_path):
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": torch.zeros(2)}, foreign)
    (tmp_path / "cut.pt").write_bytes(write_checkpoint(tmp_path / "whole.pt").read_bytes()[:100])
    for path, message in ((foreign, "not a DTMR checkpoint"), (tmp_path / "cut.pt", "corrupted"),
                          (tmp_path / "gone.pt", "no such checkpoint file")):
        with pytest.raises(CheckpointError, match=message) as err:
            read_checkpoint_header(path)
        assert err.value.path == str(path)


def test_the_partner_is_the_beta_one_model_of_the_same_method_and_topology():
    model = header("runs/a/b02.pt")
    others = [header("runs/a/b05.pt", beta=0.5), header("runs/a/pmr1.pt", beta=1.0, method="pmr"),
              header("runs/a/kinect1.pt", beta=1.0, topology="kinect_v1_20"),
              header("runs/a/action.pt", beta=1.0, method="sgn")]
    assert find_full_model(model, others) is None
    partner = header("elsewhere/b1.pt", beta=1.0)
    assert find_full_model(model, [*others, partner]) == partner
    full = header("runs/a/b1.pt", beta=1.0)
    assert find_full_model(full, [partner]) == full  # a β = 1 model is its own partner
    assert is_full(full) and not is_full(model) and not is_full(header("x.pt", beta=None))


def test_among_several_partners_the_same_preset_then_the_same_folder_wins_in_any_order():
    model = header("runs/a/b02.pt")
    same_folder_other_preset = header("runs/a/b1_paper.pt", beta=1.0, preset="paper")
    other_folder_same_preset = header("runs/b/b1.pt", beta=1.0)
    same_folder_same_preset = header("runs/a/z_b1.pt", beta=1.0)
    candidates = [same_folder_other_preset, other_folder_same_preset, same_folder_same_preset]
    for order in (candidates, candidates[::-1]):
        assert find_full_model(model, order) == same_folder_same_preset
    assert find_full_model(model, candidates[:2]) == other_folder_same_preset
    assert find_full_model(model, [header("runs/c/y.pt", beta=1.0), header("runs/c/x.pt", beta=1.0)]).path.name == "x.pt"


def test_full_model_for_looks_next_to_the_model_then_among_the_bundled_models(tmp_path, monkeypatch):
    resources = tmp_path / "resources"
    (resources / "models").mkdir(parents=True)
    monkeypatch.setenv("DTMR_RESOURCES", str(resources))
    runs = tmp_path / "runs"
    runs.mkdir()
    model = write_checkpoint(runs / "b02.pt")
    (runs / "broken.pt").write_bytes(b"PK\x03\x04" + b"\0" * 40)  # an unreadable neighbour is ignored
    assert full_model_for(model) is None
    bundled = write_checkpoint(resources / "models" / "dtmr_b1.pt", beta=1.0)
    assert full_model_for(model).path == bundled
    beside = write_checkpoint(runs / "b1.pt", beta=1.0)
    assert full_model_for(model).path == beside
    assert full_model_for(model, folders=[resources / "models"]).path == bundled
    with pytest.raises(CheckpointError):
        full_model_for(runs / "broken.pt")


def test_scan_lists_checkpoints_and_one_line_per_unreadable_file(tmp_path):
    write_checkpoint(tmp_path / "a.pt")
    write_checkpoint(tmp_path / "b.ckpt", beta=1.0)
    (tmp_path / "notes.txt").write_text("not a checkpoint")
    (tmp_path / "bad.pth").write_bytes(b"\0" * 10)
    headers, problems = scan_checkpoints([tmp_path, tmp_path / "missing"], [tmp_path / "gone.pt"])
    assert [h.path.name for h in headers] == ["a.pt", "b.ckpt"]
    assert len(problems) == 2 and "bad.pth" in problems[0] and "gone.pt" in problems[1]
