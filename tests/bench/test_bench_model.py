"""`dtmr bench model`: its A/B variants compute the shipped function, and a tiny run reports every figure
with the context (GEMM peak, load average, share outside matrix products) that makes it readable elsewhere."""

from __future__ import annotations

import argparse
import json

import pytest
import torch

from dtmr.bench import model as bench
from dtmr.models import DisentangledTMR, DTMRConfig, prepare_for_inference
from dtmr.models.serving.mixformer_paths import FoldedSequential, ShiftedMaxPool


def small_model(dtype=torch.float64, **overrides) -> DisentangledTMR:
    torch.manual_seed(0)
    return DisentangledTMR(DTMRConfig.preset("small", "ntu25", **overrides)).eval().to(dtype)


def clips(batch: int, seed: int, dtype=torch.float64) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (0.3 * torch.randn((batch, 64, 25, 3), generator=g)).to(dtype)


@pytest.mark.parametrize("batch", [1, 3])
def test_decoder_variants_compute_the_shipped_generation(batch):
    """In float64 (no rounding amplified by the random-init loop): every variant is the same function."""
    model = prepare_for_inference(small_model())
    with torch.inference_mode():
        memory, identity = model.encode_action(clips(batch, 1)), model.encode_identity(clips(batch, 2))
        variants = bench.decoder_variants(model.decoder, batch, memory)
        expected = model.decoder.generate_cached(memory, identity)
        assert {"plain step (the paper's modules)", "shipped step"} <= set(variants) and len(variants) == 5
        for name, generate in variants.items():
            torch.testing.assert_close(generate(memory, identity), expected, atol=1e-10, rtol=0, msg=name)


def test_float32_decoder_variants_run_on_both_step_paths():
    """addmm at batch 1, oneDNN's packed linear at batch 2 (where usable; a decoder wide enough to pack)."""
    model = small_model(torch.float32, decoder_dim=256, decoder_ffn=512)
    with torch.inference_mode():
        for batch in (1, 2):
            memory, identity = model.encode_action(clips(batch, 1, torch.float32)), model.encode_identity(
                clips(batch, 2, torch.float32))
            for name, generate in bench.decoder_variants(model.decoder, batch, memory).items():
                out = generate(memory, identity)
                assert out.shape == (batch, 64, 25, 3) and torch.isfinite(out).all(), name


def test_the_plain_model_is_the_same_function():
    model = small_model()
    src, ref = clips(2, 1), clips(2, 2)
    with torch.inference_mode():
        variants = bench.end_to_end_variants(model, src, ref, recomputation=True)
        expected = model.retarget(src, ref)
        for name, retarget in variants.items():
            torch.testing.assert_close(retarget(), expected, atol=1e-9, rtol=0, msg=name)
    assert model.decoder.fast_generation is None  # the variants prepared copies, not the model


def test_encoder_variants_compute_the_shipped_encoder():
    model = small_model()
    src = clips(9, 1)
    with torch.inference_mode():
        expected = model.encode_action(src)
        variants = bench.encoder_variants(model)
        assert len(variants) == 5
        for name, encode in variants.items():
            torch.testing.assert_close(encode(src), expected, atol=1e-10, rtol=1e-10, msg=name)
    mixformer = model.action_encoder.mixformer  # the variants prepared copies, not the model
    assert mixformer.batch_chunk is None
    assert not any(isinstance(m, (FoldedSequential, ShiftedMaxPool)) for m in mixformer.modules())


def test_outside_matmul_share():
    a, b = torch.randn(256, 256), torch.randn(256, 256)
    assert bench.outside_matmul_share(lambda: a @ b) < 0.5
    assert bench.outside_matmul_share(lambda: [a.sin() for _ in range(20)]) > 0.9


@pytest.fixture(scope="module")
def tiny_run() -> dict:
    return bench.run_model_benchmark("small", threads=1, repeats=1, batches=(1, 2), matmul_size=128, ab=True)


@pytest.mark.slow
def test_a_tiny_run_reports_every_figure_with_its_context(tiny_run):
    result = tiny_run
    assert len(result["load_average_at_start"]) == 3 and result["cpu_count"] >= 1 and result["batches"] == [1, 2]
    assert result["matmul_peak_gflops_one_thread"] == result["matmul_peak_gflops"] > 0  # one thread: measured once
    for key in ("clip_cached", "clip_uncached", "batch1", "batch2", "decoder_batch2"):
        assert 0.0 <= result[f"outside_matmul_share_{key}"] <= 1.0, key
    for table in (*result["decoder_variants"].values(), *result["encoder_variants"].values(),
                  *result["end_to_end_variants"].values()):
        first = next(iter(table.values()))
        assert first["speedup"] == 1.0
        assert all(row["ms"] > 0 and 0.0 <= row["outside_matmul_share"] <= 1.0 for row in table.values())
    assert set(result["decoder_variants"]) == {"batch1", "batch2"} and set(result["encoder_variants"]) == {"batch2"}
    assert set(result["end_to_end_variants"]) == {"batch1", "batch2"}
    assert set(result["end_to_end_variants"]["batch1"]) == {"plain", "shipped", "plain, recomputation",
                                                           "shipped, recomputation"}
    assert result["kv_speedup_batch1_plain"] > 1 and result["kv_speedup_batch1_shipped"] > 1
    json.dumps(result)


@pytest.mark.slow
def test_the_text_report_prints_the_context_and_the_tables(tiny_run, monkeypatch, capsys):
    monkeypatch.setattr(bench, "run_model_benchmark", lambda *args, **kwargs: tiny_run)
    args = argparse.Namespace(preset="small", topology="ntu25", threads=1, repeats=1, json=False)
    assert bench.run(args) == 0
    out = capsys.readouterr().out
    assert "load average at start" in out and "GEMM peak" in out and "at one thread" in out
    assert "A/B decoder, cached generation, batch2" in out and "A/B action encoder, batch2" in out
    assert "plain step (the paper's modules)" in out and "shipped step" in out
    assert "A/B end to end (retarget), batch1" in out
    assert "KV-cache speed-up at batch 1 in the A/B" in out
