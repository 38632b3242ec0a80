"""The privacy/utility frontier of several audited releases of one data set (issue 19, docs/notebook/experiments.md).

One point per release: x = the action kept, the audit's raw-trained action recognizer on the release as a
percentage of its accuracy on the raw release; y = the worst case over the attacker suite, in multiples of
chance re-identification (± the folds' std). The naive retarget is the yardstick: the figure marks it, half
its worst case (the goal) and 2× chance (the target aimed for), and 85 % of raw action (the utility goal).
When the audits have it, a second panel puts the same points at x = the action recognizer retrained on the
release (the audit's "retrained" utility form), as a percentage of the raw release's: whether the action is
still in the motion for a model that adapts to the release. The goal is judged on the first (a deployed
recognizer, as the goal's "raw AR" says); the second is shown beside it. On a raw release the two forms are
one model (the released clips are the raw clips, with the same labels, order, seed and epochs:
tests/audit/test_audit_suite.py), so a raw audit made before the retrained form gives its raw-trained figure.

Audits given the same label are trainings of one setting (`dtmr train --seed`): they make one point, the mean
over the trainings with the sample std over them (`dtmr.eval.metrics.summarize`, as
scripts/summarize_trainings.py does for `dtmr evaluate`), and the table lists each training's value.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import DtmrError
from ..io.atomic import atomic_write
from ..methods import NAIVE, RAW
from .result import AuditResult

#: the utility goal: share of the raw release's action recognition a release keeps
ACTION_KEPT_GOAL = 85.0
#: the privacy target aimed for, in multiples of chance re-identification
TIMES_CHANCE_TARGET = 2.0


@dataclass(frozen=True)
class FrontierPoint:
    label: str
    action_kept: float  # % of the raw release's action recognition (raw-trained recognizer)
    times_chance: float  # worst case / chance re-identification
    times_chance_std: float
    worst: str  # "tcn, adaptive"
    yardstick: bool  # the naive retarget
    #: (action kept, × chance) of each training when the point is a setting's mean over several
    trainings: tuple[tuple[float, float], ...] = ()
    #: % of the raw release's accuracy of the action recognizer retrained on the release; None when an audit
    #: (this one's or the raw release's) was made before the audit had that form
    retrained_kept: float | None = None


def _raw_trained_action(audit: AuditResult) -> float:
    if audit.action_accuracy is None:
        raise DtmrError(f"the audit of {audit.release_file} has no action recognition figure")
    return audit.action_accuracy


def frontier_points(audits: Sequence[AuditResult], labels: Sequence[str], yardstick: str = NAIVE.name
                    ) -> list[FrontierPoint]:
    """The points of `audits` (one of them of the raw release), labelled `labels`; the release whose method is
    `yardstick` is marked. A DtmrError when no audit is of a raw release."""
    raw = next((a for a in audits if a.method == RAW.name), None)
    if raw is None:
        raise DtmrError("the frontier needs the audit of the raw release (action kept is relative to it)")
    raw_action = _raw_trained_action(raw)
    raw_retrained = raw.retrained_action_accuracy
    if raw_retrained is None and any(a.retrained_action_accuracy for a in audits):
        raw_retrained = raw_action  # one model on a raw release
    points = []
    for audit, label in zip(audits, labels, strict=True):
        retrained = raw_retrained if audit is raw else audit.retrained_action_accuracy
        points.append(FrontierPoint(label=label, action_kept=100.0 * _raw_trained_action(audit) / raw_action,
                                    times_chance=audit.worst_times_chance,
                                    times_chance_std=audit.worst_std / audit.chance,
                                    worst=f"{audit.worst_name}, {audit.worst_form}",
                                    yardstick=audit.method == yardstick,
                                    retrained_kept=None if retrained is None or not raw_retrained
                                    else 100.0 * retrained / raw_retrained))
    return _over_trainings(points)


def _over_trainings(points: list[FrontierPoint]) -> list[FrontierPoint]:
    """Points of one label merged into their mean over the trainings, in the order of their first."""
    from ..eval.metrics import summarize

    groups: dict[str, list[FrontierPoint]] = {}
    for point in points:
        groups.setdefault(point.label, []).append(point)
    merged = []
    for members in groups.values():
        if len(members) == 1:
            merged.append(members[0])
            continue
        kept, times = summarize([p.action_kept for p in members]), summarize([p.times_chance for p in members])
        worst = sorted({p.worst for p in members})
        retrained = [p.retrained_kept for p in members]
        merged.append(replace(members[0], action_kept=kept["mean"], times_chance=times["mean"],
                              retrained_kept=None if None in retrained else summarize(retrained)["mean"],
                              times_chance_std=times["std"], worst=" / ".join(worst),
                              trainings=tuple((p.action_kept, p.times_chance) for p in members)))
    return merged


def plot_frontier(path: Path, points: Sequence[FrontierPoint], title: str) -> None:
    """Write the frontier of `points` as a PNG: every release a numbered point, named in the legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    retrained = any(p.retrained_kept is not None for p in points)
    columns = 2 if retrained else 1
    legend_rows = -(-(len(points) + 3) // columns)  # the points and the three goal lines
    legend_height = 0.3 + 0.16 * legend_rows  # inches, below the panels so that it hides no point
    fig, axes = plt.subplots(1, columns, figsize=(7.5 * columns if retrained else 8.0, 6.5 + legend_height),
                             dpi=120, sharey=True, squeeze=False)
    _panel(axes[0, 0], points, lambda p: p.action_kept,
           "action kept (% of raw; raw-trained action recognizer of the audit)  → more useful")
    axes[0, 0].set_ylabel("worst-case re-identification (× chance; adaptive attackers included)  ↓ more private")
    if retrained:
        _panel(axes[0, 1], points, lambda p: p.retrained_kept,
               "action kept (% of raw; action recognizer retrained on the release)  → more useful")
    fig.legend(*axes[0, 0].get_legend_handles_labels(), loc="lower center", ncol=columns, fontsize=7,
               frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0.0, legend_height / (6.5 + legend_height), 1.0, 1.0))
    with atomic_write(path, suffix=".png") as tmp:
        fig.savefig(tmp, format="png")
    plt.close(fig)


