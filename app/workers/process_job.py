"""`ProcessJob`: run a model job in a child process, so that it never holds the Studio's GIL.

A `JobThread` job is ``job(request, token, progress) -> result``. Wrapped in a `ProcessJob`, the job runs in
a long-lived child process, started when the `ProcessJob` is made (with the ``spawn`` method: forking a
process that runs Qt and OpenGL threads is unsafe), and the worker thread only waits on a pipe. Why: in
one process the model's Python shares the GIL with the UI thread, and every OpenGL call of a frame gives
the GIL up and waits to get it back. `dtmr bench studio`, four runs each, alternating: the longest
event-loop stall was 32–49 ms with the model jobs in threads, 24–32 ms in child processes
(docs/studio.md, "Performance"). A crash in native code now ends the child, not the Studio.

* The job is built in the child by `factory()` (a picklable callable, e.g. a class), once, so its caches
  (loaded checkpoints) live there. Requests and results cross the pipe pickled. The `preload` modules
  (torch and the model code: seconds) are imported as soon as the child starts, while the Studio is
  still opening its library, rather than when the first request arrives.
* Cancelling: the parent writes the id of the newest cancelled request into a shared integer; the child's
  token raises `JobCancelled` at its next `check()` for that request or an older one. Messages of a
  request the parent has given up on are skipped by id.
* A failure in the job arrives as `ChildJobError` with the child's one-line message. If the child dies
  (a crash in native code, killed, out of memory), the request fails with a `ChildJobError` saying so,
  and the next request starts a new child: the Studio itself keeps running.
* `close()` ends the child (`JobThread.stop()` calls it); `begin_close()` only asks it to, so that several
  children end at once (`stop_threads`).
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import pickle
import traceback
from collections.abc import Callable
from typing import Any

from ..core.cancel import CancelToken, Job, JobCancelled, ProgressFn
from ..core.cpu_sharing import model_threads
from .job_errors import ChildJobError, one_line_error

#: how often the waiting worker thread looks at its cancel token (seconds)
POLL_S = 0.02
#: niceness added in the child: under contention the UI process gets the cores first
CHILD_NICENESS = 10


class _ChildToken:
    """The child's side of a `CancelToken`: cancelled once the parent cancelled this request or a newer one."""

    def __init__(self, request_id: int, cancelled_up_to) -> None:
        self._id = request_id
        self._cancelled_up_to = cancelled_up_to

    @property
    def cancelled(self) -> bool:
        return self._cancelled_up_to.value >= self._id

    def check(self) -> None:
        if self.cancelled:
            raise JobCancelled()


def _serve(factory: Callable[[], Job], conn, cancelled_up_to, threads: int, preload: tuple[str, ...]) -> None:
    """The child's loop: import `preload`, build the job, then answer (request id, request) messages until
    None arrives."""
    try:
        os.nice(CHILD_NICENESS)
    except OSError:
        pass
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # read by torch when the job imports it
        os.environ[variable] = str(threads)
    for module in preload:
        importlib.import_module(module)
    job = factory()
    while True:
        try:
            message = conn.recv()
        except EOFError:  # the Studio has gone
            return
        if message is None:
            return
        request_id, request = message
        token = _ChildToken(request_id, cancelled_up_to)

        def progress(done: int, total: int, text: str = "", _id=request_id, _token=token) -> None:
            _token.check()
            conn.send(("progress", _id, int(done), int(total), text))

        try:
            result = job(request, token, progress)
            token.check()
        except JobCancelled:
            conn.send(("cancelled", request_id))
        except Exception as exc:  # reported to the parent; the child serves on
            traceback.print_exc()
            conn.send(("error", request_id, one_line_error(exc)))
        else:
            try:
                conn.send(("result", request_id, result))
            except (pickle.PicklingError, TypeError, AttributeError) as exc:  # a result that cannot be pickled
                conn.send(("error", request_id, f"the {type(result).__name__} result could not be sent: "
                                                f"{one_line_error(exc)}"))


class ProcessJob:
    """``ProcessJob(factory, name)(request, token, progress)`` runs ``factory()(request, ...)`` in a child,
    which starts now and starts again after it died."""

    def __init__(self, factory: Callable[[], Job], name: str, threads: int | None = None,
                 preload: tuple[str, ...] = ()) -> None:
        self._factory = factory
        self.name = name
        self._preload = preload
        self._threads = threads if threads is not None else model_threads()  # torch threads in the child
        self._context = multiprocessing.get_context("spawn")
        self._process = None
        self._conn = None
        self._cancelled_up_to = None
        self._next_id = 0
        self._closing = False
        self._start()

    @property
    def pid(self) -> int | None:
        """The child's process id; None once it has ended or after `close()`."""
        return self._process.pid if self._process is not None and self._process.is_alive() else None

    # request and result are `Any`: every kind of job passes through (`app.core.cancel.Job`)
    def __call__(self, request: Any, token: CancelToken, progress: ProgressFn) -> Any:
        self._start()
        self._next_id += 1
        request_id = self._next_id
        try:
            self._conn.send((request_id, request))
        except (BrokenPipeError, OSError) as exc:
            raise self._died() from exc
        try:
            return self._wait(request_id, token, progress)
        except JobCancelled:
            self._cancelled_up_to.value = request_id
            raise

    def begin_close(self) -> None:
        """Ask the child to end without waiting for it (`close()` waits): `stop_threads` asks every child first,
        so that they end together."""
        if self._conn is None or self._closing:
            return
        self._closing = True
        self._cancelled_up_to.value = self._next_id
        try:
            self._conn.send(None)
        except (BrokenPipeError, OSError):
            pass

    def close(self) -> None:
        """End the child (asks it to stop, kills it if it does not within a second)."""
        self.begin_close()
        process, conn = self._process, self._conn
        self._process = self._conn = None
        self._closing = False
        if process is None:
            return
        process.join(1.0)
        if process.is_alive():
            process.kill()
            process.join(1.0)
        conn.close()

    # --- parent side, on the worker thread ---------------------------------------------------------
    def _start(self) -> None:
        if self._process is not None and self._process.is_alive():
            return
        if self._process is not None:
            self.close()
        parent_end, child_end = self._context.Pipe()
        self._cancelled_up_to = self._context.Value("q", self._next_id, lock=False)
        process = self._context.Process(target=_serve, name=f"dtmr-studio {self.name}", daemon=True,
                                        args=(self._factory, child_end, self._cancelled_up_to, self._threads,
                                              self._preload))
        process.start()
        child_end.close()
        self._process, self._conn = process, parent_end

    def _wait(self, request_id: int, token: CancelToken, progress: ProgressFn) -> Any:
        while True:
            token.check()
            try:
                ready = self._conn.poll(POLL_S)
                message = self._conn.recv() if ready else None
            except (EOFError, OSError) as exc:
                raise self._died() from exc
            if message is None:
                if not self._process.is_alive():
                    raise self._died()
                continue
            kind, message_id, *payload = message
            if message_id != request_id:
                continue  # from a request given up on earlier
            if kind == "progress":
                progress(*payload)
            elif kind == "result":
                return payload[0]
            elif kind == "cancelled":
                raise JobCancelled()
            else:
                raise ChildJobError(payload[0])

    def _died(self) -> ChildJobError:
        process = self._process
        process.join(1.0)
        code = process.exitcode
        self.close()
        return ChildJobError(f"the {self.name} process stopped unexpectedly (exit code {code}); "
                             "the next request starts a new one")
