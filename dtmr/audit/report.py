"""The audit's human-readable reports: `audit.md` and a self-contained `audit.html`, from `audit.json`'s dict.

Both hold the same blocks in the same order: the verdict lines on top (a metadata failure first, then the worst
case over attackers and forms, in bold), the metadata findings, attackers x forms (accuracy mean ± std, chance,
× chance, verdict; the worst row in bold), linkage, per-subject risk, the risk distribution over clips and the
command that made the audit. Plots (risk per subject, attacker accuracy against chance, clip risk histogram)
are PNG files beside `audit.md` and embedded as base64 in the HTML. Drawn with matplotlib's Agg canvas on
`Figure` objects (no pyplot state, no display needed).
"""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..io.atomic import atomic_write
from .audit_json import utility_entry

RISKIEST_CLIPS = 10  # riskiest clips listed
RISK_BINS = 20


# -- blocks shared by both renderings ---------------------------------------------------------------------
@dataclass
class _Heading:
    text: str
    level: int = 2


@dataclass
class _Paragraph:
    text: str
    strong: bool = False


@dataclass
class _Table:
    header: list[str]
    rows: list[list[str]]
    strong_rows: set[int] = field(default_factory=set)


@dataclass
class _Code:
    text: str


@dataclass
class _Plot:
    name: str  # file name of the PNG
    title: str
    png: bytes


def _percent(value) -> str:
    return "–" if value is None else f"{float(value):.1f}"


def _accuracy(acc: dict) -> str:
    std = acc.get("std")
    return _percent(acc.get("mean")) + ("" if std is None else f" ± {float(std):.1f}")


def _times(value) -> str:
    return "–" if value is None else f"{float(value):.2f}×"


def _scored_table(first: str, entries: list[dict]) -> _Table:
    """Scored entries (summary.scored) as rows: name, accuracy, chance, × chance, verdict."""
    return _Table([first, "accuracy % (mean ± std)", "chance %", "× chance", "verdict"],
                  [[a.get("name", ""), _accuracy(a.get("accuracy", {})), _percent(a.get("chance")),
                    _times(a.get("times_chance")), a.get("verdict", "")] for a in entries])


def _chance_risk(audit: dict) -> float | None:
    """The risk a clip has when the attacker guesses: the subject chance, as a probability."""
    chance = audit.get("chance", {}).get("subject")
    return None if chance is None else float(chance) / 100.0


