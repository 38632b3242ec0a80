"""scripts/summarize_trainings.py: a results folder's settings over their trainings, as Markdown."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "summarize_trainings.py"


def _script():
    spec = importlib.util.spec_from_file_location("summarize_trainings", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(label, ar, method="dtmr"):
    return {"method": method, "beta": 0.2 if method == "dtmr" else None, "label": label, "checkpoint": None,
            "ar_top1": {"mean": ar, "std": 1.0}, "ri_adaptive_top1": {"mean": 30.0, "std": 1.0}}


def test_settings_trained_often_enough_are_printed_and_a_missing_folder_is_named(tmp_path, capsys):
    rows = [_row("naive retarget", 70.0, "naive"), _row("small", 70.0), _row("small, training seed 1", 74.0)]
    (tmp_path / "results.json").write_text(json.dumps(rows))
    assert _script().main([str(tmp_path), "--min-trainings", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:] == ["| small | 2 | 72.0 ± 2.8 (70.0 / 74.0) | 30.0 ± 0.0 (30.0 / 30.0) |"]
    assert _script().main([str(tmp_path / "absent")]) == 1
    assert "absent/results.json: cannot read the results" in capsys.readouterr().err
    (tmp_path / "results.json").write_text(json.dumps([{"method": "dtmr"}]))
    assert _script().main([str(tmp_path)]) == 1
    assert "results.json: not the rows of a `dtmr evaluate` run" in capsys.readouterr().err
    (tmp_path / "results.json").write_text("[{")
    assert _script().main([str(tmp_path)]) == 1
    assert "results.json: cannot read the results" in capsys.readouterr().err
