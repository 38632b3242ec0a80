"""Review mode that cannot mislead: 1-based frames wherever the user reads them (panel, sidecar, timeline),
a verdict that can be cleared and whose buttons show what is stored, undo of the last review action, and
reviews of the bundled demo saved in the user's data folder, not in the installation."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from review_helpers import open_reviewing, press, write_library

from app.ui.clip_table import VERDICT_COLUMN
from dtmr.resources import DEMO_LIBRARY, resource_path

LEFT = Qt.MouseButton.LeftButton
K = Qt.Key


def go_to_frame(qtbot, window, number: int) -> None:
    """Home, then → until the frame counter shows `number`."""
    press(qtbot, window, K.Key_Home)
    for _ in range(number - 1):
        press(qtbot, window, K.Key_Right)
    assert window.timeline.frame_label.text().startswith(f"frame {number} /")


def test_flags_are_shown_saved_and_drawn_with_the_frame_numbers_of_the_counter(make_studio, qtbot, tmp_path):
    window = open_reviewing(make_studio, qtbot, write_library(tmp_path / "review.npz"), tmp_path / "s.ini")
    panel = window.review.panel
    go_to_frame(qtbot, window, 5)
    press(qtbot, window, K.Key_BracketLeft)
    assert panel.pending_label.text().startswith("Flag starts at frame 5")
    for _ in range(7):
        press(qtbot, window, K.Key_Right)
    assert window.timeline.frame_label.text().startswith("frame 12 /")
    press(qtbot, window, K.Key_BracketRight)
    go_to_frame(qtbot, window, 20)
    press(qtbot, window, K.Key_BracketRight)  # one frame alone
    assert [panel.flags.item(i).text() for i in range(panel.flags.count())] == ["frames 5–12", "frame 20"]
    saved = json.loads((tmp_path / "review.npz.review.ada.json").read_text())
    assert saved["version"] == 2 and saved["frames"] == "1-based"
    assert saved["clips"]["S00A00V0"]["flags"] == [[5, 12], [20, 20]]

    slider = window.timeline.slider  # the flagged ranges on the timeline, under the frames they cover
    spans = slider.marked_spans()
    assert len(spans) == 2
    (left, right), (single_left, single_right) = spans
    assert left < slider.frame_x(4) < slider.frame_x(11) < right < single_left <= slider.frame_x(19) <= single_right
    assert slider.frame_x(3) < left and right < slider.frame_x(12)
    image = slider.grab().toImage()
    middle = (left + right) // 2
    red = [y for y in range(image.height()) if image.pixelColor(middle, y).name() == slider.FLAG_COLOUR.name()]
    assert len(red) >= slider.BAND_HEIGHT - 1  # the whole band is seen, over the groove
    outside = {image.pixelColor(slider.frame_x(1), y).name() for y in range(image.height())}
    assert slider.FLAG_COLOUR.name() not in outside

    press(qtbot, window, K.Key_N)  # another clip: its own (no) flags on the timeline
    assert slider.marked_spans() == []


def test_a_verdict_can_be_cleared_and_the_buttons_show_what_is_stored(make_studio, qtbot, tmp_path):
    window = open_reviewing(make_studio, qtbot, write_library(tmp_path / "review.npz"), tmp_path / "s.ini")
    review, index = window.review, window.selection.source_index
    buttons = review.panel.verdict_buttons
    model = window.library_panel.model

    def shown():
        return [v for v, b in buttons.items() if b.isChecked()]

    press(qtbot, window, K.Key_2)
    assert review.state.clip(index).verdict == "implausible" and shown() == ["implausible"]
    qtbot.mouseClick(buttons["implausible"], LEFT)  # the active verdict clicked again: still stored, still shown
    assert review.state.clip(index).verdict == "implausible" and shown() == ["implausible"]
    press(qtbot, window, K.Key_0)  # the clear-verdict key
    assert review.state.clip(index).verdict is None and shown() == []
    assert model.index(index, VERDICT_COLUMN).data() in ("", None)
    saved = json.loads((tmp_path / "review.npz.review.ada.json").read_text())
    assert "S00A00V0" not in saved["clips"]
    qtbot.mouseClick(buttons["plausible"], LEFT)  # a button gives its verdict
    assert review.state.clip(index).verdict == "plausible" and shown() == ["plausible"]
    assert review.panel.progress_label.text() == "1 of 21 reviewed"
    qtbot.mouseClick(review.panel.clear_button, LEFT)
    assert review.state.clip(index).verdict is None and shown() == []
    assert review.panel.progress_label.text() == "0 of 21 reviewed"


def test_undo_takes_back_the_last_review_actions_one_by_one(make_studio, qtbot, tmp_path):
    window = open_reviewing(make_studio, qtbot, write_library(tmp_path / "review.npz"), tmp_path / "s.ini")
    review, index = window.review, window.selection.source_index
    state, panel = review.state, review.panel
    press(qtbot, window, K.Key_3)
    go_to_frame(qtbot, window, 4)
    press(qtbot, window, K.Key_BracketRight)
    press(qtbot, window, K.Key_M)
    qtbot.keyClicks(panel.note, "hips")
    press(qtbot, window, K.Key_Z, Qt.KeyboardModifier.ControlModifier)  # in the note: the text's own undo
    assert panel.note.text() == "" and state.clip(index).note == ""
    qtbot.keyClicks(panel.note, "hip pops")
    press(qtbot, window, K.Key_Return)
    assert state.clip(index).note == "hip pops"

    press(qtbot, window, K.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert state.clip(index).note == "" and panel.note.text() == ""
    assert state.clip(index).flags == ((3, 3),)
    press(qtbot, window, K.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert state.clip(index).flags == () and panel.flags.count() == 0
    assert state.clip(index).verdict == "unsure"
    qtbot.mouseClick(panel.undo_button, LEFT)
    assert state.clip(index).verdict is None
    assert not panel.undo_button.isEnabled()
    saved = json.loads((tmp_path / "review.npz.review.ada.json").read_text())
    assert saved["clips"] == {}
    press(qtbot, window, K.Key_Z, Qt.KeyboardModifier.ControlModifier)  # nothing left: nothing happens
    assert "Nothing to undo" in window.status_label.text()


def test_a_review_of_the_bundled_demo_goes_to_the_users_data_folder(make_studio, qtbot, tmp_path, monkeypatch):
    data = tmp_path / "user-data"
    monkeypatch.setenv("DTMR_DATA_DIR", str(data))
    demo = resource_path(*DEMO_LIBRARY)
    before = sorted(p.name for p in demo.parent.iterdir())
    window = open_reviewing(make_studio, qtbot, demo, tmp_path / "s.ini", annotator="Ada Lovelace")
    press(qtbot, window, K.Key_2)
    sidecar = data / "reviews" / "bundled" / "demo" / "demo_library.h5.review.Ada_Lovelace.json"
    assert json.loads(sidecar.read_text())["clips"][window.review.state.keys[0]]["verdict"] == "implausible"
    assert sorted(p.name for p in demo.parent.iterdir()) == before  # nothing written into the installation
    label = window.review.panel.saved_label
    assert "data folder" in label.text() and str(sidecar) in label.toolTip()
    window.close()
    window = open_reviewing(make_studio, qtbot, demo, tmp_path / "s.ini", annotator="Ada Lovelace")
    assert window.review.state.clip(0).verdict == "implausible"  # found again there
