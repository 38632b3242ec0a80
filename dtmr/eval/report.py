"""Reports of an evaluation: `results.json` (the rows), `results.md` (a table) and `tradeoff.png` (a
privacy/utility scatter plot), each stating the command that made it."""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

from .. import methods
from ..errors import DtmrError, InputError
from ..io.atomic import atomic_write
from .row import EvaluationRow, Summary, read_rows, rows_json

COLUMNS = (
    ("ar_top1", "AR top-1 ↑", 1), ("ar_top5", "AR top-5 ↑", 1), ("ri_top1", "RI top-1 ↓", 1),
    ("ri_top5", "RI top-5 ↓", 1), ("ar_retrained_top1", "AR retrained ↑", 1),
    ("ri_adaptive_top1", "RI adaptive ↓", 1), ("ri_adaptive_worst", "RI adaptive worst ↓", 1),
    ("linkage", "linkage ↓", 1), ("mse", "MSE", 4),
    ("mpjpe", "MPJPE (m)", 3), ("bone_error", "bone err (m)", 3), ("velocity_error", "vel err (m/f)", 4),
    ("smoothness", "smooth (m/f²)", 4), ("foot_sliding", "foot slide (m/s)", 3),
)


def _cell(stat: Summary | None, digits: int) -> str:
    if stat is None:
        return "—"
    mean, std = stat
    if not math.isfinite(mean):
        return "—"
    return f"{mean:.{digits}f} ± {std:.{digits}f}" if std > 0 else f"{mean:.{digits}f}"


def markdown_table(rows: Sequence[EvaluationRow]) -> str:
    present = [c for c in COLUMNS if any(c[0] in r.metrics for r in rows)]
    head = "| method | " + " | ".join(title for _, title, _ in present) + " |"
    rule = "|---|" + "---|" * len(present)
    body = ["| " + r.label + " | " + " | ".join(_cell(r.metrics.get(k), d) for k, _, d in present) + " |"
            for r in rows]
    return "\n".join([head, rule, *body])


def _evaluator_epochs(run: dict) -> str:
    """How long the raw-trained evaluators were trained: from their checkpoints when the run recorded it."""
    epochs = run.get("evaluator_epochs") or {}
    if not epochs:
        return f"{run['settings']['recognizer_epochs']} epochs"
    if len(set(epochs.values())) == 1:
        value = next(iter(epochs.values()))
        return f"{value} epochs" if value is not None else "epochs not recorded"
    return ", ".join(f"{task} {value} epochs" for task, value in sorted(epochs.items()))


#: characters per line of the command printed under the plot
COMMAND_WRAP = 150
#: the trade-off plot's legend takes two columns when no method's label is longer (characters)
LEGEND_TWO_COLUMNS_UP_TO = 40
#: what must match for rows of two runs to share one table
SAME_PROTOCOL = ("settings", "evaluator_epochs", "evaluator_weights", "data", "chance")
#: keys that runs before 2026-12-01 did not record: compared only when both runs have them
RECORDED_SINCE_2026_12_01 = frozenset({"evaluator_weights"})


def row_order(row: EvaluationRow) -> tuple:
    """A table's order of rows (method, β, checkpoint); rows of one key are one row (`merge_runs`)."""
    return methods.order(row.method), row.beta or 0.0, row.checkpoint or ""


