"""Opening a release with or without its key, and what the key says about one released clip.

A release is a clip library whose file attributes say `release_format = "dtmr-release"` (layout in docs/io.md).
Its key is checked against it before use: the shared `release_token`, the clip count, the release ids in order
and every clip's joint checksum, so a key of another (or an older) release is never used by mistake.
"""

from __future__ import annotations

from pathlib import Path

import h5py
import numpy as np

from ..errors import DtmrError, InputError
from ..io.hdf5_watchdog import check_readable
from ..io.library import JOINTS_CRC, ClipLibrary
from .key import ReleaseKey, key_path_for, read_key
from .swap import finish_swap

RELEASE_FORMAT = "dtmr-release"
RELEASE_VERSION = 1


def release_attributes(path: str | Path) -> dict:
    """The file-level attributes of a clip library (a release's `method`, `release_token`, ...), as plain
    Python values."""
    try:
        check_readable(path)
        with h5py.File(path, "r") as h5:
            return {str(k): _plain(v) for k, v in h5.attrs.items()}
    except (OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:
        raise InputError(path, f"unreadable attributes ({' '.join(str(exc).split())})") from None


def is_release(library: ClipLibrary) -> bool:
    """Whether `library` was written as a release by `dtmr anonymize`."""
    return release_attributes(library.path).get("release_format") == RELEASE_FORMAT


def open_release(release: str | Path, key: str | Path | None = None) -> tuple[ClipLibrary, ReleaseKey | None]:
    """The release, and its key: `key`, or `key_path_for(release)` when that file exists, else None.

    A key that does not match the release is a `DtmrError` naming both files. A replacement of the pair that a
    killed `dtmr anonymize` committed is finished first (dtmr/release/swap.py), so the pair read is one pair.
    """
    finish_swap(release)
    library = ClipLibrary(release)
    if key is None and key_path_for(release).is_file():
        key = key_path_for(release)
    if key is None:
        return library, None
    try:
        release_key = read_key(key)
        _check_match(library, release_key)
    except BaseException:
        library.close()
        raise
    return library, release_key


def release_metadata(library: ClipLibrary, key: ReleaseKey | None, i: int) -> dict:
    """What is known of released clip i beyond the release itself: its source and reference from `key`
    (every value None without a key). `release_id` is the clip's id in the release."""
    meta = library.metadata(i)
    out = {"release_id": meta["sample_name"], "source_index": None, "source_clip": None, "subject": None,
           "view": None, "repetition": None, "source_frames": None, "reference_clip": None,
           "reference_subject": None}
    if key is None:
        return out
    entry = key.entries[int(i) % len(library)]
    out.update(source_index=entry.source_index, source_clip=entry.source_clip or None, subject=entry.subject,
               view=entry.view, repetition=entry.repetition, source_frames=entry.source_frames,
               reference_clip=entry.reference_clip or None, reference_subject=entry.reference_subject)
    return out


def _check_match(library: ClipLibrary, key: ReleaseKey) -> None:
    def mismatch(what: str) -> DtmrError:
        return DtmrError(f"{key.path} is not the key of {library.path}: {what}")

    token = release_attributes(library.path).get("release_token")
    if token != key.release_token:
        raise mismatch("their release tokens differ")
    if len(key) != len(library):
        raise mismatch(f"the key lists {len(key)} clips, the release holds {len(library)}")
    ids = library.column("sample_name").tolist()
    for i, (entry, name) in enumerate(zip(key.entries, ids)):
        if entry.release_id != name:
            raise mismatch(f"clip {i} is {name!r} in the release, {entry.release_id!r} in the key")
    crc = _joint_checksums(library)
    bad = np.flatnonzero(crc != key.column("joints_crc32"))
    if bad.size:
        raise mismatch(f"the joints of clip {ids[bad[0]]!r} (and {bad.size - 1} more) differ from the key's")


def _joint_checksums(library: ClipLibrary) -> np.ndarray:
    """The per-clip joint CRC-32 stored in the library (checked against the joints on every clip read)."""
    try:
        check_readable(library.path)
        with h5py.File(library.path, "r") as h5:
            return h5["clips"][JOINTS_CRC][()].astype(np.int64)
    except (OSError, KeyError, ValueError, RuntimeError, TypeError) as exc:
        raise InputError(library.path, f"unreadable joint checksums ({' '.join(str(exc).split())})") from None


def _plain(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
