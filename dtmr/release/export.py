"""Whole-library export (`dtmr data export LIB -o OUT.npz | OUT.pkl | OUT_folder/`), releases included.

Formats, told by the output's name: `.npz` (the project's ragged layout, `dtmr.io.npz_dataset`), `.pkl` /
`.pickle` (the PYSKL / MMAction2 annotation pickle, `dtmr.io.pyskl_pickle`), a name ending in `/` or an
existing folder (one NTU `.skeleton` file per clip, ntu25 clips only). Naming rules: docs/io.md, "Whole-library
export".

A release (`release_format = "dtmr-release"`) exports with its opaque ids and nothing else per clip: every clip
is scrubbed again on the way out (no subject, source file or `extra`), skeleton names carry `P000`, and the
pickle has one split, "release". The key is a separate file that the export never reads. A library built with
`--with-provenance` is not a release in that sense: it exports like any library, and the result says so.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..errors import DtmrError, InputError
from ..io.clip_source import ClipSource
from ..io.library import ClipLibrary
from ..io.outputs import check_output
from ..io.sources import open_clip_source
from .release import RELEASE_FORMAT, release_attributes

#: format -> `check_output` kind
FORMATS = {"npz": "npz", "pyskl": "pickle", "skeleton": "skeleton-folder"}
PICKLE_SUFFIXES = (".pkl", ".pickle")
#: characters kept from a sample name in a `.skeleton` file name (others become "_")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_NTU_NAME = re.compile(r"S\d{3}C\d{3}P\d{3}R\d{3}A\d{3}")


@dataclass(frozen=True)
class ExportResult:
    path: Path
    format: str  # "npz" | "pyskl" | "skeleton"
    clips: int
    #: exported with release ids and scrubbed clips
    release: bool
    #: the input is a `--with-provenance` library: the export identifies subjects and sources
    provenance_included: bool
    #: PYSKL split name -> clips in it (pickle only)
    splits: dict[str, int]


def export_format(output: str | Path) -> str:
    """"npz", "pyskl" or "skeleton" (a folder) from the output's name."""
    text = str(output)
    if text.endswith(("/", os.sep)) or Path(text).is_dir():
        return "skeleton"
    suffix = Path(text).suffix.lower()
    if suffix == ".npz":
        return "npz"
    if suffix in PICKLE_SUFFIXES:
        return "pyskl"
    raise InputError(output, "unknown export format: name the output .npz, .pkl, or a folder ending in /")


def export_library(library: str | Path, output: str | Path, *, split: str | None = None,
                   overwrite: bool = False) -> ExportResult:
    """Write every clip of `library` (any clip source) to `output`, in the format its name says."""
    fmt = export_format(output)
    check_output(output, kind=FORMATS[fmt], inputs=[library], overwrite=overwrite, folder=fmt == "skeleton")
    if split is not None and fmt != "pyskl":
        raise DtmrError(f"{output}: --split applies to .pkl exports only (the PYSKL pickle holds splits)")
    with closing(open_clip_source(library)) as source:
        release, provenance = _release_kind(source)
        if release and split is not None:
            raise DtmrError(f"{library}: a release exports one split, 'release'; --split is for other libraries")
        if fmt == "skeleton" and source.topology != "ntu25":
            raise InputError(library, f"holds {source.topology} clips; .skeleton files hold ntu25 joints only "
                                      "(export to .npz or .pkl instead)")
        splits = _splits(source, split) if fmt == "pyskl" and not release else None
        clips = source.read_all() if isinstance(source, ClipLibrary) else [source.read(i) for i in range(len(source))]
        action_names = source.action_names
    if not clips:
        raise InputError(library, "no clips to export")
    if release:
        clips = _scrubbed(clips, library)
    if fmt == "npz":
        from ..io.npz_dataset import write_npz_dataset

        write_npz_dataset(output, clips, action_names=action_names)
        counts = {}
    elif fmt == "pyskl":
        counts = _write_pickle(output, clips, action_names, release, splits, library)
    else:
        names = _skeleton_names(clips, release, library)
        _write_skeleton_folder(Path(output), clips, names)
        counts = {}
    return ExportResult(path=Path(output), format=fmt, clips=len(clips), release=release,
                        provenance_included=provenance, splits=counts)


def _release_kind(source: ClipSource) -> tuple[bool, bool]:
    """(exported as a release, a `--with-provenance` library) from the file's attributes."""
    if not isinstance(source, ClipLibrary):
        return False, False
    attrs = release_attributes(source.path)
    provenance = attrs.get("provenance") == "included"
    return attrs.get("release_format") == RELEASE_FORMAT and not provenance, provenance


def _scrubbed(clips: list[Clip], library: str | Path) -> list[Clip]:
    """Release clips with only what a release may say: id, action, view, repetition (when kept), fps, joints.
    Never partners: a release holds anonymized people only."""
    ids = [c.sample_name or "" for c in clips]
    if "" in ids or len(set(ids)) != len(ids):
        raise InputError(library, "is a release but its clip ids are missing or not unique")
    return [Clip(joints=c.joints, topology=c.topology, fps=c.fps, action=c.action, view=c.view,
                 repetition=c.repetition, sample_name=c.sample_name) for c in clips]


