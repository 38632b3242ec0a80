"""Issue 42: opening a library of 2,000 clips sizes the clip table's columns from the rows on screen and a
sample, not from every row (measuring all 1,484 rows of N-UCLA took 2.4 s of the GUI thread at each layout)."""

from __future__ import annotations

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

    monkeypatch.setattr(ClipTableModel, "data", counted)
    window = make_studio()
    window.open_path(tmp_path / "big.npz")
    qtbot.waitUntil(lambda: ViewKind.SOURCE in window.comparison.clips, timeout=60000)
    settle(qtbot, window, timeout=60000)
    table = window.library_panel.table
    assert isinstance(table, ClipTableView) and window.library_panel.proxy.rowCount() == CLIPS
    columns = window.library_panel.proxy.columnCount()
    # measured: 84,344 reads of the model with the columns sized from a sample (most of them the sort's),
    # 508,155 sized from every row
    assert calls[0] < 150_000, calls[0]
    assert all(table.columnWidth(c) > 0 for c in range(columns))
