"""`dtmr train --stage1-cache`: a training that starts from another training's stage 1 (other β, other
residual) ends bit for bit where a training from scratch ends; other seeds miss; a damaged entry is a clear
error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from tiny_training import TINY, create_tiny_library

from dtmr.cli import main
from dtmr.train.progress import read_events


@pytest.fixture(scope="module")
def tiny_library(tmp_path_factory) -> Path:
    return create_tiny_library(tmp_path_factory.mktemp("data") / "tiny.h5")


def _train(library: Path, out: Path, beta: float, residual: str, *extra: str, seed: int = 0) -> int:
    args = ["train", "--data", str(library), "--split", "synthetic", "--preset", "small", "--beta", str(beta),
            "--out", str(out), "--epochs", "2,1,1", "--batch", "4", "--quadruplets", "8", "--device", "cpu",
            "--seed", str(seed), "--model-option", f"residual={residual}", *extra]
    for key, value in TINY.items():
        args += ["--model-option", f"{key}={json.dumps(value)}"]
    return main(args)


def _model(out: Path) -> dict:
    return torch.load(out / "model.pt", weights_only=True)


def _start_message(out: Path) -> str:
    with open(out / "events.jsonl") as fh:
        return next(e.message for e in read_events(fh) if e.kind == "start")


@pytest.mark.slow
@pytest.mark.parametrize("first_residual", ["retimed-naive", "ksame"])
def test_a_training_from_the_cached_stage_1_ends_where_one_from_scratch_ends(tiny_library, tmp_path,
                                                                           first_residual):
    cache = tmp_path / "cache"
    assert _train(tiny_library, tmp_path / "scratch", 0.5, "naive") == 0
    assert _train(tiny_library, tmp_path / "first", 0.3, first_residual, "--stage1-cache", str(cache)) == 0
    assert len(list(cache.glob("stage1-*.pt"))) == 1
    assert _train(tiny_library, tmp_path / "cached", 0.5, "naive", "--stage1-cache", str(cache)) == 0

    assert _start_message(tmp_path / "scratch") == "starting"
    assert _start_message(tmp_path / "cached").startswith(f"stage 1 from {cache}")
    with open(tmp_path / "cached" / "events.jsonl") as fh:
        assert {e.stage for e in read_events(fh) if e.kind == "epoch"} == {2, 3}  # stage 1 did not run
    scratch, cached = _model(tmp_path / "scratch"), _model(tmp_path / "cached")
    assert scratch["state_dict"].keys() == cached["state_dict"].keys()
    for key in scratch["state_dict"]:
        assert torch.equal(scratch["state_dict"][key], cached["state_dict"][key]), key
    assert scratch["metrics"] == cached["metrics"]  # every epoch's mean losses, stage 1's included
    # the first training (other β and residual) has its own decoder: the cache shares stage 1 only
    first = _model(tmp_path / "first")["state_dict"]
    assert any(not torch.equal(first[k], cached["state_dict"][k]) for k in first if k.startswith("decoder."))


@pytest.mark.slow
def test_another_seed_misses_the_cache_and_stores_its_own(tiny_library, tmp_path):
    cache = tmp_path / "cache"
    assert _train(tiny_library, tmp_path / "a", 0.5, "naive", "--stage1-cache", str(cache)) == 0
    assert _train(tiny_library, tmp_path / "b", 0.5, "naive", "--stage1-cache", str(cache), seed=1) == 0
    assert _start_message(tmp_path / "b") == "starting"
    assert len(list(cache.glob("stage1-*.pt"))) == 2


@pytest.mark.slow
def test_a_damaged_entry_is_a_one_line_error_naming_it(tiny_library, tmp_path, capsys):
    cache = tmp_path / "cache"
    assert _train(tiny_library, tmp_path / "a", 0.5, "naive", "--stage1-cache", str(cache)) == 0
    (entry,) = cache.glob("stage1-*.pt")
    entry.write_bytes(entry.read_bytes()[:1000])
    capsys.readouterr()
    assert _train(tiny_library, tmp_path / "b", 0.3, "naive", "--stage1-cache", str(cache)) == 2
    err = capsys.readouterr().err.strip()
    assert str(entry) in err and "delete it" in err and len(err.splitlines()) == 1


def test_the_cache_is_for_disentangled_tmr_only(tiny_library, tmp_path, capsys):
    args = ["train", "--method", "dmr", "--data", str(tiny_library), "--split", "synthetic",
            "--out", str(tmp_path / "dmr"), "--stage1-cache", str(tmp_path / "cache")]
    assert main(args) == 2
    assert "--stage1-cache" in capsys.readouterr().err
