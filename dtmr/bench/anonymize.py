"""`dtmr bench anonymize`: end-to-end clips/s of `dtmr anonymize`, in one run so the ratios are comparable.

End to end means everything `anonymize_source` does: read the clips, draw and read references, map and
normalize them, run the model, invert, blend, write the parts and merge them into the release and its key.
For each preset (`small`, `paper`): clips/s at model batch 1, 32 and auto in one process (`dtmr anonymize
--batch`, in its default chunks of 64; auto is 32 on the CPU), the share of that time spent outside the
model's forward (`retarget`; the target is at most 10 %), the same share once the run is set up (after the
first forward started: files opened, model loaded), and clips/s in one process against `--processes` (`dtmr
anonymize --workers`), with their ratio, in `dtmr anonymize`'s default chunks (smaller when `--clips` is under
64 per process in the shorter of its two runs, so that every process has work). That ratio is given twice: for
the whole run (starting the processes, loading the model, writing the key included: what a short run sees) and
once running (`process_speedup_running`: the extra clips of a run of `--clips` over one of half as many, over
the extra time, so that every fixed cost cancels: what a data set of hours converges to). The model is an
untrained DisentangledTMR built from the preset's config: its weights do not change the arithmetic, so it
times the same as a trained one. The clips are the demo library's, repeated to `--clips`. Beside the figures:
the float32 matmul peak (`dtmr bench model`'s GEMM) at the same thread count, the load average at the start
and the core count. One process uses `--threads` (default 1), as each worker does. A worker run includes
starting its processes (spawn, importing torch, loading the model); its forward runs in the workers, so it has
no share outside the forward.

Beside the process comparison, the machine's own ceiling for it (`process_ceiling`): the model's forward
alone, batch 32, timed in one process and then in N processes at once (each started and warmed before the
timed loop): N × the work over the slowest process's time, against one process's. Two vCPUs that share a
physical core or memory bandwidth give less than N, and no anonymize run can beat that.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from ..argtypes import positive_int

PRESETS = ("small", "paper")
#: `dtmr anonymize --batch` per label
BATCHES = {"1": 1, "32": 32, "auto": "auto"}
#: the share of the end-to-end time outside the model's forward aimed at
OUTSIDE_TARGET = 0.10
TOPOLOGY = "ntu25"
#: clips of the untimed first run of each preset
WARM_UP_CLIPS = 2
#: prime to the demo library's 360 clips: its first 360 picks are distinct
DEMO_STRIDE = 37


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "anonymize", help="dtmr anonymize end to end: clips/s at batch 1/32/auto, 1 vs N processes, time outside "
                          "the model")
    parser.add_argument("--presets", default=",".join(PRESETS), metavar="small,paper",
                        help="model presets to time (default: both)")
    parser.add_argument("--clips", type=positive_int, default=32, metavar="N",
                        help="clips per timed run (default 32, under 2 minutes on 2 quiet cores; more for steadier "
                             "figures)")
    parser.add_argument("--processes", type=positive_int, default=2, metavar="N",
                        help="processes of the multi-process run (default 2)")
    parser.add_argument("--threads", type=positive_int, default=1, metavar="N",
                        help="torch threads of the one-process runs and of the matmul peak (default 1, as "
                             "each worker)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.set_defaults(func=run)


@contextlib.contextmanager
def _forward_timer(model_class) -> Iterator[list[tuple[float, float]]]:
    """(start, seconds) of every call of `model_class.retarget` while inside, appended to the yielded list."""
    original = model_class.retarget
    spent: list[tuple[float, float]] = []

    def timed(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return original(self, *args, **kwargs)
        finally:
            spent.append((start, time.perf_counter() - start))

    model_class.retarget = timed
    try:
        yield spent
    finally:
        model_class.retarget = original


def _write_clips(folder: Path, clips: int) -> Path:
    """`clips` demo clips (repeated when needed) in `folder`/clips-N.h5."""
    from ..io.library import ClipLibrary
    from ..resources import resource_path

    library = folder / f"clips-{clips}.h5"
    if not library.exists():
        with ClipLibrary(resource_path("demo/demo_library.h5")) as demo:
            # a stride across the library (grouped by subject), so that even a few clips have references
            # of other subjects
            picked = demo.read_many([(k * DEMO_STRIDE) % len(demo) for k in range(clips)])
            ClipLibrary.create(library, picked, action_names=demo.action_names).close()
    return library


def write_untrained_model(folder: Path, preset: str) -> Path:
    """An untrained `preset` model's checkpoint."""
    import torch

    from ..models import DisentangledTMR, DTMRConfig
    from ..models.checkpoints.checkpoint import save_checkpoint

    torch.manual_seed(0)
    model = DisentangledTMR(DTMRConfig.preset(preset, TOPOLOGY)).eval()
    return save_checkpoint(folder / f"{preset}.pt", model, data={}, metrics={})


