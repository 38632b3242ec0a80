"""`prepare_for_inference`: the served model computes the paper's function (parity), keeps its state dict, and is
what every serving path runs (checkpoint loading, the batch runner, the trainer)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

from dtmr.models import DisentangledTMR, DTMRConfig, prepare_for_inference
from dtmr.models.baselines.naive import NaiveRetargeter
from dtmr.models.checkpoints.checkpoint import build_model_from_checkpoint, load_checkpoint, save_checkpoint
from dtmr.models.serving.mixformer_paths import EVAL_CHUNK, FoldedSequential, ShiftedMaxPool
from dtmr.models.serving.runner import ModelRunner
from dtmr.models.serving.step_decoder import StepGeneration

DTMR_SOURCES = Path(__file__).resolve().parents[3] / "dtmr"


def paper_model(seed: int = 0, **overrides) -> DisentangledTMR:
    torch.manual_seed(seed)
    model = DisentangledTMR(DTMRConfig.preset("small", "ntu25", **overrides)).eval()
    with torch.no_grad():  # BatchNorms with non-trivial statistics, so that folding them is tested
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.normal_(0.0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
    return model


def clips(batch: int, seed: int, dtype=torch.float32) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (0.3 * torch.randn((batch, 64, 25, 3), generator=g)).to(dtype)


def served_paths(model) -> tuple[int, int, bool]:
    return (sum(type(m) is FoldedSequential for m in model.modules()),
            sum(type(m) is ShiftedMaxPool for m in model.modules()),
            isinstance(model.decoder.fast_generation, StepGeneration))


@pytest.mark.parametrize("output_head", ["joints", "kinematic"])
def test_the_prepared_model_computes_the_papers_function(output_head):
    """Parity in float64 (rounding is not amplified by the random-init decode loop): every path at once, on a
    batch larger than the chunk so the split is exercised; then the encoder in float32 within its rounding (a
    random-init decode loop amplifies float32 rounding in a few elements, with either step: docs/model.md)."""
    paper = paper_model(output_head=output_head).double()
    served = prepare_for_inference(copy.deepcopy(paper))
    assert served_paths(served)[0] > 0 and served_paths(served)[1] > 0 and served_paths(served)[2]
    assert not any(m.training for m in served.modules())  # the paths replace modules in the model's mode
    src, ref = clips(2 * EVAL_CHUNK + 1, 1, torch.float64), clips(2 * EVAL_CHUNK + 1, 2, torch.float64)
    with torch.inference_mode():
        expected = paper.retarget(src, ref)
        torch.testing.assert_close(served.retarget(src, ref), expected, atol=1e-9, rtol=0)
        paper32, served32, src32 = paper.float(), served.float(), src.float()
        encoded = paper32.encode_action(src32)
        torch.testing.assert_close(served32.encode_action(src32), encoded, rtol=1e-4,
                                   atol=1e-5 * encoded.abs().max().item())


def test_each_path_alone_keeps_the_function():
    paper = paper_model().double()
    src, ref = clips(6, 1, torch.float64), clips(6, 2, torch.float64)
    with torch.inference_mode():
        expected = paper.retarget(src, ref)
        for options in ({"fold_batchnorm": False}, {"shifted_max": False}, {"batch_chunk": None},
                        {"step_layers": False}):
            served = prepare_for_inference(copy.deepcopy(paper), **options)
            torch.testing.assert_close(served.retarget(src, ref), expected, atol=1e-9, rtol=0, msg=str(options))


def test_state_dict_and_training_are_unchanged():
    """Same keys and tensors; a checkpoint of either loads into the other; training mode computes the same loss
    and gradients (the paths act at inference; the generation fed back differs by rounding only)."""
    paper = paper_model().double()
    served = prepare_for_inference(copy.deepcopy(paper))
    assert list(served.state_dict()) == list(paper.state_dict())
    for key, value in paper.state_dict().items():
        assert torch.equal(served.state_dict()[key], value), key
    paper_model(seed=3).double().load_state_dict(served.state_dict())
    prepare_for_inference(paper_model(seed=3)).double().load_state_dict(paper.state_dict())
    src, ref = clips(3, 1, torch.float64), clips(3, 2, torch.float64)
    losses = []
    for model in (paper, served):
        model.train().zero_grad()
        torch.manual_seed(5)  # the same dropout draws
        loss = torch.nn.functional.mse_loss(model(src, ref, target=src, teacher_forcing=0.0), src)
        loss.backward()
        losses.append((loss.item(), [p.grad.clone() for p in model.parameters() if p.grad is not None]))
    assert losses[0][0] == pytest.approx(losses[1][0], rel=1e-9)
    for a, b in zip(losses[0][1], losses[1][1]):
        torch.testing.assert_close(a, b, atol=1e-8, rtol=1e-6)


def test_preparing_twice_and_models_without_the_paths():
    model = prepare_for_inference(paper_model())
    paths, generation = served_paths(model), model.decoder.fast_generation
    assert prepare_for_inference(model) is model and served_paths(model) == paths
    assert model.decoder.fast_generation is generation  # its derived layers are kept
    naive = NaiveRetargeter("ntu25")
    before = {k: v.clone() for k, v in naive.state_dict().items()}
    assert prepare_for_inference(naive) is naive
    assert all(torch.equal(naive.state_dict()[k], v) for k, v in before.items())
    assert not any(type(m) in (FoldedSequential, ShiftedMaxPool) for m in naive.modules())


def test_the_batch_runs_in_chunks_on_the_cpu_only():
    """`batch_chunk="auto"`: chunks where the weights are on the CPU; elsewhere (a GPU; here the meta device,
    which has no data) the whole batch at once, decided again when the moved model is prepared again."""
    model = prepare_for_inference(paper_model())
    assert model.action_encoder.mixformer.batch_chunk == EVAL_CHUNK
    prepare_for_inference(model.to("meta"))
    assert model.action_encoder.mixformer.batch_chunk is None
    assert prepare_for_inference(paper_model(), batch_chunk=2).action_encoder.mixformer.batch_chunk == 2


def test_every_serving_path_runs_the_prepared_model(tmp_path):
    """A model built from a checkpoint and one handed to the batch runner are prepared."""
    path = tmp_path / "model.pt"
    save_checkpoint(path, paper_model(), data={}, metrics={})
    loaded = build_model_from_checkpoint(load_checkpoint(path), source=path)
    assert served_paths(loaded)[2] and served_paths(loaded)[0] > 0
    runner = ModelRunner(paper_model(), torch.device("cpu"))
    assert served_paths(runner.model)[2] and served_paths(runner.model)[1] > 0
    for model in (loaded, runner.model):
        assert not any(m.training for m in model.modules())


def test_no_class_is_swapped_at_run_time():
    """Implementations are compared through `prepare_for_inference`, never by assigning `__class__`."""
    offenders = [str(p) for p in DTMR_SOURCES.rglob("*.py") if ".__class__ =" in p.read_text(encoding="utf-8")]
    assert not offenders
