"""Reports: adding rows to an earlier evaluation (`dtmr evaluate --append`)."""

import json

import pytest

from dtmr.errors import DtmrError
from dtmr.eval.report import merge_runs, write_reports


def _row(method, beta=None, checkpoint=None, ar=50.0):
    return {"method": method, "beta": beta, "label": f"{method} {beta}", "checkpoint": checkpoint,
            "ar_top1": {"mean": ar, "std": 1.0}, "ri_top1": {"mean": 20.0, "std": 0.5},
            "ri_adaptive_top1": {"mean": 10.0, "std": 0.5}}


def _run(command, seeds=3, epochs=(4, 4)):
    return {"command": command, "settings": {"seeds": seeds, "recognizer_epochs": 60, "retrain_epochs": 4,
                                             "retrain": True, "retrain_per_seed": False},
            "evaluator_epochs": {"action": epochs[0], "subject": epochs[1]},
            "data": {"path": "lib.h5", "split": "nwucla", "subjects": (0, 1), "test_clips": 10, "train_clips": 20,
                     "actions": [0, 1]},
            "chance": {"action": 50.0, "subject": 50.0, "linkage": 10.0}}


def test_appended_rows_join_the_table_and_replace_their_own_method(tmp_path):
    write_reports(tmp_path, [_row("raw", ar=80.0), _row("dtmr", 0.2, "a.pt", ar=60.0)], _run("dtmr evaluate A"))
    rows, run = merge_runs(tmp_path, [_row("noise", ar=30.0), _row("dtmr", 0.2, "a.pt", ar=70.0)],
                           _run("dtmr evaluate B --append"))
    assert [(r["method"], r["ar_top1"]["mean"]) for r in rows] == [("raw", 80.0), ("noise", 30.0), ("dtmr", 70.0)]
    assert run["command"] == "dtmr evaluate A && dtmr evaluate B --append"
    write_reports(tmp_path, rows, run)
    text = (tmp_path / "results.md").read_text()
    assert "Command: `dtmr evaluate A && dtmr evaluate B --append`" in text and "| noise None |" in text
    assert len(json.loads((tmp_path / "results.json").read_text())) == 3


def test_append_refuses_another_protocol_or_a_damaged_run(tmp_path):
    assert merge_runs(tmp_path, [_row("naive")], _run("B")) == ([_row("naive")], _run("B"))  # nothing earlier
    write_reports(tmp_path, [_row("raw")], _run("A"))
    with pytest.raises(DtmrError, match="other settings"):
        merge_runs(tmp_path, [], _run("B", seeds=5))
    with pytest.raises(DtmrError, match="other evaluator epochs"):
        merge_runs(tmp_path, [], _run("B", epochs=(30, 30)))
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(DtmrError, match="damaged"):
        merge_runs(tmp_path, [], _run("B"))
    (tmp_path / "run.json").unlink()
    with pytest.raises(DtmrError, match="incomplete"):
        merge_runs(tmp_path, [], _run("B"))


def test_a_run_on_another_device_is_recorded_next_to_the_first(tmp_path):
    write_reports(tmp_path, [_row("raw")], {**_run("A"), "device": "cpu"})
    rows, run = merge_runs(tmp_path, [_row("pmr", checkpoint="p.pt")], {**_run("B"), "device": "cuda:0"})
    assert run["device"] == "cpu && cuda:0"
    write_reports(tmp_path, rows, run)
    assert "Command: `A && B` (device: cpu && cuda:0)" in (tmp_path / "results.md").read_text()
    _, same = merge_runs(tmp_path, [], {**_run("C"), "device": "cpu && cuda:0"})
    assert same["device"] == "cpu && cuda:0"
    _, again = merge_runs(tmp_path, [], {**_run("D"), "device": "cuda:0"})
    assert again["device"] == "cpu && cuda:0"  # each device once
