"""Anonymizing a whole clip source into a release and its key, resumably (`dtmr anonymize`; the run's state,
parts and lock: dtmr/release/run.py).

The release (`OUT.h5`) holds the anonymized joints, action, fps and the method, and nothing that identifies a
person or a source clip: opaque ids `R000001`... in an order drawn from `secrets` (never from the seed), no
subject, source name, path or index, view and repetition only when kept. The key (`OUT.key.json`, mode 0600)
maps each id back to its source (layouts in docs/io.md). `with_provenance` writes instead the internal,
un-scrubbed library of experiments (source order, source names, provenance in `extra`), marked
`provenance = "included"`, and still writes the key.

Several processes: `workers` > 1 starts that many processes on this machine, which take the chunks in turn
while this one merges the parts as they come (dtmr/release/workers.py); under `torchrun` every rank takes
part, chunk k going to rank k mod N, and rank 0 merges (dtmr/release/distributed.py, docs/scale.md).

Model batches: `batch` clips at a time ("auto": 32 on the CPU, what fits in a GPU's free memory), never more
than a chunk; `precision` "bf16" and `cuda_graph` apply on a CUDA device (dtmr/models/inference.py). The
batch and the precision are settings of the run: a batch's arithmetic depends on its size.

References: each clip gets a reference drawn uniformly from the reference source's clips of another subject
(any other clip when subjects are unknown), from a generator seeded by (seed, source index), so the draw does
not depend on chunking, on the order or on where a run resumed. raw and noise use no reference.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from ..errors import DtmrError
from ..io.outputs import check_output
from .key import key_path_for
from .merge import write_release
from .options import ReleaseOptions
from .run import (CHUNK, RunSpec, locked, open_run, remove_parts, run_settings, run_state, unfinished_key,
                  unfinished_release)
from .runner import AUTO
from .swap import finish_swap


def anonymize_source(input_path: str | Path, output: str | Path, *, model: str | Path | None = None,
                     method: str | None = None, references: str | Path | None = None, seed: int = 0,
                     device: str | None = None, options: ReleaseOptions = ReleaseOptions(),
                     overwrite: bool = False, progress: Callable[[int, int], None] | None = None,
                     chunk: int | None = None, workers: int = 1, batch: int | str = AUTO,
                     precision: str = "fp32", cuda_graph: bool = False) -> Path:
    """Anonymize every clip of `input_path` with the checkpoint `model` or the parameter-free `method` into the
    release `output` and its key `key_path_for(output)`; returns `output`.

    `chunk` clips make one part (default CHUNK); `workers` > 1 writes the parts in that many processes, and
    under `torchrun` (WORLD_SIZE > 1) this call is one rank of the run (dtmr/release/distributed.py). `batch`,
    `precision` and `cuda_graph`: see the module docstring."""
    from . import distributed
    from . import workers as local_workers

    output, key_path = Path(output), key_path_for(output)
    inputs = [p for p in (input_path, references, model) if p is not None]
    check_output(output, kind="clip-library", inputs=inputs, overwrite=overwrite or unfinished_release(output))
    check_output(key_path, kind="release-key", inputs=inputs, overwrite=overwrite or unfinished_key(output))
    finish_swap(output)  # a killed run's committed pair goes into place first: what follows sees one pair
    chunk = CHUNK if chunk is None else chunk
    if not (isinstance(chunk, int) and chunk >= 1):
        raise DtmrError(f"--chunk must be a clip count of at least 1, got {chunk!r}")
    if not (batch == AUTO or isinstance(batch, int) and batch >= 1):
        raise DtmrError(f"--batch must be 'auto' or a clip count of at least 1, got {batch!r}")
    world = distributed.torchrun_world_size()
    if workers < 1:
        raise DtmrError(f"--workers must be at least 1, got {workers}")
    if workers > 1 and world > 1:
        raise DtmrError("--workers starts its own processes: under torchrun leave it out (every rank takes part)")
    spec = RunSpec(input_path=str(input_path), output=str(output), model=None if model is None else str(model),
                   method=method, references=None if references is None else str(references), seed=seed,
                   device=device, options=options, chunk=chunk, batch=batch, precision=precision,
                   cuda_graph=cuda_graph, sharing=workers)
    if world > 1:
        distributed.anonymize_rank(spec, progress)
    elif workers > 1:
        local_workers.anonymize_with_workers(spec, workers, progress)
    else:
        with contextlib.ExitStack() as stack:
            opened = open_run(spec, stack, device)
            settings = run_settings(spec, len(opened.source), opened.runner.info)
            stack.enter_context(locked(spec.parts, output))
            state = run_state(spec.parts, settings, len(opened.source), options.with_provenance)
            job = opened.job(state["order"])
            job.write_parts(progress)
            write_release((job.read(start) for start in job.starts), output, key_path, state["release_token"],
                          options, settings, opened.runner.info, opened.source.action_names)
            remove_parts(spec.parts)
    return output
