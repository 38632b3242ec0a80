"""scripts/merge_evaluations.py: parts run side by side become one table, as `--append` would make it."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from dtmr.eval.report import write_reports
from dtmr.eval.row import EvaluationRow

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "merge_evaluations.py"


@pytest.fixture(scope="module")
def merge_script():
    spec = importlib.util.spec_from_file_location("merge_evaluations", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _part(folder: Path, method: str, ar: float, seeds: int = 5) -> Path:
    command = f"dtmr evaluate --data runs/x.h5 --split nwucla --baselines {method} --seeds {seeds} --out {folder}"
    run = {"command": command, "device": "cuda:0",
           "settings": {"seeds": seeds, "recognizer_epochs": 60, "retrain_epochs": 30, "retrain": True,
                        "retrain_per_seed": False},
           "evaluator_epochs": {"action": 30, "subject": 30},
           "data": {"path": "x.h5", "split": "nwucla", "subjects": [0, 1], "actions": [0, 1], "test_clips": 4,
                    "train_clips": 8},
           "chance": {"action": 50.0, "subject": 50.0, "linkage": 25.0}}
    row = {"method": method, "beta": None, "label": method, "checkpoint": None,
           "ar_top1": {"mean": ar, "std": 0.0}, "ri_top1": {"mean": 10.0, "std": 0.0},
           "ri_adaptive_top1": {"mean": 20.0, "std": 0.0}}
    write_reports(folder, [EvaluationRow.from_json(row)], run)
    return folder


def test_parts_join_in_method_order_with_the_commands_that_reproduce_them(merge_script, tmp_path):
    out = tmp_path / "docs" / "nwucla"
    out.mkdir(parents=True)
    (out / "results.md").write_text("an older table")
    naive = _part(tmp_path / "parts" / "2_naive", "naive", 70.0)
    raw = _part(tmp_path / "parts" / "1_raw", "raw", 80.0)
    stopped = tmp_path / "parts" / "3_stopped"  # a part stopped at its time limit wrote nothing
    stopped.mkdir()
    assert merge_script.main([str(out), str(raw), str(naive), str(stopped)]) == 0
    rows = json.loads((out / "results.json").read_text())
    assert [(r["method"], r["ar_top1"]["mean"]) for r in rows] == [("raw", 80.0), ("naive", 70.0)]
    command = json.loads((out / "run.json").read_text())["command"]
    assert command == (f"dtmr evaluate --data runs/x.h5 --split nwucla --baselines raw --seeds 5 --out {out} && "
                       f"dtmr evaluate --data runs/x.h5 --split nwucla --baselines naive --seeds 5 --out {out} "
                       "--append")
    assert "an older table" not in (out / "results.md").read_text()


def test_parts_of_another_protocol_are_refused(merge_script, tmp_path):
    from dtmr.errors import DtmrError

    first = _part(tmp_path / "a", "raw", 80.0)
    other = _part(tmp_path / "b", "naive", 70.0, seeds=3)
    with pytest.raises(DtmrError, match="other settings"):
        merge_script.merge(tmp_path / "out", [first, other])
    assert merge_script.main([str(tmp_path / "none"), str(tmp_path / "missing")]) == 1


def test_append_adds_a_part_to_the_table_already_in_out(merge_script, tmp_path):
    out = tmp_path / "docs" / "nwucla"
    _part(out, "raw", 80.0)  # the table made earlier (on the GPU), written straight into out
    cpu = _part(tmp_path / "parts" / "naive_cpu", "naive", 70.0)
    run = json.loads((cpu / "run.json").read_text())
    run["device"] = "cpu"
    (cpu / "run.json").write_text(json.dumps(run))
    assert merge_script.main(["--append", str(out), str(cpu)]) == 0
    rows = json.loads((out / "results.json").read_text())
    assert [(r["method"], r["ar_top1"]["mean"]) for r in rows] == [("raw", 80.0), ("naive", 70.0)]
    merged = json.loads((out / "run.json").read_text())
    assert merged["command"] == (
        f"dtmr evaluate --data runs/x.h5 --split nwucla --baselines raw --seeds 5 --out {out} && "
        f"dtmr evaluate --data runs/x.h5 --split nwucla --baselines naive --seeds 5 --out {out} --append")
    assert merged["device"] == "cuda:0 && cpu"
    # without --append the earlier table is replaced
    assert merge_script.main([str(out), str(cpu)]) == 0
    assert [r["method"] for r in json.loads((out / "results.json").read_text())] == ["naive"]


def test_a_damaged_part_is_one_line_naming_its_results_and_leaves_out_as_it_was(merge_script, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.md").write_text("the table so far")
    good = _part(tmp_path / "good", "raw", 80.0)
    bad = _part(tmp_path / "bad", "naive", 70.0)
    (bad / "results.json").write_text(json.dumps([{"method": "naive", "label": "naive", "ar_top1": 70.0}]))
    assert merge_script.main([str(out), str(good), str(bad)]) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"{bad / 'results.json'}: not the rows of a `dtmr evaluate` run: row 1: naive: metric 'ar_top1' is not a "
        '{"mean", "std"} pair of numbers']
    assert (out / "results.md").read_text() == "the table so far"
