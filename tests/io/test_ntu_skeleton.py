"""NTU .skeleton reader/writer: real samples, round trips, main actor, malformed files."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io.ntu_skeleton import (
    BODY_FIELDS,
    JOINT_FIELDS,
    SkeletonBody,
    SkeletonFile,
    format_skeleton,
    parse_ntu_name,
    parse_skeleton_bytes,
    read_ntu_clip,
    read_skeleton_file,
    skeleton_from_clip,
    write_skeleton_file,
)


def make_body(rng, body_id: int, frames, scale: float = 0.01) -> SkeletonBody:
    frames = np.asarray(frames, dtype=np.int64)
    n = len(frames)
    pose = rng.normal(0.0, 0.3, (25, 3)) + (0.0, 0.0, 3.0)
    return SkeletonBody(
        body_id=body_id,
        frames=frames,
        joints=np.round(pose + np.cumsum(rng.normal(0.0, scale, (n, 25, 3)), axis=0), 6),
        joint_fields=np.round(rng.uniform(-1, 1000, (n, 25, len(JOINT_FIELDS))), 3),
        tracking=rng.integers(0, 3, (n, 25)).astype(np.int8),
        body_fields=np.round(rng.uniform(0, 2, (n, len(BODY_FIELDS))), 5),
    )


def assert_same_skeleton(a: SkeletonFile, b: SkeletonFile) -> None:
    assert a.frame_count == b.frame_count
    assert a.body_ids == b.body_ids
    for body_id in a.body_ids:
        x, y = a.bodies[body_id], b.bodies[body_id]
        np.testing.assert_array_equal(x.frames, y.frames)
        for name in ("joints", "joint_fields", "tracking", "body_fields"):
            np.testing.assert_array_equal(getattr(x, name), getattr(y, name), err_msg=name)


# -- real samples (counts checked by hand from the files: 82 frames / 1 body; 70 frames / 2 bodies) -----
def test_real_single_person_sample(shared_data):
    path = shared_data / "ntu_samples" / "S001C001P001R001A011.skeleton"
    skeleton = read_skeleton_file(path)
    assert skeleton.frame_count == 82
    assert skeleton.body_ids == [72057594037931648]
    assert skeleton.main_body.num_frames == 82
    clip = read_ntu_clip(path)
    assert clip.joints.shape == (82, 25, 3) and clip.joints.dtype == np.float32
    assert (clip.topology, clip.fps) == ("ntu25", 30.0)
    assert (clip.subject, clip.action, clip.view, clip.repetition) == (1, 11, 1, 1)
    assert clip.extra == {"setup": "1", "body_id": "72057594037931648"}
    assert clip.sample_name == "S001C001P001R001A011" and clip.source_file == str(path)
    np.testing.assert_allclose(clip.joints[0, 0], [0.2058097, 0.1920515, 3.810989], rtol=1e-6)


def test_real_two_person_sample(shared_data):
    path = shared_data / "ntu_samples" / "S001C003P008R002A058.skeleton"
    skeleton = read_skeleton_file(path)
    assert skeleton.frame_count == 70
    assert skeleton.body_ids == [72057594037944738, 72057594037944734]
    assert [b.num_frames for b in skeleton.bodies.values()] == [70, 70]
    motions = {k: b.motion for k, b in skeleton.bodies.items()}
    assert skeleton.main_body_id == max(motions, key=motions.get)
    clip = read_ntu_clip(path)
    assert (clip.subject, clip.action, clip.view, clip.repetition) == (8, 58, 3, 2)
    np.testing.assert_array_equal(clip.joints, skeleton.main_body.joints.astype(np.float32))
    other = skeleton.to_clip(72057594037944734)
    assert other.num_frames == 70 and not np.array_equal(other.joints, clip.joints)


@pytest.mark.parametrize("name", ["S001C001P001R001A011", "S001C003P008R002A058"])
def test_real_sample_is_rewritten_byte_for_byte(shared_data, tmp_path, name):
    source = shared_data / "ntu_samples" / f"{name}.skeleton"
    out = tmp_path / f"{name}.skeleton"
    write_skeleton_file(out, read_skeleton_file(source))
    assert out.read_bytes() == source.read_bytes()


# -- round trips -----------------------------------------------------------------------------------------
def test_round_trip_with_empty_frames_and_gaps(rng, tmp_path):
    a = make_body(rng, 7, [0, 1, 2, 5, 6])
    b = make_body(rng, -3, [2, 3, 6])
    skeleton = SkeletonFile(frame_count=8, bodies={7: a, -3: b})
    path = tmp_path / "x.skeleton"
    write_skeleton_file(path, skeleton)
    back = read_skeleton_file(path)
    assert_same_skeleton(skeleton, back)
    np.testing.assert_array_equal(back.frames_with_bodies, [0, 1, 2, 3, 5, 6])
    write_skeleton_file(tmp_path / "y.skeleton", back)
    assert (tmp_path / "y.skeleton").read_bytes() == path.read_bytes()


def test_clip_from_elsewhere_fills_unknown_fields(rng, tmp_path):
    joints = rng.normal(0, 1, (6, 25, 3)).astype(np.float32)
    joints[2, 4] = np.nan
    clip = Clip(joints=joints, subject=3)
    path = tmp_path / "S002C001P003R001A004.skeleton"
    write_skeleton_file(path, clip)
    skeleton = read_skeleton_file(path)
    body = skeleton.main_body
    assert body.body_id == 0
    assert (body.joint_fields == 0).all()
    expected_tracking = np.full((6, 25), 2)
    expected_tracking[2, 4] = 0
    np.testing.assert_array_equal(body.tracking, expected_tracking)
    np.testing.assert_array_equal(body.body_fields[:, :-1], 0)
    np.testing.assert_array_equal(body.body_fields[:, -1], 2)
    back = skeleton.to_clip()
    np.testing.assert_array_equal(back.joints, joints)  # exact float32 values, NaN where missing
    assert (back.subject, back.action, back.view, back.repetition) == (3, 4, 1, 1)
    assert back.extra["setup"] == "2"


def test_clip_keeps_its_body_id_through_a_round_trip(rng, tmp_path):
    skeleton = SkeletonFile(frame_count=3, bodies={123456789012345678: make_body(rng, 123456789012345678, [0, 1, 2])})
    clip = skeleton.to_clip()
    assert skeleton_from_clip(clip).body_ids == [123456789012345678]


def test_non_ntu25_clip_is_refused(rng, tmp_path):
    clip = Clip(joints=rng.normal(size=(4, 20, 3)), topology="kinect_v1_20")
    with pytest.raises(InputError, match="ntu25"):
        write_skeleton_file(tmp_path / "a.skeleton", clip)
    assert not (tmp_path / "a.skeleton").exists()


def test_main_actor_is_the_body_that_moves_most(rng):
    still = make_body(rng, 1, range(10), scale=0.001)
    moving = make_body(rng, 2, range(10), scale=0.05)
    skeleton = SkeletonFile(frame_count=10, bodies={1: still, 2: moving})
    assert skeleton.main_body_id == 2
    parsed = parse_skeleton_bytes(format_skeleton(skeleton), "m.skeleton")
    assert parsed.main_body_id == 2 and parsed.body_ids == [1, 2]


def test_zero_joints_become_nan_in_the_clip(rng):
    body = make_body(rng, 1, range(3))
    body.joints[1, 5] = 0.0
    clip = SkeletonFile(frame_count=3, bodies={1: body}).to_clip()
    assert np.isnan(clip.joints[1, 5]).all() and not np.isnan(clip.joints[0]).any()


def test_names():
    assert parse_ntu_name("S017C002P040R002A120") == {
        "setup": 17, "camera": 2, "performer": 40, "replication": 2, "action": 120}
    assert parse_ntu_name("walk_01") is None


def test_file_without_a_recognizable_name_has_unknown_labels(rng, tmp_path):
    path = tmp_path / "capture.skeleton"
    write_skeleton_file(path, SkeletonFile(frame_count=2, bodies={5: make_body(rng, 5, [0, 1])}))
    clip = read_ntu_clip(path)
    assert (clip.subject, clip.action, clip.view, clip.repetition) == (None, None, None, None)
    assert clip.extra == {"body_id": "5"}


def test_zero_body_frames_are_skipped(rng):
    skeleton = SkeletonFile(frame_count=5, bodies={9: make_body(rng, 9, [1, 3])})
    parsed = parse_skeleton_bytes(format_skeleton(skeleton), "z.skeleton")
    assert parsed.frame_count == 5
    assert parsed.to_clip().num_frames == 2


# -- malformed files: one InputError naming the file and the line -------------------------------------------
def small_file(rng) -> bytes:
    return format_skeleton(SkeletonFile(frame_count=2, bodies={1: make_body(rng, 1, [0, 1])}))


def replace_line(data: bytes, line: int, text: bytes) -> bytes:
    lines = data.split(b"\r\n")
    lines[line - 1] = text
    return b"\r\n".join(lines)


def error_of(data: bytes) -> InputError:
    with pytest.raises(InputError) as info:
        parse_skeleton_bytes(data, "bad.skeleton")
    assert info.value.path == "bad.skeleton"
    assert str(info.value).startswith("bad.skeleton")
    return info.value


@pytest.mark.parametrize(
    "line, text, words",
    [
        (5, b"1 2 3 4 5 6 7 8 9 10 11 12 13", "expected 12 values, found 13"),
        (33, b"1 2 3 4 5 6 7 8 9 10 11", "expected 12 values, found 11"),
        (6, b"1 2 x 4 5 6 7 8 9 10 11 2", "not a number"),
        (7, b"1 2 nan 4 5 6 7 8 9 10 11 2", "finite"),
        (7, b"1 2 inf 4 5 6 7 8 9 10 11 2", "finite"),
        (31, b"1 0 1 1 1 1 0 1e999 0.2 2", "finite"),
        (4, b"20", "expected 25 joints, found 20"),
        (1, b"two", "integer"),
        (1, b"-1", "negative"),
        (1, b"99999999999999999999", "out of range"),
        (2, b"1 1", "expected 1 values, found 2"),
        (8, b"1 2 3 4 5 6 7 8 9 10 11 7", "tracking state"),
        (9, b"1 2 1e39 4 5 6 7 8 9 10 11 2", "float32 range"),
        (3, b"1.5 0 1 1 1 1 0 0.1 0.2 2", "body id"),
        (3, b"1 0 1 1 1 1 0 0.1 0.2", "expected 10 values, found 9"),
    ],
)
def test_malformed_line_is_named(rng, line, text, words):
    error = error_of(replace_line(small_file(rng), line, text))
    assert error.line == line, str(error)
    assert words in str(error)


@pytest.mark.parametrize(
    "line, text, words",
    [
        (1, b"999999999999", "ends after 2 of 999999999999 frames"),
        (2, b"1000000000000", "file ends inside frame 1 (1000000000000 bodies declared on line 2)"),
        (30, b"3", "file ends inside frame 2 (3 bodies declared on line 30)"),
    ],
)
def test_absurd_counts_end_at_the_last_line(rng, line, text, words):
    error = error_of(replace_line(small_file(rng), line, text))
    assert error.line == 57, str(error)
    assert words in str(error)


@pytest.mark.parametrize("cut", [1, 2, 100, 400, 1000, 2500, 4000])
def test_truncated_file_names_its_last_line(rng, cut):
    data = small_file(rng)[:cut]
    error = error_of(data)
    assert error.line == data.rstrip().count(b"\n") + 1, str(error)


def test_content_after_the_last_frame(rng):
    error = error_of(small_file(rng) + b"\r\n3\r\n")
    assert error.line == 59 and "after the last of 2 frames" in str(error)


def test_binary_garbage_names_its_line(rng):
    data = small_file(rng)
    error = error_of(data[:300] + b"\x00\x01\xff" + data[303:])
    assert error.line == data[:300].count(b"\n") + 1 and "not a text file" in str(error)


@pytest.mark.parametrize("data", [b"", b"  \r\n\r\n"])
def test_empty_file(data):
    error = error_of(data)
    assert error.line == 1 and "empty" in str(error)


def test_duplicate_body_in_one_frame(rng):
    data = small_file(rng).split(b"\r\n")
    frame = data[2:29]
    duplicated = data[:1] + [b"2"] + frame + frame + data[29:]
    assert error_of(b"\r\n".join(duplicated)).line == 30


def test_huge_declared_frame_count_does_not_allocate(rng):
    data = replace_line(small_file(rng), 1, b"4000000000000000000")
    assert "ends after 2 of 4000000000000000000 frames" in str(error_of(data))


def test_missing_file_is_an_input_error_naming_it(tmp_path):
    with pytest.raises(InputError, match="nope.skeleton: no such file"):
        read_skeleton_file(tmp_path / "nope.skeleton")


def test_file_with_no_body_has_no_clip(tmp_path):
    path = tmp_path / "empty_frames.skeleton"
    path.write_bytes(b"3\r\n0\r\n0\r\n0\r\n")
    skeleton = read_skeleton_file(path)
    assert skeleton.frame_count == 3 and skeleton.main_body_id is None
    with pytest.raises(InputError, match="no body"):
        read_ntu_clip(path)


def test_lf_line_ends_and_extra_spaces_are_accepted(rng):
    data = small_file(rng).replace(b"\r\n", b"\n").replace(b" ", b"  \t")
    parsed = parse_skeleton_bytes(data, "lf.skeleton")
    reference = parse_skeleton_bytes(small_file(np.random.default_rng(1234)), "crlf.skeleton")
    assert parsed.frame_count == 2 and parsed.body_ids == [1]
    assert parsed.main_body.joints.shape == reference.main_body.joints.shape
