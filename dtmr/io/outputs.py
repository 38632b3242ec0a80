"""The output guard every writer calls before any work: never replace an input, nor a file of another kind,
nor, without `--overwrite`, a file a user cannot make again for free (a clip library, a release key, a model, a
review sidecar), whatever the writer writes.

`check_output` looks only at what is on disk (a few magic bytes, one HDF5 attribute, one JSON field); it never
unpickles, never loads a checkpoint and never follows a library's links, so calling it on any file is safe.
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

from ..errors import DtmrError
from .special_files import refuse_special_file

#: bytes read from a file to tell its kind
_HEAD = 64
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_ZIP_MAGIC = b"PK\x03\x04"


def _head(path: Path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(_HEAD)
    except OSError:
        return b""


def _is_clip_library(path: Path) -> bool:
    if not _head(path).startswith(_HDF5_MAGIC):
        return False
    import h5py

    from .hdf5_watchdog import check_readable

    try:
        check_readable(path)  # a damaged file can make libhdf5 loop forever; such a file is no library
        with h5py.File(path, "r") as h5:
            return h5.attrs.get("format") == "dtmr-clip-library"
    except Exception:  # noqa: BLE001 - any file h5py cannot open is simply not a library
        return False


def _json_format(path: Path) -> str | None:
    if not _head(path).lstrip().startswith(b"{"):  # not a JSON object: nothing of ours, and nothing to parse
        return None
    try:
        if path.stat().st_size > 512 * 1024 * 1024:
            return None
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError, RecursionError):  # not JSON, or JSON no reader of ours would take
        return None
    return data.get("format") if isinstance(data, dict) else None


def _is_zip(path: Path) -> bool:
    return _head(path).startswith(_ZIP_MAGIC)


def _is_checkpoint(path: Path) -> bool:
    """A torch zip archive: one top-level folder holding data.pkl."""
    if not _is_zip(path):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name.count("/") == 1 and name.endswith("/data.pkl") for name in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _is_video(path: Path) -> bool:
    head = _head(path)
    return head[:6] in (b"GIF87a", b"GIF89a") or head[4:8] == b"ftyp"


def _is_pickle(path: Path) -> bool:
    return _head(path)[:1] == b"\x80"


def _is_skeleton(path: Path) -> bool:
    """NTU `.skeleton` text: the first line is the frame count."""
    try:
        with open(path, encoding="ascii") as fh:
            first = fh.readline(32).strip()
    except (OSError, UnicodeDecodeError):
        return False
    return first.isdigit()


def _is_bvh(path: Path) -> bool:
    from .bvh_reader import is_bvh

    return is_bvh(path)


def _is_keypoint_json(path: Path) -> bool:
    from .coco_json import is_coco_json

    return is_coco_json(path)


def _is_audit(path: Path) -> bool:
    """A finished audit, or one that was killed before its audit.json: only its per-fold parts
    (`parts/<attacker>-<form>-fold<k>.json`, or a part's temporary file) and the attackers it saved, which its
    rerun resumes from."""
    if (path / "audit.json").is_file():
        return _json_format(path / "audit.json") == "dtmr-audit"
    entries = {p.name for p in path.iterdir()}
    if not entries or not entries <= {"parts", "attackers"}:
        return False
    # a run killed before its first part leaves its folders empty, or a part's temporary file in `parts`
    parts = [p.name for p in (path / "parts").iterdir()] if (path / "parts").is_dir() else []
    return all("-fold" in name and (name.endswith(".json") or name.endswith(".tmp")) for name in parts)


def _is_training_run(path: Path) -> bool:
    """A folder `dtmr train` / `dtmr train-recognizer` wrote: it holds their state or event log."""
    return (path / "train_state.pt").is_file() or (path / "events.jsonl").is_file()


#: kind -> (what the message calls it, test, whether the output is a folder)
_KINDS: dict[str, tuple[str, Callable[[Path], bool], bool]] = {
    "clip-library": ("DTMR clip library", _is_clip_library, False),
    "release-key": ("DTMR release key", lambda p: _json_format(p) == "dtmr-release-key", False),
    "checkpoint": ("torch checkpoint", _is_checkpoint, False),
    "video": ("GIF or MP4 video", _is_video, False),
    "npz": (".npz archive", _is_zip, False),
    "pickle": ("pickle file", _is_pickle, False),
    "skeleton": ("NTU .skeleton file", _is_skeleton, False),
    "bvh": ("BVH motion file", _is_bvh, False),
    "keypoint-json": ("COCO keypoint JSON", _is_keypoint_json, False),
    "review-sidecar": ("review sidecar", lambda p: _json_format(p) == "dtmr-review", False),
    "review-merge": ("merged review", lambda p: _json_format(p) == "dtmr-review-merge", False),
    # `dtmr data export LIB -o OUT/`: no existing non-empty folder is taken for one (it may be someone's raw
    # NTU folder), so writing into one always needs --overwrite
    "skeleton-folder": ("new or empty folder", lambda p: False, True),
    "audit": ("DTMR audit folder", _is_audit, True),
    "training-run": ("training run folder", _is_training_run, True),
}


def register_output_kind(kind: str, label: str, test: Callable[[Path], bool], folder: bool = False) -> None:
    """Add a kind of output that a package above this one writes and alone knows how to recognize (e.g. the
    review export's rows, `dtmr.review.export`); registered when that package is imported."""
    _KINDS[kind] = (label, test, folder)


#: an existing file of these kinds is replaced only with `overwrite`, also by a writer of the same kind: a
#: library, a key or a review may hold work that no command can make again, a model hours of training
PRECIOUS = ("clip-library", "release-key", "checkpoint", "review-sidecar")


def _same(a: Path, b: Path) -> bool:
    try:
        if os.path.samefile(a, b):
            return True
    except OSError:
        pass
    return a.resolve() == b.resolve()


def _inside(inner: Path, folder: Path) -> bool:
    return inner.resolve().is_relative_to(folder.resolve())


def _writable_folder(path: Path) -> Path:
    """The folder that must be writable: the nearest existing ancestor of `path` (writers create the
    missing folders between it and the output, as `atomic_write` does)."""
    parent = path.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    return parent


def check_output(path: str | Path, *, kind: str, inputs: Sequence[str | Path] = (), overwrite: bool = False,
                 folder: bool = False) -> Path:
    """Refuse an output that would destroy something: raises `DtmrError` naming `path` as given.

    Refused: an output that is one of `inputs` (same file, hard and symbolic links included; for a folder
    output, also an input inside it); a directory where a file is wanted, or a file where a folder is wanted;
    a parent that is a file, or a folder that is not writable (missing folders are fine: writers create
    them, as `atomic_write` does); unless `overwrite`, an existing file of a PRECIOUS kind (even of `kind`
    itself) and an existing file (or non-empty folder) not of `kind`. Returns `Path(path)`.
    """
    try:
        label, is_kind, folder_kind = _KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown output kind {kind!r}") from None
    if folder != folder_kind:
        what = "a folder" if folder_kind else "a file"
        raise ValueError(f"output kind {kind!r} is {what}: pass folder={folder_kind}")
    out = Path(path)
    shown = str(path)
    refuse_special_file(out)  # telling its kind would open it: a FIFO blocks there
    for item in inputs:
        item = Path(item)
        if out.exists() and item.exists() and _same(out, item) or out.absolute() == item.absolute():
            raise DtmrError(f"{shown}: the output is also an input; write to another file")
        if folder and item.exists() and out.exists() and _inside(item, out):
            raise DtmrError(f"{shown}: the output folder holds the input {item}; write to another folder")
    if folder and out.exists() and not out.is_dir():
        raise DtmrError(f"{shown}: is a file, not a folder")
    if not folder and out.is_dir():
        raise DtmrError(f"{shown}: is a folder; name a file")
    parent = _writable_folder(out)
    if not parent.is_dir():
        raise DtmrError(f"{shown}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise DtmrError(f"{shown}: the folder {parent} is not writable")
    if out.exists() and not overwrite and not folder:
        precious = next((k for k in PRECIOUS if _KINDS[k][1](out)), None)
        if precious is not None:
            raise DtmrError(f"{shown}: this file exists and is a {_KINDS[precious][0]}; use --overwrite to "
                            "replace it")
    if out.exists() and not overwrite:
        empty = folder and not any(out.iterdir())
        if not empty and not is_kind(out):
            what = "folder" if folder else "file"
            raise DtmrError(f"{shown}: this {what} exists and is not a {label}; use --overwrite to replace it")
    return out


def unused_path(folder: str | Path, stem: str, suffix: str) -> Path:
    """`folder/STEM.SUFFIX`, or `STEM_2.SUFFIX`, `STEM_3.SUFFIX`, ...: the first name no file has, for a
    writer that names its own output (the Studio's screenshots and fitted models) and so never replaces one."""
    folder = Path(folder)
    path, number = folder / f"{stem}{suffix}", 1
    while path.exists():
        number += 1
        path = folder / f"{stem}_{number}{suffix}"
    return path

