"""Named train/test splits over a metadata table (docs/splits.md).

A metadata table is what `ClipSource.metadata_table()` returns: one array per field (`subject`,
`action`, `view`, `repetition`, `sample_name`, ...), one entry per clip, -1 where an integer label is
unknown. Labels are those the data set itself uses: the `.npz` sets keep their 0-based numbers (N-UCLA
views 0..2 are its files v01..v03), NTU keeps its 1-based ones (camera C001..C003 is view 1..3, action
A001 is 1, performer P001 is subject 1), the synthetic set numbers subjects, actions and views from 1
and repetitions from 0.

`split_indices(name, metadata)` returns sorted int64 clip indices (train, test). Clips a protocol leaves
out (NTU's two-person actions) are in neither. A table that lacks a field the split needs, or holds
values the protocol does not know, raises a `DtmrError` rather than giving a silently wrong split.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from ..errors import DtmrError

TRAIN, TEST, LEFT_OUT = 0, 1, -1

#: NTU60 cross-subject training performers (SPEC_NOTES §5.4); the other 20 of P001-P040 are the test set
NTU60_CS_TRAIN_SUBJECTS = (1, 2, 4, 5, 8, 9, 13, 14, 15, 16, 17, 18, 19, 25, 27, 28, 31, 34, 35, 38)
NTU60_SUBJECTS = range(1, 41)
#: NTU's single-person classes A1-A49 (A50-A60 are two-person interactions)
NTU_SINGLE_PERSON_ACTIONS = range(1, 50)
NTU_CAMERAS = (1, 2, 3)


def _field(metadata: Mapping[str, np.ndarray], split: str, name: str, expected=None) -> np.ndarray:
    """The integer field `name`, checked to be known for every clip (and within `expected` if given)."""
    if name not in metadata:
        raise DtmrError(f"split {split!r} needs the clips' {name}, which the metadata does not have")
    values = np.asarray(metadata[name])
    if values.ndim != 1 or not (values.size == 0 or np.issubdtype(values.dtype, np.integer)):
        raise DtmrError(f"split {split!r}: metadata field {name!r} must be a 1-D array of integers")
    unknown = int(np.count_nonzero(values < 0))
    if unknown:
        raise DtmrError(f"split {split!r} needs the {name} of every clip; {unknown} of {values.size} clips have none")
    if expected is not None:
        strange = np.setdiff1d(values, np.asarray(list(expected)))
        if strange.size:
            shown = ", ".join(str(v) for v in strange[:5]) + (", ..." if strange.size > 5 else "")
            raise DtmrError(
                f"split {split!r} expects {name} in {min(expected)}..{max(expected)}, found {shown} "
                "(is this the data set the split is for?)"
            )
    return values


def _nwucla(metadata) -> np.ndarray:
    view = _field(metadata, "nwucla", "view", range(3))
    return np.where(view == 2, TEST, TRAIN)


def _uiprmd(metadata) -> np.ndarray:
    repetition = _field(metadata, "uiprmd", "repetition", range(10))
    return np.where(repetition >= 7, TEST, TRAIN)


def _ntu_single_person(metadata, split: str) -> np.ndarray:
    action = _field(metadata, split, "action")
    if action.size and action.min() < 1:
        raise DtmrError(f"split {split!r} expects NTU's 1-based action numbers (A001 = 1), found 0")
    return np.isin(action, NTU_SINGLE_PERSON_ACTIONS)


def _ntu_cv(metadata) -> np.ndarray:
    single = _ntu_single_person(metadata, "ntu_cv")
    camera = _field(metadata, "ntu_cv", "view", NTU_CAMERAS)
    return np.where(single, np.where(camera == 1, TEST, TRAIN), LEFT_OUT)


def _ntu_cs(metadata) -> np.ndarray:
    single = _ntu_single_person(metadata, "ntu_cs")
    subject = _field(metadata, "ntu_cs", "subject", NTU60_SUBJECTS)
    return np.where(single, np.where(np.isin(subject, NTU60_CS_TRAIN_SUBJECTS), TRAIN, TEST), LEFT_OUT)


def _synthetic(metadata) -> np.ndarray:
    repetition = _field(metadata, "synthetic", "repetition")
    if np.unique(repetition).size < 2:
        raise DtmrError("split 'synthetic' holds out the last repetition, but the clips have only one")
    return np.where(repetition == repetition.max(), TEST, TRAIN)


@dataclass(frozen=True)
class Split:
    name: str
    description: str
    #: metadata -> TRAIN, TEST or LEFT_OUT per clip
    assign: Callable[[Mapping[str, np.ndarray]], np.ndarray]


SPLITS: dict[str, Split] = {
    s.name: s
    for s in (
        Split("nwucla", "N-UCLA cross-view: train on views 1-2, test on view 3 (stored as views 0, 1 / 2)", _nwucla),
        Split("uiprmd", "UI-PRMD: train on repetitions 0-6, test on repetitions 7-9 (0-based as stored)", _uiprmd),
        Split("ntu_cv", "NTU RGB+D cross-view: train on cameras 2-3, test on camera 1; actions A1-A49 only", _ntu_cv),
        Split(
            "ntu_cs",
            "NTU RGB+D 60 cross-subject: the 20 standard training performers vs the other 20; actions A1-A49 only",
            _ntu_cs,
        ),
        Split("synthetic", "synthetic data: the last repetition is the test set, the earlier ones train", _synthetic),
    )
}


def split_indices(name: str, metadata: Mapping[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) sorted int64 indices of the clips of a metadata table under split `name`."""
    if name not in SPLITS:
        raise DtmrError(f"unknown split {name!r} (known: {', '.join(SPLITS)})")
    side = SPLITS[name].assign(metadata)
    train, test = np.flatnonzero(side == TRAIN), np.flatnonzero(side == TEST)
    if train.size == 0 or test.size == 0:
        empty = "training" if train.size == 0 else "test"
        raise DtmrError(f"split {name!r} leaves no {empty} clips in these {side.size} clips")
    return train.astype(np.int64), test.astype(np.int64)
