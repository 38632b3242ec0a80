"""Library panel driven as a user would: File menu, drag and drop, recent files, filters, search, sorting."""

import json
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.state.comparison import ViewKind
from dtmr.io.library import ClipLibrary
from studio_fakes import make_clip, settle


def open_through_menu(window, qtbot, monkeypatch, path: Path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    window.actions.open_file.trigger()
    qtbot.waitUntil(lambda: window.controller.library is not None and window.controller.library.path == path,
                    timeout=20000)
    settle(qtbot, window)


def test_file_menu_opens_and_selects_the_first_clip(make_studio, library_file, qtbot, monkeypatch):
    window = make_studio()
    open_through_menu(window, qtbot, monkeypatch, library_file)
    panel = window.library_panel
    assert panel.model.rowCount() == 9 and panel.count_label.text() == "9 clips"
    assert window.selection.source_index == 0
    assert window.comparison.clips[ViewKind.SOURCE].sample_name == "S00A00V0"
    assert panel.model.index(0, 3).data() == "wave"  # action names from the .npz
    assert panel.model.index(0, 6).data() == "40"  # frames column
    assert [a.text() for a in window.actions.recent.actions()] == [str(library_file)]


def test_search_filters_sorting_and_row_selection(make_studio, library_file, qtbot, monkeypatch):
    window = make_studio()
    open_through_menu(window, qtbot, monkeypatch, library_file)
    panel = window.library_panel
    qtbot.keyClicks(panel.search, "MARCH")
    assert panel.proxy.rowCount() == 3 and panel.count_label.text() == "3 of 9 clips"
    subject = panel.filters["subject"]
    subject.setCurrentIndex(subject.findData(2))
    assert panel.proxy.rowCount() == 1
    assert panel.proxy.index(0, 1).data() == "S02A01V0"
    panel.search.clear()
    assert panel.proxy.rowCount() == 3
    subject.setCurrentIndex(0)
    action = panel.filters["action"]
    action.setCurrentIndex(action.findText("sway"))
    assert sorted(panel.proxy.index(r, 2).data() for r in range(panel.proxy.rowCount())) == ["0", "1", "2"]
    action.setCurrentIndex(0)
    panel.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)  # subject, highest first
    assert panel.proxy.index(0, 2).data() == "2"
    rect = panel.table.visualRect(panel.proxy.index(4, 0))
    qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    chosen = panel.proxy.source_row(4)
    assert window.selection.source_index == chosen
    settle(qtbot, window)
    assert window.comparison.clips[ViewKind.SOURCE].sample_name == panel.model.names[chosen]
    assert window.comparison.reference.subject != window.comparison.clips[ViewKind.SOURCE].subject


def test_drag_and_drop_and_recent_files(make_studio, library_file, tmp_path, qtbot):
    h5 = tmp_path / "lib.h5"
    ClipLibrary.create(h5, [make_clip(s, 0) for s in range(2)]).close()
    window = make_studio()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(h5))])
    enter = QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    qtbot.waitUntil(lambda: window.controller.library is not None and window.controller.library.path == h5,
                    timeout=20000)
    assert window.library_panel.model.rowCount() == 2
    window.open_path(library_file)
    qtbot.waitUntil(lambda: window.controller.library.path == library_file, timeout=20000)
    recent = window.actions.recent.actions()
    assert [a.text() for a in recent] == [str(library_file), str(h5)]
    recent[1].trigger()  # File > Open recent > lib.h5
    qtbot.waitUntil(lambda: window.controller.library.path == h5, timeout=20000)
    settle(qtbot, window)


def test_a_malformed_file_gets_a_message_naming_it(make_studio, tmp_path, qtbot):
    bad = tmp_path / "broken.npz"
    np.savez(bad, joints=np.zeros((2, 3)))
    window = make_studio()
    window.open_path(bad)
    qtbot.waitUntil(lambda: bool(window.message_boxes), timeout=20000)
    box = window.message_boxes[0]
    assert isinstance(box, QMessageBox) and "broken.npz" in box.text()
    assert window.controller.library is None
    box.close()