def _blocks(audit: dict) -> list:
    release, raw, split = audit.get("release", {}), audit.get("raw", {}), audit.get("split", {})
    metadata = audit.get("metadata", {"passed": True, "findings": []})
    findings = metadata.get("findings", [])
    failures = [f for f in findings if f.get("severity") == "fail"]
    attackers, linkage = audit.get("attackers", []), audit.get("linkage", [])
    worst = audit.get("worst")
    blocks: list = [_Heading(f"Re-identification audit of {release.get('file', 'the release')}", 1)]

    if failures:
        blocks.append(_Paragraph(f"Metadata: FAILED. {len(failures)} finding(s) identify subjects or source clips "
                                 "without a single joint being looked at (first table below), whatever the motion "
                                 "attackers say.", strong=True))
    if worst:
        row = next((a for a in attackers if a.get("name") == worst.get("name") and a.get("form") == worst.get("form")),
                   None)
        verdict = f": {row['verdict']}" if row and row.get("verdict") else ""
        chance = f" ({_percent(row.get('chance'))} %)" if row else ""
        blocks.append(_Paragraph(f"Worst case: {worst['name']} ({worst['form']}) names the subject of "
                                 f"{_percent(worst.get('accuracy'))} % of clips, {_times(worst.get('times_chance'))} "
                                 f"chance{chance}{verdict}.", strong=True))
    else:
        blocks.append(_Paragraph("No motion attacker was run.", strong=True))
    calibration = audit.get("calibration")
    if calibration and calibration.get("warning"):
        blocks.append(_Paragraph(f"Warning: {calibration['warning']}.", strong=True))

    facts = [f"{release.get('clips', '?')} clips", f"{release.get('subjects', '?')} subjects"]
    for name, label in (("method", "method"), ("beta", "β"), ("model", "model"), ("provenance", "provenance")):
        if release.get(name) is not None:
            facts.append(f"{label} {release[name]}")
    lines = [f"Release: {release.get('file', '?')}, " + ", ".join(facts) + "."]
    if raw:
        lines.append(f"Raw library: {raw.get('file', '?')} ({raw.get('clips', '?')} clips).")
    if split:
        kind = split.get("kind", "?")
        detail = f" {split['name']}" if split.get("name") else ""
        if not detail and split.get("folds"):
            detail = f", {split['folds']} folds"
        lines.append(f"Split: {kind}{detail}.")
    blocks.append(_Paragraph(" ".join(lines)))

    blocks.append(_Heading("Metadata"))
    if findings:
        ordered = failures + [f for f in findings if f.get("severity") != "fail"]
        blocks.append(_Table(["severity", "field", "problem", "detail"],
                             [[f.get("severity", ""), f.get("field", ""), f.get("problem", ""), f.get("detail", "")]
                              for f in ordered],
                             set(range(len(failures)))))
    else:
        blocks.append(_Paragraph("Passed: no field, attribute, clip order or frame count identifies a subject or a "
                                 "source clip."))

    blocks.append(_Heading("Attackers"))
    if attackers:
        strong = {i for i, a in enumerate(attackers)
                  if worst and a.get("name") == worst.get("name") and a.get("form") == worst.get("form")}
        blocks.append(_Table(
            ["attacker", "family", "form", "accuracy % (mean ± std)", "chance %", "× chance", "verdict"],
            [[a.get("name", ""), a.get("family", ""), a.get("form", ""), _accuracy(a.get("accuracy", {})),
              _percent(a.get("chance")), _times(a.get("times_chance")), a.get("verdict", "")] for a in attackers],
            strong))
        blocks.append(_Plot("attackers.png", "Attacker accuracy against chance", _attacker_plot(audit)))
    else:
        blocks.append(_Paragraph("No attacker was run."))

    if calibration and calibration.get("raw"):
        blocks.append(_Heading("Calibration (each attacker on the raw sources of the test clips)"))
        best, reference = calibration.get("best") or {}, calibration.get("reference") or {}
        blocks.append(_Paragraph(
            f"Best raw re-identification: {best.get('name', '?')}, {_percent(best.get('accuracy'))} %; the "
            f"reference is {_percent(reference.get('accuracy'))} % ({reference.get('why', '?')})."))
        blocks.append(_scored_table("attacker (raw-trained, on raw clips)", calibration["raw"]))

    blocks.append(_Heading("Linkage (each released clip to its own source among the raw clips)"))
    if linkage:
        blocks.append(_scored_table("linkage", linkage))
    else:
        blocks.append(_Paragraph("No linkage attack was run (it needs the raw library)."))

    partners = audit.get("partners")
    if partners:
        blocks.append(_Heading("Partners (the other people averaged into each clip)"))
        blocks.append(_Paragraph(
            f"Each clip of this k = {partners.get('k')} release ({partners.get('model')}) holds the motion of "
            f"{partners.get('partners_per_clip', int(partners.get('k', 1)) - 1):g} other people (on average) at "
            "the source's weight. The attacker "
            f"{partners.get('attacker', '')} gives each released test clip a top subject, and its embedding a "
            "nearest raw clip; both are checked against the clip's partners (no adaptive form: naming partners "
            "in training clips needs the pool's labels, which only the releaser has)."))
        rows = [partners[n] for n in ("named", "source_named", "linked") if n in partners]
        blocks.append(_scored_table("question", rows))
        counts = partners.get("appearances", [])
        if counts:
            blocks.append(_Paragraph("Releases holding each subject as a partner: " + ", ".join(
                f"{c.get('subject')}: {c.get('releases')}" for c in counts) + "."))

    action, retrained = utility_entry(audit), utility_entry(audit, "retrained")
    if action:
        blocks.append(_Heading("Utility: action recognition on the release"))
        blocks.append(_Paragraph(
            f"A {action.get('name', '?')} action recognizer trained on the raw clips of each fold's training part "
            f"names the action of {_accuracy(action.get('accuracy', {}))} % of the released test clips (chance "
            f"{_percent(action.get('chance'))} %)"
            + (f"; retrained on the released clips of the training part, {_accuracy(retrained.get('accuracy', {}))}"
               " %" if retrained else "")
            + ". Compare it with the same audit of a raw release of the data set."))
    amplitude = (audit.get("utility") or {}).get("motion_amplitude_kept") or {}
    if amplitude.get("median") is not None:
        q1, q3 = amplitude["quartiles"]
        blocks.append(_Paragraph(
            f"Motion kept: a released clip's motion amplitude (the spread of its bone directions over time) is a "
            f"median {amplitude['median']:.2f} of its source's (quartiles {q1:.2f}-{q3:.2f}, {amplitude['clips']} "
            "clips); below 1 the release moves less than its source did."))

    subjects = sorted(audit.get("subjects", []), key=lambda s: -float(s.get("risk", 0.0)))
    blocks.append(_Heading("Risk per subject"))
    if subjects:
        blocks.append(_Paragraph("Risk: the mean, over the subject's clips, of the probability the worst attacker "
                                 "gives the true subject; accuracy: its share of the subject's clips it names "
                                 "right. Riskiest first."))
        blocks.append(_Table(["subject", "clips", "accuracy %", "risk"],
                             [[str(s.get("subject")), str(s.get("clips", "")), _percent(s.get("accuracy")),
                               f"{float(s.get('risk', 0.0)):.2f}"] for s in subjects]))
        blocks.append(_Plot("risk_per_subject.png", "Risk per subject", _subject_plot(audit)))
    else:
        blocks.append(_Paragraph("No per-subject risk (no attacker was run)."))

    clips = audit.get("clips", [])
    risk = audit.get("risk")
    blocks.append(_Heading("Risk distribution over clips"))
    if risk and clips:
        blocks.append(_Paragraph(f"Over {len(clips)} clips: mean {risk['mean']:.2f}, median {risk['median']:.2f}, "
                                 f"90th percentile {risk['p90']:.2f}, max {risk['max']:.2f}"
                                 + (f" (chance {_chance_risk(audit):.2f})." if _chance_risk(audit) is not None
                                    else ".")))
        riskiest = sorted(clips, key=lambda c: -float(c.get("risk", 0.0)))[:RISKIEST_CLIPS]
        if any(c.get("id") for c in riskiest):  # a shared copy of an audit may leave out who is who
            blocks.append(_Table(["clip", "subject", "risk", "named right"],
                                 [[str(c.get("id")), str(c.get("subject")), f"{float(c.get('risk', 0.0)):.2f}",
                                   "yes" if c.get("correct") else "no"] for c in riskiest]))
        blocks.append(_Plot("risk_distribution.png", "Risk distribution over clips", _risk_plot(audit)))
    else:
        blocks.append(_Paragraph("No per-clip risk (no attacker was run)."))

    blocks.append(_Heading("Command"))
    blocks.append(_Code(audit.get("command", "")))
    if audit.get("created"):
        blocks.append(_Paragraph(f"Made {audit['created']}."))
    return blocks


