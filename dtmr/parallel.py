"""Independent cells of work (the methods × seeds of `dtmr evaluate`, the attackers × forms × folds of
`dtmr audit`) run over N local processes.

Each worker is a fresh (spawned, so CUDA-safe) process that builds its own context once with
`setup(*setup_args, device)` (reading the data and models from files rather than inheriting them) and
then takes cells from a shared queue until none are left: whichever worker runs a cell, and in whatever
order, the cell's result depends only on its key, because the cell functions seed everything they draw
from that key (`seed_cell`). Workers run `threads` torch threads each (1 by default: N workers on N cores).

A cell that raises, or a worker that dies, stops the run with a one-line `DtmrError` naming the cell;
whatever the cells finished before stays where they put it (the audit's part files), so a rerun resumes.
"""

from __future__ import annotations

import multiprocessing
import queue
import sys
import zlib
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from .errors import DtmrError

_POLL_SECONDS = 0.5


@dataclass(frozen=True)
class Workers:
    """`--workers N --threads-per-worker T`, with each worker's device (`worker_devices`)."""

    count: int
    threads: int
    devices: tuple[str, ...]

    @property
    def parallel(self) -> bool:
        return self.count > 1


def seed_cell(*key) -> None:
    """Seed torch's and numpy's global generators from a cell's key alone, so that anything a cell draws
    without its own generator is the same whichever process runs it and whatever ran before."""
    import numpy as np
    import torch

    seed = zlib.crc32(repr(key).encode())
    torch.manual_seed(seed)
    np.random.seed(seed)


def worker_devices(requested: str | None, picked: str, workers: int) -> list[str]:
    """The device of each worker: when the user asked for no device in particular (none, `auto` or
    `cuda`) and `picked` is a GPU, the workers spread over the visible GPUs (worker i on GPU i mod count);
    otherwise (`cpu`, an explicit `cuda:N`) every worker gets `picked`."""
    if requested not in (None, "", "auto", "cuda") or not picked.startswith("cuda"):
        return [picked] * workers
    import torch

    return [f"cuda:{i % torch.cuda.device_count()}" for i in range(workers)]


def run_cells(keys: Sequence[Hashable], work: Callable, setup: Callable, setup_args: tuple, *, workers: int,
              devices: Sequence[str], describe: Callable[[Hashable], str], threads: int = 1,
              log: Callable[[str], None] = print) -> dict:
    """{key: work(context, key)} for every key, computed by `workers` processes (`devices[i]` for worker
    i; `work` and `setup` must be module-level functions, `setup_args` picklable). Each cell's log lines
    reach `log` when the cell is done, after a line naming it."""
    keys = list(keys)
    if not keys:
        return {}
    workers = max(1, min(workers, len(keys)))
    mp = multiprocessing.get_context("spawn")
    tasks, results = mp.Queue(), mp.Queue()
    for index in range(len(keys)):
        tasks.put(index)
    for _ in range(workers):
        tasks.put(None)
    # the cell each worker runs (-1: none), in shared memory: written before the cell starts, so a worker
    # that dies without a word still names it
    running = mp.Array("i", [-1] * workers, lock=False)
    processes = [mp.Process(target=_worker, args=(i, keys, work, setup, setup_args, devices[i], threads, tasks,
                                                  results, running), daemon=True)
                 for i in range(workers)]
    for p in processes:
        p.start()
    done: dict = {}
    try:
        while len(done) < len(keys):
            try:
                message = results.get(timeout=_POLL_SECONDS)
            except queue.Empty:
                _check_alive(processes, running, keys, done, describe)
                continue
            kind, worker, index, payload = message
            if kind == "done":
                value, lines = payload
                log(f"[worker {worker}] {describe(keys[index])}: done")
                for line in lines:
                    log(f"  {line}")
                done[keys[index]] = value
            else:
                where = describe(keys[index]) if index is not None else f"worker {worker} (setting up)"
                raise DtmrError(f"{where}: {payload}")
    finally:
        for p in processes:
            if p.is_alive():
                p.terminate()
            p.join()
        tasks.cancel_join_thread()  # cells never taken (after an error) may stay in the queue's pipe
        tasks.close()
        results.close()
    return done


def _check_alive(processes, running, keys: list, done: dict, describe) -> None:
    for worker, p in enumerate(processes):
        if p.exitcode not in (None, 0):
            index = running[worker]
            where = describe(keys[index]) if index >= 0 else f"worker {worker}"
            raise DtmrError(f"{where}: its worker process died (exit code {p.exitcode})")
    if all(p.exitcode is not None for p in processes):  # every worker finished, yet results are missing
        lost = next(k for k in keys if k not in done)
        raise DtmrError(f"{describe(lost)}: its result never reached the main process")


def _worker(worker: int, keys: list, work, setup, setup_args: tuple, device: str, threads: int, tasks,
            results, running) -> None:
    import torch

    torch.set_num_threads(threads)
    try:
        context = setup(*setup_args, device)
    except Exception as error:  # noqa: BLE001 - reported to the parent as one line, then this worker stops
        results.put(("error", worker, None, _one_line(error)))
        return
    while (index := tasks.get()) is not None:
        running[worker] = index
        lines: list[str] = []
        try:
            value = work(context, keys[index], lines.append)
        except Exception as error:  # noqa: BLE001 - as above
            results.put(("error", worker, index, _one_line(error)))
            return
        results.put(("done", worker, index, (value, lines)))
        running[worker] = -1
    sys.stderr.flush()


def _one_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    message = text[0] if text else ""
    return message if isinstance(error, DtmrError) else f"{type(error).__name__}: {message}".rstrip(": ")