def test_real_ntu_skeleton_folder(make_studio, shared_data, qtbot):
    folder = shared_data / "ntu_samples"
    window = make_studio()
    window.open_path(folder)
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=30000)
    settle(qtbot, window)
    assert window.library_panel.model.rowCount() >= 2
    assert ViewKind.RELEASED in window.comparison.clips


def test_open_folder_of_skeleton_files_through_the_menu(make_studio, tmp_path, qtbot, monkeypatch):
    from dtmr.io.ntu_skeleton import write_skeleton_file

    folder = tmp_path / "ntu"
    folder.mkdir()
    for subject, action in ((1, 1), (2, 1), (3, 2)):
        clip = make_clip(subject, action).replace(sample_name=None)
        write_skeleton_file(folder / f"S001C001P{subject:03d}R001A{action:03d}.skeleton", clip)
    window = make_studio()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *a, **k: str(folder))
    qtbot.mouseClick(window.library_panel.open_folder_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=20000)
    settle(qtbot, window)
    panel = window.library_panel
    assert panel.model.rowCount() == 3
    assert sorted(panel.model.index(r, 2).data() for r in range(3)) == ["1", "2", "3"]  # subjects from names
    assert ViewKind.RELEASED in window.comparison.clips


def test_real_nwucla_kinect_v1_data_set(make_studio, shared_data, qtbot):
    window = make_studio()
    window.open_path(shared_data / "nwucla.npz")
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=60000)
    qtbot.waitUntil(lambda: ViewKind.RELEASED in window.comparison.clips, timeout=60000)
    settle(qtbot, window, timeout=60000)
    panel = window.library_panel
    assert panel.model.rowCount() == 1484 and panel.filters["view"].count() == 4  # "all" + 3 views
    source = window.comparison.clips[ViewKind.SOURCE]
    assert source.topology == "kinect_v1_20"
    assert window.comparison.clips[ViewKind.RELEASED].num_frames == source.num_frames  # model output: NTU-25
    view = panel.filters["view"]
    view.setCurrentIndex(view.findData(2))
    assert panel.proxy.rowCount() == 464


def test_a_library_libhdf5_cannot_finish_is_refused_while_the_studio_stays_live(make_studio, library_file, tmp_path,
                                                                                 qtbot, monkeypatch):
    """Issue 20: junk in the global heap of a library's string attributes makes h5py spin forever. The Studio
    refuses the file with a message naming it, keeps the open library, and its event loop runs meanwhile."""
    from PySide6.QtCore import QTimer

    from dtmr.data.clip import Clip
    from dtmr.io import hdf5_watchdog

    monkeypatch.setattr(hdf5_watchdog, "DEADLINE_S", 3.0)
    rng = np.random.default_rng(3)
    good = tmp_path / "good.h5"
    ClipLibrary.create(good, [Clip(joints=rng.normal(size=(20, 25, 3)).astype(np.float32), topology="ntu25",
                                   subject=i + 1, sample_name=f"s{i}") for i in range(4)]).close()
    data = bytearray(good.read_bytes())
    assert data[2048:2052] == b"GCOL"  # the heap this case damages sits where the case expects it
    data[2056:2058] = b"\x81\x81"
    spinning = tmp_path / "spinning.h5"
    spinning.write_bytes(bytes(data))

    window = make_studio()
    window.open_path(library_file)
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=20000)
    opened = window.controller.library
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))
    timer.start(50)
    window.open_path(spinning)
    qtbot.waitUntil(lambda: bool(window.message_boxes), timeout=30000)
    timer.stop()
    box = window.message_boxes[0]
    assert "spinning.h5" in box.text() and "reading did not finish" in box.text()
    assert window.controller.library is opened  # the old library stays open
    assert len(ticks) >= 20  # the event loop ran through the three-second check
    box.close()


