"""dtmr.audit.frontier and scripts/plot_frontier.py: the privacy/utility frontier of audited releases."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from dtmr.audit.frontier import frontier_points, frontier_table, plot_frontier
from dtmr.audit.result import AuditResult
from dtmr.errors import DtmrError

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "plot_frontier.py"


def _audit(method: str, worst: float, std: float, action: float, retrained: float | None = None) -> AuditResult:
    return AuditResult.from_audit(_audit_json(method, worst, std, action, retrained))


def _audit_json(method: str, worst: float, std: float, action: float, retrained: float | None = None) -> dict:
    utility = {"action_recognition": {"accuracy": {"mean": action, "std": 1.0}}}
    if retrained is not None:
        utility["action_recognition_retrained"] = {"accuracy": {"mean": retrained, "std": 1.0}}
    return {
        "format": "dtmr-audit", "release": {"file": f"{method}.h5", "method": method},
        "attackers": [{"name": "tcn", "family": "temporal conv", "form": "adaptive",
                       "accuracy": {"mean": worst, "std": std}},
                      {"name": "bone-lengths", "family": "logistic regression", "form": "adaptive",
                       "accuracy": {"mean": 12.0, "std": 1.0}}],
        "worst": {"name": "tcn", "form": "adaptive", "accuracy": worst, "times_chance": worst / 10},
        "chance": {"subject": 10.0, "linkage": 0.07},
        "metadata": {"findings": []},
        "utility": utility,
    }


AUDITS = [_audit("raw", 58.0, 2.0, 80.0), _audit("naive", 36.0, 1.0, 76.0), _audit("ksame", 17.0, 1.0, 70.0),
          _audit("retime", 30.0, 1.0, 60.0)]


def test_points_are_action_kept_against_raw_and_worst_case_times_chance():
    points = frontier_points(AUDITS, ["raw", "naive", "k-same", "retime"])
    assert [p.action_kept for p in points] == pytest.approx([100.0, 95.0, 87.5, 75.0])
    assert [p.times_chance for p in points] == pytest.approx([5.8, 3.6, 1.7, 3.0])
    assert points[0].times_chance_std == pytest.approx(0.2)
    assert [p.yardstick for p in points] == [False, True, False, False]
    assert points[2].worst == "tcn, adaptive"


def test_the_goal_is_85_percent_of_action_and_half_the_naive_worst_case():
    rows = frontier_table(frontier_points(AUDITS, ["raw", "naive", "k-same", "retime"])).splitlines()[2:]
    verdicts = [row.rsplit("|", 2)[1].strip() for row in rows]
    assert verdicts == ["no", "no", "**yes**", "no"]  # retime: under half, but keeps 75 % only
    assert "| k-same | 88 % | – | 1.70 ± 0.10 | tcn, adaptive | 0.47× |" in rows[2]  # no retrained form


def test_without_a_raw_audit_there_is_no_frontier():
    with pytest.raises(DtmrError, match="raw release"):
        frontier_points(AUDITS[1:], ["naive", "k-same", "retime"])


def test_the_plot_is_a_png_that_draws_every_point(tmp_path):
    path = tmp_path / "frontier.png"
    plot_frontier(path, frontier_points(AUDITS, ["raw", "naive", "k-same", "retime"]), "test")
    import imageio.v3 as iio

    image = iio.imread(path)
    assert image.ndim == 3 and image.shape[0] > 400
    assert np.unique(image.reshape(-1, image.shape[2]), axis=0).shape[0] > 20  # more than axes and text


def test_the_script_writes_the_plot_and_prints_the_table(tmp_path, capsys):
    folders = []
    for audit in AUDITS:
        folder = tmp_path / audit.method
        folder.mkdir()
        (folder / "audit.json").write_text(json.dumps(_audit_json(audit.method, audit.worst_accuracy,
                                                                   audit.worst_std, audit.action_accuracy)))
        folders.append(str(folder))
    spec = importlib.util.spec_from_file_location("plot_frontier", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "f.png"
    assert script.main([*folders, "--labels", "raw,naive,k-same,retime", "--title", "t", "--out", str(out)]) == 0
    assert out.is_file() and "| k-same | 88 % |" in capsys.readouterr().out
    assert script.main([*folders[1:], "--labels", "naive,k-same,retime", "--title", "t", "--out", str(out)]) == 1
    assert "raw release" in capsys.readouterr().err


def test_audits_of_one_label_are_trainings_of_one_setting_merged_into_their_mean():
    audits = [*AUDITS[:2], _audit("dtmr", 17.0, 1.0, 76.0), _audit("dtmr", 19.0, 2.0, 72.0)]
    points = frontier_points(audits, ["raw", "naive", "k-same residual", "k-same residual"])
    assert [p.label for p in points] == ["raw", "naive", "k-same residual"]
    merged = points[2]
    assert merged.action_kept == pytest.approx(92.5) and merged.times_chance == pytest.approx(1.8)
    assert merged.times_chance_std == pytest.approx(np.std([1.7, 1.9], ddof=1))  # over the trainings
    assert np.allclose(merged.trainings, [(95.0, 1.7), (90.0, 1.9)])
    row = frontier_table(points).splitlines()[-1]
    assert row.startswith("| k-same residual | 92 % (95 / 90) | – | 1.80 ± 0.14 (1.70 / 1.90; 2 trainings) |")


def test_the_retrained_recognizer_is_a_second_x_against_the_raw_release_and_a_second_panel(tmp_path):
    audits = [_audit("raw", 58.0, 2.0, 80.0, retrained=90.0), _audit("naive", 36.0, 1.0, 76.0, retrained=81.0),
              _audit("dtmr", 17.0, 1.0, 76.0, retrained=72.0), _audit("dtmr", 19.0, 2.0, 72.0, retrained=63.0),
              _audit("ksame", 17.0, 1.0, 70.0)]  # audited before the retrained form
    points = frontier_points(audits, ["raw", "naive", "residual", "residual", "k-same"])
    assert [p.retrained_kept for p in points] == pytest.approx([100.0, 90.0, 75.0, None])
    # a raw audit made before the retrained form: its raw-trained figure (one model on a raw release)
    older_raw = _audit("raw", 58.0, 2.0, 80.0)
    older = frontier_points([older_raw, *audits[1:]], ["raw", "naive", "residual", "residual", "k-same"])
    assert [p.retrained_kept for p in older[:2]] == pytest.approx([100.0, 100.0 * 81.0 / 80.0])
    rows = frontier_table(points).splitlines()
    assert rows[0].startswith("| release | action kept | action kept, retrained | worst case")
    assert rows[4].startswith("| residual | 92 % (95 / 90) | 75 % |") and rows[5].startswith("| k-same | 88 % | – |")
    import imageio.v3 as iio

    plot_frontier(tmp_path / "one.png", frontier_points(AUDITS, ["raw", "naive", "k-same", "retime"]), "t")
    plot_frontier(tmp_path / "two.png", points, "t")
    one, two = iio.imread(tmp_path / "one.png"), iio.imread(tmp_path / "two.png")
    assert two.shape[1] > 1.5 * one.shape[1]  # the retrained panel beside the raw-trained one


def test_the_legend_sits_below_the_panels_and_grows_with_the_points(tmp_path):
    """The legend hides no point: it takes its own rows under the panels, so the figure grows with it."""
    import imageio.v3 as iio

    few = frontier_points(AUDITS, ["raw", "naive", "k-same", "retime"])
    many = frontier_points(AUDITS * 6, [f"{label} {i}" for i in range(6) for label in ("raw", "naive", "k", "r")])
    plot_frontier(tmp_path / "few.png", few, "t")
    plot_frontier(tmp_path / "many.png", many, "t")
    small, large = iio.imread(tmp_path / "few.png"), iio.imread(tmp_path / "many.png")
    assert large.shape[1] == small.shape[1] and large.shape[0] > small.shape[0] + 100
    bottom = large[-int(0.1 * large.shape[0]):, :, :3]
    assert (bottom.min(axis=2) < 100).any()  # legend text in the bottom tenth, under the axis labels
