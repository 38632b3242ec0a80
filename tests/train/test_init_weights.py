"""`dtmr train --init CHECKPOINT` (issue 42: fine-tune a bundled model on the open library): a new run that starts
from a checkpoint's weights, with its own settings and folder; a checkpoint of another method, topology or
network is refused with one line."""

import json
from pathlib import Path

import pytest
import torch

from dtmr.cli import main
from tiny_training import TINY, create_tiny_library


@pytest.fixture(scope="module")
def tiny_library(tmp_path_factory) -> Path:
    return create_tiny_library(tmp_path_factory.mktemp("data") / "tiny.h5")


def train_args(library: Path, out: Path, epochs: str = "1,0,0", options: dict = TINY) -> list[str]:
    args = ["train", "--data", str(library), "--split", "synthetic", "--preset", "small", "--beta", "0.5",
            "--out", str(out), "--epochs", epochs, "--batch", "4", "--quadruplets", "8", "--device", "cpu"]
    for key, value in options.items():
        args += ["--model-option", f"{key}={json.dumps(value)}"]
    return args


def weights(out: Path) -> dict:
    return torch.load(out / "model.pt", weights_only=True)["state_dict"]


@pytest.fixture(scope="module")
def trained(tiny_library, tmp_path_factory) -> Path:
    """A tiny run of a few steps with seed 7, whose weights the tests start from."""
    out = tmp_path_factory.mktemp("runs") / "first"
    assert main(train_args(tiny_library, out) + ["--seed", "7"]) == 0
    return out / "model.pt"


@pytest.mark.timeout(300)
def test_a_run_of_no_steps_from_a_checkpoint_is_that_checkpoint(tiny_library, trained, tmp_path, capsys):
    assert main(train_args(tiny_library, tmp_path / "tuned", epochs="0,0,0") + ["--init", str(trained)]) == 0
    assert "starting from the weights of" in capsys.readouterr().err
    start, tuned = torch.load(trained, weights_only=True)["state_dict"], weights(tmp_path / "tuned")
    assert start.keys() == tuned.keys() and all(torch.equal(start[k], tuned[k]) for k in start)
    assert main(train_args(tiny_library, tmp_path / "fresh", epochs="0,0,0")) == 0  # without --init: not them
    assert not all(torch.equal(start[k], v) for k, v in weights(tmp_path / "fresh").items())
    # the checkpoint says where its training started (the file's name, not its path), and only then
    training = {name: torch.load(tmp_path / name / "model.pt", weights_only=True)["training"]
                for name in ("tuned", "fresh")}
    assert training["tuned"]["init"] == trained.name and "init" not in training["fresh"]


@pytest.mark.timeout(300)
def test_fine_tuning_trains_from_the_checkpoint(tiny_library, trained, tmp_path):
    assert main(train_args(tiny_library, tmp_path / "tuned") + ["--init", str(trained)]) == 0
    start, tuned = torch.load(trained, weights_only=True)["state_dict"], weights(tmp_path / "tuned")
    assert any(not torch.equal(start[k], tuned[k]) for k in start)  # it trained
    assert torch.load(tmp_path / "tuned" / "model.pt", weights_only=True)["training"] is not None


def refusal(args, capsys) -> str:
    assert main(args) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    return err


@pytest.mark.timeout(300)
def test_another_method_topology_or_network_is_refused_in_one_line(tiny_library, trained, tmp_path, capsys):
    ksame = Path(__file__).resolve().parents[2] / "resources" / "models" / "ksame_k20_means.pt"
    err = refusal(train_args(tiny_library, tmp_path / "a") + ["--init", str(ksame)], capsys)
    assert str(ksame) in err and "a k-same checkpoint cannot start a DisentangledTMR training" in err
    other = torch.load(trained, weights_only=True)
    other["topology"] = "kinect_v1_20"
    torch.save(other, tmp_path / "kinect.pt")
    err = refusal(train_args(tiny_library, tmp_path / "b") + ["--init", str(tmp_path / "kinect.pt")], capsys)
    assert "its skeleton is kinect_v1_20, this training's is ntu25" in err
    bigger = {**TINY, "decoder_dim": 32}
    err = refusal(train_args(tiny_library, tmp_path / "c", options=bigger) + ["--init", str(trained)], capsys)
    assert "its network is not this training's" in err and "same preset and model options" in err
    err = refusal(train_args(tiny_library, tmp_path / "d") + ["--init", str(trained), "--resume"], capsys)
    assert "cannot be combined with --resume" in err
