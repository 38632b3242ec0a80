"""Where an audit keeps what it has computed, so that a killed run resumes and releases share work.

- **parts** (`DIR/parts/<attacker>-<form>-fold<k>.json`): one (attacker, form, fold) result, written
  atomically once complete and reused only when its recorded settings equal the run's.
- **cache** (`DIR/../.audit-cache/` or `--cache`): raw-trained attackers, which depend only on the raw
  clips they were trained on, their labels, the attacker, its epochs and the seed; the file name is a hash
  of exactly these, so auditing four releases of one data set trains them once.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..io.atomic import atomic_write

#: bump when a part's content or an attacker's training changes meaning (invalidates parts and cache)
STORE_VERSION = 2


def digest(value) -> str:
    """24 hex digits of SHA-256 over the JSON of `value` (numpy arrays as lists)."""
    def plain(v):
        if isinstance(v, np.ndarray):
            return v.tolist()
        if isinstance(v, np.generic):
            return v.item()
        raise TypeError(f"cannot hash {type(v).__name__}")

    text = json.dumps(value, sort_keys=True, default=plain)
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def clip_crcs(clips: Sequence[Clip]) -> np.ndarray:
    """(N,) CRC-32 of each clip's float32 joint bytes (what the clip library stores per clip)."""
    return np.array([zlib.crc32(np.ascontiguousarray(c.joints, dtype=np.float32)) for c in clips], dtype=np.int64)


class PartStore:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder) / "parts"

    def path(self, attacker: str, form: str, fold: int) -> Path:
        return self.folder / f"{attacker}-{form}-fold{fold}.json"

    def load(self, attacker: str, form: str, fold: int, settings: dict) -> dict | None:
        """The stored result when it exists, is readable and was made with `settings`; else None."""
        path = self.path(attacker, form, fold)
        try:
            part = json.loads(path.read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(part, dict) or part.get("settings") != json.loads(json.dumps(settings)):
            return None
        return part

    def save(self, attacker: str, form: str, fold: int, settings: dict, result: dict) -> dict:
        part = {"settings": settings, **result}
        with atomic_write(self.path(attacker, form, fold), suffix=".json") as tmp:
            tmp.write_text(json.dumps(part) + "\n")
        return part


def cache_path(cache: str | Path, attacker: str, epochs: int | None, seed: int, train_crcs: np.ndarray,
               labels: np.ndarray) -> Path:
    """The cache file of a raw-trained attacker: named by a hash of everything its weights depend on."""
    name = digest({"version": STORE_VERSION, "attacker": attacker, "epochs": epochs, "seed": int(seed),
                   "clips": train_crcs, "labels": labels})
    return Path(cache) / f"{attacker}-raw-{name}.pt"
