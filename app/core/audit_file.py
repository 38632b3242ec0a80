"""What the Studio reads of a `dtmr audit` result (`audit.json`): each clip's risk and the worst attacker.

The audit of `RELEASE.h5` is found in `RELEASE.audit/audit.json` (the audit's default folder) or opened
with File ▸ Open audit…. A clip's risk is the probability the worst attacker gives its true subject
(docs/privacy.md). The worst attacker's saved checkpoint, when `attacker_files` names one, is what the
Privacy panel explains.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dtmr.audit.audit_json import AUDIT_FILE, default_out, read_audit_json
from dtmr.errors import InputError


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
    #: release id -> risk in [0, 1] (NaN when the audit gives none for that clip)
    risks: dict[str, float] = field(default_factory=dict)
    worst: WorstAttacker | None = None

    def risk_column(self, ids) -> np.ndarray:
        """(N,) float64 risk of each clip id, NaN for ids the audit does not list."""
        return np.array([self.risks.get(str(i), math.nan) for i in ids], dtype=np.float64).reshape(-1)


def read_audit(path: str | Path) -> AuditInfo:
    """An `audit.json` (or the folder holding it); anything malformed is an `InputError` naming the file."""
    path = Path(path)
    if path.is_dir():
        path = path / AUDIT_FILE
    data = read_audit_json(path)
    clips = data.get("clips", [])
    if not isinstance(clips, list):
        raise InputError(path, "'clips' must be a list")
    risks: dict[str, float] = {}
    for n, entry in enumerate(clips):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise InputError(path, f"clips[{n}] must be an object with a string 'id'")
        risk = entry.get("risk")
        if risk is None:
            risks[entry["id"]] = math.nan
            continue
        if isinstance(risk, bool) or not isinstance(risk, (int, float)) or not 0.0 <= risk <= 1.0:
            raise InputError(path, f"clips[{n}] ({entry['id']}): 'risk' must be a number in [0, 1], got {risk!r}")
        risks[entry["id"]] = float(risk)
    return AuditInfo(path, risks, _worst(data, path))


def _worst(data: dict, path: Path) -> WorstAttacker | None:
    worst = data.get("worst")
    if not isinstance(worst, dict) or not isinstance(worst.get("name"), str):
        return None
    name, form = worst["name"], str(worst.get("form", ""))
    families = {(a.get("name"), a.get("form")): a.get("family", "") for a in data.get("attackers", [])
                if isinstance(a, dict)}
    files = data.get("attacker_files") or {}
    file = files.get(f"{name}/{form}") if isinstance(files, dict) else None
    return WorstAttacker(name, form, str(families.get((name, form), "")), _number(worst.get("accuracy")),
                         _number(worst.get("times_chance")),
                         None if not isinstance(file, str) else (path.parent / file))


def _number(value) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
