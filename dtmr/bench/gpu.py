"""`dtmr bench gpu`: the CUDA inference path of `dtmr anonymize`, in one run so the figures are comparable.

- Throughput: clips/s at model batch 1, 256 and auto (from the free memory, dtmr/models/inference.py), for
  each way of running the model: eager or with the cached decode replayed from a CUDA graph, float32 or
  bf16 autocast. Measured through `ModelRunner` as `dtmr anonymize` uses it: normalized clips in host
  memory, pinned buffers and non-blocking copies, two batches in flight, results back in host memory; the
  clips/s of `--seconds` of batches after a warm-up (and the graph's capture).
- Latency: one clip submitted and collected, the median of LATENCY_RUNS, for each way.
- The bf16 release against the float32 one: the Anonymizer on `--clips` demo clips (each against a clip of
  another subject), the same batches at both precisions, the mean per-joint distance (MPJPE, mm) between
  the two released clips and between the two full retargets D, for each `--model` checkpoint (default: the
  bundled `small` model) and the untrained preset.
- End to end: `dtmr anonymize` of `--e2e-clips` demo clips (repeated) on the GPU, graph and float32, chunks
  of E2E_CHUNK clips, `--batch auto`: what the CPU side (reading, normalizing, writing) leaves of it.

The throughput and latency model is an untrained DisentangledTMR of `--preset` (default paper): weights do not
change the time. Needs a CUDA device; scripts/gpu_inference_bench.sh runs it on a lent GPU machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from ..argtypes import positive_int

BATCHES = ("1", "256", "auto")
#: (graph, precision) per way of running the model
WAYS = {"eager fp32": (False, "fp32"), "graph fp32": (True, "fp32"), "eager bf16": (False, "bf16"),
        "graph bf16": (True, "bf16")}
LATENCY_RUNS = 50
#: the largest batch `auto` may pick here
LARGEST_BATCH = 16384
E2E_CHUNK = 4096
TOPOLOGY = "ntu25"


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "gpu", help="CUDA inference: clips/s at batch 1/256/auto, single-clip latency, eager vs CUDA graph, "
                    "fp32 vs bf16 and the bf16 release's distance to fp32 (needs a GPU)")
    parser.add_argument("--preset", default="paper", choices=("paper", "small"),
                        help="the untrained model timed (default paper)")
    parser.add_argument("--seconds", type=float, default=2.0, metavar="S",
                        help="seconds of batches per throughput figure (default 2)")
    parser.add_argument("--clips", type=positive_int, default=360, metavar="N",
                        help="demo clips of the bf16-vs-fp32 comparison (default 360, the whole demo library)")
    parser.add_argument("--model", action="append", default=None, metavar="CKPT",
                        help="checkpoint of the bf16-vs-fp32 comparison (repeatable; default: the bundled small model)")
    parser.add_argument("--e2e-clips", type=int, default=8192, metavar="N",
                        help="clips of the end-to-end dtmr anonymize run (default 8192; 0 skips it)")
    parser.add_argument("--json", action="store_true", help="print the results as one JSON object")
    parser.set_defaults(func=run)


def _untrained(preset: str):
    import torch

    from ..models import DisentangledTMR, DTMRConfig

    torch.manual_seed(0)
    return DisentangledTMR(DTMRConfig.preset(preset, TOPOLOGY)).eval()


def _random_clips(batch: int, joints: int):
    import numpy as np

    rng = np.random.default_rng(0)
    return [rng.normal(0, 0.3, (batch, 64, joints, 3)).astype(np.float32) for _ in range(2)]


def _throughput(runner, batch: int, seconds: float) -> float:
    """clips/s of back-to-back batches, two in flight, after two warm-up batches."""
    src, ref = _random_clips(batch, runner.model.topology.num_joints)
    for _ in range(2):
        runner.submit(src, ref).result()
    done, previous, start = 0, None, time.perf_counter()
    while time.perf_counter() - start < seconds or done < 3 * batch:
        current = runner.submit(src, ref)
        if previous is not None:
            previous.result()
            done += batch
        previous = current
    previous.result()
    return (done + batch) / (time.perf_counter() - start)


def _latency_ms(runner) -> float:
    src, ref = _random_clips(1, runner.model.topology.num_joints)
    for _ in range(3):
        runner.submit(src, ref).result()
    times = []
    for _ in range(LATENCY_RUNS):
        start = time.perf_counter()
        runner.submit(src, ref).result()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def measure_ways(preset: str, seconds: float, device: str = "cuda", ways: dict = WAYS,
                 batches: tuple[str, ...] = BATCHES) -> dict:
    """Throughput per batch and latency for every way, with the auto batch (on CUDA: and the memory per clip)."""
    import torch

    from ..models.serving.runner import ModelRunner

    device = torch.device(device)
    out: dict = {"clips_per_s": {}, "latency_ms": {}, "auto_batch": {}, "bytes_per_clip": {}}
    if device.type == "cuda":
        from ..models.serving.runner import probe_free_bytes

        out["free_bytes"] = probe_free_bytes(device)
    for way, (graph, precision) in ways.items():
        model = _untrained(preset).to(device)  # one model per way: nothing cached by one way reaches another
        out["parameters"] = sum(p.numel() for p in model.parameters())
        auto_runner = ModelRunner(model, device, precision, graph)
        out["auto_batch"][way] = auto = auto_runner.auto_batch(LARGEST_BATCH)
        if device.type == "cuda":
            out["bytes_per_clip"][way] = auto_runner.bytes_per_clip()
        out["clips_per_s"][way] = {
            label: _throughput(ModelRunner(model, device, precision, graph), auto if label == "auto" else int(label),
                               seconds) for label in batches}
        out["latency_ms"][way] = _latency_ms(ModelRunner(model, device, precision, graph))
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
    for precision in ("fp32", "bf16"):
        anonymizer = Anonymizer.from_checkpoint(model_path, device="cuda", precision=precision)
        outputs[precision] = anonymizer.retarget_pairs(sources, references, batch_size=batch)
    distances = {"full": [], "released": []}
    for (full32, rel32), (full16, rel16) in zip(outputs["fp32"], outputs["bf16"]):
        for name, a, b in (("full", full32, full16), ("released", rel32, rel16)):
            d = np.linalg.norm(a.joints - b.joints, axis=-1)
            distances[name].append(d[np.isfinite(d)])
    return {f"{name}_mpjpe_mm": 1000 * float(np.concatenate(d).mean()) for name, d in distances.items()} | {
        "released_max_mm": 1000 * float(np.concatenate(distances["released"]).max())}


def end_to_end(clips: int) -> dict:
    """clips/s of `dtmr anonymize` on the GPU (graph, float32, chunks of E2E_CHUNK, batch auto)."""
    from ..io.library import ClipLibrary
    from ..release.anonymize import anonymize_source
    from .anonymize import write_untrained_model

    with tempfile.TemporaryDirectory(prefix="dtmr-bench-gpu-") as folder:
        folder = Path(folder)
        library = folder / "clips.h5"
        everything = _demo_library()
        ClipLibrary.create(library, [everything[k % len(everything)] for k in range(clips)]).close()
        model = write_untrained_model(folder, "paper")
        start = time.perf_counter()
        anonymize_source(library, folder / "release.h5", model=model, device="cuda", chunk=E2E_CHUNK,
                         cuda_graph=True)
        wall = time.perf_counter() - start
    return {"clips": clips, "chunk": E2E_CHUNK, "seconds": wall, "clips_per_s": clips / wall}


def run_gpu_benchmark(preset: str = "paper", seconds: float = 2.0, clips: int = 360, models=None,
                      e2e_clips: int = 8192) -> dict:
    import torch

    from ..errors import DtmrError
    from ..resources import resource_path

    if not torch.cuda.is_available():
        raise DtmrError("dtmr bench gpu needs a CUDA device, and torch sees none")
    out: dict = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "preset": preset,
                 "model_note": f"untrained {preset} DisentangledTMR (timing only)"}
    out.update(measure_ways(preset, seconds))
    sources, references = _demo_pairs(clips)
    checkpoints = [Path(m) for m in models] if models else [resource_path("models/dtmr_small_beta0.2.pt")]
    with tempfile.TemporaryDirectory(prefix="dtmr-bench-gpu-") as folder:
        from .anonymize import write_untrained_model

        checkpoints.append(write_untrained_model(Path(folder), preset))
        out["bf16_difference"] = {
            ("untrained " + preset if path.parent == Path(folder) else path.name):
                release_difference(path, sources, references) for path in checkpoints}
    if e2e_clips > 0:
        out["end_to_end"] = end_to_end(e2e_clips)
    return out


def run(args: argparse.Namespace) -> int:
    result = run_gpu_benchmark(args.preset, args.seconds, args.clips, args.model, args.e2e_clips)
    if args.json:
        print(json.dumps(result))
        return 0
    print_summary(result)
    return 0


def print_summary(result: dict) -> None:
    """`dtmr bench gpu`'s text form of a result (also read back from its --json by the GPU script)."""
    print(f"{result['device']}, torch {result['torch']}; {result['model_note']}, {result['parameters']:,} parameters")
    for way, rates in result["clips_per_s"].items():
        figures = "  ".join(f"batch {label} {rate:10.1f}" for label, rate in rates.items())
        print(f"  {way:<11} clips/s: {figures}  (auto = {result['auto_batch'][way]}); "
              f"one clip {result['latency_ms'][way]:.2f} ms")
    for name, difference in result["bf16_difference"].items():
        print(f"  bf16 vs fp32, {name}: released {difference['released_mpjpe_mm']:.3f} mm MPJPE (max "
              f"{difference['released_max_mm']:.3f} mm), full retarget {difference['full_mpjpe_mm']:.3f} mm")
    if "end_to_end" in result:
        e2e = result["end_to_end"]
        print(f"  dtmr anonymize end to end (graph, fp32, chunks of {e2e['chunk']}): {e2e['clips_per_s']:.1f} clips/s")
