"""Several audits of one data set side by side, as one Markdown table (docs/notebook/experiments.md's audit tables).

Per audit: the worst case over every attacker and form (accuracy ± std over folds, × chance), each attacker's
adaptive accuracy and the raw-trained TCN's, both linkages, the metadata verdict and the utility: the
raw-trained action recognizer's accuracy and, when one of the audits is of a raw release, the share of it
kept ("AR kept"), and the accuracy of the action recognizer retrained on the release. `partner_table`: the
k-same audits made with `--partners`, the source's figures beside the partners' (partners.py).
`suite_table`: the figures of the full suite (issue 40): the worst case, the strongest learned attacker, the
ensemble, the strongest side channel and raw-known attacker, the calibration, action and motion kept.
`channel_table`: each side channel (dtmr/attackers/side_channels.py) of each audit: the subject it names
from the raw clips (raw-known) and after training on the release (adaptive), and its linkage to the source.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..attacker_names import SIDE_CHANNELS
from ..methods import RAW
from .audit_json import utility_entry

COLUMNS = ("release", "metadata", "worst case", "× chance", "SGN adaptive", "TCN adaptive", "TCN raw-trained",
           "bone lengths adaptive", "linkage (embedding)", "linkage (frame count)", "AR", "AR kept", "AR retrained")


PARTNER_COLUMNS = ("release", "k", "worst case on the source (× chance)", "source named, raw-trained",
                   "a partner named, raw-trained", "source linked", "a partner's clip linked",
                   "releases per partner subject (min–max)")


def _cell(entry: dict | None) -> str:
    if not entry:
        return "–"
    accuracy = entry["accuracy"]
    return f"{accuracy['mean']:.1f} ± {accuracy['std']:.1f}"


def _attacker(audit: dict, name: str, form: str) -> dict | None:
    return next((a for a in audit.get("attackers", []) if a["name"] == name and a["form"] == form), None)


def _linkage(audit: dict, name: str) -> dict | None:
    return next((a for a in audit.get("linkage", []) if a["name"] == name), None)


def audit_table(audits: Sequence[dict], labels: Sequence[str] | None = None) -> str:
    """The Markdown table of `audits` (audit.json contents), one row each, labelled by `labels` (default: the
    release's method and file). AR kept is against the first audit of a raw release among them."""
    labels = labels or [f"{a['release'].get('method', '?')} ({a['release']['file']})" for a in audits]
    raw = next((a for a in audits if a["release"].get("method") == RAW.name and utility_entry(a)), None)
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for audit, label in zip(audits, labels):
        worst = audit["worst"]
        worst_row = _attacker(audit, worst["name"], worst["form"])
        findings = audit["metadata"]["findings"]
        failed = sorted({f["field"] for f in findings if f["severity"] == "fail"})
        metadata = "passed" if not failed else "**fails**: " + ", ".join(failed)
        action = utility_entry(audit)
        kept = "–"
        if action and raw is not None and utility_entry(raw)["accuracy"]["mean"] > 0:
            kept = f"{100.0 * action['accuracy']['mean'] / utility_entry(raw)['accuracy']['mean']:.0f} %"
        cells = [label, metadata, f"**{_cell(worst_row)}** ({worst['name']}, {worst['form']})",
                 f"{worst['times_chance']:.1f}×", _cell(_attacker(audit, "sgn", "adaptive")),
                 _cell(_attacker(audit, "tcn", "adaptive")), _cell(_attacker(audit, "tcn", "raw-trained")),
                 _cell(_attacker(audit, "bone-lengths", "adaptive")), _cell(_linkage(audit, "embedding")),
                 _cell(_linkage(audit, "frame count")), _cell(action), kept,
                 _cell(utility_entry(audit, "retrained"))]
        lines.append("| " + " | ".join(cells) + " |")
    chance = audits[0]["chance"] if audits else {}
    if chance:
        lines.append("")
        action = utility_entry(audits[0])
        lines.append(f"Chance: re-identification {chance['subject']:.1f} %, linkage {chance['linkage']:.2f} %"
                     + (f", action {action['chance']:.1f} %" if action else "") + ".")
    return "\n".join(lines)


def _with_chance(entry: dict) -> str:
    return f"{_cell(entry)} ({entry['times_chance']:.1f}×)"


def partner_table(audits: Sequence[dict], labels: Sequence[str] | None = None) -> str:
    """The Markdown table of the partners' exposure of `audits` (those with a "partners" entry), one row each:
    the worst case over the attackers (who the source is) beside how often the same raw-trained attacker names
    a partner and linkage finds a partner's own clip; each figure with its own chance."""
    labels = labels or [a["release"]["file"] for a in audits]
    lines = ["| " + " | ".join(PARTNER_COLUMNS) + " |", "|" + "---|" * len(PARTNER_COLUMNS)]
    for audit, label in zip(audits, labels):
        partners = audit.get("partners")
        if not partners:
            continue
        worst = audit["worst"]
        counts = [a["releases"] for a in partners["appearances"]]
        cells = [label, str(partners["k"]),
                 f"{_cell(_attacker(audit, worst['name'], worst['form']))} ({worst['times_chance']:.1f}×)",
                 _with_chance(partners["source_named"]), _with_chance(partners["named"]),
                 _with_chance(_linkage(audit, "embedding")), _with_chance(partners["linked"]),
                 f"{min(counts)}–{max(counts)} of {audit['release']['clips']}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def channel_table(audits: Sequence[dict], labels: Sequence[str] | None = None) -> str:
    """The Markdown table of every side channel of `audits` (those that ran it): per channel, subject named
    raw-known and adaptive (accuracy ± std over folds, × chance) and linkage to the source clip."""
    labels = labels or [f"{a['release'].get('method', '?')} ({a['release']['file']})" for a in audits]
    lines = ["| release | channel | subject, raw-known | subject, adaptive | linkage to the source |",
             "|---|---|---|---|---|"]

    def with_times(entry: dict | None) -> str:
        return "–" if not entry else f"{_cell(entry)} ({entry['times_chance']:.1f}×)"

    for audit, label in zip(audits, labels):
        for name in SIDE_CHANNELS:
            if _attacker(audit, name, "raw-known") is None:
                continue
            lines.append(f"| {label} | {name} | {with_times(_attacker(audit, name, 'raw-known'))} | "
                         f"{with_times(_attacker(audit, name, 'adaptive'))} | {_cell(_linkage(audit, name))} |")
    chance = audits[0]["chance"] if audits else {}
    lines.append("")
    lines.append(f"Chance: re-identification {chance.get('subject', 0):.1f} %, linkage {chance.get('linkage', 0):.2f} %.")
    return "\n".join(lines)


SUITE_COLUMNS = ("release", "metadata", "worst case", "× chance", "best learned, adaptive", "ensemble, adaptive",
                 "best side channel", "best raw-known", "suite on raw clips (calibration)", "AR", "AR kept",
                 "motion kept")


def _best(audit: dict, keep) -> str:
    """The highest-scoring attacker entry that `keep(entry)` accepts, as "acc ± std (name, form)"."""
    rows = [a for a in audit.get("attackers", []) if keep(a)]
    if not rows:
        return "–"
    top = max(rows, key=lambda a: a["accuracy"]["mean"])
    return f"{_cell(top)} ({top['name']}, {top['form']})"


def suite_table(audits: Sequence[dict], labels: Sequence[str] | None = None) -> str:
    """The Markdown table of `audits` under the full suite (SUITE_COLUMNS); AR kept against the first raw
    release among them, as `audit_table`."""
    from ..attacker_names import LEARNED

    labels = labels or [f"{a['release'].get('method', '?')} ({a['release']['file']})" for a in audits]
    raw = next((a for a in audits if a["release"].get("method") == RAW.name and utility_entry(a)), None)
    lines = ["| " + " | ".join(SUITE_COLUMNS) + " |", "|" + "---|" * len(SUITE_COLUMNS)]
    for audit, label in zip(audits, labels):
        worst = audit["worst"]
        failed = sorted({f["field"] for f in audit["metadata"]["findings"] if f["severity"] == "fail"})
        action = utility_entry(audit)
        kept = "–"
        if action and raw is not None and utility_entry(raw)["accuracy"]["mean"] > 0:
            kept = f"{100.0 * action['accuracy']['mean'] / utility_entry(raw)['accuracy']['mean']:.0f} %"
        calibration = audit.get("calibration") or {}
        best_raw = calibration.get("best")
        amplitude = (audit.get("utility") or {}).get("motion_amplitude_kept") or {}
        cells = [label, "passed" if not failed else "**fails**: " + ", ".join(failed),
                 f"**{_cell(_attacker(audit, worst['name'], worst['form']))}** ({worst['name']}, {worst['form']})",
                 f"{worst['times_chance']:.1f}×",
                 _best(audit, lambda a: a["name"] in LEARNED and a["form"] == "adaptive"),
                 _cell(_attacker(audit, "ensemble", "adaptive")),
                 _best(audit, lambda a: a["name"] in SIDE_CHANNELS),
                 _best(audit, lambda a: a["form"] == "raw-known"),
                 "–" if not best_raw else f"{best_raw['accuracy']:.1f} ({best_raw['name']})"
                 + (" ⚠" if calibration.get("warning") else ""),
                 _cell(action), kept,
                 "–" if amplitude.get("median") is None else f"{amplitude['median']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    chance = audits[0]["chance"] if audits else {}
    lines.append("")
    lines.append(f"Chance: re-identification {chance.get('subject', 0):.1f} %. ⚠: the calibration warns (the "
                 "suite's best figure on the raw clips is below the reference).")
    return "\n".join(lines)

