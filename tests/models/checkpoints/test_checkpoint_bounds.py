"""Checkpoints are untrusted: non-finite weights, configs asking for absurd sizes (of a DisentangledTMR or a
recognizer) are CheckpointErrors naming the file before anything is built; a model whose output is not finite
stops the anonymization with an error naming the checkpoint."""

from __future__ import annotations

import time

import numpy as np
import pytest
import torch

from dtmr.data.clip import Clip
from dtmr.errors import CheckpointError, DtmrError
from dtmr.models import Anonymizer, DisentangledTMR, DTMRConfig, save_checkpoint
from dtmr.models.checkpoints.checkpoint import build_model_from_checkpoint, load_checkpoint
from dtmr.models.recognizers import Recognizer


@pytest.fixture(scope="module")
def small_checkpoint(tmp_path_factory):
    torch.manual_seed(0)
    model = DisentangledTMR(DTMRConfig.preset("small", "ntu25"), beta=0.2)
    path = tmp_path_factory.mktemp("ckpt") / "small.pt"
    save_checkpoint(path, model, data={}, metrics={})
    return torch.load(path, weights_only=True)


def clip(seed: int, frames: int = 30) -> Clip:
    rng = np.random.default_rng(seed)
    joints = rng.normal(0, 0.3, (25, 3)) + 0.02 * rng.normal(size=(frames, 25, 3)) + [0, 1, 3]
    return Clip(joints.astype(np.float32), topology="ntu25", subject=seed)


def write(tmp_path, checkpoint: dict, name: str = "bad.pt"):
    path = tmp_path / name
    torch.save(checkpoint, path)
    return path


def with_config(checkpoint: dict, **changes) -> dict:
    return {**checkpoint, "config": {**checkpoint["config"], **changes}}


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused_at_load(small_checkpoint, tmp_path, value):
    state = dict(small_checkpoint["state_dict"])
    name = "decoder.positions"
    state[name] = state[name].clone()
    state[name][3, 1] = value
    path = write(tmp_path, {**small_checkpoint, "state_dict": state})
    with pytest.raises(CheckpointError, match=f"weight '{name}' holds NaN or infinite") as caught:
        Anonymizer.from_checkpoint(path, device="cpu")
    assert caught.value.path == str(path)


def test_a_model_whose_output_is_not_finite_is_an_error_naming_the_checkpoint():
    torch.manual_seed(0)
    model = DisentangledTMR(DTMRConfig.preset("small", "ntu25"), beta=0.2)
    with torch.no_grad():
        model.decoder.positions.fill_(float("nan"))  # as weights that diverged after loading would
    tool = Anonymizer(model, source="/models/diverged.pt", device="cpu")
    with pytest.raises(DtmrError, match="diverged.pt: the dtmr model's output is not finite .*2 of 2 clips"):
        tool.anonymize_batch([clip(1), clip(2)], clip(3))


def test_source_nans_still_pass_through_the_blend(small_checkpoint, tmp_path):
    tool = Anonymizer.from_checkpoint(write(tmp_path, small_checkpoint, "good.pt"), device="cpu")
    source = clip(1)
    source.joints[4:7, 2] = np.nan
    released = tool.anonymize(source, clip(2))
    assert np.isnan(released.joints[4:7, 2]).all() and np.isfinite(np.delete(released.joints, 2, axis=1)).all()


@pytest.mark.parametrize("field, value, words", [
    ("decoder_ffn", 1e9, "decoder_ffn must hold integers"),
    ("decoder_ffn", 2 * 10**7, "decoder_ffn = 20000000 is larger than any weight"),
    ("decoder_ffn", True, "decoder_ffn must hold integers"),
    ("decoder_ffn", -5, "decoder_ffn = -5 is outside"),
    ("decoder_layers", 10**6, "decoder_layers = 1000000 is larger than any weight"),
    ("mixformer_channels", [16, 32, 10**9], r"mixformer_channels\[2\] = 1000000000 is larger"),
    ("identity_channels", [32] * 1000, "identity_channels must have 2 to 16 entries"),
    ("frames", "64", "frames must hold integers"),
])
def test_config_sizes_are_bounded_before_building(small_checkpoint, tmp_path, field, value, words):
    path = write(tmp_path, with_config(small_checkpoint, **{field: value}))
    started = time.monotonic()
    with pytest.raises(CheckpointError, match=words) as caught:
        build_model_from_checkpoint(load_checkpoint(path), source=path)
    assert caught.value.path == str(path) and time.monotonic() - started < 5


def test_config_bounds_hold_for_configs_built_in_code():
    with pytest.raises(ValueError, match="decoder_ffn = 100000 is outside 1..8192"):
        DTMRConfig.preset("small", decoder_ffn=100_000)
    assert DTMRConfig.preset("paper").decoder_ffn == 2048  # both presets are well inside the bounds


@pytest.mark.parametrize("field, value", [("num_classes", 10**7), ("seg", 10**6), ("num_joints", 10**5)])
def test_recognizer_config_sizes_are_bounded(tmp_path, field, value):
    path = Recognizer.create("subject", labels=[1, 2, 3]).save(tmp_path / "subject.pt")
    checkpoint = torch.load(path, weights_only=True)
    path = write(tmp_path, with_config(checkpoint, **{field: value}))
    with pytest.raises(CheckpointError, match=f"config {field} = {value} is larger than any weight"):
        Recognizer.from_checkpoint(path, device="cpu")
