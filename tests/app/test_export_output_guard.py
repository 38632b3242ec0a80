"""The Studio's export never writes over its inputs or a file that is not a video, unless told to, and refuses
a frame too large to render, before any work (issue 23, items 2 and 6)."""

import os

import pytest
from PySide6.QtCore import Qt


@pytest.fixture
def dialog(studio):
    studio.open_export_dialog()
    yield studio.export_dialog
    studio.export_dialog.close()


def click_export(dialog, qtbot):
    qtbot.mouseClick(dialog.export_button, Qt.MouseButton.LeftButton)


def test_an_input_is_never_the_output(dialog, library_file, tmp_path, qtbot):
    os.link(library_file, tmp_path / "clips.gif")
    dialog.path_edit.setText(str(tmp_path / "clips.gif"))
    dialog.overwrite_box.setChecked(True)
    click_export(dialog, qtbot)
    assert not dialog.running
    assert dialog.status.text() == f"{tmp_path / 'clips.gif'}: the output is also an input; write to another file"
    assert (tmp_path / "clips.gif").read_bytes() == library_file.read_bytes()


def test_a_file_of_another_kind_is_replaced_only_when_ticked(dialog, tmp_path, qtbot):
    notes = tmp_path / "notes.gif"
    notes.write_text("my notes")
    dialog.path_edit.setText(str(notes))
    dialog.width_box.setValue(96)
    dialog.height_box.setValue(40)
    dialog.last_frame.setValue(2)
    click_export(dialog, qtbot)
    assert not dialog.running and "is not a GIF or MP4 video: tick" in dialog.status.text()
    assert notes.read_text() == "my notes"
    dialog.overwrite_box.setChecked(True)
    with qtbot.waitSignal(dialog.exported, timeout=60000):
        click_export(dialog, qtbot)
    assert notes.read_bytes()[:6] == b"GIF89a"


def test_folders_and_huge_frames_are_refused_before_the_job(dialog, tmp_path, qtbot):
    (tmp_path / "adir.gif").mkdir()
    dialog.path_edit.setText(str(tmp_path / "adir.gif"))
    click_export(dialog, qtbot)
    assert not dialog.running and dialog.status.text() == f"{tmp_path / 'adir.gif'}: is a folder; name a file"
    dialog.path_edit.setText(str(tmp_path / "big.gif"))
    dialog.width_box.setValue(7680)
    dialog.height_box.setValue(7680)
    click_export(dialog, qtbot)
    assert not dialog.running and "frame size 7680x7680 is too large" in dialog.status.text()
    assert not (tmp_path / "big.gif").exists()
