"""Fits a motion model (k-same, re-timing) on the open library in a worker and hands the file to the model list.

The job is `app.core.motion_fit.MotionFitJob`, run by a `JobThread` (typed signals, a cancel token, errors
as one line) in a child process (`ProcessJob`: k-same's alignment is NumPy in Python loops, which would hold
the Studio's GIL), made on the first fit, so a Studio that never fits starts no process for it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from ..core.cancel import Job
from ..core.motion_fit import FitRequest, FitResult, MotionFitJob, user_models_dir
from ..workers.job_thread import JobThread
from ..workers.process_job import ProcessJob


def fit_in_child_process() -> Job:
    return ProcessJob(MotionFitJob, "motion fit", threads=1)


class MotionFitter(QObject):
    """`fit(library, method)` starts a fit (a newer one supersedes it); `cancel()` stops it.

    Signals: `progress(str)` while it runs, `fitted(str path, str text, str details)` when the file is written,
    `failed(str)` with the one-line reason, `finished()` after either or a cancel."""

    progress = Signal(str)
    fitted = Signal(str, str, str)
    failed = Signal(str)
    finished = Signal()

    def __init__(self, parent: QObject | None = None, folder: Path | None = None,
                 make_job: Callable[[], Job] = fit_in_child_process) -> None:
        super().__init__(parent)
        self._folder = folder
        self._make_job = make_job
        self._thread: JobThread | None = None
        self._request_id: int | None = None

    @property
    def running(self) -> bool:
        return self._request_id is not None

    def fit(self, library: Path, method: str) -> None:
        if self._thread is None:
            self._thread = JobThread(self._make_job(), "motion fit", self)
            self._thread.job_progress.connect(self._progress)
            self._thread.job_finished.connect(self._finished)
            self._thread.job_failed.connect(self._failed)
            self._thread.job_cancelled.connect(self._cancelled)
        folder = self._folder if self._folder is not None else user_models_dir()
        self._request_id = self._thread.submit(FitRequest(Path(library), method, folder))

    def cancel(self) -> None:
        if self._thread is not None:
            self._thread.cancel()

    def stop(self) -> None:
        """End the worker (the window closes)."""
        if self._thread is not None:
            self._thread.stop()

    def _progress(self, request_id: int, _done: int, _total: int, text: str) -> None:
        if request_id == self._request_id:
            self.progress.emit(text)

    def _finished(self, request_id: int, result: FitResult) -> None:
        if request_id == self._request_id:
            self._request_id = None
            self.fitted.emit(str(result.path), result.text, result.details)
            self.finished.emit()

    def _failed(self, request_id: int, text: str) -> None:
        if request_id == self._request_id:
            self._request_id = None
            self.failed.emit(text)
            self.finished.emit()

    def _cancelled(self, request_id: int) -> None:
        if request_id == self._request_id:
            self._request_id = None
            self.progress.emit("Fitting cancelled.")
            self.finished.emit()
