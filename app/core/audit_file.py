"""What the Studio reads of a `dtmr audit` result (`audit.json`): each clip's risk and the worst attacker,
as `dtmr.audit.result` reads them (`risk_by_clip`, `AuditResult`); nothing here parses the file.

The audit of `RELEASE.h5` is found in `RELEASE.audit/audit.json` (the audit's default folder) or opened
with File ▸ Open audit…. A clip's risk is the probability the worst attacker gives its true subject
(docs/privacy.md). The worst attacker's saved checkpoint, when `attacker_files` names one, is what the
Privacy panel explains.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dtmr.audit.audit_json import AUDIT_FILE, default_out, read_audit_json
from dtmr.audit.result import AuditResult, risk_by_clip


def default_audit_path(release: str | Path) -> Path:
    """`folder/released.h5` -> `folder/released.audit/audit.json`."""
    return default_out(release) / AUDIT_FILE


@dataclass(frozen=True)
class WorstAttacker:
    name: str  # "tcn"
    form: str  # "adaptive" | "raw-trained" | "raw-known"
    family: str
    accuracy: float  # percent
    times_chance: float
    #: the saved attacker (resolved against the audit's folder); None when the audit names none
    file: Path | None

    @property
    def label(self) -> str:
        return f"{self.name} ({self.form})"


@dataclass(frozen=True)
class AuditInfo:
    path: Path
    worst: WorstAttacker
    #: release id -> risk in [0, 1] (NaN when the audit gives none for that clip)
    risks: dict[str, float]

    def risk_column(self, ids) -> np.ndarray:
        """(N,) float64 risk of each clip id, NaN for ids the audit does not list."""
        return np.array([self.risks.get(str(i), math.nan) for i in ids], dtype=np.float64).reshape(-1)


def read_audit(path: str | Path) -> AuditInfo:
    """An `audit.json` (or the folder holding it), read through `dtmr.audit.result`: anything malformed or
    missing (an audit without the entries `dtmr audit` writes, its worst attacker among them) is an
    `InputError` naming the file."""
    path = Path(path)
    if path.is_dir():
        path = path / AUDIT_FILE
    data = read_audit_json(path)
    risks = risk_by_clip(data, path)
    result = AuditResult.from_audit(data, path)
    file = None if result.worst_file is None else path.parent / result.worst_file
    worst = WorstAttacker(result.worst_name, result.worst_form, result.worst_family, result.worst_accuracy,
                          result.worst_times_chance, file)
    return AuditInfo(path, worst, risks)
