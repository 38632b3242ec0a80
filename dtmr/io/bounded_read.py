"""Reading a whole user file into memory, refused past a size limit before anything is read, with one-line
errors naming it: what the text and JSON readers (BVH, keypoint JSON) share."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import InputError
from .special_files import refuse_special_file


def read_bounded(path: str | Path, limit: int, what: str) -> bytes:
    """The bytes of `path` (`what` names the kind of file in errors); an InputError for a missing file, a
    folder, an unreadable one or one over `limit` bytes (also one that grows past it while read)."""
    refuse_special_file(path)
    try:
        size = os.stat(path).st_size
        if size > limit:
            raise InputError(path, f"file is {size} bytes, over the {limit}-byte limit for {what}")
        with open(path, "rb") as fh:
            # a buffer of the file's size, not of the limit: read(limit + 1) allocates the whole limit first
            data = fh.read(size + 1)
            while len(data) <= limit and (more := fh.read(min(1 << 20, limit + 1 - len(data)))):
                data += more
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, f"a folder, not {what}") from None
    except OSError as exc:
        raise InputError(path, f"cannot be read ({exc.strerror or type(exc).__name__})") from None
    if len(data) > limit:
        raise InputError(path, f"grew past the {limit}-byte limit for {what} while it was read")
    return data
