"""Reports: adding rows to an earlier evaluation (`dtmr evaluate --append`)."""

import json

import pytest

from dtmr.errors import DtmrError
from dtmr.eval.report import merge_runs, write_reports
from dtmr.eval.row import EvaluationRow


def _row(method, beta=None, checkpoint=None, ar=50.0, **changed):
    """A row as results.json of version 1 holds it, with `changed` entries replaced (None: left out)."""
    row = {"method": method, "beta": beta, "label": f"{method} {beta}", "checkpoint": checkpoint,
           "ar_top1": {"mean": ar, "std": 1.0}, "ri_top1": {"mean": 20.0, "std": 0.5},
           "ri_adaptive_top1": {"mean": 10.0, "std": 0.5}, **changed}
    return EvaluationRow.from_json({key: value for key, value in row.items() if value is not None})


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
    assert [(r.method, r.metrics["ar_top1"].mean) for r in rows] == [("raw", 80.0), ("noise", 30.0), ("dtmr", 70.0)]
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


def test_append_refuses_rows_scored_by_other_evaluator_weights(tmp_path):
    """Evaluators retrained by the same command in another session read differently (N-UCLA raw AR 83.0 vs 81.9)."""
    write_reports(tmp_path, [_row("raw")], {**_run("A"), "evaluator_weights": {"action": "aa", "subject": "bb"}})
    with pytest.raises(DtmrError, match="other evaluator weights"):
        merge_runs(tmp_path, [], {**_run("B"), "evaluator_weights": {"action": "aa", "subject": "cc"}})
    rows, _ = merge_runs(tmp_path, [_row("naive")], {**_run("B"), "evaluator_weights": {"action": "aa",
                                                                                       "subject": "bb"}})
    assert [r.method for r in rows] == ["raw", "naive"]
    assert merge_runs(tmp_path, [], _run("C"))[1]["command"] == "A && C"  # a run from before the record


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


def test_every_label_of_the_tradeoff_plot_stays_inside_the_figure():
    """Seen on N-UCLA: a long label at the right edge and a six-command run pushed text out of the PNG."""
    from dtmr.eval.report import tradeoff_figure

    long = "DisentangledTMR β=0.2 small, naive residual"
    rows = [_row("raw", ar=83.0, label="raw",
                 ri_top1={"mean": 44.7, "std": 0.4}, ri_adaptive_top1={"mean": 44.7, "std": 0.4}),
            _row("dtmr", 0.2, "n.pt", ar=71.4, label=long,
                 ri_top1={"mean": 19.7, "std": 1.3}, ri_adaptive_top1={"mean": 38.3, "std": 0.9}),
            _row("pmr", checkpoint="p.pt", ar=11.3, label="PMR",
                 ri_top1={"mean": 9.8, "std": 0.2}, ri_adaptive_top1={"mean": 16.9, "std": 0.6})]
    command = " && ".join(f"dtmr evaluate --data runs/nwucla.h5 --split nwucla --model runs/nwucla/m{i}/model.pt "
                          "--baselines '' --seeds 5 --out results/nwucla --recognizers runs/nwucla/recognizers "
                          "--retrain-epochs 30 --device cuda --append" for i in range(7))
    fig = tradeoff_figure(rows, {**_run(command), "chance": {"action": 10.0, "subject": 10.0, "linkage": 0.2}})
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    ax = fig.axes[0]
    (legend,) = fig.legends
    entries = legend.get_texts()
    assert [t.get_text() for t in entries] == ["raw", long, "PMR"]
    texts = [ax.xaxis.label, ax.yaxis.label, ax.title, *entries, *fig.texts]
    for text in texts:
        extent = text.get_window_extent(renderer)
        assert extent.x0 >= 0 and extent.y0 >= 0 and extent.x1 <= fig.bbox.x1 and extent.y1 <= fig.bbox.y1, \
            f"{text.get_text()[:40]!r} leaves the figure: {extent.bounds} vs {fig.bbox.bounds}"
    assert not ax.xaxis.label.get_window_extent(renderer).overlaps(ax.yaxis.label.get_window_extent(renderer))
    # the legend sits between the axes (with their x label) and the command, touching neither
    box = legend.get_window_extent(renderer)
    assert box.y1 <= ax.xaxis.label.get_window_extent(renderer).y0
    assert box.y0 >= max(t.get_window_extent(renderer).y1 for t in fig.texts)
    assert all(not a.get_window_extent(renderer).overlaps(b.get_window_extent(renderer))
               for i, a in enumerate(entries) for b in entries[i + 1:])


def test_the_tradeoff_legend_takes_two_columns_for_short_labels():
    """Nine methods would make a tall legend in one column; short labels share a row."""
    from dtmr.eval.report import tradeoff_figure

    rows = [_row("raw", ar=80.0 - i, label=f"method {i}", ri_top1={"mean": 40.0 + i, "std": 1.0}) for i in range(9)]
    fig = tradeoff_figure(rows, {**_run("dtmr evaluate"), "chance": {"action": 10.0, "subject": 10.0, "linkage": 0.2}})
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    lefts = {round(t.get_window_extent(renderer).x0) for t in fig.legends[0].get_texts()}
    assert len(lefts) == 2
