"""Opening a clip source (`.skeleton` file or folder, `.npz` data set, `.h5` library) for the Studio."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from dtmr.io.sources import action_name_map

from .cancel import CancelToken, ProgressFn

#: what the File menu's open dialog offers
OPEN_FILTER = "Skeleton clips (*.skeleton *.npz *.h5 *.hdf5);;All files (*)"


@dataclass(frozen=True)
class OpenedLibrary:
    path: Path
    source: Any  # a dtmr.io.sources.ClipSource
    #: `source.metadata_table()`, read once (for an HDF5 library it is the only eager read)
    table: dict[str, np.ndarray]

    @cached_property
    def action_names(self) -> dict[int, str]:
        """Action label -> name; the rule of `dtmr.io.sources.action_name_map`, shared with `dtmr export`."""
        return action_name_map(self.source.action_names, self.table.get("action", np.zeros(0)))

    def action_name(self, action: int) -> str:
        """The action's name when known, else "action N" ("" for an unknown action)."""
        if action < 0:
            return ""
        return self.action_names.get(action, f"action {action}")


def open_library(path: str | Path, token: CancelToken, progress: ProgressFn) -> OpenedLibrary:
    """The library job: open `path` and read its metadata table (errors name the file)."""
    from dtmr.io.sources import open_clip_source

    path = Path(path)
    progress(0, 2, f"opening {path.name}")
    source = open_clip_source(path)
    token.check()
    progress(1, 2, "reading clip metadata")
    table = {k: np.asarray(v) for k, v in source.metadata_table().items()}
    progress(2, 2, f"{len(source)} clips")
    return OpenedLibrary(path, source, table)
