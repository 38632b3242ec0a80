"""Issue 43: the hostile families of scripts/fuzz_hostile.py (self-sharing and shared pickles, huge shapes and
labels, deep JSON and sidecars, non-finite BVH headers, FIFOs, devices, uint64 labels, MMPose files of empty
frames) are each refused with one line naming the file, in bounded time and memory."""

from __future__ import annotations

import random
import tracemalloc

import pytest
from reader_fuzz import hostile_families

from dtmr.cli import main
from dtmr.data.synthetic import generate_clips
from dtmr.errors import InputError
from dtmr.io.pose_npy import MAX_MMPOSE_FRAMES, read_mmpose3d_json

HOSTILE = hostile_families()
#: variants of each family in the test (the fuzz run makes 24)
VARIANTS = 3


@pytest.fixture(scope="module")
def clip():
    return next(iter(generate_clips(subjects=1, actions=1, repetitions=1, seed=0)))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(HOSTILE.FAMILIES))
def test_every_hostile_family_is_one_line_naming_the_file(name, clip, tmp_path, capsys):
    family = HOSTILE.FAMILIES[name]
    rng = random.Random(f"43-{name}")
    for i in range(VARIANTS):
        path, what = family.build(tmp_path, i, rng, clip)
        argv = [str(path) if word == "{path}" else word for word in family.command]
        try:
            assert main(argv) == 2, what
        finally:
            HOSTILE.remove(path)
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and err.startswith(f"dtmr: error: {path}"), (what, err)


def _empty_frames_document(frames: int) -> str:
    body = ",".join('{"frame_id":%d,"instances":[]}' % t for t in range(frames))
    return '{"meta_info":{"dataset_name":"h36m"},"instance_info":[' + body + "]}"


@pytest.mark.timeout(120)
def test_an_mmpose_file_of_empty_frames_is_refused_before_it_is_parsed(tmp_path):
    """102 MB of empty frames allocated 2.28 GB (a MemoryError); the frames are counted in the raw bytes, so a
    file of 250,000 (5.6 MB) is refused having allocated little more than the file."""
    path = tmp_path / "empty.json"
    path.write_text(_empty_frames_document(250_000))
    size = path.stat().st_size
    tracemalloc.start()
    try:
        with pytest.raises(InputError, match=f"more than {MAX_MMPOSE_FRAMES:,} frames") as error:
            read_mmpose3d_json(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "\n" not in str(error.value) and error.value.path == str(path)
    assert peak < 3 * size, f"peak {peak:,} bytes for a {size:,}-byte file"


def test_an_mmpose_file_at_the_frame_limit_is_still_read(tmp_path):
    """The bound counts frames, not persons: a long file with a person in its frames reads."""
    path = tmp_path / "long.json"
    frames = 2_000
    keypoints = "[" + ",".join("[%g,1.0,0.2]" % (0.1 * j) for j in range(17)) + "]"
    body = ",".join('{"frame_id":%d,"instances":[{"keypoints":%s}]}' % (t, keypoints) for t in range(frames))
    path.write_text('{"meta_info":{"dataset_name":"h36m"},"instance_info":[' + body + "]}")
    source = read_mmpose3d_json(path)
    assert source.read(0).num_frames == frames
