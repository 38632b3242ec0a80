"""`JobThread`: one long-lived QThread per kind of background job (JABS/napari pattern).

A job is any callable ``run(request, token, progress) -> result``; one with a ``close()`` method (a
`ProcessJob`, whose job runs in a child process) is closed when the thread stops. `submit()` replaces the
pending request and cancels the running one, so a newer request supersedes an older one: the older job
stops at its next `token.check()` and its result, if it still arrives, is dropped. The thread is started
once and reused; scrubbing or clicking never creates or destroys threads. Results cross to the GUI thread through queued
Qt signals; nothing here touches widgets or OpenGL.
"""

from __future__ import annotations

import threading
import traceback
from collections.abc import Iterable
from typing import Any

from PySide6.QtCore import QThread, Signal

from ..core.cancel import CancelToken, Job, JobCancelled
from .job_errors import ChildJobError, one_line_error


class JobThread(QThread):
    """Signals carry the request id that `submit()` returned."""

    job_started = Signal(int)
    job_progress = Signal(int, int, int, str)  # id, done, total, message
    job_finished = Signal(int, object)  # id, result
    job_failed = Signal(int, str)  # id, one-line message
    job_cancelled = Signal(int)  # id (cancelled or superseded)

    def __init__(self, job: Job, name: str, parent=None) -> None:
        super().__init__(parent)
        self.setObjectName(name)
        self._job = job
        self._lock = threading.Condition()
        #: requests are `Any`: every kind of job passes through (`app.core.cancel.Job`)
        self._pending: tuple[int, Any] | None = None
        self._running: tuple[int, CancelToken] | None = None
        self._next_id = 0
        self._stopping = False

    # --- GUI-thread API --------------------------------------------------------------------------
    def submit(self, request: Any) -> int:
        """Queue `request`, superseding the pending and the running one; returns its id."""
        with self._lock:
            self._next_id += 1
            dropped = self._pending
            self._pending = (self._next_id, request)
            if self._running is not None:
                self._running[1].cancel()
            self._lock.notify()
            request_id = self._next_id
        if dropped is not None:
            self.job_cancelled.emit(dropped[0])
        if not self.isRunning():
            self.start()
        return request_id

    def cancel(self) -> None:
        """Cancel the running job and drop the pending one."""
        with self._lock:
            dropped, self._pending = self._pending, None
            if self._running is not None:
                self._running[1].cancel()
        if dropped is not None:
            self.job_cancelled.emit(dropped[0])

    @property
    def busy(self) -> bool:
        with self._lock:
            return self._pending is not None or self._running is not None

    def stop(self) -> None:
        """Cancel everything and end the thread (blocks until the running job reaches a check)."""
        stop_threads([self])

    def _request_stop(self) -> None:
        with self._lock:
            self._stopping = True
            self._pending = None
            if self._running is not None:
                self._running[1].cancel()
            self._lock.notify()

    # --- worker thread ---------------------------------------------------------------------------
    def run(self) -> None:
        while True:
            with self._lock:
                while self._pending is None and not self._stopping:
                    self._lock.wait()
                if self._stopping:
                    return
                request_id, request = self._pending
                self._pending = None
                token = CancelToken()
                self._running = (request_id, token)
            self._run_one(request_id, request, token)
            with self._lock:
                self._running = None

    def _run_one(self, request_id: int, request: Any, token: CancelToken) -> None:
        self.job_started.emit(request_id)

        def progress(done: int, total: int, message: str = "") -> None:
            token.check()
            self.job_progress.emit(request_id, int(done), int(total), message)

        try:
            result = self._job(request, token, progress)
            token.check()
        except JobCancelled:
            self.job_cancelled.emit(request_id)
        except Exception as exc:  # a crash in a job must never take the Studio down (DESIGN §8)
            if token.cancelled:
                self.job_cancelled.emit(request_id)
            else:
                self.job_failed.emit(request_id, one_line_error(exc))
                if not isinstance(exc, ChildJobError):  # the child printed its own traceback
                    traceback.print_exc()
        else:
            self.job_finished.emit(request_id, result)


def stop_threads(threads: Iterable[JobThread]) -> None:
    """Stop several job threads together: each cancelled, each waited for, then the jobs that hold a child
    process (`ProcessJob`) all asked to end before any is waited for. One after another, closing the Studio
    waited for its three model processes in turn: 1.44 s."""
    threads = list(threads)
    for thread in threads:
        thread._request_stop()
    for thread in threads:
        thread.wait()
    jobs = [thread._job for thread in threads]
    for job in jobs:
        begin = getattr(job, "begin_close", None)
        if begin is not None:
            begin()
    for job in jobs:
        close = getattr(job, "close", None)
        if close is not None:  # a job holding a resource, such as a `ProcessJob`'s child process
            close()

