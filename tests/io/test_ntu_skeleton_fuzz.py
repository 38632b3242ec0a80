"""Property tests: a damaged `.skeleton` file either parses or raises InputError naming the file, never
anything else; and whatever parses writes back to the same numbers."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtmr.errors import InputError
from dtmr.io.ntu_skeleton import (
    BODY_FIELDS,
    JOINT_FIELDS,
    SkeletonBody,
    SkeletonFile,
    format_skeleton,
    parse_skeleton_bytes,
)

NAME = "fuzz.skeleton"
# derandomized: the same draws on every run, so CI cannot fail (or hang) on an unlucky new one;
# scripts/fuzz_readers.py explores damaged files at random, seeded
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _valid_file() -> bytes:
    """3 frames, the middle one empty, two bodies of which one skips a frame."""
    rng = np.random.default_rng(5)

    def body(body_id, frames):
        n = len(frames)
        return SkeletonBody(
            body_id=body_id,
            frames=np.array(frames),
            joints=np.round(rng.normal(0, 1, (n, 25, 3)), 5),
            joint_fields=np.round(rng.uniform(0, 500, (n, 25, len(JOINT_FIELDS))), 3),
            tracking=rng.integers(0, 3, (n, 25)).astype(np.int8),
            body_fields=np.round(rng.uniform(0, 2, (n, len(BODY_FIELDS))), 4),
        )

    return format_skeleton(SkeletonFile(frame_count=4, bodies={11: body(11, [0, 2, 3]), 12: body(12, [3])}))


VALID = _valid_file()
LINES = VALID.split(b"\r\n")
TOKENS = [b"0", b"1", b"25", b"-7", b"x", b"nan", b"-inf", b"1e999", b"1e39", b"9" * 40, b"2.5.1", b"\x00", b"\xff\xfe",
          b"1e5", b"-"]


def check(data: bytes) -> None:
    try:
        parsed = parse_skeleton_bytes(data, NAME)
    except InputError as exc:
        assert exc.path == NAME
        assert exc.line is None or 1 <= exc.line <= data.count(b"\n") + 1
        assert "\n" not in str(exc)
        return
    again = parse_skeleton_bytes(format_skeleton(parsed), NAME)
    assert again.frame_count == parsed.frame_count and again.body_ids == parsed.body_ids
    for body_id, body in parsed.bodies.items():
        np.testing.assert_array_equal(again.bodies[body_id].joints, body.joints)
        np.testing.assert_array_equal(again.bodies[body_id].frames, body.frames)
    if parsed.bodies:
        assert parsed.to_clip().num_joints == 25


def test_the_base_file_is_valid():
    parsed = parse_skeleton_bytes(VALID, NAME)
    assert parsed.frame_count == 4 and parsed.body_ids == [11, 12]


@FUZZ
@given(st.integers(0, len(VALID)))
def test_truncated_anywhere(cut):
    check(VALID[:cut])


@FUZZ
@given(st.integers(0, len(LINES) - 1), st.sampled_from(TOKENS), st.booleans())
def test_extra_token_on_a_line(line, token, at_end):
    lines = list(LINES)
    lines[line] = lines[line] + b" " + token if at_end else token + b" " + lines[line]
    check(b"\r\n".join(lines))


@FUZZ
@given(st.integers(0, len(LINES) - 1), st.data(), st.sampled_from(TOKENS))
def test_token_replaced(line, data, token):
    lines = list(LINES)
    words = lines[line].split()
    if words:
        words[data.draw(st.integers(0, len(words) - 1))] = token
        lines[line] = b" ".join(words)
    check(b"\r\n".join(lines))


@FUZZ
@given(st.sampled_from([i for i, line in enumerate(LINES) if line == b"25"]), st.integers(-3, 60))
def test_joint_count_changed(line, count):
    lines = list(LINES)
    lines[line] = str(count).encode()
    check(b"\r\n".join(lines))


@FUZZ
@given(st.integers(0, len(LINES) - 1), st.booleans())
def test_line_deleted_or_duplicated(line, duplicate):
    lines = list(LINES)
    if duplicate:
        lines.insert(line, lines[line])
    else:
        del lines[line]
    check(b"\r\n".join(lines))


@FUZZ
@given(st.integers(1, 5), st.integers(0, 4))
def test_zero_body_frames_inserted(count, where):
    """Frames with no body are valid: the file still parses and the bodies keep their frame count."""
    lines = list(LINES)
    frame_starts = [1, 1 + 1 + 27, 1 + 1 + 27 + 1, 1 + 1 + 27 + 1 + 1 + 27]
    at = frame_starts[min(where, 3)]
    lines[at:at] = [b"0"] * count
    lines[0] = str(4 + count).encode()
    parsed = parse_skeleton_bytes(b"\r\n".join(lines), NAME)
    assert parsed.frame_count == 4 + count
    assert [b.num_frames for b in parsed.bodies.values()] == [3, 1]


@FUZZ
@given(st.binary(max_size=2000))
def test_random_bytes(data):
    check(data)


@FUZZ
@given(st.integers(0, len(VALID) - 1), st.binary(min_size=1, max_size=8))
def test_bytes_overwritten(at, junk):
    check(VALID[:at] + junk + VALID[at + len(junk):])
