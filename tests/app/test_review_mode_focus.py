"""Review mode keeps the keyboard where the user works: after a note is saved the focus stays in the review
panel (it used to land on the clip table hidden behind the Review tab, so ↓/↑ switched the clip under
review), and no shortcut fires while the user types in a text field."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from review_helpers import open_reviewing, press, write_library


@pytest.fixture
def window(make_studio, qtbot, tmp_path):
    return open_reviewing(make_studio, qtbot, write_library(tmp_path / "review.npz"), tmp_path / "s.ini")


def test_after_a_note_the_focus_stays_in_the_review_panel(window, qtbot, tmp_path):
    review = window.review
    source = window.selection.source_index
    press(qtbot, window, Qt.Key.Key_M)
    assert review.panel.note.hasFocus()
    qtbot.keyClicks(review.panel.note, "elbow bends backwards")
    press(qtbot, window, Qt.Key.Key_Return)
    focused = QApplication.focusWidget()
    assert focused is not None and (focused is review.panel or review.panel.isAncestorOf(focused))
    assert not window.library_panel.table.hasFocus()
    press(qtbot, window, Qt.Key.Key_End)
    frame = window.clock.frame
    press(qtbot, window, Qt.Key.Key_Down)  # the transport's "10 frames", never another clip
    assert window.selection.source_index == source and window.clock.frame == frame - 10
    press(qtbot, window, Qt.Key.Key_Up)
    assert window.selection.source_index == source and window.clock.frame == frame
    saved = json.loads((tmp_path / "review.npz.review.ada.json").read_text())
    assert saved["clips"]["S00A00V0"]["note"] == "elbow bends backwards"
    press(qtbot, window, Qt.Key.Key_2)  # the review keys work again at once
    assert review.state.clip(source).verdict == "implausible"


@pytest.mark.parametrize("field", ["note", "tags", "search", "frame box", "seed", "epochs", "beta", "rate"])
def test_no_shortcut_fires_while_typing_in_a_text_field(window, qtbot, field):
    review = window.review
    trainer = window.trainer
    widget = {"note": review.panel.note, "tags": review.panel.tags, "search": window.library_panel.search,
              "frame box": window.timeline.frame_box, "seed": window.reference_panel.seed_box,
              "epochs": trainer.epoch_boxes[0], "beta": trainer.beta_box, "rate": trainer.lr_box}[field]
    if widget.window() is window and trainer.isAncestorOf(widget):
        window.tabs.setCurrentWidget(window.trainer_page)
    if field == "search":
        window.docks["library"].raise_()
    else:
        review.dock.raise_()
    press(qtbot, window, Qt.Key.Key_Right)
    press(qtbot, window, Qt.Key.Key_Right)
    source, frame = window.selection.source_index, window.clock.frame
    widget.setFocus()
    qtbot.waitUntil(widget.hasFocus, timeout=2000)
    for key in (Qt.Key.Key_1, Qt.Key.Key_0, Qt.Key.Key_N, Qt.Key.Key_BracketLeft, Qt.Key.Key_BracketRight,
                Qt.Key.Key_M, Qt.Key.Key_Space, Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_A, Qt.Key.Key_P,
                Qt.Key.Key_Plus, Qt.Key.Key_Minus):
        press(qtbot, window, key)
    press(qtbot, window, Qt.Key.Key_N, Qt.KeyboardModifier.ShiftModifier)
    assert widget.hasFocus()
    assert window.selection.source_index == source and window.clock.frame == frame
    assert not window.clock.playing and window.clock.loop_range is None
    clip = review.state.clip(source)
    assert clip.verdict is None and clip.flags == () and review.state.pending_start is None
