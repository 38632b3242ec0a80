"""Model jobs in a child process: results, progress, supersede, failures, a crashed child, shutdown."""

import os

import pytest
from child_jobs import CountingJob, UnpicklableResultJob

from app.workers.job_thread import JobThread
from app.workers.process_job import ProcessJob


@pytest.fixture
def worker(qtbot):
    job = ProcessJob(CountingJob, "counting")
    thread = JobThread(job, "process worker")
    events = {"finished": [], "cancelled": [], "failed": [], "progress": []}
    thread.job_finished.connect(lambda i, r: events["finished"].append((i, r)))
    thread.job_cancelled.connect(lambda i: events["cancelled"].append(i))
    thread.job_failed.connect(lambda i, t: events["failed"].append((i, t)))
    thread.job_progress.connect(lambda i, d, t, m: events["progress"].append((i, d)))
    yield thread, job, events
    thread.stop()


def test_the_job_runs_in_a_child_and_reports_progress(worker, qtbot):
    thread, job, events = worker
    rid = thread.submit(("count", 3))
    qtbot.waitUntil(lambda: bool(events["finished"]), timeout=30000)
    (finished_id, (value, pid)), = events["finished"]
    assert finished_id == rid and value == 30
    assert pid == job.pid and pid != os.getpid()
    assert [d for i, d in events["progress"] if i == rid] == [1, 2, 3]


def test_a_newer_request_supersedes_the_running_one_in_the_child(worker, qtbot):
    thread, job, events = worker
    first = thread.submit(("count", 500))  # 5 s unless cancelled
    qtbot.waitUntil(lambda: any(i == first for i, _ in events["progress"]), timeout=30000)
    second = thread.submit(("count", 2))
    qtbot.waitUntil(lambda: bool(events["finished"]), timeout=5000)
    assert [(i, r[0]) for i, r in events["finished"]] == [(second, 20)]
    assert events["cancelled"] == [first]
    assert max(d for i, d in events["progress"] if i == first) < 300  # the child stopped counting early


def test_a_failure_in_the_child_is_one_line_and_the_child_serves_on(worker, qtbot):
    thread, job, events = worker
    failed = thread.submit(("fail", "bad input in clip.npz\nsecond line"))
    qtbot.waitUntil(lambda: bool(events["failed"]), timeout=30000)
    assert events["failed"] == [(failed, "ValueError: bad input in clip.npz")]
    pid = job.pid
    thread.submit(("count", 1))
    qtbot.waitUntil(lambda: bool(events["finished"]), timeout=5000)
    assert events["finished"][0][1] == (10, pid)


def test_a_crashed_child_fails_its_request_and_the_next_one_starts_a_new_child(worker, qtbot):
    thread, job, events = worker
    thread.submit(("count", 1))
    qtbot.waitUntil(lambda: bool(events["finished"]), timeout=30000)
    old_pid = job.pid
    crashed = thread.submit(("crash", 7))
    qtbot.waitUntil(lambda: bool(events["failed"]), timeout=5000)
    (failed_id, text), = events["failed"]
    assert failed_id == crashed and "stopped unexpectedly (exit code 7)" in text
    thread.submit(("count", 2))
    qtbot.waitUntil(lambda: len(events["finished"]) == 2, timeout=30000)
    value, pid = events["finished"][1][1]
    assert value == 20 and pid != old_pid


def test_stopping_the_thread_ends_the_child(qtbot):
    job = ProcessJob(CountingJob, "counting")
    thread = JobThread(job, "process worker")
    process = job._process
    thread.submit(("count", 1000))  # still running when the thread stops
    thread.stop()
    process.join(5)
    assert not process.is_alive() and job.pid is None


def test_a_result_that_cannot_be_sent_fails_its_request_only(qtbot):
    thread = JobThread(ProcessJob(UnpicklableResultJob, "unpicklable"), "process worker")
    failed = []
    thread.job_failed.connect(lambda i, t: failed.append(t))
    try:
        thread.submit(1)
        qtbot.waitUntil(lambda: bool(failed), timeout=30000)
        assert failed[0].startswith("the function result could not be sent")
        thread.submit(2)
        qtbot.waitUntil(lambda: len(failed) == 2, timeout=30000)  # the same child answered again
    finally:
        thread.stop()


@pytest.mark.timeout(120)
def test_threads_stopped_together_end_their_children_together(qtbot):
    """Closing the Studio waited for its three model processes one after another (1.44 s); `stop_threads` asks
    each child to end before waiting for any, so three children taking 0.6 s each end in about 0.6 s."""
    import time

    from child_jobs import SlowExitJob

    from app.workers.job_thread import stop_threads

    jobs = [ProcessJob(SlowExitJob, f"slow exit {n}") for n in range(3)]
    threads = [JobThread(job, f"worker {n}") for n, job in enumerate(jobs)]
    done = []
    for thread in threads:
        thread.job_finished.connect(lambda i, r: done.append(r))
        thread.submit(("count", 1))
    qtbot.waitUntil(lambda: len(done) == 3, timeout=60000)  # every child up and serving
    processes = [job._process for job in jobs]
    started = time.perf_counter()
    stop_threads(threads)
    elapsed = time.perf_counter() - started
    assert not any(p.is_alive() for p in processes) and all(p.exitcode == 0 for p in processes)
    assert SlowExitJob.EXIT_S <= elapsed < 2 * SlowExitJob.EXIT_S, elapsed  # one after another: 3 x 0.6 s
