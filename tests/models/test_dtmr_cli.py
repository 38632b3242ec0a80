"""`dtmr model summary` and `dtmr bench model`."""

from __future__ import annotations

import json

import pytest

from dtmr.bench.model import run_model_benchmark
from dtmr.cli import build_parser, main


def test_summary_json(capsys):
    assert main(["model", "summary", "--preset", "small", "--topology", "uiprmd22", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["preset"] == "small" and summary["topology"] == "uiprmd22" and summary["num_joints"] == 22
    parts = ("action_encoder", "identity_encoder", "decoder")
    assert all(isinstance(summary[k], int) and summary[k] > 0 for k in (*parts, "mixformer", "total"))
    assert summary["total"] == sum(summary[k] for k in parts)
    assert summary["mixformer"] < summary["action_encoder"]


def test_summary_table_compares_with_the_paper(capsys):
    assert main(["model", "summary"]) == 0
    out = capsys.readouterr().out
    assert "22.7M" in out and "MixFormer" in out and "total" in out


def test_summary_unknown_topology_is_one_line_error(capsys):
    assert main(["model", "summary", "--topology", "nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown topology 'nope'" in err and "Traceback" not in err


def test_bench_model_options_are_registered():
    args = build_parser().parse_args(["bench", "model", "--preset", "small", "--threads", "2", "--json"])
    assert args.preset == "small" and args.threads == 2 and args.json and callable(args.func)


def test_benchmark_reports_every_figure():
    result = run_model_benchmark("small", repeats=1, batches=(1, 2), matmul_size=256)
    for key in ("matmul_peak_gflops", "clip_ms_cached", "clip_ms_uncached", "kv_speedup_batch1",
                "clips_per_s_batch1", "clips_per_s_batch2", "decoder_gflops_batch2", "decoder_peak_fraction_batch2"):
        assert result[key] > 0, key
    assert result["kv_speedup_batch1"] == pytest.approx(result["clip_ms_uncached"] / result["clip_ms_cached"])
    if result["pmr_note"] is None:
        assert result["pmr_clips_per_s_batch2"] > 0
    else:
        assert result["pmr_clips_per_s_batch2"] is None
    json.dumps(result)
