"""Opening an HDF5 file for writing so that a failed write (a full disk) never leaves libhdf5 unable to close it.

When a write of libhdf5 fails (ENOSPC), closing the file flushes its caches again, fails again, and the file
stays open inside the library: its handles are then freed while the interpreter tears down, which ends the
process in a segmentation fault (or a bus error) after dozens of "Exception ignored" tracebacks. Retrying the
close later does not help: once a close has failed the file cannot be closed any more (measured on h5py 3 /
HDF5 1.14). Two things keep every failure where it can be handled:

- the file has no chunk cache (`rdcc_nbytes=0`), so a chunk is written by the call that writes the data and
  its failure raises there, in our code, not later while h5py frees a dataset object (where the error is only
  printed and the file left half-closed). The writers write whole batches of chunks, so this costs nothing
  measurable (a library of 2,400 clips: 1.83-1.89 s either way);
- when the body raises, the file's descriptors are pointed at an anonymous memory file *before* the close:
  the temporary file is being thrown away anyway (`atomic_write` removes it), the last writes land in memory
  and are freed with it, and the close succeeds. The file is flushed before a normal close for the same
  reason: a flush that fails can still be redirected, a close that fails cannot.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import h5py


@contextlib.contextmanager
def hdf5_output(tmp: str | Path, mode: str = "w") -> Iterator[h5py.File]:
    """`h5py.File(tmp, mode)` for a temporary file that is discarded when the body raises."""
    h5 = h5py.File(tmp, mode, rdcc_nbytes=0)
    try:
        yield h5
        h5.flush()
    except BaseException:
        discard_writes(tmp)
        with contextlib.suppress(Exception):
            h5.close()
        raise
    h5.close()


def discard_writes(path: str | Path) -> int:
    """Point every descriptor of this process open on `path` at an anonymous memory file, so that what is
    still written to it (a close's flush) cannot fail. Returns how many descriptors were redirected; 0 where
    the system offers no `/proc/self/fd` or `memfd_create` (the close is then tried as it is)."""
    if not hasattr(os, "memfd_create"):
        return 0
    target = os.path.realpath(path)
    redirected = 0
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc/self/fd"):
            with contextlib.suppress(OSError, ValueError):
                if os.readlink(f"/proc/self/fd/{name}") != target:
                    continue
                memory = os.memfd_create("dtmr-discarded-write")
                try:
                    os.dup2(memory, int(name))
                    redirected += 1
                finally:
                    os.close(memory)
    return redirected
