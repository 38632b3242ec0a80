"""`dtmr anonymize` in several processes: `--workers N` on one machine, or every rank of `torchrun`.

The work is the chunks of the release order (dtmr/release/anonymize.py): chunk k goes to rank k mod N, and
each rank writes its parts into the shared `OUT.h5.parts` folder (on several nodes, a shared file system).
A part depends only on its chunk (clips, references and noise are seeded per (seed, source clip)), so the
merged release is byte-identical to that of one process with the same `run.json` — the same drawn order
and release token — provided the model's arithmetic is the same in every process (same device and thread
count; a CPU matmul may sum in another order with other thread counts).

Who does what:
- `--workers N`: the parent opens the run, takes the exclusive lock on the parts folder, draws or reads
  `run.json`, then starts N processes (spawn, so CUDA works in them) that each read `run.json` and write
  their share with `torch.set_num_threads(1)` (N workers on N cores, no oversubscription). The parent
  draws the one progress bar from the parts on disk, and merges once every part exists. A worker that
  dies stops the others; the parts written are kept and the same command resumes.
- `torchrun`: the ranks come from its environment through `dtmr.train.distributed.init_distributed` (the
  same as training; gloo on CPUs, NCCL on GPUs, device cuda:LOCAL_RANK). Rank 0 takes the lock and draws or
  reads `run.json` and broadcasts it (or its error, so every rank stops with the same message); the other
  ranks take no lock: they belong to the run that holds it, and every part is written atomically. Rank 0
  draws the bar, waits for every part by watching the folder (not a collective barrier, whose timeout a
  long, unevenly resumed run could exceed) and merges. Thread counts are torchrun's (OMP_NUM_THREADS=1 with
  several processes per node).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ..errors import DtmrError
from .anonymize import (
    RunSpec,
    _Job,
    _locked,
    _run_state,
    _write_release,
    open_run,
    saved_state,
)
from .key import key_path_for

#: torch intra-op threads of each `--workers` process
WORKER_THREADS = 1
#: seconds between two looks at the parts folder (progress, finished parts)
POLL_S = 0.2
#: exit code of a worker stopped by a DtmrError (its one-line message is on stderr)
WORKER_ERROR = 2


def torchrun_world_size() -> int:
    """WORLD_SIZE as `torchrun` sets it; 1 outside torchrun."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        raise DtmrError(f"WORLD_SIZE must be an integer, got {os.environ['WORLD_SIZE']!r}") from None


def is_main_process() -> bool:
    """Rank 0 of `torchrun`, or the only process: the one that reports."""
    return os.environ.get("RANK", "0") == "0"


def run_workers(spec: RunSpec, job: _Job, workers: int, progress: Callable[[int, int], None] | None) -> None:
    """Write every missing part of `job` in `workers` processes; the caller holds the lock and merges."""
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=_worker, args=(spec, rank, workers), name=f"dtmr-anonymize-{rank}")
                 for rank in range(workers)]
    total = len(job.order)
    try:
        for process in processes:
            process.start()
        running = list(processes)
        while running:
            multiprocessing.connection.wait([p.sentinel for p in running], timeout=POLL_S)
            if progress is not None:
                progress(job.done(), total)
            for process in [p for p in running if p.exitcode is not None]:
                running.remove(process)
                if process.exitcode != 0:
                    rank = processes.index(process)
                    raise DtmrError(f"worker {rank} of {workers} writing {spec.output} stopped (exit code "
                                    f"{process.exitcode}); the parts written are kept: rerun the same command "
                                    "to resume")
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            if process.pid is not None:
                process.join()
    _check_complete(job, spec)


def _worker(spec: RunSpec, rank: int, world: int) -> None:
    """One `--workers` process: its share of the parts of the run whose `run.json` the parent wrote."""
    import torch

    torch.set_num_threads(WORKER_THREADS)
    try:
        with contextlib.ExitStack() as stack:
            opened = open_run(spec, stack, spec.device)
            state = saved_state(spec.parts, opened.settings, opened.clips)
            if state is None:
                raise DtmrError(f"{spec.parts}: run.json is missing or was written for other settings")
            opened.job(state["order"], spec.parts).write_parts(None, rank, world)
    except DtmrError as exc:
        print(f"dtmr anonymize worker {rank}: {exc}", file=sys.stderr, flush=True)
        sys.exit(WORKER_ERROR)


def anonymize_rank(spec: RunSpec, progress: Callable[[int, int], None] | None) -> None:
    """This process' part of a `torchrun` run; rank 0 also merges. Only rank 0 reports `progress`."""
    import torch.distributed as dist

    from ..train.distributed import init_distributed, shutdown_distributed

    context = init_distributed(spec.device)
    try:
        with contextlib.ExitStack() as stack:
            opened = open_run(spec, stack, str(context.device))
            parts, shared = spec.parts, [None, None]
            if context.is_main:
                try:
                    stack.enter_context(_locked(parts, spec.output))
                    shared[0] = _run_state(parts, opened.settings, opened.clips, spec.options.with_provenance)
                except DtmrError as exc:
                    shared[1] = str(exc)
            dist.broadcast_object_list(shared, src=0)
            state, error = shared
            if error is not None:
                raise DtmrError(error)
            job = opened.job(state["order"], parts)
            job.write_parts(progress if context.is_main else None, context.rank, context.world_size)
            if not context.is_main:
                return
            while job.missing():
                if progress is not None:
                    progress(job.done(), len(job.order))
                time.sleep(POLL_S)
            if progress is not None:
                progress(len(job.order), len(job.order))
            _check_complete(job, spec)
            output = Path(spec.output)
            _write_release(job, output, key_path_for(output), state["release_token"], spec.options,
                           opened.settings)
            shutil.rmtree(parts)
    finally:
        shutdown_distributed()


def _check_complete(job: _Job, spec: RunSpec) -> None:
    missing = job.missing()
    if missing:
        raise DtmrError(f"{spec.output}: {len(missing)} part(s) missing after every worker finished, first "
                        f"{missing[0].name}; rerun the same command to resume")
