"""Replacing a release and its key as one unit: a kill at any moment leaves the old pair or the new pair.

Two files cannot be renamed at once, so the pair goes through a small journal in the run's parts folder
(`OUT.h5.parts/`, on the release's file system):

1. the new release and key are written completely beside the run's parts (`release.h5`, `release.key.json`);
2. `swap.json` is written atomically: the commit point. Before it exists the old pair is untouched (a kill
   leaves it as it was, and the staged files are rewritten by the rerun); once it exists the new pair wins;
3. the staged key is renamed over the key, then the staged release over the release, then `swap.json` is
   removed (the caller then removes the parts folder).

Between the two renames of step 3 the disk holds the new key beside the old release. Whoever opens the
release next finishes the swap first (`finish_swap`): the rerun of `dtmr anonymize` and every reader of a
release with its key (`open_release`: `dtmr export --key`, the audit, the Studio). Finishing is idempotent
(a staged file that is gone has been renamed already), so a kill while finishing is finished by the next one.
The swap is done under the run's lock: a reader that finds a journal while a run holds the lock waits for it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import time
from pathlib import Path

from ..errors import DtmrError
from ..io.atomic import atomic_write, remove_stale_temporaries
from .key import key_path_for

JOURNAL = "swap.json"
STAGED_RELEASE = "release.h5"
STAGED_KEY = "release.key.json"
JOURNAL_FORMAT = "dtmr-release-swap"
#: how long a reader waits for a run that holds the lock while a journal exists (the swap takes milliseconds)
WAIT_S = 30.0


def parts_folder(output: str | Path) -> Path:
    """The parts folder of `output`, which also holds the staged pair and the journal."""
    output = Path(output)
    return output.with_name(output.name + ".parts")


def staged_paths(output: str | Path) -> tuple[Path, Path]:
    """Where the new release and its key are written before the swap."""
    folder = parts_folder(output)
    return folder / STAGED_RELEASE, folder / STAGED_KEY


def swap_in(output: str | Path, token: str) -> None:
    """Commit the staged pair of `output` (both written completely) and move it into place. The caller holds
    the run's lock."""
    output = Path(output)
    folder = parts_folder(output)
    staged_release, staged_key = staged_paths(output)
    for path in (staged_release, staged_key):
        if not path.is_file():
            raise DtmrError(f"{path}: the staged release is incomplete; rerun the same command")
    _sync_folder(folder)
    with atomic_write(folder / JOURNAL) as tmp:
        tmp.write_text(json.dumps({"format": JOURNAL_FORMAT, "release_token": token, "release": output.name,
                                   "key": key_path_for(output).name}))
    _sync_folder(folder)
    _roll_forward(output)


def discard_staged(output: str | Path) -> None:
    """Remove a staged pair that was never committed (a run killed before its journal): the old pair stays."""
    if _journal(output) is None:
        for path in staged_paths(output):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def finish_swap(output: str | Path, wait_s: float = WAIT_S) -> bool:
    """Finish a swap of `output` that a killed run committed; True when there was one. Taken under the run's
    lock; when a live run holds it, wait up to `wait_s` for its journal to go (a DtmrError after that)."""
    output = Path(output)
    deadline = time.monotonic() + wait_s
    while _journal(output) is not None:
        fd = _try_lock(parts_folder(output))
        if fd is None:
            if time.monotonic() > deadline:
                raise DtmrError(f"another run is replacing {output}; wait for it to finish")
            time.sleep(0.05)
            continue
        try:
            if _journal(output) is None:  # the run that held the lock finished it
                return False
            _roll_forward(output)
            return True
        finally:
            os.close(fd)
    return False


def _roll_forward(output: Path) -> None:
    """Steps 3 of the swap, each skipped when done already."""
    staged_release, staged_key = staged_paths(output)
    folder = parts_folder(output)
    remove_stale_temporaries(output)
    for staged, target in ((staged_key, key_path_for(output)), (staged_release, output)):
        with contextlib.suppress(FileNotFoundError):
            os.replace(staged, target)
    _sync_folder(output.parent)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(folder / JOURNAL)
    _sync_folder(folder)


def _journal(output: str | Path) -> dict | None:
    """The committed journal of `output`'s swap, or None. A journal that is not ours is an error: rolling
    forward on it could move files the user did not mean to."""
    path = parts_folder(output) / JOURNAL
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8")[:4096])
    except (OSError, UnicodeDecodeError, ValueError):
        data = None
    if not (isinstance(data, dict) and data.get("format") == JOURNAL_FORMAT
            and data.get("release") == Path(output).name):
        raise DtmrError(f"{path}: not the journal of a release swap of {output}; remove it by hand")
    return data


def _try_lock(folder: Path) -> int | None:
    """A descriptor holding the run's lock of `folder`, or None while another process holds it."""
    try:
        fd = os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    except FileNotFoundError:  # the folder went with its finished run: the caller finds no journal next
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            return None
        raise
    return fd


def _sync_folder(folder: Path) -> None:
    """Make the renames in `folder` durable (power loss); a kill needs no sync, the kernel keeps them."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
