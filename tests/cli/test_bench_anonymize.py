"""`dtmr bench anonymize`: a tiny run prints one JSON object with clips/s at batch 1/32/auto, the share of the
time outside the model's forward, 1 vs N processes, the matmul peak and the load average at the start."""

from __future__ import annotations

import json

import pytest

from dtmr.cli import main


@pytest.mark.slow
def test_a_tiny_run_reports_every_figure_as_json(capsys):
    assert main(["bench", "anonymize", "--presets", "small", "--clips", "4", "--processes", "2", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["load_average_at_start"]) == 3 and result["matmul_peak_gflops"] > 0
    assert (result["clips"], result["processes"], result["threads"]) == (4, 2, 1)
    figures = result["presets"]["small"]
    assert set(figures["clips_per_s"]) == set(figures["share_outside_forward"]) == {"1", "32", "auto"}
    assert all(rate > 0 for rate in figures["clips_per_s"].values())
    assert all(0 < share < 1 for share in figures["share_outside_forward"].values())
    assert figures["process_chunk"] == 1 and set(figures["clips_per_s_processes"]) == {"1", "2"}
    assert figures["process_speedup"] == pytest.approx(
        figures["clips_per_s_processes"]["2"] / figures["clips_per_s_processes"]["1"])
    running = figures["clips_per_s_processes_running"]  # 4 clips against 2: noise may make it unmeasurable
    assert set(running) == {"1", "2"} and all(rate is None or rate > 0 for rate in running.values())
    assert figures["process_speedup_running"] is None or figures["process_speedup_running"] == pytest.approx(
        running["2"] / running["1"])
    assert 0 < figures["process_ceiling"] <= 2.5  # two processes at once: about 2x at most, with timing noise
    assert figures["auto_over_batch1"] == pytest.approx(figures["clips_per_s"]["auto"] / figures["clips_per_s"]["1"])


def test_an_unknown_preset_is_one_line(capsys):
    assert main(["bench", "anonymize", "--presets", "small,huge"]) == 2
    assert "--presets: choose among small, paper" in capsys.readouterr().err


def test_the_ceiling_measurement_stops_at_a_dead_process_instead_of_waiting():
    import queue
    import types

    from dtmr.bench.anonymize import _next_time
    from dtmr.errors import DtmrError

    reported = queue.Queue()
    reported.put(1.5)
    alive, dead = types.SimpleNamespace(exitcode=None), types.SimpleNamespace(exitcode=1)
    assert _next_time(reported, [alive]) == 1.5
    with pytest.raises(DtmrError, match="a process of the ceiling measurement stopped"):
        _next_time(reported, [alive, dead])


def test_the_rate_once_running_is_the_extra_clips_over_the_extra_time():
    from dtmr.bench.anonymize import _running_rate

    assert _running_rate(1440, 12.0) == 120.0
    assert _running_rate(2, 0.0) is None and _running_rate(2, -0.1) is None  # the longer run was not longer