# -- plots -----------------------------------------------------------------------------------------------
def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def _png(fig) -> bytes:
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def _subject_plot(audit: dict) -> bytes:
    subjects = sorted(audit["subjects"], key=lambda s: s["subject"])
    fig = _figure(max(4.0, 0.35 * len(subjects) + 2), 3.2)
    ax = fig.add_subplot()
    ax.bar([str(s["subject"]) for s in subjects], [float(s["risk"]) for s in subjects], color="#c0504d")
    chance = _chance_risk(audit)
    if chance is not None:
        ax.axhline(chance, color="black", linestyle="--", linewidth=1, label="chance")
        ax.legend(loc="upper right")
    ax.set(xlabel="subject", ylabel="risk", ylim=(0, 1), title="Risk per subject")
    return _png(fig)


def _attacker_plot(audit: dict) -> bytes:
    rows = [(f"{a['name']} ({a['form']})", a) for a in audit.get("attackers", [])]
    rows += [(f"linkage: {a['name']}", a) for a in audit.get("linkage", [])]
    worst = audit.get("worst") or {}
    fig = _figure(6.4, 0.45 * len(rows) + 1.4)
    ax = fig.add_subplot()
    y = np.arange(len(rows))
    colors = ["#c0504d" if a.get("name") == worst.get("name") and a.get("form") == worst.get("form") else "#4f81bd"
              for _, a in rows]
    ax.barh(y, [float(a["accuracy"]["mean"]) for _, a in rows],
            xerr=[float(a["accuracy"].get("std") or 0.0) for _, a in rows], color=colors)
    for i, (_, a) in enumerate(rows):  # each attack's own chance (subject or linkage)
        ax.plot([float(a["chance"])] * 2, [i - 0.4, i + 0.4], color="black", linestyle="--", linewidth=1.2,
                label="chance" if i == 0 else None)
    ax.set_yticks(y, [label for label, _ in rows])
    ax.invert_yaxis()
    ax.set(xlabel="accuracy %", xlim=(0, 100), title="Attacker accuracy against chance")
    ax.legend(loc="lower right")
    return _png(fig)


