"""Issue 42: with a library of 2,000 clips the clip table sizes its columns from the rows on screen and a
sample, not from every row (measuring all 1,484 rows of N-UCLA took 2.4 s of the GUI thread at each layout).
The reads of one sizing pass are counted: deterministic, where the passes while a library opens are not."""

from __future__ import annotations

from PySide6.QtWidgets import QHeaderView
from studio_fakes import make_clip, settle

from app.state.comparison import ViewKind
from app.ui.clip_table import ClipTableModel, ClipTableView
from dtmr.io.npz_dataset import write_npz_dataset

CLIPS = 2000


def test_a_large_library_is_sized_from_a_sample_of_its_rows(make_studio, qtbot, tmp_path, monkeypatch):
    clips = [make_clip(i % 40, i % 12, 12).replace(sample_name=f"S{i % 40:03d}A{i % 12:03d}R{i:04d}")
             for i in range(CLIPS)]
    write_npz_dataset(tmp_path / "big.npz", clips)
    calls = [0]
    data = ClipTableModel.data

    def counted(self, index, role=0):
        calls[0] += 1
        return data(self, index, role)

    monkeypatch.setattr(ClipTableModel, "data", counted)  # before the model exists: Qt binds it then
    window = make_studio()
    window.open_path(tmp_path / "big.npz")
    qtbot.waitUntil(lambda: ViewKind.SOURCE in window.comparison.clips, timeout=60000)
    settle(qtbot, window, timeout=60000)
    table = window.library_panel.table
    columns = window.library_panel.proxy.columnCount()
    assert isinstance(table, ClipTableView) and window.library_panel.proxy.rowCount() == CLIPS
    calls[0] = 0
    table.horizontalHeader().resizeSections(QHeaderView.ResizeMode.ResizeToContents)  # what each fit does
    # measured: 8,000 reads of the model with the sample (rows on screen and ROWS_MEASURED more), 80,000 when
    # every row is measured; the table fits once per library open or filter, not at each score update
    assert calls[0] < 20_000, calls[0]
    assert all(table.columnWidth(c) > 0 for c in range(columns))


def test_scores_arriving_do_not_measure_the_columns_again(make_studio, qtbot, tmp_path, monkeypatch):
    """The plausibility scores arrive 48 clips at a time; with every column sized to its contents at each
    layout, each arrival measured every column again (8,000 model reads for 2,000 clips). Now only the rows
    on screen are repainted, and the columns are fitted once per open or filter, in one pass."""
    clips = [make_clip(i % 40, i % 12, 12).replace(sample_name=f"S{i % 40:03d}A{i % 12:03d}R{i:04d}")
             for i in range(CLIPS)]
    write_npz_dataset(tmp_path / "big.npz", clips)
    fits = [0]
    fit = ClipTableView.fit_columns_now
    monkeypatch.setattr(ClipTableView, "fit_columns_now", lambda self: (fits.__setitem__(0, fits[0] + 1), fit(self)))
    window = make_studio()  # after the patch: the view connects its fit when it is made
    window.open_path(tmp_path / "big.npz")
    qtbot.waitUntil(lambda: ViewKind.SOURCE in window.comparison.clips, timeout=60000)
    settle(qtbot, window, timeout=60000)
    assert 1 <= fits[0] <= 2, fits[0]  # the open's reset, filter, sort and verdicts: one pass (and a late one)
    model, calls = window.library_panel.model, [0]
    data = ClipTableModel.data
    monkeypatch.setattr(ClipTableModel, "data", lambda self, index, role=0: (calls.__setitem__(0, calls[0] + 1),
                                                                              data(self, index, role))[1])
    column = model._plausibility
    for _ in range(10):  # ten chunks of scores arriving
        model.set_plausibility(column)
        qtbot.wait(20)
    assert fits[0] <= 2 and calls[0] < 4_000, (fits[0], calls[0])
    calls[0] = 0
    window.library_panel.table.fit_columns_now()
    assert calls[0] == 0  # the fit reads whole columns (display_texts), not cells


def test_the_fit_is_as_wide_as_the_widest_text_of_any_row(make_studio, qtbot, tmp_path):
    """The widest name is in the last row, far beyond the rows Qt's own fit measures."""
    clips = [make_clip(i % 40, i % 12, 12).replace(sample_name=f"S{i:04d}") for i in range(CLIPS)]
    clips[-1] = clips[-1].replace(sample_name="a_much_longer_sample_name_at_the_end_of_the_library")
    write_npz_dataset(tmp_path / "long.npz", clips)
    window = make_studio()
    window.open_path(tmp_path / "long.npz")
    qtbot.waitUntil(lambda: ViewKind.SOURCE in window.comparison.clips, timeout=60000)
    settle(qtbot, window, timeout=60000)
    table = window.library_panel.table
    table.fit_columns_now()
    text = table.fontMetrics().horizontalAdvance("a_much_longer_sample_name_at_the_end_of_the_library")
    assert table.columnWidth(1) >= text + 4
