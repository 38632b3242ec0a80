"""Review mode driven from the keyboard only, then found again after reopening the Studio; and the search
box that must not change the source clip."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLineEdit
from studio_fakes import make_clip, settle

from app.state.comparison import ViewKind
from app.ui.clip_table import VERDICT_COLUMN
from dtmr.io.npz_dataset import write_npz_dataset

NAMES = ["wave", "march", "sway", "kick"]


@pytest.fixture
def big_library(tmp_path):
    """21 clips (7 subjects x 3 actions) with distinct sample names."""
    path = tmp_path / "review.npz"
    write_npz_dataset(path, [make_clip(s, a, 30 + 2 * a) for s in range(7) for a in range(3)], action_names=NAMES)
    return path


def open_studio(make_studio, qtbot, path, settings_file):
    window = make_studio(settings_file=settings_file)
    window.open_path(path)
    qtbot.waitUntil(lambda: ViewKind.SOURCE in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    return window


def press(qtbot, window, key, modifier=Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(QApplication.focusWidget() or window, key, modifier)
    window.coalescer.flush()


def test_review_twenty_clips_with_the_keyboard_then_reopen(make_studio, big_library, tmp_path, qtbot):
    settings = tmp_path / "studio.ini"
    window = open_studio(make_studio, qtbot, big_library, settings)
    review = window.review
    assert review.panel.progress_label.text().startswith("Give a verdict")

    press(qtbot, window, Qt.Key.Key_1)  # the first verdict asks for the annotator's name, once
    qtbot.waitUntil(lambda: review.name_dialog is not None and review.name_dialog.isVisible(), timeout=5000)
    name_field = review.name_dialog.findChild(QLineEdit)
    qtbot.keyClick(name_field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(name_field, "Ada Lovelace")
    qtbot.keyClick(name_field, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: review.name_dialog is None, timeout=5000)
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    assert review.state.annotator == "Ada Lovelace"

    expected = {}
    verdict_keys = {"plausible": Qt.Key.Key_1, "implausible": Qt.Key.Key_2, "unsure": Qt.Key.Key_3}
    for i in range(20):
        index = window.selection.source_index
        verdict = ("plausible", "implausible", "unsure")[i % 3]
        if i:
            press(qtbot, window, verdict_keys[verdict])
        else:
            verdict = "plausible"  # given while the name was asked
        flags, note = (), ""
        if i % 4 == 1:  # a flag from the current frame + 2 to + 7
            press(qtbot, window, Qt.Key.Key_Right)
            press(qtbot, window, Qt.Key.Key_Right)
            start = window.clock.frame
            press(qtbot, window, Qt.Key.Key_BracketLeft)
            for _ in range(5):
                press(qtbot, window, Qt.Key.Key_Right)
            press(qtbot, window, Qt.Key.Key_BracketRight)
            flags = ((start, window.clock.frame),)
        if i % 5 == 2:
            press(qtbot, window, Qt.Key.Key_M)
            assert review.panel.note.hasFocus()
            note = f"knees buckle at {i}"
            qtbot.keyClicks(review.panel.note, note)
            press(qtbot, window, Qt.Key.Key_Return)
            assert not review.panel.note.hasFocus()  # the review keys work again
        expected[index] = (verdict, flags, note)
        press(qtbot, window, Qt.Key.Key_N)
        settle(qtbot, window)
    assert len(expected) == 20
    assert review.panel.progress_label.text() == "20 of 21 reviewed"
    sidecar = tmp_path / "review.npz.review.Ada_Lovelace.json"
    assert len(json.loads(sidecar.read_text())["clips"]) == 20  # saved as it went
    window.close()

    window = open_studio(make_studio, qtbot, big_library, settings)
    state = window.review.state
    assert state.annotator == "Ada Lovelace"  # remembered, not asked again
    for index, (verdict, flags, note) in expected.items():
        clip = state.clip(index)
        assert (clip.verdict, clip.flags, clip.note) == (verdict, flags, note)
        model = window.library_panel.model
        assert model.index(index, VERDICT_COLUMN).data() == verdict
    assert window.review.panel.progress_label.text() == "20 of 21 reviewed"
    press(qtbot, window, Qt.Key.Key_N)  # the only clip left
    missing = next(i for i in range(21) if i not in expected)
    assert window.selection.source_index == missing


def test_verdict_filter_and_sorting(make_studio, big_library, tmp_path, qtbot):
    window = open_studio(make_studio, qtbot, big_library, tmp_path / "s.ini")
    window.qsettings.setValue("review/annotator", "bob")
    window.review.state.set_annotator("bob")
    state = window.review.state
    state.set_verdict(5, "implausible")
    state.set_verdict(7, "plausible")
    panel = window.library_panel
    panel.table.sortByColumn(VERDICT_COLUMN, Qt.SortOrder.AscendingOrder)
    assert [panel.proxy.source_row(r) for r in range(2)] == [5, 7]  # implausible first
    combo = window.review.panel.filter
    combo.setCurrentIndex(combo.findData("implausible"))
    assert [panel.proxy.source_row(r) for r in range(panel.proxy.rowCount())] == [5]
    combo.setCurrentIndex(combo.findData(""))
    assert panel.proxy.rowCount() == 19


def test_damaged_sidecar_does_not_block_the_library_and_is_kept(make_studio, big_library, tmp_path, qtbot):
    damaged = tmp_path / "review.npz.review.eve.json"
    damaged.write_text('{"format": "dtmr-review", "version": 1, "clips": {')
    settings = tmp_path / "s.ini"
    window = open_studio(make_studio, qtbot, big_library, settings)
    window.qsettings.setValue("review/annotator", "eve")
    window.review.state.set_annotator("eve")
    assert "damaged review sidecar" in window.status_label.text()
    window.review.state.set_verdict(0, "unsure")
    kept = list(tmp_path.glob("review.npz.review.eve.json.damaged-*"))
    assert len(kept) == 1 and kept[0].read_text().endswith('"clips": {')
    assert json.loads(damaged.read_text())["clips"]["S00A00V0"]["verdict"] == "unsure"


def test_typing_in_the_search_box_keeps_the_source_clip(make_studio, big_library, tmp_path, qtbot):
    window = open_studio(make_studio, qtbot, big_library, tmp_path / "s.ini")
    panel = window.library_panel
    panel.select_clip(4)  # S01A01V0
    settle(qtbot, window)
    qtbot.keyClicks(panel.search, "S02")  # hides the source clip: the source stays
    assert window.selection.source_index == 4
    assert not panel.table.selectionModel().currentIndex().isValid()
    panel.search.clear()
    assert window.selection.source_index == 4
    assert panel.proxy.source_row(panel.table.selectionModel().currentIndex().row()) == 4
    qtbot.keyClicks(panel.search, "march")  # keeps it visible, moves its row
    assert window.selection.source_index == 4
    assert panel.proxy.source_row(panel.table.currentIndex().row()) == 4
    subject = panel.filters["subject"]
    subject.setCurrentIndex(subject.findData(3))
    assert window.selection.source_index == 4
    settle(qtbot, window)
    assert window.comparison.clips[ViewKind.SOURCE].sample_name == "S01A01V0"