def _unique_names(names: Sequence[str]) -> list[str]:
    """`names`, with `_<index>` appended to every name that is not unique."""
    seen: dict[str, int] = {}
    for name in names:
        seen[name] = seen.get(name, 0) + 1
    return [name if seen[name] == 1 else f"{name}_{i:06d}" for i, name in enumerate(names)]


# -- PYSKL pickle -------------------------------------------------------------------------------------------
def _label_base(actions: np.ndarray, action_names: list[str] | None) -> int:
    """1 when the library numbers actions from 1 (NTU, synthetic), else 0. The project's convention: a
    1-based library's `action_names[0]` is ""; without names, a library whose labels all are >= 1."""
    if action_names:
        return 1 if action_names[0] == "" else 0
    return 1 if actions.min() >= 1 else 0


def _splits(source: ClipSource, split: str | None) -> dict[str, np.ndarray] | None:
    if split is None:
        return None
    from ..data.splits import split_indices

    train, test = split_indices(split, source.metadata_table())
    return {f"{split}_train": train, f"{split}_val": test}


def _write_pickle(output, clips: list[Clip], action_names, release: bool, splits, library) -> dict[str, int]:
    from ..io.pyskl_pickle import pyskl_annotation, write_pyskl_pickle

    actions = np.array([-1 if c.action is None else c.action for c in clips], dtype=np.int64)
    if (actions < 0).any():
        i = int(np.argmax(actions < 0))
        raise InputError(library, f"clip {i} ({clips[i].name}) has no action label; PYSKL annotations need one")
    base = _label_base(actions, action_names)
    names = [c.sample_name for c in clips] if release else _unique_names(
        [c.sample_name or f"clip{i:06d}" for i, c in enumerate(clips)])
    annotations = []
    for clip, name, action in zip(clips, names, actions.tolist()):
        # (T, V, 3) -> (M, T, V, C=3): the clip's person, then its partners (M = 2 for NTU's two-person
        # actions); a missing joint, and a partner absent from a frame, are 0 there, as in PYSKL's own NTU
        # annotations
        people = clip.joints[None] if clip.partners is None else np.concatenate([clip.joints[None], clip.partners])
        keypoint = np.nan_to_num(people, nan=0.0)
        annotations.append(pyskl_annotation(name, action - base, keypoint))
    if release:
        members = {"release": names}
    elif splits is None:
        members = {"all": names}
    else:
        members = {key: [names[i] for i in indices.tolist()] for key, indices in splits.items()}
    write_pyskl_pickle(output, annotations, members)
    return {key: len(value) for key, value in members.items()}


# -- NTU .skeleton folder -----------------------------------------------------------------------------------
def _ntu_field(clip: Clip, i: int, what: str, value: int | None, library) -> str:
    value = 0 if value is None else int(value)
    if not 0 <= value <= 999:
        raise InputError(library, f"clip {i} ({clip.name}): {what} {value} does not fit the 3 digits of an NTU "
                                  "file name")
    return f"{value:03d}"


def _skeleton_names(clips: list[Clip], release: bool, library) -> list[str]:
    """File stems: `SsssCcccPpppRrrrAaaa` + `_<id>`. A release: S000, P000, C/R the kept view/repetition
    (000 when not kept), and the release id appended. Other libraries: an NTU sample name as it is; else
    the pattern from the labels (000 unknown; S from `extra["setup"]`) and the sample name (or index)."""
    names = []
    for i, clip in enumerate(clips):
        if not release and clip.sample_name and _NTU_NAME.fullmatch(clip.sample_name):
            names.append(clip.sample_name)
            continue
        setup = clip.extra.get("setup", "")
        fields = (
            ("S", "setup", int(setup) if setup.isdigit() and not release else None),
            ("C", "view", clip.view),
            ("P", "subject", None if release else clip.subject),
            ("R", "repetition", clip.repetition),
            ("A", "action", clip.action),
        )
        stem = "".join(letter + _ntu_field(clip, i, what, value, library) for letter, what, value in fields)
        tag = _UNSAFE.sub("_", clip.sample_name or "") or f"{i:06d}"
        names.append(f"{stem}_{tag}")
    return _unique_names(names)


def _write_skeleton_folder(output: Path, clips: list[Clip], names: list[str]) -> None:
    """A new (or empty) folder is built under a temporary name and renamed into place, so an interrupted
    export leaves no half-written folder; into a non-empty folder (`--overwrite`) files are replaced one by
    one, each atomically."""
    from ..io.ntu_skeleton import write_skeleton_file

    if output.is_dir() and any(output.iterdir()):
        for clip, name in zip(clips, names):
            write_skeleton_file(output / f"{name}.skeleton", clip)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent))
    try:
        os.chmod(tmp, 0o755)
        for clip, name in zip(clips, names):
            write_skeleton_file(tmp / f"{name}.skeleton", clip)
        if output.is_dir():
            output.rmdir()
        os.replace(tmp, output)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
