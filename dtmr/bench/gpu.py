"""`dtmr bench gpu`: the CUDA inference path of `dtmr anonymize`, in one run so the figures are comparable.

- Throughput: clips/s at model batch 1, 256 and auto, for each way of running the model: eager or with the
  cached decode replayed from a CUDA graph, float32 or bf16 autocast. Measured through `ModelRunner` as
  `dtmr anonymize` uses it: normalized clips in host memory, pinned buffers and non-blocking copies, two
  batches in flight, results back in host memory.
- Latency: one clip submitted and collected, the median of up to LATENCY_RUNS, for each way.
- The bf16 release against the float32 one: the Anonymizer on `--clips` demo clips (each against a clip of
  another subject), the same batches at both precisions, the mean per-joint distance (MPJPE, mm) between
  the two released clips and between the two full retargets D, for each `--model` checkpoint (default: the
  bundled `small` model) and the untrained preset.
- End to end: `dtmr anonymize` of demo clips (repeated) on the GPU, graph and float32, chunks of E2E_CHUNK
  clips, `--batch auto`: what the CPU side (reading, normalizing, writing) leaves of it.

Every throughput and latency figure is bounded in wall time by `--budget` (see `_throughput`, `_latency`), the
auto batch by what the per-clip time of the largest fixed batch allows in a share of it (`bounded_auto_batch`)
and the end-to-end run by what the measured clips/s do in it (`end_to_end_clips`), so a run's length is known
before it starts (`Settings.bound_s`) whatever the model's speed. Each figure is printed as soon as it is
measured (on stderr with `--json`, whose one object comes at the end). `--quick` is the run meant for a lent
machine (QUICK). The throughput and latency model is an untrained DisentangledTMR of `--preset` (default
paper): weights do not change the time. Needs a CUDA device; scripts/gpu_inference_bench.sh runs it on a lent
GPU machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from collections import deque
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

from ..argtypes import positive_float, positive_int
from ..models.precision import PRECISIONS

BATCHES = ("1", "256", "auto")
#: (graph, precision) per way of running the model
WAYS = {"eager fp32": (False, "fp32"), "graph fp32": (True, "fp32"), "eager bf16": (False, "bf16"),
        "graph bf16": (True, "bf16")}
LATENCY_RUNS = 50
LATENCY_WARM_UP_RUNS = 3
#: the share of `--budget` one batch of the auto batch is expected to take (at the per-clip time of the largest
#: fixed batch measured before it): the warm-up and at least one timed batch then fit in the budget
AUTO_BATCH_SHARE = 0.25
E2E_CHUNK = 4096
TOPOLOGY = "ntu25"

Report = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class Settings:
    """What one run measures, and how long each figure may take."""

    ways: tuple[str, ...]
    batches: tuple[str, ...]
    #: timed seconds of batches per throughput figure (after its warm-up batch)
    seconds: float
    #: the most seconds one throughput or latency figure may take, warm-up included; also the end-to-end run's
    budget: float
    #: demo clips of the bf16-vs-fp32 comparison
    clips: int
    #: the most clips of the end-to-end run (0 skips it)
    e2e_clips: int

    def bound_s(self) -> float:
        """About the longest the way figures and the end-to-end run take together, whatever the model's speed
        (each at most about `budget`); set-up (CUDA start, building models) and the bf16 comparison, sized by
        its clips, come on top."""
        figures = len(self.ways) * (len(self.batches) + 1) + (1 if self.e2e_clips else 0)
        return figures * self.budget


FULL = Settings(ways=tuple(WAYS), batches=BATCHES, seconds=2.0, budget=20.0, clips=360, e2e_clips=8192)
#: meant for a lent machine, under 2 minutes: the two graph ways (what `dtmr anonymize --cuda-graph` runs),
#: batch 256 (which sizes auto) and auto (batch 1's figure is the latency's), 64 clips compared
QUICK = Settings(ways=("graph fp32", "graph bf16"), batches=("256", "auto"), seconds=1.0, budget=8.0, clips=64,
                 e2e_clips=2048)



def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "gpu", help="CUDA inference: clips/s at batch 1/256/auto, single-clip latency, eager vs CUDA graph, "
                    "fp32 vs bf16 and the bf16 release's distance to fp32, each figure printed as it comes "
                    "(needs a GPU)")
    parser.add_argument("--quick", action="store_true",
                        help=f"the run for a lent machine, under 2 minutes: {', '.join(QUICK.ways)}; batches "
                             f"{', '.join(QUICK.batches)}; --seconds {QUICK.seconds:g} --budget {QUICK.budget:g} "
                             f"--clips {QUICK.clips} --e2e-clips {QUICK.e2e_clips} (each option still overrides)")
    parser.add_argument("--preset", default="paper", choices=("paper", "small"),
                        help="the untrained model timed (default paper)")
    parser.add_argument("--seconds", type=positive_float, default=None, metavar="S",
                        help=f"timed seconds of batches per throughput figure (default {FULL.seconds:g})")
    parser.add_argument("--budget", type=positive_float, default=None, metavar="S",
                        help=f"the most seconds one figure takes, warm-up included (default {FULL.budget:g}): "
                             "a batch whose warm-up takes over half of it is reported too slow")
    parser.add_argument("--clips", type=positive_int, default=None, metavar="N",
                        help=f"demo clips of the bf16-vs-fp32 comparison (default {FULL.clips})")
    parser.add_argument("--model", action="append", default=None, metavar="CKPT",
                        help="checkpoint of the bf16-vs-fp32 comparison (repeatable; default: the bundled small model)")
    parser.add_argument("--e2e-clips", type=int, default=None, metavar="N",
                        help=f"the most clips of the end-to-end dtmr anonymize run (default {FULL.e2e_clips}; "
                             "fewer when the measured clips/s do not run them within --budget; 0 skips it)")
    parser.add_argument("--json", action="store_true",
                        help="print the results as one JSON object at the end (the figures go to stderr as they come)")
    parser.set_defaults(func=run)


def settings_from(args: argparse.Namespace) -> Settings:
    """QUICK with --quick, FULL without, with each option given in place of its value."""
    base = QUICK if args.quick else FULL
    given = {name: getattr(args, name) for name in ("seconds", "budget", "clips", "e2e_clips")
             if getattr(args, name) is not None}
    return dataclasses.replace(base, **given)


def _untrained(preset: str):
    import torch

    from ..models import DisentangledTMR, DTMRConfig

    torch.manual_seed(0)
    return DisentangledTMR(DTMRConfig.preset(preset, TOPOLOGY)).eval()


def _random_clips(batch: int, joints: int):
    import numpy as np

    rng = np.random.default_rng(0)
    drawn = [rng.normal(0, 0.3, (min(batch, 256), 64, joints, 3)).astype(np.float32) for _ in range(2)]
    # repeated up to the batch: drawing 16384 clips takes seconds, and their values do not change the time
    return [np.resize(clips, (batch, 64, joints, 3)) for clips in drawn]


def _throughput(runner, batch: int, seconds: float, budget: float, clock=time.perf_counter) -> dict:
    """clips/s of back-to-back batches, two in flight, within about `budget` seconds: one warm-up batch (on a
    graph runner: with the capture), then timed batches until `seconds` have passed, at least one, starting no
    batch that would end past the budget at the pace measured so far. A warm-up over half the budget leaves
    no room for a timed batch as long: the figure is then too slow (`clips_per_s` None)."""
    src, ref = _random_clips(batch, runner.model.topology.num_joints)
    start = clock()
    runner.submit(src, ref).result()
    warmup = clock() - start
    figure = {"batch": batch, "warmup_s": warmup, "batches": 0, "seconds": 0.0, "clips_per_s": None}
    if warmup > budget / 2:
        return figure
    in_flight: deque = deque()
    submitted = collected = 0
    start = clock()
    while True:
        elapsed = clock() - start
        pace = elapsed / collected if collected else warmup
        if submitted and (elapsed >= seconds or warmup + elapsed + (len(in_flight) + 1) * pace > budget):
            break
        in_flight.append(runner.submit(src, ref))
        submitted += 1
        if len(in_flight) == 2:
            in_flight.popleft().result()
            collected += 1
    while in_flight:
        in_flight.popleft().result()
    wall = clock() - start
    return figure | {"batches": submitted, "seconds": wall, "clips_per_s": submitted * batch / wall}


def _latency(runner, budget: float, clock=time.perf_counter) -> dict:
    """One clip submitted and collected: the median of up to LATENCY_RUNS runs after up to LATENCY_WARM_UP_RUNS,
    within about `budget` seconds (at least one timed run; none when the first run takes over half of it)."""
    src, ref = _random_clips(1, runner.model.topology.num_joints)

    def one_run() -> float:
        started = clock()
        runner.submit(src, ref).result()
        return clock() - started

    start = clock()
    first = one_run()
    figure = {"warmup_s": first, "runs": 0, "median_ms": None}
    if first > budget / 2:
        return figure
    for _ in range(LATENCY_WARM_UP_RUNS - 1):
        if clock() - start + first > budget / 2:
            break
        one_run()
    figure["warmup_s"] = clock() - start
    times: list[float] = []
    while len(times) < LATENCY_RUNS and not (times and clock() - start + statistics.median(times) > budget):
        times.append(one_run())
    return figure | {"runs": len(times), "median_ms": 1000 * statistics.median(times)}


def bounded_auto_batch(memory_batch: int, rates: dict[int, float | None], budget: float) -> dict:
    """The auto batch of the bench: what memory allows (`ModelRunner.auto_batch`, as `dtmr anonymize --batch
    auto` picks it), capped so that one batch takes about AUTO_BATCH_SHARE of `budget` at the per-clip time of
    the largest fixed batch measured (`rates`: clips/s per batch, None where too slow). Per-clip time falls as
    the batch grows, so the capped batch takes at most that. None when no fixed batch was measured."""
    from ..models.serving.runner import tile_batch

    measured = {batch: rate for batch, rate in rates.items() if rate}
    if not measured:
        return {"memory": memory_batch, "time_cap": None, "batch": None}
    largest = max(measured)
    time_cap = tile_batch(int(AUTO_BATCH_SHARE * budget * measured[largest]))
    return {"memory": memory_batch, "time_cap": time_cap, "batch": min(memory_batch, time_cap)}


def measure_ways(preset: str, seconds: float, device: str = "cuda", ways: dict = WAYS,
                 batches: tuple[str, ...] = BATCHES, budget: float = FULL.budget, report: Report | None = None
                 ) -> dict:
    """Throughput per batch and latency for every way, with the auto batch (on CUDA: and the memory per clip);
    `report` gets each figure's line (`summary_lines`) as soon as it is measured."""
    import torch

    from ..models.serving.runner import LARGEST_BATCH, ModelRunner

    report = report or (lambda line: None)
    device = torch.device(device)
    out: dict = {"model_note": f"untrained {preset} DisentangledTMR (timing only)", "auto_batch": {},
                 "bytes_per_clip": {}, "throughput": {}, "latency": {}}
    if device.type == "cuda":
        from ..models.serving.runner import probe_free_bytes

        out["free_bytes"] = probe_free_bytes(device)
    for way, (graph, precision) in ways.items():
        model = _untrained(preset).to(device)  # one model per way: nothing cached by one way reaches another
        if "parameters" not in out:
            out["parameters"] = sum(p.numel() for p in model.parameters())
            report(_model_line(out))
        auto_runner = ModelRunner(model, device, precision, graph)
        memory_batch = auto_runner.auto_batch(LARGEST_BATCH)
        if device.type == "cuda":
            out["bytes_per_clip"][way] = auto_runner.bytes_per_clip()
        figures = out["throughput"][way] = {}
        for label in batches:
            if label == "auto":
                rates = {f["batch"]: f["clips_per_s"] for f in figures.values()}
                auto = out["auto_batch"][way] = bounded_auto_batch(memory_batch, rates, budget)
                batch = auto["batch"]
            else:
                batch = int(label)
            figures[label] = (_throughput(ModelRunner(model, device, precision, graph), batch, seconds, budget)
                              if batch is not None else
                              {"batch": None, "warmup_s": None, "batches": 0, "seconds": 0.0, "clips_per_s": None})
            report(_throughput_line(way, label, figures[label], out["auto_batch"].get(way)))
        out["latency"][way] = _latency(ModelRunner(model, device, precision, graph), budget)
        report(_latency_line(way, out["latency"][way]))
        del model, auto_runner
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return out


