"""`dtmr anonymize` under `torchrun`: every rank writes its share of the parts, rank 0 merges.

The work is the chunks of the release order (dtmr/release/run.py): chunk k goes to rank k mod N, and
each rank writes its parts into the shared `OUT.h5.parts` folder (on several nodes, a shared file system).
A part depends only on its chunk (clips, references and noise are seeded per (seed, source clip)), so the
merged release is byte-identical to that of one process with the same `run.json` — the same drawn order
and release token — provided the model's arithmetic is the same in every process (same device, thread
count and model batch; a CPU matmul may sum in another order with other thread counts).

The ranks come from torchrun's environment through `dtmr.train.distributed.init_distributed` (the same as
training; gloo on CPUs, NCCL on GPUs, device cuda:LOCAL_RANK). Rank 0 takes the lock and draws or reads
`run.json` and broadcasts it (or its error, so every rank stops with the same message); the other ranks
take no lock: they belong to the run that holds it, and every part is written atomically. Once its own
share is written, rank 0 merges the parts in order, each as soon as it exists (it watches the folder: no
collective barrier, whose timeout a long, unevenly resumed run could exceed), and draws the bar. Thread
counts are torchrun's (OMP_NUM_THREADS=1 with several processes per node). `dtmr anonymize --workers N`
(dtmr/release/workers.py) is the one-machine run without torchrun.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import DtmrError
from .chunks import Job
from .key import key_path_for
from .merge import write_release
from .run import RunSpec, locked, open_run, remove_parts, run_settings, run_state

#: seconds between two looks at the parts folder (progress, finished parts)
POLL_S = 0.2


def torchrun_world_size() -> int:
    """WORLD_SIZE as `torchrun` sets it; 1 outside torchrun."""
    try:
        return int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        raise DtmrError(f"WORLD_SIZE must be an integer, got {os.environ['WORLD_SIZE']!r}") from None


def is_main_process() -> bool:
    """Rank 0 of `torchrun`, or the only process: the one that reports."""
    return os.environ.get("RANK", "0") == "0"


def anonymize_rank(spec: RunSpec, progress: Callable[[int, int], None] | None) -> None:
    """This process' part of a `torchrun` run; rank 0 also merges. Only rank 0 reports `progress`."""
    import torch.distributed as dist

    from ..train.distributed import init_distributed, shutdown_distributed

    context = init_distributed(spec.device)
    try:
        with contextlib.ExitStack() as stack:
            opened = open_run(spec, stack, str(context.device))
            parts, shared, settings = spec.parts, [None, None], None
            if context.is_main:
                try:
                    settings = run_settings(spec, len(opened.source), opened.runner.info)
                    stack.enter_context(locked(parts, spec.output))
                    shared[0] = run_state(parts, settings, len(opened.source), spec.options.with_provenance)
                except DtmrError as exc:
                    shared[1] = str(exc)
            dist.broadcast_object_list(shared, src=0)
            state, error = shared
            if error is not None:
                raise DtmrError(error)
            job = opened.job(state["order"])
            job.write_parts(progress if context.is_main else None, context.rank, context.world_size)
            if not context.is_main:
                return
            output = Path(spec.output)
            write_release(_as_written(job, progress), output, key_path_for(output), state["release_token"],
                          spec.options, settings, opened.runner.info, opened.source.action_names)
            remove_parts(parts)
    finally:
        shutdown_distributed()


def _as_written(job: Job, progress: Callable[[int, int], None] | None) -> Iterator[list]:
    """The parts' clips in order, each once its file exists (written by any rank)."""
    for start in job.starts:
        while not job.part(start).is_file():
            if progress is not None:
                progress(job.done(), job.clips)
            time.sleep(POLL_S)
        yield job.read(start)
    if progress is not None:
        progress(job.clips, job.clips)
