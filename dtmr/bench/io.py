"""`dtmr bench io`: `.skeleton` parsing throughput, N-UCLA import to HDF5, random reads from a big library.

Figures are wall-clock on whatever machine runs them; docs/io.md keeps the measured ones with the command.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..argtypes import positive_int
from ..data.clip import Clip


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "io", help="I/O: .skeleton parsing MB/s, N-UCLA import time, single-clip reads from a 10k-clip library",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--data", metavar="DIR", type=Path, default=None,
                        help="folder with ntu_samples/ and nwucla.npz (default: $DTMR_SHARED_DATA, else "
                             "../shared/data next to the source checkout); generated data stands in when absent")
    parser.add_argument("--clips", type=positive_int, default=10_000, metavar="N",
                        help="clips in the generated library")
    parser.add_argument("--reads", type=positive_int, default=500, metavar="N",
                        help="random single-clip reads to time")
    parser.set_defaults(func=run)



def default_data_dir() -> Path:
    if os.environ.get("DTMR_SHARED_DATA"):
        return Path(os.environ["DTMR_SHARED_DATA"])
    return Path(__file__).resolve().parents[2].parent / "shared" / "data"


def skeleton_parse_throughput(files: list[Path], min_seconds: float = 1.0) -> dict:
    """MB/s of `parse_skeleton_bytes` over `files` held in memory (disk speed excluded)."""
    from ..io.ntu_skeleton import parse_skeleton_bytes

    blobs = [(str(f), f.read_bytes()) for f in files]
    size = sum(len(b) for _, b in blobs)
    rounds, start, start_cpu = 0, time.perf_counter(), time.process_time()
    while rounds < 3 or time.perf_counter() - start < min_seconds:
        for name, blob in blobs:
            parse_skeleton_bytes(blob, name)
        rounds += 1
    elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    return {
        "files": len(blobs), "megabytes": size / 1e6, "rounds": rounds,
        "mb_per_s": size * rounds / elapsed / 1e6,
        # CPU time is the steadier figure on a shared machine
        "mb_per_cpu_s": size * rounds / cpu / 1e6,
    }


def write_generated_skeleton(path: Path, frames: int = 300, bodies: int = 2, seed: int = 0) -> None:
    """A `.skeleton` file of random-walk bodies with every field filled, as a stand-in for real samples."""
    from ..io.ntu_skeleton import BODY_FIELDS, JOINT_FIELDS, JOINTS, SkeletonBody, SkeletonFile, write_skeleton_file

    rng = np.random.default_rng(seed)
    members = {}
    for b in range(bodies):
        pose = rng.normal(0.0, 0.3, (JOINTS, 3)) + (0.0, 0.0, 3.0)
        members[72057594037931648 + b] = SkeletonBody(
            body_id=72057594037931648 + b,
            frames=np.arange(frames),
            joints=np.round(pose + np.cumsum(rng.normal(0.0, 0.005, (frames, JOINTS, 3)), axis=0), 7),
            joint_fields=np.round(rng.uniform(-1.0, 1000.0, (frames, JOINTS, len(JOINT_FIELDS))), 4),
            tracking=np.full((frames, JOINTS), 2, dtype=np.int8),
            body_fields=np.round(rng.uniform(0.0, 2.0, (frames, len(BODY_FIELDS))), 7),
        )
    write_skeleton_file(path, SkeletonFile(frame_count=frames, bodies=members))


def generated_clips(count: int, seed: int = 0, min_frames: int = 30, max_frames: int = 90) -> Iterator[Clip]:
    """Random-walk ntu25 clips (a generator, so a big library is never held in memory)."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        frames = int(rng.integers(min_frames, max_frames + 1))
        pose = rng.normal(0.0, 0.3, (25, 3)) + (0.0, 0.0, 3.0)
        joints = pose + np.cumsum(rng.normal(0.0, 0.005, (frames, 25, 3)), axis=0)
        yield Clip(joints=joints, topology="ntu25", subject=i % 40, action=i % 60, view=i % 3 + 1,
                   sample_name=f"generated{i:06d}")


