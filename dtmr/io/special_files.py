"""Refusing a special file (a FIFO, a socket, a device) before it is opened: opening a FIFO blocks until a writer
comes, and a device such as /dev/zero never ends. Only a stat, which never blocks; a missing path passes, for
its reader to say so."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import InputError


def refuse_special_file(path: str | Path) -> None:
    """InputError naming `path` when it is neither a regular file nor a folder (symbolic links followed)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a special file")
    raise InputError(path, f"{kind}, not a regular file: refused before reading (it could block or never end)")
