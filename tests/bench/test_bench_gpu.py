"""`dtmr bench gpu`: refused in one line without a CUDA device; every figure bounded in wall time (a fake clock and
fake slow runners, no GPU), printed as soon as it is measured, `--quick`'s settings; its throughput and latency loop
on the CPU (the one way the CPU runs); on a CUDA device (skipped without one) a tiny run reports every figure."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest
import torch

from dtmr.bench import gpu
from dtmr.bench.gpu import QUICK, FULL, Settings, bounded_auto_batch, end_to_end_clips, measure_ways, way_lines
from dtmr.cli import build_parser, main

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
TOPOLOGY = SimpleNamespace(num_joints=25)


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class ClockedRunner:
    """A runner whose batch takes `per_batch` seconds of a fake clock (the first `first` seconds: a warm-up with
    a graph's capture), collected at once."""

    def __init__(self, clock: FakeClock, per_batch: float, first: float | None = None):
        self.model = SimpleNamespace(topology=TOPOLOGY)
        self.clock, self.per_batch, self.first, self.batches = clock, per_batch, first, 0

    def submit(self, src, ref):
        self.clock.now += self.first if self.first is not None and self.batches == 0 else self.per_batch
        self.batches += 1
        return SimpleNamespace(result=lambda: src)


@pytest.mark.parametrize("per_batch, seconds, budget", [
    (3.0, 0.5, 10.0),    # a batch longer than `seconds`: one timed batch
    (2.0, 100.0, 10.0),  # `seconds` past the budget: the budget ends it
    (0.1, 1.0, 10.0),    # a fast batch: `seconds` of batches
])
def test_a_throughput_figure_stays_within_its_budget_and_reports_what_it_timed(per_batch, seconds, budget):
    clock = FakeClock()
    runner = ClockedRunner(clock, per_batch)
    figure = gpu._throughput(runner, 4, seconds, budget, clock=clock)
    assert clock.now <= budget and runner.batches == figure["batches"] + 1 >= 2
    assert figure["warmup_s"] == pytest.approx(per_batch)
    assert figure["seconds"] == pytest.approx(clock.now - per_batch)
    assert figure["clips_per_s"] == pytest.approx(4 / per_batch)
    if per_batch < seconds < budget:
        assert figure["seconds"] >= seconds


def test_a_batch_whose_warm_up_takes_over_half_the_budget_is_too_slow_after_that_one_batch():
    clock = FakeClock()
    runner = ClockedRunner(clock, per_batch=1.0, first=6.0)
    figure = gpu._throughput(runner, 256, 2.0, 10.0, clock=clock)
    assert runner.batches == 1 and clock.now == 6.0
    assert figure == {"batch": 256, "warmup_s": 6.0, "batches": 0, "seconds": 0.0, "clips_per_s": None}
    assert "too slow: 6.0 s for the warm-up batch" in gpu._throughput_line("graph fp32", "256", figure)


def test_the_latency_stays_within_its_budget_and_a_slow_first_run_is_too_slow():
    clock = FakeClock()
    figure = gpu._latency(ClockedRunner(clock, per_batch=0.3), budget=2.0, clock=clock)
    assert clock.now <= 2.0 and figure["runs"] == 3 and figure["median_ms"] == pytest.approx(300)
    assert figure["warmup_s"] == pytest.approx(0.9)
    clock = FakeClock()
    runner = ClockedRunner(clock, per_batch=1.5)
    assert gpu._latency(runner, budget=2.0, clock=clock) == {"warmup_s": 1.5, "runs": 0, "median_ms": None}
    assert runner.batches == 1
    clock = FakeClock()
    assert gpu._latency(ClockedRunner(clock, per_batch=0.001), budget=2.0, clock=clock)["runs"] == gpu.LATENCY_RUNS


def test_the_auto_batch_is_what_memory_allows_capped_by_time_at_the_largest_fixed_batch_s_pace():
    # 1000 clips/s at batch 256 and a 8 s budget: a quarter of it runs 2000 clips
    assert bounded_auto_batch(16384, {1: 50.0, 256: 1000.0}, 8.0) == {"memory": 16384, "time_cap": 2000,
                                                                      "batch": 2000}
    assert bounded_auto_batch(1024, {1: 50.0, 256: 1000.0}, 8.0)["batch"] == 1024
    assert bounded_auto_batch(16384, {1: 50.0, 256: 130.0}, 8.0)["batch"] == 256  # 260 tiled to 256
    assert bounded_auto_batch(16384, {1: 50.0, 256: None}, 8.0)["batch"] == 96  # batch 256 too slow: batch 1's pace
    assert bounded_auto_batch(16384, {256: None}, 8.0)["batch"] is None
    assert bounded_auto_batch(16384, {}, 8.0)["batch"] is None


def test_the_end_to_end_run_is_sized_by_the_measured_clips_per_second():
    throughput = {"graph fp32": {"256": {"clips_per_s": 500.0}, "auto": {"clips_per_s": 129.0}},
                  "graph bf16": {"auto": {"clips_per_s": 9000.0}}}
    assert end_to_end_clips(throughput, 8192, 8.0) == 1032  # graph fp32 at auto: 129 clips/s for 8 s
    assert end_to_end_clips({"graph bf16": throughput["graph bf16"]}, 8192, 8.0) == 8192
    assert end_to_end_clips({"graph fp32": {"auto": {"clips_per_s": None}}}, 8192, 8.0) is None


class SleepingModel:
    topology = TOPOLOGY

    def to(self, device):
        return self

    def parameters(self):
        return [torch.zeros(10)]


@pytest.mark.timeout(60)
def test_slow_ways_finish_within_the_bound_and_every_figure_is_reported_as_it_is_measured(monkeypatch):
    """A runner whose batch takes longer than `seconds` (sleeps: 0.02 s + 0.1 ms a clip; under a graph 0.15 s, a
    too slow warm-up for a 0.2 s budget): each figure within about its budget, each line reported before the next
    figure's first batch."""
    events = []

    class SleepingRunner:
        def __init__(self, model, device, precision, graph):
            self.model, self.graph = model, graph

        def auto_batch(self, largest):
            return largest

        def submit(self, src, ref):
            events.append(("batch", len(src)))
            time.sleep(0.15 if self.graph else 0.02 + 1e-4 * len(src))
            return SimpleNamespace(result=lambda: src)

    monkeypatch.setattr("dtmr.models.serving.runner.ModelRunner", SleepingRunner)
    monkeypatch.setattr(gpu, "_untrained", lambda preset: SleepingModel())
    ways = {"eager fp32": (False, "fp32"), "graph fp32": (True, "fp32")}
    budget = 0.2
    start = time.perf_counter()
    result = measure_ways("paper", 0.01, device="cpu", ways=ways, batches=("256", "auto"), budget=budget,
                          report=lambda line: events.append(("line", line)))
    wall = time.perf_counter() - start
    assert wall < 2 * 3 * budget  # 2 ways of 3 figures, each within about its budget

    eager = result["throughput"]["eager fp32"]
    assert eager["256"]["batches"] >= 1 and eager["256"]["clips_per_s"] > 0
    auto = result["auto_batch"]["eager fp32"]
    assert auto["memory"] == 16384 and auto["batch"] == auto["time_cap"] < 16384  # capped by time, not memory
    assert eager["auto"]["batch"] == auto["batch"] and eager["auto"]["clips_per_s"] > 0
    assert result["latency"]["eager fp32"]["runs"] >= 1
    graph = result["throughput"]["graph fp32"]
    assert graph["256"]["clips_per_s"] is None and graph["256"]["warmup_s"] > budget / 2
    assert graph["auto"]["batch"] is None  # nothing measured to size it: not run at all
    assert result["latency"]["graph fp32"]["median_ms"] is None

    lines = [text for kind, text in events if kind == "line"]
    assert lines == way_lines(result)
    # streamed: the line of a figure comes before the first batch of the next figure
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "line"  # the model line, before any batch
    first_auto = events.index(("batch", auto["batch"]))
    assert ("line", lines[1]) in events[:first_auto] and lines[1].startswith("  eager fp32  batch 256:")
    graph_lines = [k for k, (kind, text) in enumerate(events) if kind == "line" and "graph fp32" in text]
    assert [events[k][1].split(":")[0].strip() for k in graph_lines] == [
        "graph fp32  batch 256", "graph fp32  batch auto", "graph fp32  one clip"]
    assert events[graph_lines[0] - 1][0] == "batch" and events[graph_lines[1] - 1][0] == "line"  # auto: no batch
    assert "not measured: no smaller batch" in events[graph_lines[1]][1]


def test_quick_parses_and_selects_its_settings_and_options_still_override():
    def settings(*options):
        return gpu.settings_from(build_parser().parse_args(["bench", "gpu", *options]))

    assert settings() == FULL and settings("--quick") == QUICK
    assert settings("--quick", "--seconds", "0.5", "--e2e-clips", "0") == Settings(
        ways=("graph fp32", "graph bf16"), batches=("256", "auto"), seconds=0.5, budget=QUICK.budget,
        clips=QUICK.clips, e2e_clips=0)
    assert settings("--budget", "5").budget == 5.0
    # under 2 minutes: the way figures and the end-to-end run bounded at about a minute, the rest set-up
    assert QUICK.bound_s() == (2 * 3 + 1) * 8.0 <= 60
    assert FULL.bound_s() == (4 * 4 + 1) * 20.0
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "gpu", "--budget", "0"])


