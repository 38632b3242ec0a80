"""The clip table's Plausibility column: scored in a worker after a library opens, sortable worst first,
and superseded when another library opens."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from studio_fakes import make_clip, settle

import app.core.plausibility as plausibility_job
from app.state.comparison import ViewKind
from app.ui.clip_table import NOT_SCORED, PLAUSIBILITY_COLUMN
from app.workers.process_job import ProcessJob
from dtmr.io.npz_dataset import write_npz_dataset

NAMES = ["wave", "march", "sway"]


def stretched(clip):
    """Every other frame the left thigh and shin are 10 cm longer: bones that stretch and shrink."""
    joints = clip.joints.copy()
    joints[::2, 13:16, 1] -= 0.10
    joints[::2, 14:16, 1] -= 0.10
    return clip.replace(joints=joints, sample_name="stretched")


def without_joints(clip):
    return clip.replace(joints=np.full_like(clip.joints, np.nan), sample_name="empty")


def write_library(path, clips):
    write_npz_dataset(path, clips, action_names=NAMES)
    return path


def open_studio(make_studio, qtbot, path):
    window = make_studio()
    window.open_path(path)
    qtbot.waitUntil(lambda: ViewKind.SOURCE in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    return window


def cells(window):
    """(clip name, shown text, tooltip) of each row, in the table's order."""
    proxy = window.library_panel.proxy
    return [(proxy.index(r, 1).data(), proxy.index(r, PLAUSIBILITY_COLUMN).data(),
             proxy.index(r, PLAUSIBILITY_COLUMN).data(Qt.ItemDataRole.ToolTipRole)) for r in range(proxy.rowCount())]


@pytest.mark.parametrize("scoring_process", [False, True], ids=["in the worker", "in the child process"])
def test_opening_a_library_scores_every_clip_and_sorts_the_worst_first(make_studio, qtbot, tmp_path,
                                                                       scoring_process):
    clips = [make_clip(s, a, 40) for s in range(3) for a in range(2)]
    clips[3] = stretched(clips[3])
    clips.append(without_joints(make_clip(4, 0, 40)))
    window = open_studio(lambda: make_studio(scoring_process=scoring_process), qtbot,
                         write_library(tmp_path / "lib.npz", clips))
    if scoring_process:
        assert isinstance(window.controller.threads["plausibility"]._job.score, ProcessJob)

    rows = {name: (text, tip) for name, text, tip in cells(window)}
    assert len(rows) == len(clips)
    assert rows["empty"][0] == "–"
    assert rows["empty"][1] == "Could not be scored: no finite joint coordinates in any frame"
    scores = {name: float(text) for name, (text, _) in rows.items() if name != "empty"}
    assert len(scores) == len(clips) - 1  # no "…" left: every readable clip has its score

    window.library_panel.table.sortByColumn(PLAUSIBILITY_COLUMN, Qt.SortOrder.DescendingOrder)
    ordered = cells(window)
    assert ordered[0][0] == "stretched"
    assert ordered[-1][0] == "empty"  # a clip without a score sorts below every score
    shown = [float(text) for _, text, _ in ordered[:-1]]
    assert shown == sorted(shown, reverse=True)
    assert shown[0] > 2 * shown[1]


def test_opening_another_library_cancels_the_running_scores(make_studio, qtbot, tmp_path, monkeypatch):
    first = write_library(tmp_path / "first.npz", [make_clip(s, a, 40) for s in range(4) for a in range(3)])
    second_clips = [make_clip(s, a, 40) for s in range(4) for a in range(3)]
    second_clips[5] = stretched(second_clips[5])
    second = write_library(tmp_path / "second.npz", second_clips)
    window = open_studio(make_studio, qtbot, second)
    expected = [window.library_panel.model.index(r, PLAUSIBILITY_COLUMN).data() for r in range(len(second_clips))]

    real = plausibility_job.read_clip

    def slow(source, index):
        if Path(source.path).name == "first.npz":
            time.sleep(0.1)
        return real(source, index)

    monkeypatch.setattr(plausibility_job, "read_clip", slow)
    monkeypatch.setattr(plausibility_job, "CHUNK", 2)  # several chunks in the first library: a cancel between them
    seen = []
    window.controller.plausibility_scored.connect(lambda column: seen.append(column))
    cancelled = []
    window.controller.threads["plausibility"].job_cancelled.connect(cancelled.append)
    window.open_path(first)
    qtbot.waitUntil(lambda: window.controller.library.path.name == "first.npz", timeout=20000)
    first_column = window.controller.plausibility
    qtbot.waitUntil(lambda: first_column.scored.any(), timeout=20000)
    window.open_path(second)
    qtbot.waitUntil(lambda: window.controller.library.path.name == "second.npz", timeout=20000)
    settle(qtbot, window)

    assert cancelled
    assert not first_column.scored.all()  # the first library's job stopped part-way
    assert seen[-1] is window.controller.plausibility
    assert all(column is not first_column for column in seen[seen.index(window.controller.plausibility):])
    model = window.library_panel.model
    assert [model.index(r, PLAUSIBILITY_COLUMN).data() for r in range(model.rowCount())] == expected


def test_rows_show_an_ellipsis_and_sort_last_until_their_score_arrives(make_studio, qtbot, tmp_path):
    window = open_studio(make_studio, qtbot, write_library(tmp_path / "lib.npz",
                                                           [make_clip(s, 0, 40) for s in range(3)]))
    model = window.library_panel.model
    column = window.controller.plausibility
    assert list(model.sort_keys(PLAUSIBILITY_COLUMN)) == list(column.values)
    model.set_library(window.controller.library)  # as right after opening: nothing reported yet
    assert [model.index(r, PLAUSIBILITY_COLUMN).data() for r in range(3)] == ["…"] * 3
    assert set(model.sort_keys(PLAUSIBILITY_COLUMN)) == {NOT_SCORED}
