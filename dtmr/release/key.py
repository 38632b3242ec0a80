"""The release key: what the data owner keeps beside a release to evaluate or audit it (layout in docs/io.md).

`OUT.key.json`, mode 0600, maps each opaque release id (`R000001`, ...) to the source clip it was made from:
source index and name, subject, action, view, repetition, frame count, the reference drawn for it, and the
CRC-32 of the released joints (so a key is checked against its release clip by clip). `release_token`
(a random uuid4 hex, also an attribute of the release) links the two files. The key is never published.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io.atomic import atomic_write
from ..io.bounded_tree import loads_json

FORMAT = "dtmr-release-key"
VERSION = 1
KEY_SUFFIX = ".key.json"
#: owner read/write only: the key re-identifies every clip of the release
KEY_MODE = 0o600

_INT_FIELDS = ("source_index", "source_frames", "reference_index", "joints_crc32")
_OPTIONAL_INT_FIELDS = ("subject", "action", "view", "repetition", "reference_subject")
_TEXT_FIELDS = ("release_id", "source_clip", "reference_clip")


@dataclass(frozen=True)
class KeyEntry:
    """One released clip and where it came from; None = unknown. `reference_index` is -1 when the method
    uses no reference (raw, noise)."""

    release_id: str
    source_index: int
    source_clip: str
    subject: int | None
    action: int | None
    view: int | None
    repetition: int | None
    source_frames: int
    reference_index: int
    reference_clip: str
    reference_subject: int | None
    joints_crc32: int


#: a key entry's fields in order (its values are plain ints, strings and None: no deep copy needed)
_ENTRY_FIELDS = tuple(f.name for f in dataclasses.fields(KeyEntry))


@dataclass
class ReleaseKey:
    """A key as read from (or about to be written to) `path`; `entries` are in release order.

    `beta` is None for the parameter-free methods (raw, noise, naive), which have no β.
    """

    path: str
    release_file: str
    release_token: str
    source_file: str
    reference_file: str
    method: str
    beta: float | None
    model: str
    seed: int
    entries: list[KeyEntry]
    model_sha256: str = ""

    def __len__(self) -> int:
        return len(self.entries)

    def subjects(self) -> np.ndarray:
        """(N,) int64 source subject of each released clip, -1 unknown."""
        return self.column("subject")

    def source_indices(self) -> np.ndarray:
        """(N,) int64 index of each released clip in the source."""
        return self.column("source_index")

    def column(self, name: str) -> np.ndarray:
        """(N,) int64 values of one integer field of `KeyEntry`, -1 for None."""
        if name not in _INT_FIELDS + _OPTIONAL_INT_FIELDS:
            raise KeyError(f"no integer key field {name!r} (fields: {', '.join(_INT_FIELDS + _OPTIONAL_INT_FIELDS)})")
        values = [getattr(e, name) for e in self.entries]
        return np.array([-1 if v is None else v for v in values], dtype=np.int64).reshape(len(values))

    def to_json(self) -> dict:
        return {"format": FORMAT, "version": VERSION, "release_file": self.release_file,
                "release_token": self.release_token, "clips": len(self.entries), "model": self.model,
                "model_sha256": self.model_sha256, "method": self.method, "beta": self.beta, "seed": self.seed,
                "source_file": self.source_file, "reference_file": self.reference_file,
                "entries": [{name: getattr(e, name) for name in _ENTRY_FIELDS} for e in self.entries]}


def key_path_for(release: str | Path) -> Path:
    """Where the key of `release` lives: `released.h5` -> `released.key.json`, in the same folder."""
    return Path(release).with_suffix(KEY_SUFFIX)


def write_key(key: ReleaseKey) -> Path:
    """Write `key` to `key.path` atomically, mode 0600 from the start (the temporary file is never readable
    by others either)."""
    path = Path(key.path)
    with atomic_write(path) as tmp:
        os.chmod(tmp, KEY_MODE)
        tmp.write_text(json.dumps(key.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_key(path: str | Path) -> ReleaseKey:
    """Read and check a key file; anything malformed is an `InputError` naming the file."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such key file")
    try:
        data = loads_json(path.read_text(encoding="utf-8"), path, "release key")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(path, f"not a readable release key ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(path, f"not a {FORMAT} file (no 'format' saying so)")
    version = data.get("version")
    if not _is_int(version) or version < 1:
        raise InputError(path, "'version' must be a positive integer")
    if version > VERSION:
        raise InputError(path, f"release key version {version} is newer than this dtmr ({VERSION})")
    for name in ("release_file", "release_token", "source_file", "reference_file", "method", "model"):
        _expect(path, name, data.get(name), str, "a string")
    _expect(path, "model_sha256", data.get("model_sha256", ""), str, "a string")
    if not _is_int(data.get("seed")):
        raise InputError(path, "'seed' must be an integer")
    beta = data.get("beta")
    if beta is not None and (isinstance(beta, bool) or not isinstance(beta, (int, float)) or not np.isfinite(beta)):
        raise InputError(path, "'beta' must be a finite number or null")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise InputError(path, "'entries' must be a list")
    if data.get("clips") != len(entries) or isinstance(data.get("clips"), bool):
        raise InputError(path, f"'clips' says {data.get('clips')!r} but the key lists {len(entries)} entries")
    return ReleaseKey(path=str(path), release_file=data["release_file"], release_token=data["release_token"],
                      source_file=data["source_file"], reference_file=data["reference_file"],
                      method=data["method"], beta=None if beta is None else float(beta), model=data["model"],
                      seed=int(data["seed"]), entries=_entries(path, entries),
                      model_sha256=data.get("model_sha256", ""))


def _entries(path: Path, rows: Sequence[object]) -> list[KeyEntry]:
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise InputError(path, f"entry {i} is not an object")
        missing = [f.name for f in dataclasses.fields(KeyEntry) if f.name not in row]
        if missing:
            raise InputError(path, f"entry {i} lacks {', '.join(missing)}")
        for name in _TEXT_FIELDS:
            if not isinstance(row[name], str):
                raise InputError(path, f"entry {i}: '{name}' must be a string")
        for name in _INT_FIELDS:
            if not _is_int(row[name]):
                raise InputError(path, f"entry {i}: '{name}' must be an integer")
        for name in _OPTIONAL_INT_FIELDS:
            if row[name] is not None and not _is_int(row[name]):
                raise InputError(path, f"entry {i}: '{name}' must be an integer or null")
        if row["source_index"] < 0 or row["source_frames"] < 1 or row["reference_index"] < -1:
            raise InputError(path, f"entry {i}: negative index or no frames")
        if not 0 <= row["joints_crc32"] < 1 << 32:
            raise InputError(path, f"entry {i}: 'joints_crc32' is not a 32-bit checksum")
        out.append(KeyEntry(**{f.name: row[f.name] for f in dataclasses.fields(KeyEntry)}))
    return out


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _expect(path: Path, name: str, value: object, kind: type, what: str) -> None:
    if not isinstance(value, kind):
        raise InputError(path, f"'{name}' must be {what}")