def merge_runs(out_dir: str | Path, rows: Sequence[EvaluationRow], run: dict) -> tuple[list[EvaluationRow], dict]:
    """Rows and run of `out_dir`'s earlier evaluation with the new ones added (`dtmr evaluate --append`).

    A new row replaces an earlier row of the same method, β and checkpoint. The two runs must share the
    data, the settings and the evaluators, or their numbers would not be comparable; the run's command
    becomes both commands joined with ``&&``, which together reproduce the table. Without an earlier
    evaluation in `out_dir` the new rows and run are returned as they are, so two evaluations started side
    by side with --append (different methods, one core each) end up in one table."""
    out = Path(out_dir)
    if not (out / "results.json").exists() and not (out / "run.json").exists():
        return list(rows), run
    for name in ("results.json", "run.json"):
        if not (out / name).exists():
            raise DtmrError(f"--append: {out} holds an incomplete evaluation ({name} is missing)")
    try:
        old_run = json.loads((out / "run.json").read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DtmrError(f"--append: {out} holds a damaged run.json ({exc})") from None
    try:
        old_rows = read_rows(out / "results.json")
    except InputError as exc:
        raise DtmrError(f"--append: {out} holds a damaged results.json ({exc})") from None
    for key in SAME_PROTOCOL:
        earlier, new = old_run.get(key), json.loads(json.dumps(run.get(key)))  # as the earlier run was stored
        if key in RECORDED_SINCE_2026_12_01 and (earlier is None or new is None):
            continue
        if earlier != new:
            raise DtmrError(f"--append: the run in {out} used other {key.replace('_', ' ')} "
                            f"({earlier!r} against {new!r}); evaluate into a new folder")
    new_keys = {row_order(r) for r in rows}
    merged = sorted([r for r in old_rows if row_order(r) not in new_keys] + list(rows), key=row_order)
    merged_run = {**run, "command": f"{old_run['command']} && {run['command']}"}
    devices = [d for r in (old_run, run) for d in (r.get("device") or "").split(" && ") if d]
    if devices:
        merged_run["device"] = " && ".join(dict.fromkeys(devices))  # each device once, in order
    return merged, merged_run


def write_reports(out_dir: str | Path, rows: Sequence[EvaluationRow], run: dict) -> None:
    """`run` holds the command, the settings, the data description and the chance levels."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with atomic_write(out / "results.json") as tmp:
        tmp.write_text(rows_json(rows))
    with atomic_write(out / "run.json") as tmp:
        tmp.write_text(json.dumps(run, indent=1) + "\n")
    chance = run["chance"]
    settings = run["settings"]
    text = [
        f"# Evaluation: {run['data']['path']} ({run['data']['split']} split)",
        "",
        f"Command: `{run['command']}`" + (f" (device: {run['device']})" if run.get("device") else ""),
        "",
        f"Test clips: {run['data']['test_clips']}; train clips: {run['data']['train_clips']}; "
        f"{len(run['data']['subjects'])} subjects, {len(run['data']['actions'])} actions. "
        f"Chance: AR {chance['action']:.1f} %, RI {chance['subject']:.1f} %, linkage {chance['linkage']:.2f} %.",
        f"Mean ± std over {settings['seeds']} seeds. Evaluators: SGN trained on the raw train split "
        f"({_evaluator_epochs(run)}); retrained AR and the adaptive re-ID attacker: SGN trained on "
        f"the anonymized train split ({settings['retrain_epochs']} epochs; "
        + ("retrained for every seed)." if settings.get("retrain_per_seed") else
           "trained once per method on the first seed's references, tested on every seed).")
        ,
        "Accuracies in percent (AR: action recognition, higher is better; RI: re-identification of the source "
        "subject, lower is better). Geometry in the normalized 64-frame space against the paired target where "
        "one exists (else the source); bone error against the reference's mean-pose bone lengths.",
        "",
        markdown_table(rows),
        "",
    ]
    with atomic_write(out / "results.md") as tmp:
        tmp.write_text("\n".join(text))
    plot_tradeoff(out / "tradeoff.png", rows, run)


def plot_tradeoff(path: Path, rows: Sequence[EvaluationRow], run: dict) -> None:
    """Write `tradeoff_figure` as a PNG."""
    import matplotlib.pyplot as plt

    fig = tradeoff_figure(rows, run)
    with atomic_write(path, suffix=".png") as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def tradeoff_figure(rows: Sequence[EvaluationRow], run: dict):
    """Action recognition (y) against re-identification (x) for every method: the adaptive attacker
    (filled) and the raw-trained one (hollow), a legend of the methods' colours under the plot, and the
    command that made it under the legend.

    The methods are named in a legend, not next to their points: methods of one study sit close together
    (N-UCLA's naive-residual variants within a point of each other) and their labels covered each other."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    command = textwrap.wrap(run["command"], COMMAND_WRAP, break_on_hyphens=False)  # long after --append
    command_height = 0.05 + 0.1 * len(command)  # inches: 6-point lines
    labels = [row.label for row in rows]
    columns = 2 if max(map(len, labels), default=0) <= LEGEND_TWO_COLUMNS_UP_TO else 1
    legend_height = 0.15 + 0.18 * math.ceil(len(rows) / columns)  # inches: 8-point rows, a gap above the command
    fig, ax = plt.subplots(figsize=(7.5, 5.5 + legend_height + command_height), dpi=120)
    colors = plt.get_cmap("tab10")
    for i, row in enumerate(rows):
        ar = row.metrics["ar_top1"]
        color = colors(i % 10)
        for key, filled in (("ri_adaptive_top1", True), ("ri_top1", False)):
            if key not in row.metrics:
                continue
            ri = row.metrics[key]
            ax.errorbar(ri.mean, ar.mean, xerr=ri.std, yerr=ar.std, fmt="o", color=color,
                        mfc=color if filled else "none", ms=8, capsize=3,
                        label=row.label if filled or "ri_adaptive_top1" not in row.metrics else None)
    chance = run["chance"]
    ax.axvline(chance["subject"], color="grey", ls=":", lw=1)
    ax.axhline(chance["action"], color="grey", ls=":", lw=1)
    ax.set_xlabel("re-identification top-1 (%): filled = adaptive attacker, hollow = raw-trained  ← more private")
    ax.set_ylabel("action recognition top-1 (%, raw-trained SGN)  ↑ more useful")
    ax.set_title(f"Privacy/utility trade-off: {run['data']['path']} ({run['data']['split']})", fontsize=10)
    ax.grid(alpha=0.3)
    height = fig.get_figheight()
    fig.legend(*ax.get_legend_handles_labels(), loc="lower left", ncol=columns, fontsize=8, frameon=False,
               bbox_to_anchor=(0.01, (command_height + 0.05) / height), borderaxespad=0.2, handletextpad=0.3)
    fig.text(0.01, 0.005, "\n".join(command), fontsize=6, color="dimgrey", va="bottom")
    fig.tight_layout(rect=(0, (command_height + legend_height) / height, 1, 1))
    return fig
