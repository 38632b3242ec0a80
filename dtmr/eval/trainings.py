"""One setting over several trainings: results rows whose checkpoints differ only in their training seed
(`dtmr train --seed`), reduced to the mean and spread of their means.

A row's ± is over evaluation seeds of one trained model, so it says nothing of where a second training of
the same setting lands; on N-UCLA two trainings differed by more than that ± (docs/notebook/experiments.md). Rows are
grouped by method, β and setting (`EvaluationRow.setting`), so a setting trained once is a group of one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .metrics import summarize
from .report import COLUMNS
from .row import EvaluationRow

#: the columns that decide the goal, and the geometry that shows how far the release moved
SETTING_METRICS = ("ar_top1", "ri_adaptive_top1", "linkage", "mpjpe")


def over_trainings(rows: Sequence[EvaluationRow], metrics: Sequence[str] = SETTING_METRICS) -> list[dict]:
    """One summary per setting, in the rows' order: {"method", "beta", "label", "trainings", and per metric
    {"mean", "std", "values"}}, where "values" are the trainings' means in row order and mean ± std
    (sample std) is over the finite ones. A metric some training lacks, or none has a finite value
    of, is left out of its setting."""
    groups: dict[tuple, list[EvaluationRow]] = {}
    for row in rows:
        groups.setdefault((row.method, row.beta, row.setting), []).append(row)
    summaries = []
    for (method, beta, label), members in groups.items():
        summary = {"method": method, "beta": beta, "label": label, "trainings": len(members)}
        for metric in metrics:
            if all(metric in row.metrics for row in members):
                values = [row.metrics[metric].mean for row in members]
                if any(math.isfinite(v) for v in values):  # NaN: undefined for that training
                    summary[metric] = {**summarize(values), "values": values}
        summaries.append(summary)
    return summaries


def trainings_table(summaries: Sequence[dict], metrics: Sequence[str] = SETTING_METRICS) -> str:
    """Markdown table of `over_trainings`: each cell "mean ± std (first / second / …)"; a metric no
    setting has gets no column."""
    columns = [(key, title, digits) for key, title, digits in COLUMNS
               if key in metrics and any(key in s for s in summaries)]
    head = "| setting | trainings | " + " | ".join(title for _, title, _ in columns) + " |"
    rule = "|---|---|" + "---|" * len(columns)

    def cell(stat: dict | None, digits: int) -> str:
        if stat is None:
            return "—"
        each = " / ".join(f"{v:.{digits}f}" for v in stat["values"])
        if len(stat["values"]) == 1:
            return each
        return f"{stat['mean']:.{digits}f} ± {stat['std']:.{digits}f} ({each})"

    body = [f"| {s['label']} | {s['trainings']} | " + " | ".join(cell(s.get(k), d) for k, _, d in columns) + " |"
            for s in summaries]
    return "\n".join([head, rule, *body])
