"""`EvaluationRow`: results.json rows typed once; rows of earlier code (results/) read as before."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dtmr.errors import InputError
from dtmr.eval.methods import EvalMethod
from dtmr.eval.protocol import method_row
from dtmr.eval.report import markdown_table
from dtmr.eval.row import ROW_VERSION, EvaluationRow, Summary, read_rows, rows_json
from dtmr.models.config import setting_variant, training_seed, variant_label

REPO = Path(__file__).resolve().parents[2]
#: written before rows had a version: two settings trained more than once, named by their labels only
OLD_RESULTS = REPO / "results" / "nwucla_output_losses" / "results.json"


def test_a_protocol_row_keeps_setting_and_training_seed_as_fields_and_round_trips():
    method = EvalMethod("dtmr", 0.2, "m.pt", variant="small, training seed 3", setting_variant="small",
                        training_seed=3)
    per_seed = [{"ar_top1": 70.0, "linkage": float("nan")}, {"ar_top1": 74.0, "linkage": 5.0}]
    row = method_row(method, per_seed)
    assert (row.label, row.setting, row.training_seed) == ("DisentangledTMR β=0.2 small, training seed 3",
                                                           "DisentangledTMR β=0.2 small", 3)
    assert row.metrics["ar_top1"] == Summary(72.0, pytest.approx(2.828, abs=1e-3))
    assert row.metrics["linkage"] == (5.0, 0.0)  # NaN: undefined for that seed, left out
    written = json.loads(rows_json([row]))[0]
    # the keys of rows before version 2 are all there, with the same values
    assert {k: written[k] for k in ("method", "beta", "label", "checkpoint")} == \
        {"method": "dtmr", "beta": 0.2, "label": row.label, "checkpoint": "m.pt"}
    assert written["ar_top1"] == {"mean": 72.0, "std": row.metrics["ar_top1"].std}
    assert written["version"] == ROW_VERSION and written["setting"] == row.setting and written["training_seed"] == 3
    back = EvaluationRow.from_json(written)
    assert rows_json([back]) == rows_json([row]) and back.version == ROW_VERSION  # NaN != NaN: compared as text
    assert (back.metrics, back.setting, back.training_seed) == (row.metrics, row.setting, row.training_seed)
    assert math.isnan(back.seeds[0]["linkage"])


def test_a_parameter_free_method_is_its_own_setting_without_a_training_seed():
    row = method_row(EvalMethod("naive"), [{"ar_top1": 70.0}])
    assert (row.label, row.setting, row.training_seed, row.checkpoint) == ("naive retarget", "naive retarget",
                                                                           None, None)


@pytest.mark.parametrize("training", [None, {}, {"seed": 0}, {"seed": 2, "warm_output_critics": True},
                                      {"seed": True}, {"seed": "1", "loss_weights": {"output_action_ce": 0.5}}])
def test_a_checkpoint_label_is_its_setting_with_its_training_seed(training):
    config = {"preset_name": "small", "residual": "naive"}
    seed = training_seed(training)
    label = variant_label(config, training)
    assert label == (setting_variant(config, training) + (f", training seed {seed}" if seed else ""))
    assert seed == (training.get("seed") if training and type(training.get("seed")) is int else None)


def test_old_rows_read_as_they_were_written_and_name_their_setting():
    assert OLD_RESULTS.is_file(), "a results.json written before rows had a version"
    stored = json.loads(OLD_RESULTS.read_text())
    rows = read_rows(OLD_RESULTS)
    assert "version" not in stored[0] and all(r.version == 1 for r in rows)
    for row, data in zip(rows, stored, strict=True):
        assert (row.method, row.beta, row.label, row.checkpoint) == (data["method"], data["beta"], data["label"],
                                                                    data["checkpoint"])
        assert {k: {"mean": s.mean, "std": s.std} for k, s in row.metrics.items()} == \
            {k: v for k, v in data.items() if isinstance(v, dict)}
        assert [dict(s) for s in row.seeds] == data["seeds"]
    seeded = [(r.setting, r.training_seed) for r in rows if r.training_seed is not None]
    assert seeded == [(rows[5].label, 1), (rows[7].label, 1), (rows[7].label, 2)]
    # written again, they are rows of this version that read back the same
    again = [EvaluationRow.from_json(data) for data in json.loads(rows_json(rows))]
    assert again == rows and markdown_table(again) == markdown_table(rows)


@pytest.mark.parametrize(("text", "message"), [
    ("[{", "cannot read the results: not JSON"),
    ('{"method": "raw"}', "not the rows of a `dtmr evaluate` run (a JSON list, not dict)"),
    ('[{"method": "raw", "label": "raw"}, 3]', "row 2: a row is a JSON object, not int"),
    ('[{"method": "raw"}]', "row 1: a row without a method and a label"),
    ('[{"method": "raw", "label": "raw", "beta": "0.2"}]', "row 1: raw: beta must be a number or null"),
    ('[{"method": "raw", "label": "raw", "ar_top1": {"mean": 1}}]', "row 1: raw: metric 'ar_top1' is not a"),
    ('[{"method": "raw", "label": "raw", "seeds": [{"ar_top1": "x"}]}]', "row 1: raw: seeds must be a list"),
    ('[{"version": 2, "method": "raw", "label": "raw"}]', "row 1: raw: setting must be a text"),
    ('[{"version": 3, "method": "raw", "label": "raw"}]', "row 1: row version 3 (this dtmr reads 1 to 2"),
])
def test_a_damaged_or_foreign_results_file_is_one_line_naming_it(tmp_path, text, message):
    path = tmp_path / "results.json"
    path.write_text(text)
    with pytest.raises(InputError) as error:
        read_rows(path)
    assert str(error.value).startswith(f"{path}: ") and message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_missing_results_file_is_named(tmp_path):
    with pytest.raises(InputError, match="absent.json: cannot read the results"):
        read_rows(tmp_path / "absent.json")
