"""The one interface every clip source is read through (`ClipSource`, docs/ARCHITECTURE.md), and the source of
clips already in memory that most readers return. Its own module so that the readers and the dispatch on a path
(`dtmr.io.sources`) both import it without importing each other."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..data.clip import Clip
from ..errors import InputError
from .library import COLUMNS, INT_COLUMNS


@runtime_checkable
class ClipSource(Protocol):
    path: str
    topology: str
    format: str

    def __len__(self) -> int: ...

    def metadata(self, i: int) -> dict: ...

    def metadata_table(self) -> dict[str, np.ndarray]: ...

    def read(self, i: int) -> Clip: ...

    @property
    def action_names(self) -> list[str] | None: ...

    def close(self) -> None: ...


class InMemoryClipSource:
    """Clips already read (from `.skeleton` files or an `.npz`), seen as a `ClipSource`."""

    def __init__(self, path: str, format: str, topology: str, clips: list[Clip], action_names: list[str] | None = None):
        self.path = path
        self.format = format
        self.topology = topology
        self.clips = clips
        self.action_names = action_names

    def __len__(self) -> int:
        return len(self.clips)

    def metadata(self, i: int) -> dict:
        return self.clips[i].metadata()

    def metadata_table(self) -> dict[str, np.ndarray]:
        """Same fields as `ClipLibrary.metadata_table`: ints (-1 unknown), fps, str objects, extra dicts."""
        table: dict[str, np.ndarray] = {}
        for name in COLUMNS:
            values = [getattr(c, name) for c in self.clips]
            if name in INT_COLUMNS:
                table[name] = np.array([-1 if v is None else v for v in values], dtype=np.int64)
            elif name == "fps":
                table[name] = np.array(values, dtype=np.float64)
            elif name == "extra":
                table[name] = np.array([dict(v) for v in values], dtype=object)
            else:
                table[name] = np.array([v or "" for v in values], dtype=object)
        table["num_frames"] = np.array([c.num_frames for c in self.clips], dtype=np.int64)
        return table

    def read(self, i: int) -> Clip:
        return self.clips[i]

    def close(self) -> None:
        """Nothing to release; present so that every source can be closed the same way."""


def resolve_clip(source, ident: str) -> int:
    """Index of the clip `ident` (an index, negative from the end, or a sample name) in a ClipSource."""
    count = len(source)
    try:
        index = int(ident)
    except ValueError:
        names = [str(n) for n in source.metadata_table()["sample_name"]]
        if ident not in names:
            raise InputError(source.path, f"no clip named {ident!r}") from None
        return names.index(ident)
    if not -count <= index < count:
        raise InputError(source.path, f"clip index {index} is out of range: it holds {count} clips")
    return index % count