def _demo_library() -> list:
    from ..io.library import ClipLibrary
    from ..resources import resource_path

    with ClipLibrary(resource_path("demo/demo_library.h5")) as demo:
        return demo.read_all()


def _demo_pairs(clips: int) -> tuple[list, list]:
    """`clips` demo clips (a stride across the library, repeated when needed), each with a demo clip of
    another subject."""
    from .anonymize import DEMO_STRIDE

    everything = _demo_library()
    sources = [everything[(k * DEMO_STRIDE) % len(everything)] for k in range(clips)]
    references = []
    for k, clip in enumerate(sources):
        others = [c for c in everything if c.subject != clip.subject]
        references.append(others[(7 * k) % len(others)])
    return sources, references


def release_difference(model_path, sources, references, batch: int = 256) -> dict:
    """MPJPE (mm) between the bf16 and the float32 released clips (and full retargets) of one checkpoint."""
    import numpy as np

    from ..models.anonymizer import Anonymizer

    outputs = {}
    for precision in PRECISIONS:
        anonymizer = Anonymizer.from_checkpoint(model_path, device="cuda", precision=precision)
        outputs[precision] = anonymizer.retarget_pairs(sources, references, batch_size=batch)
    distances = {"full": [], "released": []}
    for (full32, rel32), (full16, rel16) in zip(outputs["fp32"], outputs["bf16"]):
        for name, a, b in (("full", full32, full16), ("released", rel32, rel16)):
            d = np.linalg.norm(a.joints - b.joints, axis=-1)
            distances[name].append(d[np.isfinite(d)])
    return {f"{name}_mpjpe_mm": 1000 * float(np.concatenate(d).mean()) for name, d in distances.items()} | {
        "released_max_mm": 1000 * float(np.concatenate(distances["released"]).max())}