def _timed_run(library: Path, model: Path, out: Path, chunk: int | None, batch: int | str,
               workers: int) -> tuple[float, float, float]:
    """(wall seconds, seconds in the model's forward in this process, seconds before its first forward) of
    one `anonymize_source` run."""
    from ..models import DisentangledTMR
    from ..release.anonymize import anonymize_source
    from ..release.key import key_path_for

    with _forward_timer(DisentangledTMR) as spent:
        start = time.perf_counter()
        anonymize_source(library, out, model=model, device="cpu", chunk=chunk, batch=batch, workers=workers)
        wall = time.perf_counter() - start
    for path in (out, key_path_for(out)):
        path.unlink()
    setup = spent[0][0] - start if spent else wall
    return wall, sum(seconds for _, seconds in spent), setup


def run_anonymize_benchmark(presets: tuple[str, ...] = PRESETS, clips: int = 32, processes: int = 2,
                            threads: int = 1) -> dict:
    import torch

    from .model import matmul_peak_gflops

    out: dict = {"load_average_at_start": list(os.getloadavg()), "cpu_count": os.cpu_count(), "clips": clips,
                 "threads": threads, "processes": processes, "topology": TOPOLOGY,
                 "model_note": "untrained DisentangledTMR built from each preset's config (timing only)",
                 "auto_note": "model batches of 1, 32 and auto (dtmr anonymize's default: 32 on the CPU), in chunks "
                              "of 64 clips",
                 "outside_forward_target": OUTSIDE_TARGET}
    torch.set_num_threads(threads)
    with torch.inference_mode():
        out["matmul_peak_gflops"] = matmul_peak_gflops()
    out["presets"] = {}
    with tempfile.TemporaryDirectory(prefix="dtmr-bench-anonymize-") as folder:
        folder = Path(folder)
        for preset in presets:
            library, warm_up = _write_clips(folder, clips), _write_clips(folder, WARM_UP_CLIPS)
            model = write_untrained_model(folder, preset)
            release = folder / "release.h5"
            _timed_run(warm_up, model, release, None, "auto", 1)  # lazy imports, allocator, caches
            figures: dict = {"clips_per_s": {}, "share_outside_forward": {}, "share_outside_forward_set_up": {},
                             "set_up_s": {}}
            for label, batch in BATCHES.items():
                wall, forward, setup = _timed_run(library, model, release, None, batch, 1)
                figures["clips_per_s"][label] = clips / wall
                figures["share_outside_forward"][label] = 1 - forward / wall
                figures["share_outside_forward_set_up"][label] = 1 - forward / (wall - setup)
                figures["set_up_s"][label] = setup
            half_clips = max(1, clips // 2)
            chunk = process_chunk(half_clips, processes)  # every process has work in both runs
            half = _write_clips(folder, half_clips)
            walls = {}  # processes -> (wall of `clips`, wall of `half_clips`), each count's two runs in a row
            for count in (1, processes):
                walls[count] = tuple(_timed_run(lib, model, release, chunk, "auto", count)[0]
                                     for lib in (library, half))
            figures["process_chunk"] = chunk
            figures["clips_per_s_processes"] = {str(n): clips / wall for n, (wall, _) in walls.items()}
            figures["process_speedup"] = walls[1][0] / walls[processes][0]
            running = {str(n): _running_rate(clips - half_clips, wall - wall_half)
                       for n, (wall, wall_half) in walls.items()}
            figures["clips_per_s_processes_running"] = running
            figures["process_speedup_running"] = \
                running[str(processes)] / running["1"] if running["1"] and running[str(processes)] else None
            figures["process_ceiling"] = process_ceiling(preset, processes, threads)
            figures["batch32_over_batch1"] = figures["clips_per_s"]["32"] / figures["clips_per_s"]["1"]
            figures["auto_over_batch1"] = figures["clips_per_s"]["auto"] / figures["clips_per_s"]["1"]
            out["presets"][preset] = figures
    return out


def _running_rate(clips: int, seconds: float) -> float | None:
    """Clips/s of a run once running: the extra clips over the extra seconds of a longer run (None when noise
    made the longer run no longer: too few clips to tell)."""
    return clips / seconds if clips > 0 and seconds > 0 else None


#: forward calls of batch 32 each process times for `process_ceiling`, and how long one may take at most
CEILING_CALLS = {"small": 12, "paper": 2}
CEILING_TIMEOUT_S = 600


def _forward_loop(preset: str, threads: int, calls: int, ready, seconds) -> None:
    """One process of `process_ceiling`: build and warm the model, meet the others at `ready`, time `calls`
    forwards."""
    import torch

    from ..models import DisentangledTMR, DTMRConfig

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = DisentangledTMR(DTMRConfig.preset(preset, TOPOLOGY)).eval()
    clips = torch.randn(32, 64, model.topology.num_joints, 3)
    with torch.inference_mode():
        model.retarget(clips, clips)
        ready.wait()
        begin = time.perf_counter()
        for _ in range(calls):
            model.retarget(clips, clips)
        seconds.put(time.perf_counter() - begin)


def process_ceiling(preset: str, processes: int, threads: int = 1) -> float:
    """How many times one process's forward throughput `processes` processes reach at once on this machine
    (`processes` × one process's time over the slowest of the concurrent ones)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    times = []
    for count in (1, processes):
        ready, seconds = context.Barrier(count), context.Queue()
        workers = [context.Process(target=_forward_loop, args=(preset, threads, CEILING_CALLS[preset], ready, seconds))
                   for _ in range(count)]
        for worker in workers:
            worker.start()
        try:
            times.append(max(_next_time(seconds, workers) for _ in workers))
        finally:
            for worker in workers:
                worker.join(timeout=CEILING_TIMEOUT_S)
                if worker.is_alive():
                    worker.terminate()
    return processes * times[0] / times[1]


def _next_time(seconds, workers) -> float:
    """The next loop time a `process_ceiling` process reports; a DtmrError when one of them died first (its
    error went to stderr) or none reported within CEILING_TIMEOUT_S."""
    import queue

    from ..errors import DtmrError

    deadline = time.monotonic() + CEILING_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            return seconds.get(timeout=0.5)
        except queue.Empty:
            if any(worker.exitcode not in (None, 0) for worker in workers):
                raise DtmrError("bench anonymize: a process of the ceiling measurement stopped") from None
    raise DtmrError(f"bench anonymize: the ceiling measurement took more than {CEILING_TIMEOUT_S} s") from None


def process_chunk(clips: int, processes: int) -> int:
    """The chunk of the 1 vs N processes comparison: `dtmr anonymize`'s default, or smaller so that every
    process has work."""
    return min(default_chunk(), -(-clips // processes))


def default_chunk() -> int:
    from ..release.run import CHUNK

    return CHUNK


def parse_presets(text: str) -> tuple[str, ...]:
    from ..errors import DtmrError

    presets = tuple(p.strip() for p in text.split(",") if p.strip())
    unknown = [p for p in presets if p not in PRESETS]
    if not presets or unknown:
        raise DtmrError(f"--presets: choose among {', '.join(PRESETS)}, got {text!r}")
    return presets


def run(args: argparse.Namespace) -> int:
    result = run_anonymize_benchmark(parse_presets(args.presets), args.clips, args.processes, args.threads)
    if args.json:
        print(json.dumps(result))
        return 0
    load = " ".join(f"{v:.2f}" for v in result["load_average_at_start"])
    print(f"dtmr anonymize end to end, {result['clips']} clips, {result['threads']} thread(s) per process, "
          f"{result['cpu_count']} cores, load average at start {load}")
    print(f"matmul peak {result['matmul_peak_gflops']:.1f} GFLOP/s; {result['model_note']}; {result['auto_note']}")
    for preset, figures in result["presets"].items():
        print(f"{preset}:")
        for label, rate in figures["clips_per_s"].items():
            share, set_up = figures["share_outside_forward"][label], figures["share_outside_forward_set_up"][label]
            print(f"  batch {label:<5} {rate:8.2f} clips/s   {100 * share:5.1f}% outside the model's forward "
                  f"({100 * set_up:4.1f}% once set up, after {figures['set_up_s'][label]:.2f} s)")
        n = str(result["processes"])
        running = figures["process_speedup_running"]
        rates = figures["clips_per_s_processes"]
        print(f"  chunks of {figures['process_chunk']}, 1 / {n} processes {rates['1']:.2f} / "
              f"{rates[n]:.2f} clips/s = {figures['process_speedup']:.2f}x whole run; once "
              f"running {'n/a (too few clips)' if running is None else f'{running:.2f}x'} (this machine's ceiling: "
              f"the forward alone in {n} processes at once reaches {figures['process_ceiling']:.2f}x)")
    return 0
