"""The long-lived worker: results, supersede, cancel, failures, and a clean stop."""

import threading
import time

import pytest

from app.core.cancel import CancelToken, JobCancelled, no_progress
from app.workers.job_thread import JobThread


class SlowJob:
    """Counts to `request` in 10 ms steps, checking the token; raises on a negative request."""

    def __init__(self):
        self.started = []
        self.gate = threading.Event()

    def __call__(self, request, token, progress):
        self.started.append(request)
        if request < 0:
            raise ValueError("negative request\nsecond line")
        for i in range(request):
            time.sleep(0.01)
            progress(i + 1, request, "counting")
        return request * 10


@pytest.fixture
def worker(qtbot):
    job = SlowJob()
    thread = JobThread(job, "test worker")
    events = {"finished": [], "cancelled": [], "failed": [], "progress": []}
    thread.job_finished.connect(lambda i, r: events["finished"].append((i, r)))
    thread.job_cancelled.connect(lambda i: events["cancelled"].append(i))
    thread.job_failed.connect(lambda i, t: events["failed"].append((i, t)))
    thread.job_progress.connect(lambda i, d, t, m: events["progress"].append((i, d, t)))
    yield thread, job, events
    thread.stop()


def test_result_arrives_on_the_gui_thread(worker, qtbot):
    thread, job, events = worker
    rid = thread.submit(3)
    qtbot.waitUntil(lambda: bool(events["finished"]), timeout=5000)
    assert events["finished"] == [(rid, 30)]
    assert [p[1] for p in events["progress"]] == [1, 2, 3]
    assert not thread.busy


def test_newer_request_supersedes_running_and_pending(worker, qtbot):
    thread, job, events = worker
    first = thread.submit(200)  # 2 s if it were not superseded
    qtbot.waitUntil(lambda: job.started == [200], timeout=5000)
    second = thread.submit(150)
    third = thread.submit(2)
    qtbot.waitUntil(lambda: bool(events["finished"]), timeout=5000)
    assert events["finished"] == [(third, 20)]
    assert sorted(events["cancelled"]) == [first, second]
    assert 150 not in job.started  # the pending request was dropped, never run
    assert thread.isRunning()  # the same thread serves the next request
    thread.submit(1)
    qtbot.waitUntil(lambda: len(events["finished"]) == 2, timeout=5000)


def test_cancel_stops_the_running_job(worker, qtbot):
    thread, job, events = worker
    rid = thread.submit(300)
    qtbot.waitUntil(lambda: bool(events["progress"]), timeout=5000)
    started = time.monotonic()
    thread.cancel()
    qtbot.waitUntil(lambda: events["cancelled"] == [rid], timeout=5000)
    assert time.monotonic() - started < 1.0 and not events["finished"]


def test_a_crashing_job_reports_one_line_and_the_worker_survives(worker, qtbot):
    thread, job, events = worker
    rid = thread.submit(-1)
    qtbot.waitUntil(lambda: bool(events["failed"]), timeout=5000)
    assert events["failed"] == [(rid, "ValueError: negative request")]
    thread.submit(1)
    qtbot.waitUntil(lambda: bool(events["finished"]), timeout=5000)


def test_stop_ends_a_busy_thread(qtbot):
    thread = JobThread(SlowJob(), "stopping")
    thread.submit(1000)
    time.sleep(0.05)
    started = time.monotonic()
    thread.stop()
    assert not thread.isRunning() and time.monotonic() - started < 1.0


def test_job_runs_synchronously_without_a_thread():
    """JABS style: the job itself is plain Python, testable without Qt."""
    token = CancelToken()
    assert SlowJob()(2, token, no_progress) == 20
    token.cancel()
    with pytest.raises(JobCancelled):
        token.check()


def test_a_library_error_reads_as_written_and_another_names_its_class():
    """`DtmrError`s are written for users ("FILE: what is wrong"); a job's failure showed "DtmrError: FILE: …"."""
    from app.workers.job_errors import one_line_error
    from dtmr.errors import DtmrError, InputError

    assert one_line_error(InputError("/data/a.npz", "not an .npz archive")) == "/data/a.npz: not an .npz archive"
    assert one_line_error(DtmrError("no clips\nsecond line")) == "no clips"
    assert one_line_error(ValueError("bad value")) == "ValueError: bad value"
