"""Atomic file replacement: write to a temporary file next to the target, then rename it into place.

A crash (or an exception) before the rename leaves the old file untouched and removes the temporary one. A
process killed outright (kill -9, power loss) cannot remove its temporary file, so the name says who wrote
it, `.NAME.HOST.PID.RANDOM.tmp`, and the next write of the same target removes those of dead writers.

A full disk is a one-line `DiskFullError` naming the target (the CLI exits 2), the temporary file removed:
an `OSError` ENOSPC / EDQUOT from any writer, and a failure of torch's zip writer (a RuntimeError without an
errno: "file write failed", "iostream error") when the target's file system has less than `NEARLY_FULL` left.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import DtmrError

#: errno values that say the disk (or the user's quota) is full
FULL = (errno.ENOSPC, errno.EDQUOT)
#: free bytes under which a write failure without an errno (torch's) is taken for a full disk
NEARLY_FULL = 64 << 20


class DiskFullError(DtmrError):
    """A write ran out of space; `path` is the file that was being written (not its temporary name)."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        super().__init__(f"{path}: no space left on the device (the partial file was removed; "
                         f"{_free_text(Path(path).parent)} free there)")


def _host() -> str:
    """This machine's name as it goes into a file name (a folder may be shared between machines)."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:64] or "host"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    except (OverflowError, ValueError):
        return False
    return True


def remove_stale_temporaries(path: str | Path, suffix: str = ".tmp") -> list[Path]:
    """Remove the temporary files `atomic_write(path, suffix)` left when its process was killed: those
    written on this machine by a process that no longer runs. Returns what it removed."""
    path = Path(path)
    pattern = re.compile(rf"\.{re.escape(path.name)}\.{re.escape(_host())}\.(\d+)\.[^.]+{re.escape(suffix)}")
    removed = []
    with contextlib.suppress(OSError):
        for entry in path.parent.iterdir():
            found = pattern.fullmatch(entry.name)
            if found and int(found.group(1)) != os.getpid() and not _alive(int(found.group(1))):
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()
                    removed.append(entry)
    return removed


@contextlib.contextmanager
def atomic_write(path: str | Path, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path in `path`'s folder; on success it replaces `path` atomically."""
    path = Path(path)
    suffix = suffix or ".tmp"
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path, suffix)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_host()}.{os.getpid()}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    # mkstemp creates 0600 files; keep the mode of the file we replace, or the usual 0644.
    os.chmod(tmp_path, path.stat().st_mode & 0o777 if path.exists() else 0o644)
    try:
        yield tmp_path
        with open(tmp_path, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp_path, path)
    except DiskFullError as exc:  # a writer of the temporary file (ClipLibrary.write) said so: name ours
        if exc.path == str(tmp_path):
            with contextlib.suppress(FileNotFoundError):
                tmp_path.unlink()
            raise DiskFullError(path) from None
        raise
    except (OSError, RuntimeError) as exc:
        if is_disk_full(exc, tmp_path):
            with contextlib.suppress(FileNotFoundError):
                tmp_path.unlink()
            raise DiskFullError(path) from None
        raise
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()


def is_disk_full(exc: BaseException, where: str | Path) -> bool:
    """Whether `exc`, raised while writing `where`, says that its disk is full."""
    if isinstance(exc, OSError):
        return exc.errno in FULL
    if isinstance(exc, RuntimeError) and _torch_write_failure(exc):
        free = _free_bytes(Path(where).parent)
        return free is not None and free < NEARLY_FULL
    return False


#: what torch's zip writer says when a write fails (its C++ stream carries no errno)
_TORCH_WRITE_FAILURES = ("file write failed", "iostream error", "inline_container", "PytorchStreamWriter")


def _torch_write_failure(exc: BaseException) -> bool:
    """Whether `exc` or an exception it was raised while handling is torch's failure to write a file."""
    seen = 0
    while exc is not None and seen < 8:
        if isinstance(exc, RuntimeError) and any(text in str(exc) for text in _TORCH_WRITE_FAILURES):
            return True
        exc, seen = exc.__context__, seen + 1
    return False


def _free_bytes(folder: Path) -> int | None:
    try:
        stat = os.statvfs(folder)
    except OSError:
        return None
    return stat.f_bavail * stat.f_frsize


def _free_text(folder: Path) -> str:
    free = _free_bytes(folder)
    if free is None:
        return "unknown space"
    return f"{free / (1 << 20):.1f} MiB" if free >= 1 << 20 else f"{free} bytes"
