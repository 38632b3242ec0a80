"""The which-method table (README, docs/RESULTS.md): one row per release method, its worst case under the
audit suite on each data set, the utility it keeps and a verdict, generated from published audits
(`dtmr publish-audit`) and a small config file that names them (results/which_method.json), so that the
table users read is never typed by hand.

The config: `{"target_times_chance": 2, "data_sets": [{"name": "nwucla", "label": "N-UCLA"}, ...],
"rows": [{"label": ..., "method": NAME, "command": ..., "audits": {DATA: FOLDER}, "use": ...}, ...]}`,
FOLDER relative to the folder of published audits. Action kept is against the same data set's raw release
(the row of method raw).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import DtmrError, InputError
from ..methods import RAW, method
from .result import AuditResult


@dataclass(frozen=True)
class DataSet:
    name: str
    label: str


@dataclass(frozen=True)
class MethodRow:
    label: str
    method: str
    command: str
    #: data set name -> its published audit folder
    audits: Mapping[str, str]
    #: when to use it: the project's reading of the figures, in words
    use: str


@dataclass(frozen=True)
class WhichMethodConfig:
    target_times_chance: float
    data_sets: tuple[DataSet, ...]
    rows: tuple[MethodRow, ...]

    @classmethod
    def read(cls, path: str | Path) -> WhichMethodConfig:
        """The config at `path`; `InputError` naming it when it is unreadable, incomplete or names an unknown
        method or data set."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            data_sets = tuple(DataSet(str(d["name"]), str(d["label"])) for d in data["data_sets"])
            rows = tuple(MethodRow(str(r["label"]), method(str(r["method"])).name, str(r["command"]),
                                   {str(k): str(v) for k, v in r.get("audits", {}).items()}, str(r["use"]))
                         for r in data["rows"])
            config = cls(float(data["target_times_chance"]), data_sets, rows)
        except DtmrError as exc:  # an unknown method
            raise InputError(path, str(exc)) from None
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(path, f"not a which-method config ({exc})") from None
        known = {d.name for d in data_sets}
        for row in rows:
            unknown = sorted(set(row.audits) - known)
            if unknown:
                raise InputError(path, f"row {row.label!r}: unknown data set {', '.join(unknown)}")
        return config


def _joined(values: list[str]) -> str:
    return " / ".join(values) if values else "–"


def which_method_table(config: WhichMethodConfig, audits_root: str | Path) -> str:
    """The Markdown table, its column notes below it. Every audit the config names is read (`InputError` for
    one that is missing or unreadable)."""
    root = Path(audits_root)
    results = {(i, d): AuditResult.read(root / folder) for i, row in enumerate(config.rows)
               for d, folder in row.audits.items()}
    raw = {d: results[i, d] for i, row in enumerate(config.rows) if row.method == RAW.name for d in row.audits}
    target = config.target_times_chance
    header = ["method", "command", *(f"{d.label} worst case" for d in config.data_sets), "action kept",
              "motion kept", "verdict", "use it when"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for i, row in enumerate(config.rows):
        mine = [(d, results[i, d.name]) for d in config.data_sets if d.name in row.audits]
        cells = [row.label, f"`{row.command}`"]
        for d in config.data_sets:
            result = results.get((i, d.name))
            if result is None:
                cells.append("–")
                continue
            figure = f"{result.worst_times_chance:.1f}× ({result.worst_accuracy:.1f} %)"
            cells.append(f"**{figure}**" if result.worst_times_chance <= target else figure)
        kept = [r.action_kept(raw[d.name]) for d, r in mine if d.name in raw]
        cells.append(_joined([f"{k:.0f} %" for k in kept if k is not None]))
        cells.append(_joined([f"{r.motion_kept:.2f}" for d, r in mine if r.motion_kept is not None]))
        cells.append(_verdict([r for _, r in mine], target))
        cells.append(row.use)
        lines.append("| " + " | ".join(cells) + " |")
    first = {}  # data set -> one of its audits (chance is the data set's)
    for (_, name), result in results.items():
        first.setdefault(name, result)
    chances = ", ".join(f"{d.label} {first[d.name].chance:g} %" for d in config.data_sets if d.name in first)
    lines += ["", f"Worst case: the highest re-identification over every attacker and form of the audit suite, "
                  f"× chance ({chances}); bold at or under {target:g}× chance. Action kept: a raw-trained action "
                  "recognizer's accuracy on the release against the raw release's; motion kept: the released "
                  "clips' motion amplitude against their sources' (median); both listed in the data sets' order, "
                  "for those audited."]
    return "\n".join(lines)


def _verdict(results: list[AuditResult], target: float) -> str:
    if not results:
        return "not audited with this suite"
    failures = sorted({field for r in results for field in r.metadata_failures})
    if failures:
        return f"fails the metadata scan ({', '.join(failures)})"
    worst = max(r.worst_times_chance for r in results)
    if worst <= target:
        return f"within {target:g}× chance on every set audited"
    return f"above {target:g}× chance (up to {worst:.1f}×)"
