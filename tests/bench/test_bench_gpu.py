"""`dtmr bench gpu`: refused in one line without a CUDA device; its throughput and latency loop on the CPU (the
one way the CPU runs); on a CUDA device (skipped without one) a tiny run reports every figure."""

from __future__ import annotations

import json

import pytest
import torch

from dtmr.bench.gpu import measure_ways
from dtmr.cli import main

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_without_a_gpu_the_command_says_so(capsys):
    assert main(["bench", "gpu"]) == 2
    assert "needs a CUDA device" in capsys.readouterr().err


@pytest.mark.slow
def test_throughput_and_latency_on_the_one_way_the_cpu_runs():
    figures = measure_ways("small", 0.01, device="cpu", ways={"eager fp32": (False, "fp32")}, batches=("1", "auto"))
    assert figures["auto_batch"] == {"eager fp32": 32} and figures["parameters"] > 0
    assert set(figures["clips_per_s"]["eager fp32"]) == {"1", "auto"}
    assert all(rate > 0 for rate in figures["clips_per_s"]["eager fp32"].values())
    assert figures["latency_ms"]["eager fp32"] > 0


@cuda
def test_a_tiny_gpu_run_reports_every_figure(capsys):
    assert main(["bench", "gpu", "--preset", "small", "--seconds", "0.2", "--clips", "8", "--e2e-clips", "64",
                 "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for way in ("eager fp32", "graph fp32", "eager bf16", "graph bf16"):
        assert set(result["clips_per_s"][way]) == {"1", "256", "auto"} and result["latency_ms"][way] > 0
        assert result["auto_batch"][way] >= 1 and result["bytes_per_clip"][way] > 0
    assert all(d["released_mpjpe_mm"] >= 0 for d in result["bf16_difference"].values())
    assert result["end_to_end"]["clips_per_s"] > 0
