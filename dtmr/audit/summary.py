"""From per-fold results to the figures of audit.json: mean ± std, verdicts, the worst case, risks.

Verdicts compare an accuracy with chance (DESIGN §9, docs/audit.md): below 1.5 x chance "at chance", below
3 x "above chance", otherwise "re-identifies". Accuracies are percent; risks are probabilities (0-1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

AT_CHANCE, ABOVE_CHANCE = 1.5, 3.0


def verdict(accuracy: float, chance: float) -> str:
    ratio = accuracy / chance if chance > 0 else float("inf")
    if ratio < AT_CHANCE:
        return "at chance"
    return "above chance" if ratio < ABOVE_CHANCE else "re-identifies"


def stats(values: Sequence[float]) -> dict:
    """{"mean", "std" (population, 0 for one fold), "folds"} of per-fold percentages, rounded to 0.01."""
    v = np.asarray(values, dtype=np.float64)
    return {"mean": round(float(v.mean()), 2), "std": round(float(v.std()), 2),
            "folds": [round(float(x), 2) for x in v]}


def scored(entry: dict, folds: Sequence[float], chance: float) -> dict:
    """`entry` with accuracy stats, chance, × chance and the verdict added."""
    accuracy = stats(folds)
    return {**entry, "accuracy": accuracy, "chance": round(chance, 4),
            "times_chance": round(accuracy["mean"] / chance, 2) if chance > 0 else None,
            "verdict": verdict(accuracy["mean"], chance)}


def clip_risks(parts: Sequence[dict], ids: Sequence[str], subjects: np.ndarray) -> list[dict]:
    """One row per tested clip, in release order: its true subject's probability under the worst attacker
    (`parts`: that attacker's per-fold results) and whether its top class was right."""
    rows: dict[int, dict] = {}
    for part in parts:
        for i, p, ok in zip(part["test"], part["true_probability"], part["correct"]):
            rows[int(i)] = {"id": str(ids[i]), "subject": int(subjects[i]), "risk": round(float(p), 4),
                            "correct": bool(ok)}
    return [rows[i] for i in sorted(rows)]


def subject_risks(clips: Sequence[dict]) -> list[dict]:
    out = []
    for s in sorted({c["subject"] for c in clips}):
        mine = [c for c in clips if c["subject"] == s]
        out.append({"subject": s, "clips": len(mine), "risk": round(float(np.mean([c["risk"] for c in mine])), 4),
                    "accuracy": round(100.0 * float(np.mean([c["correct"] for c in mine])), 2)})
    return out


def risk_distribution(clips: Sequence[dict]) -> dict:
    r = np.array([c["risk"] for c in clips], dtype=np.float64)
    if r.size == 0:
        return {"mean": None, "median": None, "p90": None, "max": None}
    return {"mean": round(float(r.mean()), 4), "median": round(float(np.median(r)), 4),
            "p90": round(float(np.percentile(r, 90)), 4), "max": round(float(r.max()), 4)}
