"""Cooperative cancellation of a background job: the job checks its token between steps."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any


class JobCancelled(Exception):
    """Raised inside a job by `CancelToken.check()` once the job was cancelled or superseded."""


class CancelToken:
    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise JobCancelled()


#: progress(done, total, message) as a job reports it; the worker forwards it as a Qt signal
ProgressFn = Callable[[int, int, str], None]

#: a background job, ``run(request, token, progress) -> result``; the workers run every kind of job, so
#: request and result are `Any` here (each job module types its own, e.g. `RetargetRequest`)
Job = Callable[[Any, CancelToken, ProgressFn], Any]


def no_progress(done: int, total: int, message: str = "") -> None:
    """The progress callback of a job run outside a worker (tests, the CLI)."""
