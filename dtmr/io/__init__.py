"""Readers and writers, one module per format, and the HDF5 clip library.

The names below are imported on first use (PEP 562), so `import dtmr.io.atomic` does not load h5py.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "atomic_write": "atomic",
    "SkeletonBody": "ntu_skeleton",
    "SkeletonFile": "ntu_skeleton",
    "parse_ntu_name": "ntu_skeleton",
    "parse_skeleton_bytes": "ntu_skeleton",
    "read_ntu_clip": "ntu_skeleton",
    "read_skeleton_file": "ntu_skeleton",
    "skeleton_from_clip": "ntu_skeleton",
    "write_skeleton_file": "ntu_skeleton",
    "NpzDataset": "npz_dataset",
    "read_npz_dataset": "npz_dataset",
    "write_npz_dataset": "npz_dataset",
    "ClipLibrary": "library",
    "ClipSource": "sources",
    "InMemoryClipSource": "sources",
    "load_clips": "sources",
    "open_clip_source": "sources",
    "skeleton_files": "sources",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