def end_to_end_clips(throughput: dict, requested: int, budget: float) -> int | None:
    """The clips of the end-to-end run: `requested`, or fewer when the model's clips/s (graph fp32 at the auto
    batch when measured, else the best measured) would not run them within `budget`; None when no figure was
    measured."""
    measured = throughput.get("graph fp32", {}).get("auto", {}).get("clips_per_s") or max(
        (f["clips_per_s"] for figures in throughput.values() for f in figures.values() if f["clips_per_s"]),
        default=None)
    if measured is None:
        return None
    return max(1, min(requested, int(measured * budget)))


def end_to_end(clips: int, preset: str) -> dict:
    """clips/s of `dtmr anonymize` on the GPU (graph, float32, chunks of E2E_CHUNK, batch auto)."""
    from ..io.library import ClipLibrary
    from ..release.anonymize import anonymize_source
    from .anonymize import write_untrained_model

    with tempfile.TemporaryDirectory(prefix="dtmr-bench-gpu-") as folder:
        folder = Path(folder)
        library = folder / "clips.h5"
        everything = _demo_library()
        ClipLibrary.create(library, [everything[k % len(everything)] for k in range(clips)]).close()
        model = write_untrained_model(folder, preset)
        start = time.perf_counter()
        anonymize_source(library, folder / "release.h5", model=model, device="cuda", chunk=E2E_CHUNK,
                         cuda_graph=True)
        wall = time.perf_counter() - start
    return {"clips": clips, "chunk": E2E_CHUNK, "seconds": wall, "clips_per_s": clips / wall}


