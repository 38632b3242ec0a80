"""Open any clip path: a `.skeleton` file, a folder of them (searched recursively), an `.npz` data set or an
`.h5` clip library, behind one interface (`ClipSource`, docs/ARCHITECTURE.md).

HDF5 libraries are read lazily; the other formats are read into memory when opened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ..data.clip import Clip
from ..errors import InputError
from ..skeleton import get_topology, topology_names
from .library import COLUMNS, INT_COLUMNS, ClipLibrary
from .npz_dataset import read_npz_dataset
from .ntu_skeleton import read_ntu_clip

SKELETON_SUFFIX = ".skeleton"
NPZ_SUFFIX = ".npz"
HDF5_SUFFIXES = (".h5", ".hdf5")


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


def skeleton_files(folder: str | Path) -> list[Path]:
    """The `.skeleton` files under `folder` (recursively), sorted by path."""
    return sorted(p for p in Path(folder).rglob(f"*{SKELETON_SUFFIX}") if p.is_file())


def check_topology_name(name: str | None, path: str | Path) -> str | None:
    """`name` as a registered topology name (None passes), else an InputError about `path`."""
    if name is None:
        return None
    try:
        return get_topology(name).name
    except KeyError:
        raise InputError(path, f"unknown topology {name!r} (known: {', '.join(topology_names())})") from None


def open_clip_source(
    path: str | Path,
    topology: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ClipSource:
    """Open `path` by its kind; `topology` overrides (.npz) or must agree with (others) the file's own.

    `progress(done, total)` is called after each file of a folder of `.skeleton` files.
    """
    path = Path(path)
    topology = check_topology_name(topology, path)
    if path.is_dir():
        files = skeleton_files(path)
        if not files:
            raise InputError(path, f"no {SKELETON_SUFFIX} files in this folder")
        _expect_ntu25(topology, path)
        clips = []
        for done, file in enumerate(files, 1):
            clips.append(read_ntu_clip(file))
            if progress is not None:
                progress(done, len(files))
        return InMemoryClipSource(str(path), "ntu-skeleton", "ntu25", clips)
    if not path.exists():
        raise InputError(path, "no such file or folder")
    suffix = path.suffix.lower()
    if suffix == SKELETON_SUFFIX:
        _expect_ntu25(topology, path)
        return InMemoryClipSource(str(path), "ntu-skeleton", "ntu25", [read_ntu_clip(path)])
    if suffix == NPZ_SUFFIX:
        dataset = read_npz_dataset(path, topology)
        return InMemoryClipSource(str(path), "npz", dataset.topology, dataset.clips, dataset.action_names)
    if suffix in HDF5_SUFFIXES:
        library = ClipLibrary(path)
        if topology is not None and topology != library.topology:
            library.close()
            raise InputError(path, f"the library holds {library.topology} clips, not {topology}")
        return library
    raise InputError(path, f"unknown kind of file (expected {SKELETON_SUFFIX}, a folder of them, .npz, .h5)")


def _expect_ntu25(topology: str | None, path: Path) -> None:
    if topology not in (None, "ntu25"):
        raise InputError(path, f".skeleton files hold ntu25 joints, not {topology}")


def load_clips(path: str | Path, topology: str | None = None) -> list[Clip]:
    """Every clip of `path` (an HDF5 library is read with one read of its joints)."""
    source = open_clip_source(path, topology)
    if isinstance(source, ClipLibrary):
        with source:
            return source.read_all()
    return list(source.clips)


def action_name_map(action_names: list[str] | None, action_labels: np.ndarray) -> dict[int, str]:
    """Action label -> name. A source's `action_names` is indexed by the label itself ("" where a label has
    no name, e.g. index 0 of the 1-based synthetic set). When any label lies beyond the list the names are
    not used at all, rather than risk naming every action off by one."""
    if not action_names:
        return {}
    labels = np.asarray(action_labels, dtype=np.int64)
    known = labels[labels >= 0]
    if known.size and known.max() >= len(action_names):
        return {}
    return {i: str(n) for i, n in enumerate(action_names) if n}
