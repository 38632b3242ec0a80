"""`dtmr data info|import|export|synth` through `dtmr.cli.main`, plus one real subprocess for the error path."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dtmr.cli import main
from dtmr.data.clip import Clip
from dtmr.io.library import ClipLibrary
from dtmr.io.npz_dataset import read_npz_dataset, write_npz_dataset
from dtmr.io.ntu_skeleton import read_ntu_clip, read_skeleton_file, skeleton_from_clip, write_skeleton_file

REPO = Path(__file__).resolve().parents[2]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def info_json(capsys, path) -> dict:
    code, out, err = run(capsys, "data", "info", path, "--json")
    assert code == 0, err
    return json.loads(out)


def assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0]


@pytest.fixture
def ntu_clips(rng):
    return [
        Clip(joints=rng.normal(0, 0.3, (6 + i, 25, 3)) + (0, 0, 3), subject=i + 1, action=10 + i, view=i % 3 + 1,
             repetition=1, sample_name=f"S001C00{i % 3 + 1}P00{i + 1}R001A0{10 + i}")
        for i in range(4)
    ]


@pytest.fixture
def ntu_folder(tmp_path, ntu_clips):
    folder = tmp_path / "skeletons"
    for clip in ntu_clips:
        write_skeleton_file(folder / f"{clip.sample_name}.skeleton", clip)
    return folder


# -- info -----------------------------------------------------------------------------------------------
def test_info_real_skeleton_files(shared_data, capsys):
    one = info_json(capsys, shared_data / "ntu_samples" / "S001C001P001R001A011.skeleton")
    assert one["format"] == "ntu-skeleton" and one["clips"] == 1 and one["topology"] == "ntu25"
    assert (one["subjects"], one["actions"], one["views"], one["frames"]) == ([1], [11], [1], [82])
    assert one["bodies"] == [72057594037931648]
    two = info_json(capsys, shared_data / "ntu_samples" / "S001C003P008R002A058.skeleton")
    assert (two["subjects"], two["actions"], two["views"], two["frames"]) == ([8], [58], [3], [70])
    assert sorted(two["bodies"]) == [72057594037944734, 72057594037944738]


def test_info_of_each_kind(capsys, tmp_path, ntu_folder, ntu_clips):
    folder = info_json(capsys, ntu_folder)
    assert folder["format"] == "ntu-skeleton" and folder["clips"] == 4
    assert folder["subjects"] == [1, 2, 3, 4] and folder["actions"] == [10, 11, 12, 13]
    by_name = sorted(ntu_clips, key=lambda c: c.sample_name)  # files are read in path order
    assert folder["views"] == [1, 2, 3] and folder["frames"] == [c.num_frames for c in by_name]

    write_npz_dataset(tmp_path / "d.npz", ntu_clips)
    npz = info_json(capsys, tmp_path / "d.npz")
    assert (npz["format"], npz["clips"], npz["frames"]) == ("npz", 4, [6, 7, 8, 9])

    ClipLibrary.create(tmp_path / "d.h5", ntu_clips, action_names=["a"] * 14).close()
    h5 = info_json(capsys, tmp_path / "d.h5")
    assert (h5["format"], h5["clips"], h5["topology"], h5["subjects"]) == ("hdf5", 4, "ntu25", [1, 2, 3, 4])

    code, out, _ = run(capsys, "data", "info", tmp_path / "d.h5")
    assert code == 0
    assert "HDF5 clip library, 4 clip(s), topology ntu25" in out and "subjects: 4 (1-4)" in out


def test_info_lists_every_body(capsys, tmp_path, ntu_clips):
    skeleton = skeleton_from_clip(ntu_clips[0])  # body 0 in frames 0-5
    still = skeleton_from_clip(ntu_clips[1].replace(joints=ntu_clips[1].joints[:1])).bodies[0]
    still.body_id, still.frames = 77, np.array([6])
    skeleton.bodies[77] = still
    skeleton.frame_count = 7
    path = tmp_path / "S001C001P001R001A001.skeleton"
    write_skeleton_file(path, skeleton)
    summary = info_json(capsys, path)
    assert summary["bodies"] == [0, 77] and summary["main_body"] == 0
    assert summary["frames"] == [6] and summary["file_frames"] == 7


# -- import ---------------------------------------------------------------------------------------------
def test_import_folder_and_export_back(capsys, tmp_path, ntu_folder, ntu_clips):
    out = tmp_path / "lib.h5"
    code, stdout, err = run(capsys, "data", "import", ntu_folder, "-o", out)
    assert code == 0, err
    assert "4 clips" in stdout
    with ClipLibrary(out) as library:
        assert library.column("sample_name").tolist() == sorted(c.sample_name for c in ntu_clips)

    code, _, err = run(capsys, "data", "export", out, "--clip", "S001C002P002R001A011", "-o", tmp_path / "e.skeleton")
    assert code == 0, err
    original = ntu_folder / "S001C002P002R001A011.skeleton"
    assert (tmp_path / "e.skeleton").read_bytes() == original.read_bytes()

    code, _, err = run(capsys, "data", "export", out, "--clip", "3", "-o", tmp_path / "e.npz")
    assert code == 0, err
    exported = read_npz_dataset(tmp_path / "e.npz").clips
    assert len(exported) == 1
    fourth = sorted(ntu_folder.iterdir())[3]
    assert exported[0].sample_name == fourth.stem
    np.testing.assert_array_equal(exported[0].joints, read_ntu_clip(fourth).joints)


def test_import_real_ntu_samples(shared_data, capsys, tmp_path):
    code, _, err = run(capsys, "data", "import", shared_data / "ntu_samples", "-o", tmp_path / "ntu.h5")
    assert code == 0, err
    summary = info_json(capsys, tmp_path / "ntu.h5")
    assert summary["frames"] == [82, 70] and summary["subjects"] == [1, 8]
    code, _, err = run(capsys, "data", "export", tmp_path / "ntu.h5", "--clip", "0", "-o", tmp_path / "back.skeleton")
    assert code == 0, err
    back = read_skeleton_file(tmp_path / "back.skeleton")
    assert back.frame_count == 82
    np.testing.assert_array_equal(back.to_clip().joints,
                                  read_ntu_clip(shared_data / "ntu_samples" / "S001C001P001R001A011.skeleton").joints)


def test_import_nwucla(shared_data, capsys, tmp_path):
    code, _, err = run(capsys, "data", "import", shared_data / "nwucla.npz", "-o", tmp_path / "nucla.h5")
    assert code == 0, err
    summary = info_json(capsys, tmp_path / "nucla.h5")
    assert summary["clips"] == 1484 and summary["topology"] == "kinect_v1_20"
    assert len(summary["subjects"]) == 10 and len(summary["actions"]) == 10 and len(summary["views"]) == 3
    assert len(summary["action_names"]) == 10


def test_import_uiprmd(shared_data, capsys, tmp_path):
    code, _, err = run(capsys, "data", "import", shared_data / "uiprmd_kinect.npz", "-o", tmp_path / "ui.h5")
    assert code == 0, err
    with ClipLibrary(tmp_path / "ui.h5") as library:
        assert len(library) == 2000 and library.topology == "uiprmd22"
        assert library.metadata(1999)["extra"]["correct"] in ("0", "1")


def test_import_merges_npz_and_skeleton_inputs(capsys, tmp_path, ntu_folder, ntu_clips):
    write_npz_dataset(tmp_path / "more.npz", ntu_clips[:2], action_names=["x"] * 12)
    code, stdout, err = run(capsys, "data", "import", ntu_folder, tmp_path / "more.npz", "-o", tmp_path / "all.h5")
    assert code == 0, err
    with ClipLibrary(tmp_path / "all.h5") as library:
        assert len(library) == 6 and library.action_names == ["x"] * 12


def test_import_with_topology_for_an_anonymous_npz(capsys, tmp_path, rng):
    np.savez(tmp_path / "anon.npz", joints_flat=rng.normal(size=(9, 25, 3)), offsets=np.array([0, 4, 9]))
    code, _, err = run(capsys, "data", "import", tmp_path / "anon.npz", "-o", tmp_path / "a.h5", "--topology", "ntu25")
    assert code == 0, err
    assert info_json(capsys, tmp_path / "a.h5")["frames"] == [4, 5]


def test_failed_import_leaves_the_existing_library_untouched(capsys, tmp_path, ntu_folder, ntu_clips):
    out = tmp_path / "lib.h5"
    ClipLibrary.create(out, ntu_clips[:1]).close()
    before = out.read_bytes()
    (ntu_folder / "zz_broken.skeleton").write_bytes(b"3\r\n1\r\n")  # sorted last: fails after 4 good files
    code, _, err = run(capsys, "data", "import", ntu_folder, "-o", out, "--overwrite")  # replacing it is allowed
    assert_one_line_error(code, err, "zz_broken.skeleton:2:", "file ends")
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib.h5", "skeletons"]


def test_mixing_joint_sets_is_an_error(capsys, tmp_path, ntu_folder, rng):
    write_npz_dataset(tmp_path / "v1.npz", [Clip(joints=rng.normal(size=(3, 20, 3)), topology="kinect_v1_20")])
    code, _, err = run(capsys, "data", "import", ntu_folder, tmp_path / "v1.npz", "-o", tmp_path / "x.h5")
    assert_one_line_error(code, err, "v1.npz", "joint sets cannot be mixed")
    assert not (tmp_path / "x.h5").exists()


# -- export errors --------------------------------------------------------------------------------------
def test_export_errors(capsys, tmp_path, ntu_clips, rng):
    lib = tmp_path / "lib.h5"
    ClipLibrary.create(lib, ntu_clips).close()
    for clip_id, words in (("9", "out of range"), ("nobody", "no clip named 'nobody'")):
        code, _, err = run(capsys, "data", "export", lib, "--clip", clip_id, "-o", tmp_path / "o.npz")
        assert_one_line_error(code, err, str(lib), words)
    code, _, err = run(capsys, "data", "export", lib, "--clip", "0", "-o", tmp_path / "o.csv")
    assert_one_line_error(code, err, "o.csv", "unknown export format")

    v1 = tmp_path / "v1.h5"
    ClipLibrary.create(v1, [Clip(joints=rng.normal(size=(3, 20, 3)), topology="kinect_v1_20")]).close()
    code, _, err = run(capsys, "data", "export", v1, "--clip", "0", "-o", tmp_path / "o.skeleton")
    assert_one_line_error(code, err, "o.skeleton", "ntu25 joints only")
    assert not (tmp_path / "o.skeleton").exists()


# -- errors: one line, no traceback ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, content, words",
    [
        ("bad.skeleton", b"2\r\n1\r\n1 2 3\r\n", "bad.skeleton:3:"),
        ("bad.npz", b"PK\x03\x04 definitely not a zip", "bad.npz"),
        ("bad.h5", b"\x89HDF\r\n\x1a\n" + b"\0" * 100, "bad.h5"),
        ("bad.skeleton", b"\xff\xfe\x00garbage", "not a text file"),
    ],
)
def test_bad_input_is_one_line(capsys, tmp_path, name, content, words):
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = run(capsys, "data", "info", path)
    assert_one_line_error(code, err, words)
    assert out == ""


def test_missing_path_is_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "data", "info", tmp_path / "nope.skeleton")
    assert_one_line_error(code, err, "nope.skeleton", "no such file")


def test_error_path_in_a_real_process(tmp_path):
    bad = tmp_path / "S001C001P001R001A001.skeleton"
    bad.write_bytes(b"1\r\n1\r\n1 0 1 1 1 1 0 0.1 0.2 2\r\n25\r\n0 0 nan 0 0 0 0 0 0 0 0 2\r\n")
    done = subprocess.run([sys.executable, "-m", "dtmr", "data", "info", str(bad)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"{bad}:" in done.stderr


# -- synth ----------------------------------------------------------------------------------------------
@pytest.mark.skipif(importlib.util.find_spec("dtmr.data.synthetic") is None, reason="dtmr.data.synthetic not there yet")
def test_synth(capsys, tmp_path):
    out = tmp_path / "syn.h5"
    code, stdout, err = run(capsys, "data", "synth", "-o", out, "--subjects", "2", "--actions", "2",
                            "--repetitions", "1", "--seed", "3")
    assert code == 0, err
    summary = info_json(capsys, out)
    assert summary["clips"] == 4 and summary["topology"] == "ntu25"
    assert len(summary["subjects"]) == 2 and len(summary["actions"]) == 2
    with ClipLibrary(out) as library:
        names = library.action_names
        assert all(names[a] for a in summary["actions"])  # action_names is indexed by the action label


def test_synth_refuses_non_positive_counts(capsys, tmp_path):
    with pytest.raises(SystemExit):
        main(["data", "synth", "-o", str(tmp_path / "x.h5"), "--subjects", "0"])
    assert "at least 1" in capsys.readouterr().err


def test_import_shows_progress_on_a_terminal(capsys, monkeypatch, tmp_path, ntu_folder):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "201")  # the terminal's width: lines are padded to 200 characters
    code, stdout, err = run(capsys, "data", "import", ntu_folder, "-o", tmp_path / "lib.h5")
    assert code == 0 and "4 clips" in stdout
    assert f"\rimporting into {tmp_path / 'lib.h5'} | [####################] 4/4  " in err
    assert err.endswith("\r" + " " * 200 + "\r")  # the counter is erased before anything else is printed


# -- formats of other tools (issue 21) --------------------------------------------------------------------
def test_a_clip_exports_to_bvh_and_coco_json(capsys, tmp_path, ntu_clips):
    lib = tmp_path / "lib.h5"
    ClipLibrary.create(lib, ntu_clips).close()
    code, out, _ = run(capsys, "data", "export", lib, "--clip", "1", "-o", tmp_path / "c.bvh")
    assert code == 0 and "c.bvh" in out
    assert info_json(capsys, tmp_path / "c.bvh")["format"] == "bvh"
    code, out, _ = run(capsys, "data", "export", lib, "--clip", "1", "-o", tmp_path / "c.json")
    assert code == 0
    entries = json.loads((tmp_path / "c.json").read_text())
    assert len(entries) == ntu_clips[1].num_frames and len(entries[0]["keypoints"]) == 17 * 3
    # 2-D keypoints are not clips: the error says how to lift them
    code, _, err = run(capsys, "data", "info", tmp_path / "c.json")
    assert_one_line_error(code, err, "c.json", "--lift")


def test_import_lift_makes_3d_coco17_clips_from_2d_keypoints(capsys, tmp_path, ntu_clips):
    from dtmr.io.pyskl_pickle import pyskl_annotation, write_pyskl_pickle
    from dtmr.render.coco_keypoints import write_coco_json

    lib = tmp_path / "lib.h5"
    ClipLibrary.create(lib, ntu_clips).close()
    write_coco_json(tmp_path / "c.json", ntu_clips[0])
    points = json.loads((tmp_path / "c.json").read_text())
    keypoints = np.array([np.reshape(e["keypoints"], (17, 3))[:, :2] for e in points], np.float32)
    write_pyskl_pickle(tmp_path / "two_d.pkl", [pyskl_annotation("clip", 0, keypoints[None])], {"all": ["clip"]})
    code, out, err = run(capsys, "data", "import", tmp_path / "c.json", tmp_path / "two_d.pkl", "--lift",
                         "-o", tmp_path / "lifted.h5")
    assert code == 0, err
    with ClipLibrary(tmp_path / "lifted.h5") as lifted:
        assert lifted.topology == "coco17" and len(lifted) == 2
        for i in range(2):
            clip = lifted.read(i)
            assert clip.num_frames == ntu_clips[0].num_frames and np.isfinite(clip.joints).all()
            assert clip.extra["lifted"] == "lifter_coco17.pt"
    code, _, err = run(capsys, "data", "import", lib, "--lift", "-o", tmp_path / "x.h5")
    assert_one_line_error(code, err, "lib.h5", "--lift reads 2-D keypoints")