def run_gpu_benchmark(settings: Settings = FULL, preset: str = "paper", models=None,
                      report: Report | None = None) -> dict:
    import torch

    from ..errors import DtmrError
    from ..resources import resource_path

    report = report or (lambda line: None)
    if not torch.cuda.is_available():
        raise DtmrError("dtmr bench gpu needs a CUDA device, and torch sees none")
    started = time.perf_counter()
    out: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                 "device": torch.cuda.get_device_name(), "torch": torch.__version__, "preset": preset,
                 "mode": "quick" if settings == QUICK else "full" if settings == FULL else "custom",
                 "settings": dataclasses.asdict(settings), "bound_s": settings.bound_s()}
    report(_header_line(out))
    out.update(measure_ways(preset, settings.seconds, ways={way: WAYS[way] for way in settings.ways},
                            batches=settings.batches, budget=settings.budget, report=report))
    sources, references = _demo_pairs(settings.clips)
    checkpoints = [Path(m) for m in models] if models else [resource_path("models/dtmr_small_beta0.2.pt")]
    out["bf16_difference"] = {}
    with tempfile.TemporaryDirectory(prefix="dtmr-bench-gpu-") as folder:
        from .anonymize import write_untrained_model

        checkpoints.append(write_untrained_model(Path(folder), preset))
        for path in checkpoints:
            name = "untrained " + preset if path.parent == Path(folder) else path.name
            out["bf16_difference"][name] = release_difference(path, sources, references)
            report(_bf16_line(name, out["bf16_difference"][name]))
    if settings.e2e_clips > 0:
        clips = end_to_end_clips(out["throughput"], settings.e2e_clips, settings.budget)
        out["end_to_end"] = ({"requested": settings.e2e_clips} | end_to_end(clips, preset) if clips is not None
                             else {"requested": settings.e2e_clips, "clips": 0, "clips_per_s": None})
        report(_end_to_end_line(out["end_to_end"]))
    out["wall_s"] = time.perf_counter() - started
    report(_done_line(out))
    return out


