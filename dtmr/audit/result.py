"""`AuditResult` and `risk_by_clip`: the figures of an `audit.json` that tables, verdicts and the Studio read,
typed and checked once, so that no consumer parses the dict again. The full file keeps every attacker's entry
(docs/audit.md, "audit.json"); this is the summary of it.

Every entry `dtmr audit` writes and these read is required: an audit.json without one is broken, not an audit
with less in it (docs/audit.md, "Reading an audit back"). The one optional entry is `attacker_files`, which a
published audit drops."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .audit_json import AUDIT_VERSION, attacker_file_key, read_audit_json, utility_entry


@dataclass(frozen=True)
class PartnersExposure:
    """`--partners`: how often a k-same release's partners (the pool clips averaged into its clips) are named,
    and their clips linked (docs/audit.md, "Partners' exposure"). Accuracies are percent."""
    named_accuracy: float
    named_times_chance: float
    linked_accuracy: float


@dataclass(frozen=True)
class AuditResult:
    #: the audit.json version it was read from (`AUDIT_VERSION` when written by this code)
    version: int
    #: the release's method (`dtmr.methods` name)
    method: str
    #: the worst case over every attacker and form: its name, form, accuracy (%) and accuracy / chance
    worst_name: str
    worst_form: str
    worst_accuracy: float
    worst_times_chance: float
    #: the worst attacker's accuracy std over the folds (%)
    worst_std: float
    #: the worst attacker's family, as its `attackers` entry names it
    worst_family: str
    #: the worst attacker's saved file (its `attacker_files` entry), relative to the audit's folder; None when
    #: the audit keeps none (a published audit, or an attacker run before files were kept)
    worst_file: str | None
    #: chance of naming a clip's subject (%)
    chance: float
    #: the identifying fields the metadata scan failed
    metadata_failures: tuple[str, ...]
    #: a raw-trained action recognizer's accuracy on the release (%), None without action labels
    action_accuracy: float | None
    #: an action recognizer retrained on the release (%), None without labels or in audits made before that form
    retrained_action_accuracy: float | None
    #: the release's file name, as the audit records it
    release_file: str
    #: the released clips' motion amplitude against their sources' (median), None when not measured
    motion_kept: float | None
    #: the calibration's warning that the suite is weak on the raw clips; None without one, or in audits made
    #: before the calibration
    calibration_warning: str | None
    #: the partners' exposure, None in an audit made without `--partners`
    partners: PartnersExposure | None

    @classmethod
    def from_audit(cls, audit: dict, where: str | Path = "audit.json") -> AuditResult:
        """From audit.json's content; `InputError` naming `where` when an entry is missing or of a wrong type."""
        try:
            worst, release = audit["worst"], audit["release"]
            action, retrained = utility_entry(audit), utility_entry(audit, "retrained")
            row = next((a for a in audit["attackers"] if a["name"] == worst["name"] and a["form"] == worst["form"]),
                       None)
            if row is None:
                raise KeyError(f"attackers[{worst['name']}, {worst['form']}]")
            amplitude = (audit.get("utility") or {}).get("motion_amplitude_kept") or {}
            return cls(
                version=int(audit.get("version", AUDIT_VERSION)), method=str(release.get("method", "")),
                worst_name=str(worst["name"]),
                worst_form=str(worst["form"]), worst_accuracy=float(worst["accuracy"]),
                worst_times_chance=float(worst["times_chance"]), worst_std=float(row["accuracy"]["std"]),
                worst_family=_text(row["family"], "attackers[].family"),
                worst_file=_attacker_file(audit, attacker_file_key(worst["name"], worst["form"])),
                chance=float(audit["chance"]["subject"]),
                metadata_failures=tuple(sorted({str(f["field"]) for f in audit["metadata"]["findings"]
                                                if f["severity"] == "fail"})),
                action_accuracy=None if not action else float(action["accuracy"]["mean"]),
                retrained_action_accuracy=None if not retrained else float(retrained["accuracy"]["mean"]),
                release_file=str(release.get("file", "")),
                motion_kept=None if amplitude.get("median") is None else float(amplitude["median"]),
                calibration_warning=_calibration_warning(audit), partners=_partners(audit))
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(where, f"an audit without a readable {exc} entry") from None

    @classmethod
    def read(cls, path: str | Path) -> AuditResult:
        """The result of the audit in folder (or file) `path`."""
        return cls.from_audit(read_audit_json(path), path)

    def action_kept(self, raw: AuditResult) -> float | None:
        """The release's action recognition against the raw release's of the same data (%), None when either
        has none."""
        if self.action_accuracy is None or not raw.action_accuracy:
            return None
        return 100.0 * self.action_accuracy / raw.action_accuracy


def risk_by_clip(audit: dict, where: str | Path = "audit.json") -> dict[str, float]:
    """Release id -> the clip's risk in [0, 1] from audit.json's `clips` (the probability the worst attacker
    gives the clip's true subject, docs/privacy.md); NaN for a clip the audit lists without one. `InputError`
    naming `where` and the entry when `clips` is not a list of objects with a string `id` and a `risk` that
    is null or a number in [0, 1]."""
    clips = audit.get("clips")
    if not isinstance(clips, list):
        raise InputError(where, f"'clips' must be a list, got {_kind(clips)}")
    risks: dict[str, float] = {}
    for n, entry in enumerate(clips):
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            raise InputError(where, f"clips[{n}] must be an object with a string 'id'")
        risk = entry.get("risk")
        if risk is not None and not (_is_number(risk) and 0.0 <= risk <= 1.0):
            raise InputError(where, f"clips[{n}] ({entry['id']}): 'risk' must be a number in [0, 1], got {risk!r}")
        risks[entry["id"]] = math.nan if risk is None else float(risk)
    return risks


def _calibration_warning(audit: dict) -> str | None:
    calibration = audit.get("calibration")
    warning = None if calibration is None else calibration["warning"]
    return None if warning is None else _text(warning, "calibration.warning")


def _partners(audit: dict) -> PartnersExposure | None:
    partners = audit.get("partners")
    if partners is None:
        return None
    named, linked = partners["named"], partners["linked"]
    return PartnersExposure(float(named["accuracy"]["mean"]), float(named["times_chance"]),
                            float(linked["accuracy"]["mean"]))


def _attacker_file(audit: dict, name_form: str) -> str | None:
    """`attacker_files[name_form]`, None when the audit keeps no file for it."""
    files = audit.get("attacker_files", {})
    if not isinstance(files, dict):
        raise TypeError("'attacker_files'")
    file = files.get(name_form)
    return None if file is None else _text(file, f"attacker_files[{name_form}]")


def _text(value, entry: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"'{entry}'")
    return value


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value) -> str:
    return "none" if value is None else type(value).__name__