def _write_other_tool_file(kind: str, folder: Path) -> Path:
    """One file of another tool's format (issue 21), holding clips of `make_clip`."""
    clips = [make_clip(subject, 1) for subject in (1, 2)]
    if kind == "bvh":
        from dtmr.io.bvh_writer import write_bvh

        write_bvh(folder / "clip.bvh", clips[0])
        return folder / "clip.bvh"
    if kind == "pkl":
        from dtmr.io.pyskl_pickle import pyskl_annotation, write_pyskl_pickle

        names = [f"S001C001P00{i + 1}R001A001" for i in range(2)]
        write_pyskl_pickle(folder / "clips.pkl", [pyskl_annotation(n, 0, c.joints[None]) for n, c in zip(names, clips)],
                           {"all": names})
        return folder / "clips.pkl"
    if kind == "sgn":
        x = np.zeros((2, 300, 150), np.float32)
        for i, c in enumerate(clips):
            x[i, :c.num_frames, :75] = c.joints.reshape(c.num_frames, 75)
        np.savez(folder / "NTU60_CS.npz", x_train=x, y_train=np.eye(60)[[0, 1]], x_test=x[:1], y_test=np.eye(60)[[0]])
        return folder / "NTU60_CS.npz"
    if kind == "npy":
        np.save(folder / "mediapipe_body_3d_xyz.npy", clips[0].joints)
        return folder / "mediapipe_body_3d_xyz.npy"
    if kind == "h36m-json":  # an MMPose 3-D lifter's output (Human3.6M-17)
        rng = np.random.default_rng(0)
        frames = [{"frame_id": t, "instances": [{"keypoints": (rng.normal(0, 0.2, (17, 3)) + (0, 0, 1)).tolist()}]}
                  for t in range(8)]
        (folder / "lifted.json").write_text(json.dumps({"meta_info": {"dataset_name": "h36m"},
                                                        "instance_info": frames}))
        return folder / "lifted.json"
    if kind == "openpose-3d":  # a folder of OpenPose frames with 3-D keypoints (BODY_25)
        for t in range(8):
            points = [v for i in range(25) for v in (0.1 * (i % 5), 1.0 + 0.05 * (i // 5), 3.0 + 0.01 * t, 0.9)]
            (folder / f"take_{t:012d}_keypoints.json").write_text(json.dumps({"people": [{
                "pose_keypoints_2d": [v for i in range(25) for v in (100.0 + i, 200.0, 0.9)],
                "pose_keypoints_3d": points}]}))
        return folder
    raise ValueError(kind)


@pytest.mark.parametrize("kind, rows", [("bvh", 1), ("pkl", 2), ("sgn", 3), ("npy", 1), ("h36m-json", 1),
                                        ("openpose-3d", 1)])
def test_the_studio_opens_the_formats_of_other_tools(make_studio, tmp_path, qtbot, kind, rows):
    path = _write_other_tool_file(kind, tmp_path)
    window = make_studio()
    window.open_path(path)
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=20000)
    settle(qtbot, window)
    assert window.library_panel.model.rowCount() == rows
    assert ViewKind.SOURCE in window.comparison.clips


def test_2d_keypoints_open_lifted_to_3d_with_a_note_saying_so(make_studio, tmp_path, qtbot):
    """A 2-D keypoint file opens as the bundled lifter's 3-D guess (it was refused with advice for the CLI)."""
    from dtmr.render.coco_keypoints import write_coco_json

    path = tmp_path / "keypoints.json"
    write_coco_json(path, make_clip(1, 1))
    window = make_studio()
    window.open_path(path)
    qtbot.waitUntil(lambda: window.controller.library is not None, timeout=30000)
    settle(qtbot, window)
    library = window.controller.library
    assert library.source.read(0).topology == "coco17" and ViewKind.SOURCE in window.comparison.clips
    assert "lifted from 2-D keypoints" in library.import_notes[0]
    assert not window.message_boxes
