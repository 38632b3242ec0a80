"""A job for `ProcessJob` tests; it lives in its own module so that a spawned child can import it."""

import os
import time


class CountingJob:
    """Requests: ("count", n) counts to n in 10 ms steps (returns n * 10 and the child's pid);
    ("fail", text) raises ValueError(text); ("crash", code) ends the process at once."""

    def __call__(self, request, token, progress):
        kind, value = request
        if kind == "fail":
            raise ValueError(value)
        if kind == "crash":
            os._exit(value)
        for i in range(value):
            time.sleep(0.01)
            progress(i + 1, value, "counting")
        token.check()
        return value * 10, os.getpid()


class UnpicklableResultJob:
    """Returns a lambda, which cannot cross the pipe."""

    def __call__(self, request, token, progress):
        return lambda: request


class SlowExitJob:
    """Answers ("count", n) like `CountingJob`; its child takes `EXIT_S` to end after it is asked to (as a
    model process tearing torch down does)."""

    EXIT_S = 0.6

    def __init__(self):
        from multiprocessing.util import Finalize

        Finalize(self, time.sleep, args=(self.EXIT_S,), exitpriority=0)

    def __call__(self, request, token, progress):
        return CountingJob()(request, token, progress)
