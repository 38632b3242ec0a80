"""The Studio opens BVH rigs and pose arrays of other tools upright (issue 45): through File > Open (detected up
axis, unit) and File > Open with options… (the up axis, unit or joint map chosen); a clip left lying down and a
file it cannot read get a message naming the file. Fixtures: tests/rig_fixtures.py."""

from __future__ import annotations

import numpy as np
from coco_fixtures import dump, two_people_pixels, two_videos
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox, QFileDialog, QMessageBox
from rig_fixtures import (
    mediapipe_world_landmarks,
    upright_and_height,
    write_joint_map,
    write_no_legs_bvh,
    write_rig_bvh,
)
from studio_fakes import settle

from dtmr.skeleton import to_ntu25


def opened_through_menu(window, qtbot, monkeypatch, path):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    window.actions.open_file.trigger()
    qtbot.waitUntil(lambda: window.controller.library is not None and window.controller.library.path == path,
                    timeout=20000)
    settle(qtbot, window)
    return window.controller.library


def assert_upright_person(library, heights=(1.4, 2.0)) -> None:
    clip = library.source.read(0)
    joints = clip.joints if clip.topology == "ntu25" else to_ntu25(clip.joints, clip.topology)
    upright, height = upright_and_height(joints)
    assert upright and heights[0] <= height <= heights[1], (library.path, height)


def test_rigs_and_world_landmarks_open_upright_through_file_open(make_studio, tmp_path, qtbot, monkeypatch):
    files = {rig: write_rig_bvh(tmp_path / f"{rig}.bvh", rig)
             for rig in ("mixamo", "cmu", "mocapbank", "rigify", "unreal", "unity", "unknown")}
    files["blender"] = write_rig_bvh(tmp_path / "blender.bvh", "rigify", z_up=True, position_channels_everywhere=True)
    files["mediapipe"] = tmp_path / "world_landmarks.npy"
    np.save(files["mediapipe"], mediapipe_world_landmarks())
    window = make_studio()
    for name, path in files.items():
        library = opened_through_menu(window, qtbot, monkeypatch, path)
        assert_upright_person(library)
        assert library.import_warnings == ()
        (note,) = library.import_notes
        expected = {"unknown": "BVH rig: structure", "blender": "up +z (detected)", "mediapipe": "up -y (detected)"}
        assert expected.get(name, f"BVH rig: {name}") in note
        assert window.library_panel.model.rowCount() == 1
    assert not window.message_boxes


def test_a_coco_dataset_file_opens_one_upright_lifted_clip_per_video(make_studio, tmp_path, qtbot, monkeypatch):
    path = dump(tmp_path / "person_keypoints_val.json", two_videos(two_people_pixels()))
    window = make_studio()
    library = opened_through_menu(window, qtbot, monkeypatch, path)
    assert window.library_panel.model.rowCount() == 2
    assert [library.source.read(i).sample_name for i in range(2)] == [
        "person_keypoints_val_video_1", "person_keypoints_val_video_2"]
    assert_upright_person(library, heights=(1.1, 2.1))  # the lifter's guess of the body's size
    assert "lifted from 2-D keypoints" in library.import_notes[0]
    assert not window.message_boxes


def choose_in_options_dialog(window, qtbot, path, up=None, units=None, joint_map=None):
    window.actions.open_with_options.trigger()
    dialog = window.open_options
    assert dialog is not None and dialog.isVisible()
    open_button = dialog.buttons.button(QDialogButtonBox.StandardButton.Open)
    assert not open_button.isEnabled()  # no file yet
    qtbot.keyClicks(dialog.path_edit, str(path))
    dialog.set_up(up)
    dialog.set_units(units)
    if joint_map is not None:
        qtbot.keyClicks(dialog.joint_map_edit, str(joint_map))
    qtbot.mouseClick(open_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.open_options is None, timeout=5000)


def test_open_with_options_passes_the_up_axis_unit_and_joint_map(make_studio, tmp_path, qtbot):
    z_up = write_rig_bvh(tmp_path / "z.bvh", "mixamo", z_up=True, units_per_metre=1.0)
    window = make_studio()
    choose_in_options_dialog(window, qtbot, z_up, up="+z", units="m")
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=20000)
    settle(qtbot, window)
    library = window.controller.library
    assert "units m (given)" in library.import_notes[0] and "up +z (given)" in library.import_notes[0]
    assert_upright_person(library)

    bones = write_rig_bvh(tmp_path / "bones.bvh", "unknown")
    choose_in_options_dialog(window, qtbot, bones, joint_map=write_joint_map(tmp_path / "map.json"))
    qtbot.waitUntil(lambda: window.controller.library.path == bones, timeout=20000)
    settle(qtbot, window)
    assert "BVH rig: joint map" in window.controller.library.import_notes[0]
    assert_upright_person(window.controller.library)


def test_a_clip_left_lying_and_a_rig_without_legs_get_a_message_naming_the_file(make_studio, tmp_path, qtbot,
                                                                                  monkeypatch):
    z_up = write_rig_bvh(tmp_path / "lying.bvh", "unity", z_up=True)
    window = make_studio()
    choose_in_options_dialog(window, qtbot, z_up, up="+y")
    qtbot.waitUntil(lambda: bool(window.message_boxes), timeout=20000)
    box = window.message_boxes[0]
    assert isinstance(box, QMessageBox)
    assert "lying.bvh: the body is upright in only 0% of its frames with +y as up" in box.text()
    assert window.controller.library.path == z_up  # opened all the same, as asked
    box.close()
    qtbot.waitUntil(lambda: not window.message_boxes, timeout=5000)
    settle(qtbot, window)

    torso = write_no_legs_bvh(tmp_path / "torso.bvh")
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(torso), ""))
    window.actions.open_file.trigger()
    qtbot.waitUntil(lambda: bool(window.message_boxes), timeout=20000)
    box = window.message_boxes[0]
    assert "torso.bvh" in box.text() and "--joint-map" in box.text()
    assert window.controller.library.path == z_up  # the open library stays
    box.close()