def _risk_plot(audit: dict) -> bytes:
    from matplotlib.ticker import MaxNLocator

    risks = [float(c["risk"]) for c in audit["clips"]]
    fig = _figure(6.4, 3.2)
    ax = fig.add_subplot()
    ax.hist(risks, bins=RISK_BINS, range=(0, 1), color="#4f81bd", edgecolor="white")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    chance = _chance_risk(audit)
    if chance is not None:
        ax.axvline(chance, color="black", linestyle="--", linewidth=1, label="chance")
        ax.legend(loc="best")
    ax.set(xlabel="risk (probability the worst attacker gives the true subject)", ylabel="clips",
           title="Risk distribution over clips")
    return _png(fig)


# -- renderings ------------------------------------------------------------------------------------------
def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _markdown(blocks: list) -> str:
    out = []
    for block in blocks:
        if isinstance(block, _Heading):
            out.append("#" * block.level + " " + block.text)
        elif isinstance(block, _Paragraph):
            out.append(f"**{block.text}**" if block.strong else block.text)
        elif isinstance(block, _Table):
            lines = ["| " + " | ".join(block.header) + " |", "|" + "---|" * len(block.header)]
            for i, row in enumerate(block.rows):
                cells = [_md_cell(c) for c in row]
                if i in block.strong_rows:
                    cells = [f"**{c}**" if c else c for c in cells]
                lines.append("| " + " | ".join(cells) + " |")
            out.append("\n".join(lines))
        elif isinstance(block, _Code):
            out.append("```\n" + block.text + "\n```")
        else:
            out.append(f"![{block.title}]({block.name})")
    return "\n\n".join(out) + "\n"


_STYLE = """body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}
th{background:#f2f2f2}tr.strong td{font-weight:bold;background:#fbeaea}p.strong{font-weight:bold}
pre{background:#f6f6f6;padding:.6rem;overflow-x:auto}img{max-width:100%}"""


def _html(blocks: list, title: str) -> str:
    e = html.escape
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{e(title)}</title>",
           f"<style>{_STYLE}</style></head><body>"]
    for block in blocks:
        if isinstance(block, _Heading):
            out.append(f"<h{block.level}>{e(block.text)}</h{block.level}>")
        elif isinstance(block, _Paragraph):
            out.append(f'<p class="strong">{e(block.text)}</p>' if block.strong else f"<p>{e(block.text)}</p>")
        elif isinstance(block, _Table):
            rows = ["<tr>" + "".join(f"<th>{e(h)}</th>" for h in block.header) + "</tr>"]
            for i, row in enumerate(block.rows):
                attr = ' class="strong"' if i in block.strong_rows else ""
                rows.append(f"<tr{attr}>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>")
            out.append("<table>" + "".join(rows) + "</table>")
        elif isinstance(block, _Code):
            out.append(f"<pre><code>{e(block.text)}</code></pre>")
        else:
            data = base64.b64encode(block.png).decode("ascii")
            out.append(f'<figure><img alt="{e(block.title)}" src="data:image/png;base64,{data}"></figure>')
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_reports(audit: dict, folder: str | Path) -> list[Path]:
    """Write `audit.md`, `audit.html` and the plots' PNG files into `folder`; returns their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    blocks = _blocks(audit)
    title = blocks[0].text
    written = []
    for name, text in (("audit.md", _markdown(blocks)), ("audit.html", _html(blocks, title))):
        with atomic_write(folder / name) as tmp:
            tmp.write_text(text, encoding="utf-8")
        written.append(folder / name)
    for block in blocks:
        if isinstance(block, _Plot):
            with atomic_write(folder / block.name) as tmp:
                tmp.write_bytes(block.png)
            written.append(folder / block.name)
    return written