def _panel(ax, points: Sequence[FrontierPoint], x, xlabel: str) -> None:
    """One panel of the frontier: every point at (x(point), × chance), numbered, with the goals' lines."""
    import matplotlib.pyplot as plt

    colors = plt.get_cmap("tab10")
    for i, point in enumerate(points):
        if x(point) is None:
            continue
        marker = "*" if point.yardstick else "osD^v"[(i // 10) % 5]
        ax.errorbar(x(point), point.times_chance, yerr=point.times_chance_std, capsize=3,
                    fmt=marker, ms=16 if point.yardstick else 8, color=colors(i % 10),
                    mec="black" if point.yardstick else None, label=f"{i + 1}. {point.label}")
        ax.annotate(str(i + 1), (x(point), point.times_chance), textcoords="offset points", xytext=(5, 4),
                    fontsize=8)
    naive = next((p for p in points if p.yardstick), None)
    if naive is not None:
        ax.axhline(naive.times_chance / 2, color="tab:red", ls="--", lw=1,
                   label="goal: half the naive retarget's worst case")
    ax.axhline(TIMES_CHANCE_TARGET, color="tab:green", ls=":", lw=1, label=f"target: {TIMES_CHANCE_TARGET:g}× chance")
    ax.axhline(1.0, color="grey", ls=":", lw=0.8)
    ax.axvline(ACTION_KEPT_GOAL, color="tab:blue", ls="--", lw=1, label=f"goal: {ACTION_KEPT_GOAL:g} % of raw action")
    ax.set_xlabel(xlabel)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)


def frontier_table(points: Sequence[FrontierPoint]) -> str:
    """The points as a Markdown table, with each release's distance from the goals."""
    naive = next((p for p in points if p.yardstick), None)
    lines = ["| release | action kept | action kept, retrained | worst case (× chance) | worst attacker "
             "| vs naive retarget | goal met |", "|---|---|---|---|---|---|---|"]
    for point in points:
        ratio = f"{point.times_chance / naive.times_chance:.2f}×" if naive else "–"
        met = (naive is not None and point.action_kept >= ACTION_KEPT_GOAL
               and point.times_chance <= naive.times_chance / 2)
        kept, times = f"{point.action_kept:.0f} %", f"{point.times_chance:.2f} ± {point.times_chance_std:.2f}"
        if point.trainings:  # a setting over its trainings: each training's value too
            kept += " (" + " / ".join(f"{k:.0f}" for k, _ in point.trainings) + ")"
            times += " (" + " / ".join(f"{t:.2f}" for _, t in point.trainings) + f"; {len(point.trainings)} trainings)"
        retrained = "–" if point.retrained_kept is None else f"{point.retrained_kept:.0f} %"
        lines.append(f"| {point.label} | {kept} | {retrained} | {times} | {point.worst} | {ratio} "
                     f"| {'**yes**' if met else 'no'} |")
    return "\n".join(lines)