def test_the_figures_go_to_stderr_as_they_come_and_the_json_to_stdout_at_the_end(monkeypatch, capsys):
    printed_before_the_end = []

    def fake_benchmark(settings, preset, models, report):
        report("first figure")
        printed_before_the_end.append(capsys.readouterr())
        return {"mode": "quick" if settings == QUICK else "full"}

    monkeypatch.setattr(gpu, "run_gpu_benchmark", fake_benchmark)
    assert main(["bench", "gpu", "--quick", "--json"]) == 0
    assert printed_before_the_end[0].err == "first figure\n" and printed_before_the_end[0].out == ""
    assert json.loads(capsys.readouterr().out) == {"mode": "quick"}
    assert main(["bench", "gpu"]) == 0
    assert printed_before_the_end[1].out == "first figure\n" and capsys.readouterr().out == ""


def test_a_run_reports_each_part_as_it_comes_and_its_json_reads_back_to_the_same_lines(monkeypatch):
    """The run around the way figures (a CUDA device faked; the figures, the bf16 distances and the end-to-end
    run canned): the end-to-end run sized by graph fp32's auto clips/s, the lines streamed in the order
    print_summary gives them back from the JSON."""
    calls = []
    way_figures = {"model_note": "untrained small DisentangledTMR (timing only)", "parameters": 1000,
                   "auto_batch": {"graph fp32": {"memory": 16384, "time_cap": 2000, "batch": 2000}},
                   "bytes_per_clip": {"graph fp32": 4096},
                   "throughput": {"graph fp32": {
                       "256": {"batch": 256, "warmup_s": 0.5, "batches": 3, "seconds": 1.1, "clips_per_s": 700.0},
                       "auto": {"batch": 2000, "warmup_s": 2.0, "batches": 1, "seconds": 1.6, "clips_per_s": 1250.0}}},
                   "latency": {"graph fp32": {"warmup_s": 0.1, "runs": 50, "median_ms": 4.2}}}

    def fake_ways(preset, seconds, ways, batches, budget, report):
        calls.append(("ways", tuple(ways), batches, seconds, budget))
        for line in way_lines(way_figures):
            report(line)
        return way_figures

    def fake_difference(path, sources, references):
        calls.append(("bf16", len(sources)))
        return {"full_mpjpe_mm": 0.2, "released_mpjpe_mm": 0.1, "released_max_mm": 0.9}

    def fake_end_to_end(clips, preset):
        calls.append(("e2e", clips))
        return {"clips": clips, "chunk": gpu.E2E_CHUNK, "seconds": 12.0, "clips_per_s": clips / 12.0}

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda: "Fake GPU")
    monkeypatch.setattr(gpu, "measure_ways", fake_ways)
    monkeypatch.setattr(gpu, "release_difference", fake_difference)
    monkeypatch.setattr(gpu, "end_to_end", fake_end_to_end)
    monkeypatch.setattr("dtmr.bench.anonymize.write_untrained_model", lambda folder, preset: folder / "small.pt")
    lines = []
    result = gpu.run_gpu_benchmark(QUICK, "small", report=lines.append)
    assert calls == [("ways", ("graph fp32", "graph bf16"), ("256", "auto"), 1.0, 8.0), ("bf16", 64), ("bf16", 64),
                     ("e2e", 2048)]  # 1250 clips/s for 8 s: all 2048
    assert result["mode"] == "quick" and result["bound_s"] == QUICK.bound_s()
    assert set(result["bf16_difference"]) == {"dtmr_small_beta0.2.pt", "untrained small"}
    assert lines == gpu.summary_lines(json.loads(json.dumps(result)))
    assert "quick: graph fp32, graph bf16; batches 256, auto" in lines[0] and lines[-1].startswith("  done in")
    assert "batch auto = 2000, capped from 16384 by time: 1250.0 clips/s" in lines[3]
    assert "2048 clips, chunks of 4096" in lines[-2]

    way_figures["throughput"]["graph fp32"]["auto"]["clips_per_s"] = 100.0  # 800 clips in 8 s
    calls.clear()
    result = gpu.run_gpu_benchmark(QUICK, "small")
    assert calls[-1] == ("e2e", 800) and "800 clips (of 2048: what the budget allows)" in gpu.summary_lines(result)[-2]


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_without_a_gpu_the_command_says_so(capsys):
    assert main(["bench", "gpu", "--quick"]) == 2
    captured = capsys.readouterr()
    assert "needs a CUDA device" in captured.err and captured.out == ""


