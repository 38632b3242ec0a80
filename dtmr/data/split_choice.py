"""Which named split fits a library: chosen by the library's layout, i.e. the data set its clips come from.

A split that merely *accepts* a metadata table is not the right one: the synthetic demo's subjects 1-10 and
actions 1-12 pass NTU's cross-subject checks, and UI-PRMD's 0-based repetitions pass the synthetic split's. So
the data set is recognized from how its clips are named (every sample name must follow one data set's
pattern) or from what only that data set records, and its own protocol is proposed:

| layout | recognized by | split |
|---|---|---|
| NTU RGB+D | sample names `SsssCcccPpppRrrrAaaa` (`S001C001P001R001A011`) | `ntu_cs` (NTU60 cross-subject) |
| N-UCLA | sample names `aAA_sSS_eEE_vVV` (`a01_s01_e00_v01`) | `nwucla` (cross-view) |
| UI-PRMD | topology `uiprmd22`, or sample names `mMM_sSS_eEE…` (`m01_s01_e01_positions`) | `uiprmd` |
| dtmr synthetic (the bundled demo) | generator `dtmr-synthetic` in the clips' extras, or sample names `SsssAaaaRrrVvv` | `synthetic` |

A library of no known layout is offered the `synthetic` split (the last repetition held out), the one
protocol that assumes no data set, when its clips have at least two repetitions; otherwise none. The choice
also says when its split cannot be used on these clips (`problem`, e.g. the two NTU samples are both
training performers of `ntu_cs`), rather than proposing another split that would run but be wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import DtmrError
from .splits import split_indices
from .synthetic.generator import GENERATOR

#: the split for clips of no known layout: it assumes no data set
GENERIC_SPLIT = "synthetic"


@dataclass(frozen=True)
class Layout:
    name: str
    split: str
    #: every sample name matches (None: not recognized by names)
    names: re.Pattern | None = None
    #: the topology only this data set uses
    topology: str | None = None
    #: the generator recorded in every clip's extras
    generator: str | None = None


LAYOUTS = (
    Layout("NTU RGB+D", "ntu_cs", names=re.compile(r"S\d{3}C\d{3}P\d{3}R\d{3}A\d{3}")),
    Layout("N-UCLA", "nwucla", names=re.compile(r"a\d{2}_s\d{2}_e\d{2}_v\d{2}")),
    Layout("UI-PRMD", "uiprmd", names=re.compile(r"m\d{2}_s\d{2}_e\d{2}(_\w+)?"), topology="uiprmd22"),
    Layout("dtmr synthetic", "synthetic", names=re.compile(r"S\d{3}A\d{3}R\d{2}V\d{2}"), generator=GENERATOR),
)


@dataclass(frozen=True)
class SplitChoice:
    #: the proposed split, None when none fits
    split: str | None
    #: the data set recognized ("" when none was)
    layout: str
    #: one line: why this split
    reason: str
    #: one line when the split cannot be used on these clips ("" when it can)
    problem: str = ""


def library_layout(metadata: Mapping[str, np.ndarray]) -> Layout | None:
    """The known data set a library's clips come from (see the module's table), None when none fits."""
    names = _texts(metadata, "sample_name")
    topologies = set(_texts(metadata, "topology"))
    generators = {str(e.get("generator", "")) if isinstance(e, Mapping) else "" for e in metadata.get("extra", [])}
    for layout in LAYOUTS:
        if layout.names is not None and names and all(layout.names.fullmatch(n) for n in names):
            return layout
        if layout.topology is not None and topologies == {layout.topology}:
            return layout
        if layout.generator is not None and generators == {layout.generator}:
            return layout
    return None


def choose_split(metadata: Mapping[str, np.ndarray]) -> SplitChoice:
    """The split proposed for a library's metadata table (`ClipSource.metadata_table()`)."""
    layout = library_layout(metadata)
    if layout is not None:
        return SplitChoice(layout.split, layout.name, f"{layout.split}: the clips are {layout.name}'s, this is its "
                                                      "protocol", _problem(layout.split, metadata))
    problem = _problem(GENERIC_SPLIT, metadata)
    if problem:
        return SplitChoice(None, "", "no known data set's layout and no split that assumes none fits", problem)
    return SplitChoice(GENERIC_SPLIT, "", f"{GENERIC_SPLIT}: no known data set's layout, so the last repetition "
                                          "is held out")


def _problem(split: str, metadata) -> str:
    try:
        split_indices(split, metadata)
    except DtmrError as exc:
        return str(exc)
    return ""


def _texts(metadata, field: str) -> list[str]:
    values = metadata.get(field)
    return [] if values is None else [str(v) for v in np.asarray(values, dtype=object).ravel()]
