import os
import signal
import subprocess
import sys

import pytest

from dtmr.io.atomic import atomic_write


def test_atomic_write_replaces_only_on_success(tmp_path):
    target = tmp_path / "lib.h5"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("crash")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["lib.h5"]
    with atomic_write(target) as tmp:
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["lib.h5"]
    assert (target.stat().st_mode & 0o777) == 0o644


def test_atomic_write_creates_missing_folders(tmp_path):
    with atomic_write(tmp_path / "a" / "b.txt") as tmp:
        tmp.write_text("x")
    assert (tmp_path / "a" / "b.txt").read_text() == "x"


CHILD_WRITER = """
import sys, time
from dtmr.io.atomic import atomic_write
with atomic_write(sys.argv[1]) as tmp:
    tmp.write_bytes(b"half")
    print(tmp, flush=True)
    time.sleep(60)
"""


def _start_writer(target):
    child = subprocess.Popen([sys.executable, "-c", CHILD_WRITER, str(target)], stdout=subprocess.PIPE, text=True)
    return child, child.stdout.readline().strip()


def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(tmp_path):
    target = tmp_path / "out.h5"
    target.write_bytes(b"old")
    child, tmp = _start_writer(target)
    try:
        assert os.path.basename(tmp).startswith(".out.h5.") and f".{child.pid}." in tmp
        with atomic_write(target) as mine:  # the writer still runs: its file is left alone
            mine.write_bytes(b"new")
        assert os.path.exists(tmp)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert os.path.exists(tmp) and target.read_bytes() == b"new"
    other = tmp_path / ".out.h5.otherhost.1.abcdefgh.tmp"  # another machine's writer on a shared folder
    other.write_bytes(b"x")
    with atomic_write(target) as mine:
        mine.write_bytes(b"newer")
    assert sorted(os.listdir(tmp_path)) == [other.name, "out.h5"]
    assert target.read_bytes() == b"newer"
