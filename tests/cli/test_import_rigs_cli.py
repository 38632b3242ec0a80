"""`dtmr data import` of BVH rigs and pose arrays of other tools (issue 45): each lands upright in the library at a
person's height, what the importer decided is printed, --up/--units/--scale/--joint-map reach the readers, and bad
input is one line naming the file. Fixtures: tests/rig_fixtures.py (written from the formats' specifications)."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.cli import main
from dtmr.io.import_notes import NOTE, WARNING
from dtmr.io.library import ClipLibrary
from dtmr.skeleton import to_ntu25
from rig_fixtures import (
    mediapipe_world_landmarks,
    upright_and_height,
    write_joint_map,
    write_no_legs_bvh,
    write_rig_bvh,
)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def imported(capsys, tmp_path, inputs, *options) -> tuple[list, str]:
    """Import `inputs` into a new library; (its clips, stderr)."""
    out = tmp_path / "lib.h5"
    code, stdout, err = run(capsys, "data", "import", *inputs, "-o", out, "--overwrite", *options)
    assert code == 0, err
    assert f"wrote {out}" in stdout
    with ClipLibrary(out) as library:
        return library.read_all(), err


def assert_upright_person(clip) -> None:
    joints = clip.joints if clip.topology == "ntu25" else to_ntu25(clip.joints, clip.topology)
    upright, height = upright_and_height(joints)
    assert upright
    assert 1.4 <= height <= 2.0, height


def assert_one_line_error(code: int, err: str, *words: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], lines[0]


@pytest.mark.parametrize("rig, kwargs, up", [
    ("mixamo", {}, "+y (convention)"),
    ("cmu", {}, "+y (convention)"),
    ("mocapbank", {}, "+y (convention)"),
    ("rigify", {}, "+y (convention)"),
    ("unreal", {"units_per_metre": 1.0}, "+y (convention)"),
    ("unity", {"units_per_metre": 1 / 0.0254}, "+y (convention)"),
    ("rigify", {"z_up": True, "position_channels_everywhere": True}, "+z (detected)"),
    ("unknown", {}, "+y (convention)"),
])
def test_each_rig_imports_upright_at_a_person_s_height(capsys, tmp_path, rig, kwargs, up):
    path = write_rig_bvh(tmp_path / f"{rig}.bvh", rig, **kwargs)
    (clip,), err = imported(capsys, tmp_path, [path])
    assert clip.topology == "ntu25" and clip.sample_name == rig
    assert_upright_person(clip)
    rig_name = "structure" if rig == "unknown" else rig
    assert f"{path}: BVH rig: {rig_name}; units " in err and f"up {up}" in err
    assert clip.extra[NOTE] in err and WARNING not in clip.extra


def test_several_rigs_into_one_library(capsys, tmp_path):
    paths = [write_rig_bvh(tmp_path / f"{rig}.bvh", rig) for rig in ("mixamo", "cmu", "unity")]
    clips, err = imported(capsys, tmp_path, paths)
    assert [c.sample_name for c in clips] == ["mixamo", "cmu", "unity"]
    np.testing.assert_allclose(clips[1].joints, clips[0].joints, atol=1e-5)
    assert len(err.strip().splitlines()) == 3


def test_joint_map_option(capsys, tmp_path):
    path = write_rig_bvh(tmp_path / "bones.bvh", "unknown")
    (clip,), err = imported(capsys, tmp_path, [path], "--joint-map", write_joint_map(tmp_path / "map.json"))
    assert "BVH rig: joint map" in err
    assert_upright_person(clip)


def test_up_option_and_a_clip_left_lying_is_a_warning(capsys, tmp_path):
    path = write_rig_bvh(tmp_path / "blender.bvh", "mixamo", z_up=True, position_channels_everywhere=True)
    (clip,), err = imported(capsys, tmp_path, [path], "--up", "z")
    assert "up +z (given)" in err and "warning" not in err
    assert_upright_person(clip)
    (lying,), err = imported(capsys, tmp_path, [path], "--up", "y")
    assert f"dtmr: warning: {path}: the body is upright in only 0% of its frames with +y as up" in err
    assert "upright in only" in lying.extra[WARNING]


def test_units_and_scale_options(capsys, tmp_path):
    path = write_rig_bvh(tmp_path / "tiny.bvh", "cmu", units_per_metre=0.1)
    code, _, err = run(capsys, "data", "import", path, "-o", tmp_path / "x.h5")
    assert_one_line_error(code, err, str(path), "no person's height", "--units", "--scale")
    assert not (tmp_path / "x.h5").exists()
    (clip,), err = imported(capsys, tmp_path, [path], "--scale", "10")
    assert "scale 10 m per unit (given)" in err
    assert_upright_person(clip)
    metres = write_rig_bvh(tmp_path / "m.bvh", "cmu", units_per_metre=1.0)
    (clip,), err = imported(capsys, tmp_path, [metres], "--units", "m")
    assert "units m (given)" in err
    code, _, err = run(capsys, "data", "import", metres, "-o", tmp_path / "y.h5", "--units", "m", "--scale", "1")
    assert_one_line_error(code, err, "not both")


def test_mediapipe_world_landmarks_import_upright(capsys, tmp_path):
    path = tmp_path / "pose_world_landmarks.npy"
    np.save(path, mediapipe_world_landmarks())
    (clip,), err = imported(capsys, tmp_path, [path])
    assert clip.topology == "mediapipe33" and "up -y (detected)" in err
    assert_upright_person(clip)


def test_info_takes_the_same_options(capsys, tmp_path):
    path = write_rig_bvh(tmp_path / "z.bvh", "unity", z_up=True)
    code, out, err = run(capsys, "data", "info", path, "--up", "+z", "--json")
    assert code == 0 and '"topology": "ntu25"' in out and "up +z (given)" in err


def test_bad_input_is_one_line_naming_the_file(capsys, tmp_path):
    torso = write_no_legs_bvh(tmp_path / "torso.bvh")
    code, _, err = run(capsys, "data", "import", torso, "-o", tmp_path / "x.h5")
    assert_one_line_error(code, err, f"dtmr: error: {torso}: its joints (Base", "--joint-map")
    bones = write_rig_bvh(tmp_path / "bones.bvh", "unknown")
    joint_map = tmp_path / "map.json"
    joint_map.write_text('{"Pelvis": "spine_base", "bone00": "neck"}')
    code, _, err = run(capsys, "data", "import", bones, "-o", tmp_path / "x.h5", "--joint-map", joint_map)
    assert_one_line_error(code, err, f"{bones}: the joint map {joint_map} names joints the file does not have: Pelvis")
    with pytest.raises(SystemExit) as caught:  # argparse's own usage error
        main(["data", "import", str(bones), "-o", str(tmp_path / "x.h5"), "--up", "w"])
    assert caught.value.code == 2 and "argument --up: invalid choice: 'w'" in capsys.readouterr().err
    assert not (tmp_path / "x.h5").exists()


def test_a_note_every_clip_shares_is_printed_once_without_clip_names(tmp_path, capsys):
    """Lifting a COCO dataset file of two videos: one 'lifted from 2-D keypoints' line, not one per video."""
    from coco_fixtures import dump, two_people_pixels, two_videos

    from dtmr.cli import main

    path = dump(tmp_path / "keypoints.json", two_videos(two_people_pixels()))
    assert main(["data", "import", str(path), "--lift", "-o", str(tmp_path / "lib.h5")]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if "lifted from 2-D keypoints" in line]
    assert lines == [f"{path}: lifted from 2-D keypoints by lifter_coco17.pt (root-relative: the body stays at "
                     "the origin)"]
