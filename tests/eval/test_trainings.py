"""One setting over several trainings: rows that differ only in their training seed become one summary."""

from __future__ import annotations

import pytest

from dtmr.eval.row import EvaluationRow, Summary
from dtmr.eval.trainings import over_trainings, trainings_table

SETTING = "DisentangledTMR β=0.2 small, naive residual, output critics warmed"


def _json(label, ar, adaptive, method="dtmr", beta=0.2, mpjpe=None):
    """A row as results.json of version 1 holds it: the training seed only in the label."""
    row = {"method": method, "beta": beta, "label": label, "checkpoint": f"{label}.pt",
           "ar_top1": {"mean": ar, "std": 1.0}, "ri_adaptive_top1": {"mean": adaptive, "std": 0.5},
           "linkage": {"mean": 30.0, "std": 1.0}}
    if mpjpe is not None:
        row["mpjpe"] = {"mean": mpjpe, "std": 0.01}
    return row


def _row(*args, **kwargs):
    return EvaluationRow.from_json(_json(*args, **kwargs))


def test_old_rows_give_their_setting_and_training_seed_from_the_label_end_only():
    seeded = [_row(f"{SETTING}, training seed {seed}", 70.0, 30.0) for seed in (12, -3)]
    assert [(r.setting, r.training_seed) for r in seeded] == [(SETTING, 12), (SETTING, -3)]
    assert (_row(SETTING, 70.0, 30.0).setting, _row(SETTING, 70.0, 30.0).training_seed) == (SETTING, None)
    inner = _row("small, training seed 1, bone=0.5", 70.0, 30.0)
    assert (inner.setting, inner.training_seed) == ("small, training seed 1, bone=0.5", None)


def test_new_rows_are_grouped_by_their_setting_field_not_by_their_label():
    """A version-2 row's label is not parsed: rows of one setting group whatever their labels say."""
    def row(label, setting, seed, ar):
        return EvaluationRow("dtmr", 0.2, label, f"{label}.pt", setting, seed, {"ar_top1": Summary(ar, 1.0)})

    rows = [row("first", "one setting", 0, 70.0), row("second", "one setting", 1, 74.0),
            row("one setting, training seed 2", "another setting", 2, 60.0)]
    back = [EvaluationRow.from_json(r.to_json()) for r in rows]
    assert [(s["label"], s["trainings"], s["ar_top1"]["values"]) for s in over_trainings(back, ("ar_top1",))] == \
        [("one setting", 2, [70.0, 74.0]), ("another setting", 1, [60.0])]


def test_trainings_of_one_setting_become_one_summary_with_the_spread_of_their_means():
    rows = [_row("naive retarget", 73.2, 37.5, method="naive", beta=None, mpjpe=0.46),
            _row(SETTING, 73.0, 36.0, mpjpe=0.48), _row(f"{SETTING}, training seed 1", 77.0, 38.0, mpjpe=0.43),
            _row(f"{SETTING}, training seed 2", 75.0, 34.0),
            _row(f"{SETTING}, training seed 1", 60.0, 30.0, beta=1.0)]
    naive, setting, other_beta = over_trainings(rows)
    assert (naive["trainings"], naive["ar_top1"]) == (1, {"mean": 73.2, "std": 0.0, "values": [73.2]})
    assert (setting["label"], setting["trainings"], other_beta["trainings"]) == (SETTING, 3, 1)
    assert setting["ar_top1"]["values"] == [73.0, 77.0, 75.0]
    assert setting["ar_top1"]["mean"] == pytest.approx(75.0) and setting["ar_top1"]["std"] == pytest.approx(2.0)
    assert setting["ri_adaptive_top1"]["mean"] == pytest.approx(36.0)
    assert setting["ri_adaptive_top1"]["std"] == pytest.approx(2.0)
    assert "mpjpe" not in setting  # the third training has no geometry
    undefined = [EvaluationRow.from_json({**row.to_json(), "linkage": {"mean": float("nan"), "std": 0.0}})
                 for row in rows[1:3]]
    assert "linkage" not in over_trainings(undefined)[0]
    table = trainings_table(over_trainings(rows))
    assert f"| {SETTING} | 3 | 75.0 ± 2.0 (73.0 / 77.0 / 75.0) | 36.0 ± 2.0 (36.0 / 38.0 / 34.0) | 30.0 ± 0.0 " \
        "(30.0 / 30.0 / 30.0) | — |" in table
    assert "| naive retarget | 1 | 73.2 | 37.5 | 30.0 | 0.460 |" in table
    assert "MPJPE" not in trainings_table(over_trainings(rows[1:]))
