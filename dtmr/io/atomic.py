"""Atomic file replacement: write to a temporary file next to the target, then rename it into place.

A crash (or an exception) before the rename leaves the old file untouched and removes the temporary one. A
process killed outright (kill -9, power loss) cannot remove its temporary file, so the name says who wrote
it, `.NAME.HOST.PID.RANDOM.tmp`, and the next write of the same target removes those of dead writers.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path


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
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp_path.unlink()
