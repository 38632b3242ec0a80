"""`dtmr anonymize --workers N`: N processes on this machine write the parts, this one merges them as they come.

The run's serial work is kept off the critical path:

- the workers are started first (spawn, so CUDA works in them; one torch thread each: N workers on N
  cores): while each imports torch, opens the sources and loads the model, this process opens the source,
  hashes the model file, takes the lock and draws or reads `run.json`. It never loads the model: the
  first worker to be ready tells it what the method is (`MethodInfo`);
- it then sends every worker the drawn order and the chunks still missing; a worker takes the next chunk
  from a shared counter when it finishes one (no chunk waits behind a slower worker), writes its part and
  says so;
- this process merges part k into the release as soon as parts 0..k exist (dtmr/release/merge.py), while
  the workers compute the rest, and draws the one progress bar. A worker sends the clips of the part it
  wrote with its message, in their stored form (what `PartFiles.read` would give, dtmr/release/chunks.py), so
  no process reads back a part of this run: only the parts of an earlier, interrupted run are read from disk.

A part depends only on its chunk, so which worker writes it does not change the release: it is byte for byte
that of one process with the same `run.json`, provided the arithmetic is the same in every process (same
device, thread count and model batch). A worker stopped by a DtmrError sends its one-line message, which
this process raises as its own; a worker that dies stops the run ("worker k of N ... stopped"). Either way
the parts written are kept and the same command resumes. Ctrl-C reaches every process of the terminal: the
workers ignore it and this process stops them.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import DtmrError
from ..io.sources import open_clip_source
from .chunks import Job, PartFiles
from .key import key_path_for
from .merge import write_release
from .run import RunSpec, locked, open_run, remove_parts, run_settings, run_state
from .runner import MethodInfo, parameter_free_info

#: torch intra-op threads of each worker
WORKER_THREADS = 1
#: seconds between two looks at the workers while waiting (progress, a worker that died)
POLL_S = 0.2
#: exit code of a worker stopped by a DtmrError (its message went to the parent)
WORKER_ERROR = 2


def anonymize_with_workers(spec: RunSpec, workers: int, progress: Callable[[int, int], None] | None) -> None:
    """The whole run of `dtmr anonymize --workers N`: start the workers, open the run, merge."""
    crew = _Crew(spec, workers)
    try:
        with contextlib.ExitStack() as stack:
            source = open_clip_source(spec.input_path)
            stack.callback(source.close)
            clips = len(source)
            if clips == 0:
                raise DtmrError(f"{spec.input_path}: no clips to anonymize")
            info = parameter_free_info(spec.method, source.topology) if spec.method else crew.method_info()
            settings = run_settings(spec, clips, info)
            stack.enter_context(locked(spec.parts, Path(spec.output)))
            state = run_state(spec.parts, settings, clips, spec.options.with_provenance)
            files = PartFiles(spec.parts, clips, spec.chunk)
            missing = files.missing()
            crew.start(state["order"], missing)
            kept = files.done()

            def report() -> None:
                if progress is not None:
                    progress(kept + sum(files.size(start) for start in crew.written), clips)

            def parts() -> Iterator[list]:
                for start in files.starts:
                    if start in crew.missing:
                        crew.wait_for(start, report)
                    else:
                        report()
                    received = crew.received.pop(start, None)
                    yield files.read(start) if received is None else received

            output = Path(spec.output)
            write_release(parts(), output, key_path_for(output), state["release_token"], spec.options, settings,
                          info, source.action_names)
            remove_parts(spec.parts)
    finally:
        crew.stop()  # once every part is merged, the workers have nothing left but exiting: not waited for


class _Crew:
    """The worker processes and what they said: each has a pipe to this process."""

    def __init__(self, spec: RunSpec, workers: int):
        context = multiprocessing.get_context("spawn")
        self.spec, self.workers = spec, workers
        self.counter = context.Value("q", 0)  # the next index into the missing chunks
        self.connections, self.processes = [], []
        for rank in range(workers):
            parent, child = context.Pipe()
            process = context.Process(target=_worker, args=(spec, rank, child, self.counter), daemon=True,
                                      name=f"dtmr-anonymize-{rank}")
            process.start()
            child.close()  # this process keeps its own end only, so a worker's exit reads as the end of its pipe
            self.connections.append(parent)
            self.processes.append(process)
        self.open = set(range(workers))  # pipes not yet at their end
        self.infos: list[MethodInfo] = []
        self.missing: set[int] = set()
        self.written: set[int] = set()
        self.received: dict[int, list] = {}  # part start -> its clips, until merged

    def method_info(self) -> MethodInfo:
        """What the first worker to load the model says the method is."""
        while not self.infos:
            self._receive(POLL_S)
        return self.infos[0]

    def start(self, order: list[int], missing: list[int]) -> None:
        """Send every worker the drawn order and the starts of the chunks to write."""
        self.missing = set(missing)
        for rank in sorted(self.open):
            try:
                self.connections[rank].send(("run", order, missing))
            except OSError:  # it stopped while setting up: its error (or exit code) stops the run
                self._receive(0)

    def wait_for(self, start: int, tick: Callable[[], None]) -> None:
        """Until the part of chunk `start` is written; `tick` after every look."""
        while start not in self.written:
            self._receive(POLL_S)
            tick()
            if start in self.written or any(p.exitcode is None for p in self.processes):
                continue
            for rank in list(self.open):  # every worker has exited: what they said last is in their pipes
                self._read(rank, self.connections[rank])
            if start not in self.written:
                raise DtmrError(f"{self.spec.output}: every worker finished, yet the part of clips {start} and on was "
                                "never reported written; rerun the same command to resume")
        tick()

    def stop(self) -> None:
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        for process in self.processes:
            process.join()
        for connection in self.connections:
            connection.close()

    def _receive(self, timeout: float) -> None:
        """Handle what the workers said within `timeout` seconds; a DtmrError when one failed or died."""
        pipes = {self.connections[rank]: rank for rank in self.open}
        multiprocessing.connection.wait([*pipes, *(p.sentinel for p in self.processes)], timeout)
        for connection, rank in pipes.items():
            self._read(rank, connection)
        for rank, process in enumerate(self.processes):
            if process.exitcode not in (None, 0):
                self._read(rank, self.connections[rank])  # its last words, if any, explain it
                raise DtmrError(f"worker {rank} of {self.workers} writing {self.spec.output} stopped (exit code "
                                f"{process.exitcode}); the parts written are kept: rerun the same command to resume")

    def _read(self, rank: int, connection: multiprocessing.connection.Connection) -> None:
        while rank in self.open and connection.poll():
            try:
                kind, *payload = connection.recv()
            except (EOFError, OSError):
                self.open.discard(rank)
                return
            if kind == "error":
                raise DtmrError(payload[0])
            if kind == "ready":
                self.infos.append(payload[0])
            elif kind == "part":
                start, clips = payload
                self.written.add(start)
                self.received[start] = clips


def _worker(spec: RunSpec, rank: int, connection, counter) -> None:
    """One worker: open the run's sources and method, say it is ready, then write parts until none is left."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops the workers
    import torch

    torch.set_num_threads(WORKER_THREADS)
    try:
        with contextlib.ExitStack() as stack:
            opened = open_run(spec, stack, spec.device)
            connection.send(("ready", opened.runner.info))
            _, order, missing = connection.recv()
            job: Job = opened.job(order)
            while (index := _take(counter)) < len(missing):
                start = missing[index]
                job.write_part(start, keep=True)
                connection.send(("part", start, job.read(start)))
    except DtmrError as exc:
        connection.send(("error", str(exc)))
        sys.exit(WORKER_ERROR)
    except (EOFError, BrokenPipeError):  # the parent is gone: nothing to report to
        sys.exit(WORKER_ERROR)


def _take(counter) -> int:
    with counter.get_lock():
        index = counter.value
        counter.value = index + 1
    return index
