"""The model catalogue: the checkpoints found in `resources/models/` and those the user added.

Every file is read through `dtmr.models.checkpoints.checkpoint.read_checkpoint_header` (memory-mapped, weights-only:
even a 90 MB `paper` checkpoint costs milliseconds and never executes code), and the β = 1 partner that
makes the retargeted view is `dtmr.models.pairing.find_full_model`, the rule `dtmr export` follows too.
Retargeters (DisentangledTMR, DMR, PMR, ...) are listed one per β; SGN recognizers are kept per task
("action", "subject") for the live predictions. A file that cannot be read is one `CheckpointProblem`
(`CheckpointError`'s line); one the user added can be removed from the list (`removable`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dtmr.data.label_set import LabelSet
from dtmr.methods import DTMR
from dtmr.models.checkpoints.header import CheckpointHeader, read_checkpoint_header
from dtmr.models.pairing import CHECKPOINT_SUFFIXES, find_full_model, scan_checkpoints

#: one catalogue entry is one checkpoint header
CheckpointInfo = CheckpointHeader
#: the β selected first when no model was chosen before (dtmr.methods: the recommended trade-off, DESIGN §3)
RECOMMENDED_BETA = DTMR.recommended["beta"]

__all__ = ["CHECKPOINT_SUFFIXES", "RECOMMENDED_BETA", "CheckpointInfo", "CheckpointProblem", "ModelCatalog",
           "build_catalog", "read_checkpoint_info"]

#: the catalogue entry of one checkpoint file; `CheckpointError` naming the file when unreadable
read_checkpoint_info = read_checkpoint_header


@dataclass(frozen=True)
class CheckpointProblem:
    """A file that could not be read: its one line (the file and why), and the file when the user added it."""

    text: str
    #: the user-added file this is about (it can be removed from the list); None for a models-folder file
    removable: Path | None = None


@dataclass
class ModelCatalog:
    retargeters: list[CheckpointInfo] = field(default_factory=list)
    recognizers: dict[str, CheckpointInfo] = field(default_factory=dict)
    #: one per file that could not be read
    problems: list[CheckpointProblem] = field(default_factory=list)
    #: the open library's labels, which the entries are checked against (`dtmr.models.checkpoints.data_fit`)
    library: LabelSet | None = None

    def add(self, info: CheckpointInfo) -> None:
        if info.is_recognizer:
            if info.task:
                self.recognizers.setdefault(info.task, info)
        elif all(r.path != info.path for r in self.retargeters):
            self.retargeters.append(info)
            self.retargeters.sort(key=lambda r: (r.beta is None, r.beta or 0.0, r.method, str(r.path)))

    def find(self, path: str | Path) -> CheckpointInfo | None:
        path = Path(path)
        return next((r for r in self.retargeters if r.path == path), None)

    def recommended(self) -> CheckpointInfo | None:
        """The first retargeter of the recommended β, else the first retargeter (None when there is none)."""
        best = [r for r in self.retargeters if r.beta is not None and abs(r.beta - RECOMMENDED_BETA) < 1e-6]
        return (best or self.retargeters or [None])[0]

    def full_model(self, like: CheckpointInfo | None) -> CheckpointInfo | None:
        """The checkpoint whose decoder makes `like`'s retargeted view (`dtmr.models.pairing.find_full_model`):
        the β = 1 one of the same method and topology, `like` itself when its β is 1; None without one."""
        return None if like is None else find_full_model(like, self.retargeters)


def build_catalog(folders: list[Path], files: list[Path]) -> ModelCatalog:
    """Every checkpoint in `folders` (not recursive) plus the user's `files`, with unreadable ones listed.

    Each problem line of `scan_checkpoints` starts with its file ("FILE: why"), which says whether the user
    added it."""
    catalog = ModelCatalog()
    headers, problems = scan_checkpoints(folders, files)
    for line in problems:
        added = next((Path(f) for f in files if line.startswith(f"{f}: ")), None)
        catalog.problems.append(CheckpointProblem(line, added))
    for header in headers:
        catalog.add(header)
    return catalog

