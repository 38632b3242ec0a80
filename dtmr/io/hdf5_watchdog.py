"""Read an HDF5 file only after a child process has read it within a deadline (issue 20).

Some damage makes libhdf5 itself loop forever: junk in the size field of the global heap that holds a
library's string attributes makes h5py spin while reading them, inside C, where no Python timeout, signal
handler or thread can stop it. So before any reader opens a library, `check_readable(path)` has a child
process (`dtmr.io.hdf5_probe`, which imports only h5py and NumPy) read everything a reader could touch;
if its answer does not come within `DEADLINE_S`, the child is killed and the file is refused with
"damaged library (reading did not finish)". A child that dies while reading (a crash in libhdf5) refuses
the file too. Only when the child finished does the caller read the file itself: the same library code on
the same bytes then finishes as well.

Cost: the child is started once per process and kept (about 0.2 s: Python and h5py); each check
after that is one round trip plus the child's reading, a few milliseconds for a small library (measured
figures in docs/io.md). Results are cached per file (device, inode, size, mtime, ctime), so a file is
checked once per process, but only once it had been left unchanged for `_SETTLED_NS` before the check
started: a file rewritten within the file system's timestamp granularity could otherwise keep its
identity with other bytes (git's "racily clean" index entries, the same problem).
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import subprocess
import threading
import time
from collections import OrderedDict
from pathlib import Path

from ..errors import DtmrError, InputError
from .child_script import child_command

#: seconds the child may take to read one file (healthy files take milliseconds; a hang never ends)
DEADLINE_S = 30.0
#: seconds the child may take to start (import h5py) before the check itself is called impossible
STARTUP_S = 120.0
#: a file's result is kept only if it had not changed for this long when its check started
_SETTLED_NS = 2_000_000_000
#: files whose result is kept (the oldest is forgotten first)
_CACHE_SIZE = 256
NOT_FINISHED = "damaged library (reading did not finish)"
CRASHED = "damaged library (reading it crashed the HDF5 library)"

_lock = threading.Lock()
_results: OrderedDict[tuple, str | None] = OrderedDict()


class _Child:
    """The long-lived checking process, and a thread that forwards its answers (None: it ended)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.process = subprocess.Popen(
            _command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            bufsize=1,
        )
        self.answers: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        threading.Thread(target=self._forward, name="hdf5-watchdog", daemon=True).start()
        if self.answer(STARTUP_S) != "ready":
            self.stop()
            raise DtmrError(f"the HDF5 checking process ({' '.join(_command())}) did not start")

    def _forward(self) -> None:
        for line in self.process.stdout:
            self.answers.put(line.strip())
        self.answers.put(None)

    def answer(self, timeout: float) -> str | None:
        """The child's next line; "" when none came within `timeout` seconds, None when it has ended."""
        try:
            return self.answers.get(timeout=timeout)
        except queue.Empty:
            return ""

    def send(self, path: str) -> bool:
        """Ask for `path` to be read; False when the child has ended since its last answer."""
        try:
            self.process.stdin.write(json.dumps({"path": path, "deadline": DEADLINE_S}) + "\n")
            self.process.stdin.flush()
            return True
        except OSError:
            return False

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()

    def close(self) -> None:
        """End the child: closing its input ends its loop; kill it if it is busy reading."""
        try:
            self.process.stdin.close()
            self.process.wait(timeout=1)
        except (OSError, subprocess.TimeoutExpired):
            self.stop()


def _command() -> list[str]:
    return child_command("hdf5_probe")


_child: _Child | None = None


def _running_child() -> _Child:
    """The child of this process (a forked process never uses its parent's), started when needed."""
    global _child
    if _child is None or _child.pid != os.getpid() or _child.process.poll() is not None:
        _child = _Child()
    return _child


@atexit.register
def _close_child() -> None:
    if _child is not None and _child.pid == os.getpid():
        _child.close()


def _ask(path: str) -> str | None:
    """Have the child read `path`: None when it finished, else the reason to refuse the file."""
    global _child
    child = _running_child()
    if not child.send(path):  # it ended since it last answered (killed from outside): one new try
        child.stop()
        _child = None
        child = _running_child()
        child.send(path)
    answer = child.answer(DEADLINE_S)
    if answer == "done":
        return None
    child.stop()
    _child = None
    return NOT_FINISHED if answer == "" else CRASHED


def check_readable(path: str | Path) -> None:
    """Raise InputError naming `path` when reading it with h5py would not finish (or would crash).

    A missing file passes (the reader reports it). Results are cached per file, see the module docstring.
    """
    absolute = os.path.abspath(path)
    try:
        stat = os.stat(absolute)
    except OSError:
        return
    key = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    with _lock:
        if key in _results:
            reason = _results[key]
        else:
            started = time.time_ns()
            reason = _ask(absolute)
            if max(stat.st_mtime_ns, stat.st_ctime_ns) < started - _SETTLED_NS:
                _results[key] = reason
                if len(_results) > _CACHE_SIZE:
                    _results.popitem(last=False)
    if reason is not None:
        raise InputError(path, reason)