def nucla_import(npz: Path, folder: Path) -> dict:
    """Seconds to read N-UCLA's .npz and write it as an HDF5 library (what `dtmr data import` does)."""
    from ..io.library import ClipLibrary
    from ..io.npz_dataset import read_npz_dataset

    out = folder / "nucla.h5"
    start = time.perf_counter()
    dataset = read_npz_dataset(npz)
    with ClipLibrary.create(out, dataset.clips, action_names=dataset.action_names) as library:
        clips = len(library)
    return {"seconds": time.perf_counter() - start, "clips": clips, "megabytes_out": out.stat().st_size / 1e6}


def library_reads(folder: Path, clips: int, reads: int, seed: int = 0) -> dict:
    """Build a library of generated clips, then time opening it and `reads` random single-clip reads."""
    from ..io.library import ClipLibrary

    path = folder / "generated.h5"
    start = time.perf_counter()
    ClipLibrary.create(path, generated_clips(clips, seed)).close()
    build = time.perf_counter() - start
    start = time.perf_counter()
    with ClipLibrary(path) as library:
        opened = time.perf_counter() - start
        start = time.perf_counter()
        library.read(0)  # loads the metadata columns once
        first = time.perf_counter() - start
        times = []
        for i in np.random.default_rng(seed).integers(0, clips, reads).tolist():
            start = time.perf_counter()
            library.read(i)
            times.append(time.perf_counter() - start)
    ms = np.array(times) * 1e3
    return {
        "clips": clips, "build_s": build, "megabytes": path.stat().st_size / 1e6, "open_ms": opened * 1e3,
        "first_read_ms": first * 1e3, "reads": reads, "median_ms": float(np.median(ms)),
        "p95_ms": float(np.percentile(ms, 95)),
    }


def measure(data: Path, clips: int, reads: int) -> dict:
    results: dict = {"cpus": os.cpu_count(), "load_average_1min": os.getloadavg()[0]}
    with tempfile.TemporaryDirectory(prefix="dtmr-bench-io-") as tmp:
        folder = Path(tmp)
        samples = sorted((data / "ntu_samples").glob("*.skeleton"))
        if samples:
            results["skeleton_parse"] = {"source": f"{len(samples)} real NTU samples",
                                         **skeleton_parse_throughput(samples)}
        else:
            generated = folder / "S001C001P001R001A001.skeleton"
            write_generated_skeleton(generated)
            results["skeleton_parse"] = {"source": "generated file (300 frames, 2 bodies)",
                                         **skeleton_parse_throughput([generated])}
        npz = data / "nwucla.npz"
        results["nucla_import"] = nucla_import(npz, folder) if npz.is_file() else {"skipped": f"{npz} is absent"}
        results["library_reads"] = library_reads(folder, clips, reads)
    return results


def format_results(results: dict) -> str:
    parse = results["skeleton_parse"]
    lines = [f"machine: {results['cpus']} CPUs, load average {results['load_average_1min']:.1f}",
             f".skeleton parsing: {parse['mb_per_s']:.1f} MB/s, {parse['mb_per_cpu_s']:.1f} MB per CPU second "
             f"({parse['source']}, {parse['megabytes']:.2f} MB x {parse['rounds']} rounds)"]
    nucla = results["nucla_import"]
    if "skipped" in nucla:
        lines.append(f"N-UCLA import: skipped ({nucla['skipped']})")
    else:
        lines.append(f"N-UCLA import to HDF5: {nucla['seconds']:.2f} s ({nucla['clips']} clips, "
                     f"{nucla['megabytes_out']:.1f} MB)")
    reads = results["library_reads"]
    lines.append(f"library of {reads['clips']} generated clips ({reads['megabytes']:.0f} MB, built in "
                 f"{reads['build_s']:.1f} s): open {reads['open_ms']:.1f} ms, "
                 f"first read {reads['first_read_ms']:.1f} ms, "
                 f"single-clip read median {reads['median_ms']:.2f} ms, p95 {reads['p95_ms']:.2f} ms "
                 f"({reads['reads']} random reads)")
    return "\n".join(lines)


def run(args) -> int:
    results = measure(args.data or default_data_dir(), args.clips, args.reads)
    print(json.dumps(results, indent=1) if args.json else format_results(results))
    return 0
