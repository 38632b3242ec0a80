"""Atomic file replacement: write to a temporary file next to the target, then rename it into place.

A crash (or an exception) before the rename leaves the old file untouched and removes the temporary one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_write(path: str | Path, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path in `path`'s folder; on success it replaces `path` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix or ".tmp", dir=path.parent)
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