def run(args: argparse.Namespace) -> int:
    stream = sys.stderr if args.json else sys.stdout
    result = run_gpu_benchmark(settings_from(args), args.preset, args.model,
                               report=lambda line: print(line, file=stream, flush=True))
    if args.json:
        print(json.dumps(result), flush=True)
    return 0


# ------------------------------------------------------------------ the text form, streamed and summarised

def _header_line(result: dict) -> str:
    s = result["settings"]
    return (f"{result['device']}, torch {result['torch']}, {result['date']}; {result['mode']}: "
            f"{', '.join(s['ways'])}; batches {', '.join(s['batches'])}; {s['seconds']:g} s a figure, at most "
            f"about {s['budget']:g} s each: about {result['bound_s']:.0f} s at most plus set-up")


def _model_line(result: dict) -> str:
    return f"  {result['model_note']}, {result['parameters']:,} parameters"


def _throughput_line(way: str, label: str, figure: dict, auto: dict | None = None) -> str:
    batch = f"batch {label}"
    if label == "auto" and auto is not None and auto["batch"] is not None:
        capped = f", capped from {auto['memory']} by time" if auto["batch"] < auto["memory"] else ""
        batch += f" = {auto['batch']}{capped}"
    if figure["clips_per_s"] is not None:
        what = (f"{figure['clips_per_s']:.1f} clips/s ({figure['batches']} batches in {figure['seconds']:.2f} s "
                f"after a {figure['warmup_s']:.2f} s warm-up)")
    elif figure["batch"] is None:
        what = "not measured: no smaller batch was measured to size it"
    else:
        what = f"too slow: {figure['warmup_s']:.1f} s for the warm-up batch, over half the budget"
    return f"  {way:<10}  {batch}: {what}"


def _latency_line(way: str, figure: dict) -> str:
    if figure["median_ms"] is None:
        return f"  {way:<10}  one clip: too slow: {figure['warmup_s']:.1f} s for the first run, over half the budget"
    return f"  {way:<10}  one clip: {figure['median_ms']:.2f} ms (median of {figure['runs']} runs)"


def _bf16_line(name: str, difference: dict) -> str:
    return (f"  bf16 vs fp32, {name}: released {difference['released_mpjpe_mm']:.3f} mm MPJPE (max "
            f"{difference['released_max_mm']:.3f} mm), full retarget {difference['full_mpjpe_mm']:.3f} mm")


def _end_to_end_line(e2e: dict) -> str:
    if e2e["clips_per_s"] is None:
        return "  dtmr anonymize end to end: not measured: no throughput was measured to size it"
    fewer = f" (of {e2e['requested']}: what the budget allows)" if e2e["clips"] < e2e["requested"] else ""
    return (f"  dtmr anonymize end to end (graph, fp32, {e2e['clips']} clips{fewer}, chunks of {e2e['chunk']}): "
            f"{e2e['clips_per_s']:.1f} clips/s in {e2e['seconds']:.1f} s")


def _done_line(result: dict) -> str:
    return f"  done in {result['wall_s']:.1f} s"


def way_lines(result: dict) -> list[str]:
    """The lines `measure_ways` reports, in its order, from its result."""
    lines = [_model_line(result)]
    for way, figures in result["throughput"].items():
        lines += [_throughput_line(way, label, figure, result["auto_batch"].get(way))
                  for label, figure in figures.items()]
        lines.append(_latency_line(way, result["latency"][way]))
    return lines


def summary_lines(result: dict) -> list[str]:
    """The lines a run reports as it goes, from its result (the JSON read back)."""
    lines = [_header_line(result), *way_lines(result)]
    lines += [_bf16_line(name, difference) for name, difference in result["bf16_difference"].items()]
    if "end_to_end" in result:
        lines.append(_end_to_end_line(result["end_to_end"]))
    return lines + [_done_line(result)]


def print_summary(result: dict) -> None:
    """`dtmr bench gpu`'s text form of a result (also read back from its --json by the GPU script)."""
    print("\n".join(summary_lines(result)))
