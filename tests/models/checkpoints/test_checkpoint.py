"""Checkpoints: round trip, refusal of code-running pickles, damaged files, layout checks, method registry."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
import torch
from torch import nn

from dtmr.errors import CheckpointError
from dtmr.models import (
    DisentangledTMR,
    DTMRConfig,
    build_model_from_checkpoint,
    load_checkpoint,
    prepare_for_inference,
    register_method,
    registered_methods,
    save_checkpoint,
)
from dtmr.skeleton import get_topology


@pytest.fixture(scope="module")
def model() -> DisentangledTMR:
    torch.manual_seed(0)
    return DisentangledTMR(DTMRConfig.preset("small", "kinect_v1_20"), beta=0.3).eval()


@pytest.fixture
def saved(tmp_path, model) -> Path:
    return save_checkpoint(tmp_path / "m.pt", model, data={"dataset": "nwucla", "clips": 1484},
                           metrics={"loss": 0.25}, extra={"epoch": 3})


class RunsCode:
    """A pickle payload that would create a file if unpickled by a full unpickler."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_round_trip_gives_the_same_outputs(saved, model):
    checkpoint = load_checkpoint(saved)
    assert checkpoint["format"] == "dtmr-checkpoint" and checkpoint["version"] == 1
    assert checkpoint["method"] == "dtmr" and checkpoint["topology"] == "kinect_v1_20"
    assert checkpoint["beta"] == pytest.approx(0.3)
    assert checkpoint["data"] == {"dataset": "nwucla", "clips": 1484} and checkpoint["epoch"] == 3
    rebuilt = build_model_from_checkpoint(checkpoint, source=saved)
    assert isinstance(rebuilt, DisentangledTMR) and not rebuilt.training
    assert rebuilt.config == model.config and rebuilt.beta == model.beta
    g = torch.Generator().manual_seed(0)
    src, ref = 0.3 * torch.randn((2, 64, 20, 3), generator=g), 0.3 * torch.randn((2, 64, 20, 3), generator=g)
    with torch.inference_mode():  # the rebuilt model is served prepared: bit-identical to the prepared original
        assert torch.equal(rebuilt.retarget(src, ref), prepare_for_inference(model).retarget(src, ref))


def test_save_is_atomic_and_keeps_the_old_file_on_failure(saved, model):
    before = saved.read_bytes()
    with pytest.raises(TypeError, match="object"):
        save_checkpoint(saved, model, data={"bad": object()}, metrics={})
    assert saved.read_bytes() == before
    assert [p.name for p in saved.parent.iterdir()] == [saved.name]
    with pytest.raises(ValueError, match="state_dict"):
        save_checkpoint(saved, model, data={}, metrics={}, extra={"state_dict": {}})


@pytest.mark.parametrize("writer", ["torch.save", "pickle.dump"])
def test_code_running_pickle_is_refused(tmp_path, writer):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    payload = {"format": "dtmr-checkpoint", "payload": RunsCode(marker)}
    if writer == "torch.save":
        torch.save(payload, path)
    else:
        with open(path, "wb") as fh:
            pickle.dump(payload, fh, protocol=2)
    with pytest.raises(CheckpointError, match="refused") as info:
        load_checkpoint(path)
    assert str(path) in str(info.value) and "system" in str(info.value)
    assert not marker.exists()


@pytest.mark.parametrize("damage", ["truncated", "empty", "random", "text"])
def test_damaged_file_is_a_checkpoint_error(tmp_path, saved, damage):
    data = saved.read_bytes()
    damaged = tmp_path / "damaged.pt"
    damaged.write_bytes({"truncated": data[: len(data) // 2], "empty": b"", "random": os.urandom(4096),
                         "text": b"joints 1 2 3\n"}[damage])
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(damaged)
    assert str(damaged) in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(CheckpointError, match="no such"):
        load_checkpoint(tmp_path / "absent.pt")


@pytest.mark.parametrize("change, message", [
    (lambda c: [1, 2, 3], "not a dict"),
    (lambda c: {**c, "format": "other"}, "format"),
    (lambda c: {k: v for k, v in c.items() if k != "config"}, "lacks 'config'"),
    (lambda c: {**c, "beta": "high"}, "'beta'"),
    (lambda c: {**c, "version": 99}, "newer"),
    (lambda c: {**c, "topology": "no_such_joints"}, "unknown topology"),
    (lambda c: {**c, "state_dict": {"w": [1.0]}}, "named tensor"),
])
def test_wrong_layout_is_a_checkpoint_error(tmp_path, saved, change, message):
    bad = tmp_path / "bad.pt"
    torch.save(change(load_checkpoint(saved)), bad)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(bad)


def test_build_errors_name_the_file(saved):
    checkpoint = load_checkpoint(saved)
    with pytest.raises(CheckpointError, match="unknown method 'mystery'") as info:
        build_model_from_checkpoint({**checkpoint, "method": "mystery"}, source=saved)
    assert str(saved) in str(info.value)
    weights = dict(checkpoint["state_dict"])
    weights.pop(next(iter(weights)))
    with pytest.raises(CheckpointError, match="weights do not fit"):
        build_model_from_checkpoint({**checkpoint, "state_dict": weights}, source=saved)
    with pytest.raises(CheckpointError, match="invalid dtmr configuration"):
        build_model_from_checkpoint({**checkpoint, "config": {**checkpoint["config"], "bogus": 1}}, source=saved)


class Scale(nn.Module):
    """A minimal retargeter of another method, registered from outside the checkpoint module."""

    method = "scale_test"

    def __init__(self, topology: str, factor: float):
        super().__init__()
        self.topology = get_topology(topology)
        self.beta = 1.0
        self.factor = nn.Parameter(torch.tensor(factor))

    def retarget(self, src, ref):
        return src * self.factor

    def config_dict(self) -> dict:
        return {"factor": float(self.factor.detach())}


def test_other_methods_register_a_builder(tmp_path):
    register_method("scale_test", lambda c: Scale(c["topology"], c["config"]["factor"]))
    assert {"dtmr", "scale_test"} <= set(registered_methods())
    path = save_checkpoint(tmp_path / "s.pt", Scale("ntu25", 2.0), data={}, metrics={})
    model = build_model_from_checkpoint(load_checkpoint(path), source=path)
    assert isinstance(model, Scale) and model.factor.item() == 2.0