@pytest.mark.slow
def test_throughput_and_latency_on_the_one_way_the_cpu_runs():
    lines = []
    figures = measure_ways("small", 0.01, device="cpu", ways={"eager fp32": (False, "fp32")}, batches=("1", "auto"),
                           budget=2.0, report=lines.append)
    auto = figures["auto_batch"]["eager fp32"]
    assert auto["memory"] == 32 and auto["batch"] == min(32, auto["time_cap"]) and figures["parameters"] > 0
    assert set(figures["throughput"]["eager fp32"]) == {"1", "auto"}
    assert all(f["clips_per_s"] > 0 for f in figures["throughput"]["eager fp32"].values())
    assert figures["throughput"]["eager fp32"]["auto"]["batch"] == auto["batch"]
    assert figures["latency"]["eager fp32"]["median_ms"] > 0
    assert lines == way_lines(figures)


@cuda
@pytest.mark.timeout(110)
def test_a_tiny_gpu_run_reports_every_figure_within_its_bound(capsys):
    assert main(["bench", "gpu", "--preset", "small", "--seconds", "0.2", "--budget", "2", "--clips", "8",
                 "--e2e-clips", "64", "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    for way in ("eager fp32", "graph fp32", "eager bf16", "graph bf16"):
        assert set(result["throughput"][way]) == {"1", "256", "auto"} and result["latency"][way]["median_ms"] > 0
        assert result["auto_batch"][way]["batch"] >= 1 and result["bytes_per_clip"][way] > 0
    assert all(d["released_mpjpe_mm"] >= 0 for d in result["bf16_difference"].values())
    assert result["end_to_end"]["clips_per_s"] > 0
    expected = gpu.summary_lines(result)
    assert [line for line in captured.err.splitlines() if line in expected] == expected  # torch may warn between
    assert result["bound_s"] == (4 * 4 + 1) * 2.0 and result["wall_s"] < result["bound_s"] + 60  # 60 s: set-up
