"""BVH: the reader on hand-written files, the writer's round trip, missing joints, damaged files, real data."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io import bvh_reader
from dtmr.io.bvh_reader import fps_of, guess_unit, is_bvh, parse_bvh, read_bvh
from dtmr.io.bvh_writer import write_bvh
from dtmr.skeleton import bone_lengths, get_topology, naive_retarget, topology_names

MM = 1e-3


def moving_clip(topology: str, frames: int = 40, seed: int = 0, jitter: float = 0.01) -> np.ndarray:
    """(frames, J, 3) joints around a human-sized pose that move smoothly, with per-joint noise."""
    rng = np.random.default_rng(seed)
    count = get_topology(topology).num_joints
    base = rng.normal(0.0, 0.3, (1, count, 3)) + np.array([0.0, 1.0, 3.0])
    t = np.linspace(0.0, 2 * np.pi, frames)[:, None, None]
    wave = 0.2 * np.sin(t * rng.uniform(0.5, 2.0, (1, count, 1)) + rng.uniform(0, 6, (1, count, 3)))
    return (base + wave + rng.normal(0.0, jitter, (frames, count, 3))).astype(np.float32)


def rigid_clip(topology: str, **kwargs) -> Clip:
    """A clip with constant bone lengths: the moving clip retargeted onto its own mean bone lengths."""
    joints = moving_clip(topology, **kwargs)
    return Clip(naive_retarget(joints, joints, topology), topology=topology, fps=30.0, sample_name="walk")


def write_text(tmp_path, text: str, name: str = "t.bvh"):
    path = tmp_path / name
    path.write_text(text)
    return path


# -- the reader on hand-written files ------------------------------------------------------------------------------
TWO_BONES = """HIERARCHY
ROOT hips
{{
  OFFSET 0 0 0
  CHANNELS {root_channels}
  JOINT knee
  {{
    OFFSET 1 0 0
    CHANNELS {knee_channels}
    End Site
    {{
      OFFSET 0 2 0
    }}
  }}
}}
MOTION
Frames: {frames}
Frame Time: 0.033333
{values}
"""


def two_bones(root_channels: str, knee_channels: str, values: list[str]) -> str:
    return TWO_BONES.format(root_channels=root_channels, knee_channels=knee_channels, frames=len(values),
                            values="\n".join(values))


def test_reader_composes_rotations_in_the_listed_order_zxy(tmp_path):
    text = two_bones("6 Xposition Yposition Zposition Zrotation Xrotation Yrotation", "3 Zrotation Xrotation Yrotation",
                     ["1 2 3 90 0 0 0 0 0", "0 0 0 0 90 90 0 0 0", "0 0 0 0 0 0 0 0 90"])
    positions = parse_bvh(write_text(tmp_path, text)).positions()
    # frame 0: Rz(90) takes the knee offset (1,0,0) to (0,1,0), the End Site (0,2,0) to (-2,0,0)
    np.testing.assert_allclose(positions[0], [[1, 2, 3], [1, 3, 3], [-1, 3, 3]], atol=1e-12)
    # frame 1: Rz(0) Rx(90) Ry(90): Ry takes (1,0,0) to (0,0,-1), Rx takes that to (0,1,0)
    np.testing.assert_allclose(positions[1, 1], [0, 1, 0], atol=1e-12)
    # frame 2: the knee's own Yrotation turns only the End Site: (0,2,0) stays
    np.testing.assert_allclose(positions[2], [[0, 0, 0], [1, 0, 0], [1, 2, 0]], atol=1e-12)


def test_reader_composes_rotations_in_the_listed_order_xyz_and_yx(tmp_path):
    xyz = two_bones("6 Xposition Yposition Zposition Xrotation Yrotation Zrotation", "0", ["0 0 0 90 90 0"])
    yx = two_bones("5 Xposition Yposition Zposition Yrotation Xrotation", "0", ["0 0 0 90 90"])
    np.testing.assert_allclose(parse_bvh(write_text(tmp_path, xyz, "a.bvh")).positions()[0, 1], [0, 1, 0],
                               atol=1e-12)  # Rx(90) Ry(90) (1,0,0)
    np.testing.assert_allclose(parse_bvh(write_text(tmp_path, yx, "b.bvh")).positions()[0, 1], [0, 0, -1],
                               atol=1e-12)  # Ry(90) Rx(90) (1,0,0)


def test_position_channels_replace_their_axis_of_the_offset(tmp_path):
    # root: position channels only; knee: a Yposition channel replaces the offset's y (0) and keeps x (1)
    text = two_bones("3 Xposition Yposition Zposition", "2 Yposition Zrotation", ["5 6 7 0.5 0", "5 6 7 -1 90"])
    bvh = parse_bvh(write_text(tmp_path, text))
    assert [n.name for n in bvh.nodes] == ["hips", "knee", "knee End Site"]
    assert [bvh.nodes[i].name for i in bvh.joints] == ["hips", "knee"]
    positions = bvh.positions()
    np.testing.assert_allclose(positions[:, 1], [[6, 6.5, 7], [6, 5, 7]], atol=1e-12)
    np.testing.assert_allclose(positions[1, 2], [4, 5, 7], atol=1e-12)  # Rz(90) (0,2,0) = (-2,0,0)


def test_reader_refuses_a_joint_set_it_cannot_name_and_lists_the_joints(tmp_path):
    path = write_text(tmp_path, two_bones("3 Xposition Yposition Zposition", "0", ["0 0 0"]))
    with pytest.raises(InputError, match=r"t\.bvh: its joints \(hips, knee\) are neither those of a registered "
                                         r"topology nor of a rig with known names, .* no two legs"):
        read_bvh(path)


def test_header_numbers_fps_and_unit_guess():
    assert fps_of(0.033333) == 30.0 and fps_of(0.008333) == 120.0
    assert abs(fps_of(1 / 29.97) - 29.97) < 1e-9
    assert guess_unit(1.7) == "m" and guess_unit(170.0) == "cm" and guess_unit(1700.0) == "mm"
    assert guess_unit(0.05) == "cm"


# -- the writer's round trip ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("topology", ["ntu25", "kinect_v1_20", "uiprmd22", "coco17"])
def test_constant_bone_lengths_round_trip_within_a_millimetre(tmp_path, topology):
    clip = rigid_clip(topology)
    write_bvh(tmp_path / "c.bvh", clip)
    source = read_bvh(tmp_path / "c.bvh")
    assert (source.format, source.topology, len(source)) == ("bvh", topology, 1)
    back = source.read(0)
    assert back.topology == topology and back.fps == 30.0 and back.sample_name == "c"
    assert back.source_file == str(tmp_path / "c.bvh")
    assert np.abs(back.joints - clip.joints).max() < 0.01 * MM


def test_every_registered_topology_reads_back_as_itself(tmp_path):
    for topology in topology_names():
        clip = rigid_clip(topology, frames=5)
        write_bvh(tmp_path / f"{topology}.bvh", clip)
        back = read_bvh(tmp_path / f"{topology}.bvh", topology=topology).read(0)
        assert back.topology == topology
        assert np.abs(back.joints - clip.joints).max() < 0.01 * MM


def test_branch_joints_and_units_in_the_written_file(tmp_path):
    clip = rigid_clip("ntu25", frames=3)
    write_bvh(tmp_path / "c.bvh", clip)
    bvh = parse_bvh(tmp_path / "c.bvh")
    names = [n.name for n in bvh.nodes]
    for child in ("neck", "left_shoulder", "right_shoulder"):
        assert f"spine_shoulder_to_{child}" in names
    assert "spine_mid_to_spine_shoulder" not in names  # one child: no branch joint
    assert bvh.nodes[0].name == "spine_base" and bvh.nodes[0].channels[:3] == ("Xposition", "Yposition", "Zposition")
    # centimetres: the root's position channels hold the clip's root in cm
    np.testing.assert_allclose(bvh.values[:, :3], clip.joints[:, 0] * 100, atol=1e-4)
    lengths = bone_lengths(clip.joints, "ntu25").mean(axis=0)
    elbow = bvh.nodes[names.index("left_elbow")]
    assert abs(np.linalg.norm(elbow.offset) - 100 * lengths[get_topology("ntu25").index("left_elbow") - 1]) < 1e-4


def test_unit_override(tmp_path):
    clip = rigid_clip("ntu25", frames=3)
    write_bvh(tmp_path / "c.bvh", clip)
    metres = read_bvh(tmp_path / "c.bvh", unit="mm").read(0)
    np.testing.assert_allclose(metres.joints, clip.joints / 10, atol=1e-6)
    with pytest.raises(InputError, match="unknown unit 'furlong'"):
        read_bvh(tmp_path / "c.bvh", unit="furlong")


def test_varying_bone_lengths_keep_their_mean_unless_written_per_frame(tmp_path):
    joints = moving_clip("ntu25", jitter=0.02)
    clip = Clip(joints, topology="ntu25", fps=25.0)
    write_bvh(tmp_path / "mean.bvh", clip)
    write_bvh(tmp_path / "exact.bvh", clip, per_frame_lengths=True)
    mean = read_bvh(tmp_path / "mean.bvh").read(0)
    exact = read_bvh(tmp_path / "exact.bvh").read(0)
    assert np.abs(mean.joints - joints).max() > 10 * MM  # fixed offsets cannot follow the jitter
    np.testing.assert_allclose(bone_lengths(mean.joints, "ntu25").std(axis=0), 0.0, atol=1e-5)
    assert np.abs(exact.joints - joints).max() < 0.01 * MM
    assert exact.fps == 25.0


def test_missing_joints_hold_the_pose_of_the_nearest_frame(tmp_path):
    clip = rigid_clip("ntu25", frames=10)
    joints = clip.joints.copy()
    wrist = get_topology("ntu25").index("left_wrist")
    joints[3:6, wrist] = np.nan  # the bones elbow->wrist and wrist->hand are unknown in frames 3-5
    joints[0, 0] = np.nan  # the root in frame 0: its position is held from frame 1
    write_bvh(tmp_path / "m.bvh", clip.replace(joints=joints))
    back = read_bvh(tmp_path / "m.bvh").read(0).joints
    assert np.isfinite(back).all()
    unaffected = [j for j in range(25) if j not in (wrist, 7, 21, 22)]
    assert np.abs(back[1:, unaffected] - clip.joints[1:, unaffected]).max() < 0.01 * MM
    np.testing.assert_allclose(back[0, 0], clip.joints[1, 0], atol=1e-5)
    # frames 3-5: the wrist hangs off the elbow as it did in frame 2 (relative to the elbow's parent bone)
    lengths = bone_lengths(back, "ntu25")
    np.testing.assert_allclose(lengths[3:6], lengths[2:3].repeat(3, axis=0), atol=1e-5)


def test_a_clip_with_every_joint_missing_is_refused(tmp_path):
    clip = Clip(np.full((3, 25, 3), np.nan, dtype=np.float32))
    with pytest.raises(InputError, match="every joint of the clip is missing"):
        write_bvh(tmp_path / "x.bvh", clip)
    assert not (tmp_path / "x.bvh").exists()


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1), frames=st.integers(1, 30), topology=st.sampled_from(["ntu25", "coco17"]))
def test_round_trip_property(tmp_path, seed, frames, topology):
    clip = rigid_clip(topology, frames=frames, seed=seed, jitter=0.05)
    write_bvh(tmp_path / "p.bvh", clip)
    back = read_bvh(tmp_path / "p.bvh").read(0)
    assert np.abs(back.joints - clip.joints).max() < MM


# -- recognising a file --------------------------------------------------------------------------------------------
def test_is_bvh(tmp_path):
    assert not is_bvh(tmp_path / "missing.BVH")  # by content, not by name
    assert not is_bvh(write_text(tmp_path, "my notes", "notes.bvh"))
    assert is_bvh(write_text(tmp_path, "\ufeff\n  HIERARCHY\nROOT a", "motion.txt"))
    assert not is_bvh(write_text(tmp_path, "hello", "x.txt"))
    assert not is_bvh(tmp_path / "missing.txt")
    assert not is_bvh(tmp_path)
    assert not is_bvh("bad\x00name.txt")
    assert not is_bvh(None)


# -- damaged files ---------------------------------------------------------------------------------------------------
GOOD = two_bones("6 Xposition Yposition Zposition Zrotation Xrotation Yrotation", "3 Zrotation Xrotation Yrotation",
                 ["0 1 2 3 4 5 6 7 8", "1 1 2 3 4 5 6 7 8"])


@pytest.mark.parametrize("text, message", [
    ("", "hierarchy ends where HIERARCHY was expected"),
    ("hello world", "expected HIERARCHY, got 'hello': not a BVH file"),
    (GOOD.replace("MOTION", "MOTON"), "unexpected 'MOTON' after the hierarchy"),
    (GOOD.split("MOTION")[0], "no MOTION section"),
    (GOOD.replace("Frames: 2", "Frames: 3"), "file ends after 2 of 3 frames"),
    (GOOD.replace("Frames: 2", "Frames: 1"), "more lines of values than the 1 frames declared"),
    (GOOD.replace("Frames: 2", "Frames: 99999999999"), "Frames must be a whole number from 1 to 1000000"),
    (GOOD.replace("Frames: 2", "Frames: 0"), "Frames must be a whole number"),
    (GOOD.replace("Frames: 2", "Frames: two"), "Frames: needs a number, got 'two'"),
    (GOOD.replace("Frames: 2", "Frames: nan"), "Frames must be a whole number"),
    (GOOD.replace("Frames: 2", "Frames: inf"), "Frames must be a whole number"),
    (GOOD.replace("Frame Time: 0.033333", "Frame Time: 0"), "Frame Time must be from 1e-05 to 100 s, got 0"),
    (GOOD.replace("Frame Time: 0.033333", "Frame Time: 1e-320"), "Frame Time must be from 1e-05 to 100 s"),
    (GOOD.replace("Frame Time: 0.033333", "Frame Time: nan"), "Frame Time must be from"),
    (GOOD.replace("Frame Time: 0.033333", "Frame Time: 1e300"), "Frame Time must be from"),
    (GOOD.replace("Frame Time: 0.033333", "Fps: 30"), "expected 'Frame Time:' after MOTION"),
    (GOOD.replace("1 1 2 3 4 5 6 7 8", "1 1 2 3 4 5 6 7"), "frame 2 has 8 values, the hierarchy declares 9"),
    (GOOD.replace("1 1 2 3 4 5 6 7 8", "1 1 2 3 4 5 6 7 x"), "not a number: 'x'"),
    (GOOD.replace("1 1 2 3 4 5 6 7 8", "1 1 2 3 4 5 6 7 nan"), "frame 2 has a value that is not finite"),
    (GOOD.replace("1 1 2 3 4 5 6 7 8", "1 1 2 3 4 5 6 7 1e999"), "frame 2 has a value that is not finite"),
    (GOOD.replace("OFFSET 1 0 0", "OFFSET 1 0 inf"), "OFFSET value is not finite"),
    (GOOD.replace("OFFSET 1 0 0", "OFFSET 1 0"), "OFFSET needs numbers, got 'CHANNELS'"),
    (GOOD.replace("CHANNELS 3 Zrotation", "CHANNELS 7 Zrotation"), "CHANNELS needs a count from 0 to 6, got '7'"),
    (GOOD.replace("CHANNELS 3 Zrotation", "CHANNELS 3 Wrotation"), "unknown channel 'Wrotation'"),
    (GOOD.replace("Xrotation Yrotation\n    End", "Xrotation Zrotation\n    End"), "channel Zrotation appears twice"),
    (GOOD.replace("JOINT knee", "JOINT hips"), "joint name 'hips' appears twice"),
    (GOOD.replace("MOTION", "ROOT other\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION"), "a second ROOT"),
    (GOOD.replace("    CHANNELS 3 Zrotation Xrotation Yrotation\n", ""), "'knee' has no CHANNELS"),
    (GOOD.replace("      OFFSET 0 2 0\n", ""), "'knee End Site' has no OFFSET"),
    (GOOD.replace("      OFFSET 0 2 0\n", "      OFFSET 0 2 0\n      JOINT toe\n"), "an End Site cannot have children"),
    (GOOD.replace("  }\n}\nMOTION", "  }\nMOTION"), "hierarchy ends where '}' was expected"),
    ("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 0\n}\nMOTION\nFrames: 1\nFrame Time: 1\n", "has no channels"),
])
def test_malformed_files_name_the_file_and_line(tmp_path, text, message):
    path = write_text(tmp_path, text, "bad.bvh")
    with pytest.raises(InputError, match="bad.bvh") as info:
        read_bvh(path)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_bounds_on_size_and_joint_count(tmp_path, monkeypatch):
    path = write_text(tmp_path, GOOD, "big.bvh")
    monkeypatch.setattr(bvh_reader, "MAX_BYTES", 100)
    with pytest.raises(InputError, match=r"big\.bvh: file is \d+ bytes, over the 100-byte limit"):
        read_bvh(path)
    monkeypatch.setattr(bvh_reader, "MAX_BYTES", 10**6)
    monkeypatch.setattr(bvh_reader, "MAX_NODES", 2)
    with pytest.raises(InputError, match="more than 2 joints and End Sites"):
        read_bvh(path)


def test_not_text_and_missing_files(tmp_path):
    (tmp_path / "b.bvh").write_bytes(b"\x00HIERARCHY")
    with pytest.raises(InputError, match="b.bvh: not a text file"):
        read_bvh(tmp_path / "b.bvh")
    (tmp_path / "u.bvh").write_bytes(b"HIERARCHY \xff")
    with pytest.raises(InputError, match="u.bvh: not UTF-8 text"):
        read_bvh(tmp_path / "u.bvh")
    with pytest.raises(InputError, match="no such file"):
        read_bvh(tmp_path / "none.bvh")
    with pytest.raises(InputError, match="a folder"):
        read_bvh(tmp_path)


def test_huge_offsets_overflowing_float32_are_refused(tmp_path):
    clip = rigid_clip("ntu25", frames=2)
    write_bvh(tmp_path / "c.bvh", clip)
    text = re.sub(r"(JOINT spine_mid\s*\{\s*OFFSET) [^\n]*", r"\1 1e300 0 0", (tmp_path / "c.bvh").read_text())
    with pytest.raises(InputError, match="c.bvh: forward kinematics gives positions that are not finite"):
        read_bvh(write_text(tmp_path, text, "c.bvh"))


def test_topology_must_agree(tmp_path):
    write_bvh(tmp_path / "c.bvh", rigid_clip("ntu25", frames=2))
    with pytest.raises(InputError, match="are not those of kinect_v1_20"):
        read_bvh(tmp_path / "c.bvh", topology="kinect_v1_20")
    with pytest.raises(InputError, match="unknown topology 'nope'"):
        read_bvh(tmp_path / "c.bvh", topology="nope")
    # the right names on the wrong tree: the left hand hangs off the right wrist
    text = (tmp_path / "c.bvh").read_text()
    swapped = text.replace("JOINT left_hand\n", "JOINT tmp\n").replace("JOINT right_hand\n", "JOINT left_hand\n")
    swapped = swapped.replace("JOINT tmp\n", "JOINT right_hand\n").replace("left_hand_to_", "tmp_to_")
    swapped = swapped.replace("right_hand_to_", "left_hand_to_").replace("tmp_to_", "right_hand_to_")
    with pytest.raises(InputError, match="joint names are those of ntu25 but left_hand hangs off right_wrist, not left_wrist"):
        read_bvh(write_text(tmp_path, swapped, "s.bvh"))


@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 4000), at=st.integers(0, 4000), junk=st.binary(max_size=8),
       token=st.sampled_from(["", "nan", "1e999", "-", "{", "}", "99999999999", "JOINT", "End Site", "CHANNELS 6"]))
def test_damaged_files_give_clips_or_one_input_error(tmp_path, cut, at, junk, token):
    path = tmp_path / "d.bvh"
    if not (tmp_path / "good.bvh").exists():
        write_bvh(tmp_path / "good.bvh", rigid_clip("kinect_v1_20", frames=3))
    good = (tmp_path / "good.bvh").read_bytes()
    at = at % len(good)
    damaged = good[:at] + junk + token.encode() + good[at + len(junk) :]
    path.write_bytes(damaged[: max(cut, len(damaged) - cut)])
    try:
        source = read_bvh(path)
    except InputError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert np.isfinite(source.read(0).joints).all()


# -- real data (skipped when ../shared/data is absent) ---------------------------------------------------------------
def test_nwucla_round_trip(shared_data, tmp_path):
    """Kinect v1 clips: bone lengths jitter, so fixed offsets give an error (measured in docs/_incoming/bvh.md);
    with per-frame lengths, or on the naive-retargeted clip (constant lengths), the error is below 1 mm."""
    from dtmr.io.npz_dataset import read_npz_dataset

    clips = read_npz_dataset(shared_data / "nwucla.npz").clips[::50]
    mean_errors = []
    for clip in clips:
        write_bvh(tmp_path / "raw.bvh", clip)
        back = read_bvh(tmp_path / "raw.bvh").read(0)
        assert back.topology == "kinect_v1_20"
        mean_errors.append(np.linalg.norm(back.joints - clip.joints, axis=-1).mean())
        write_bvh(tmp_path / "exact.bvh", clip, per_frame_lengths=True)
        assert np.abs(read_bvh(tmp_path / "exact.bvh").read(0).joints - clip.joints).max() < MM
        if bone_lengths(clip.joints, clip.topology).min() > 1e-6:  # zero-length bones vary in length too
            rigid = clip.replace(joints=naive_retarget(clip.joints, clip.joints, clip.topology))
            write_bvh(tmp_path / "rigid.bvh", rigid)
            assert np.abs(read_bvh(tmp_path / "rigid.bvh").read(0).joints - rigid.joints).max() < MM
    assert 0.005 < np.median(mean_errors) < 0.1
