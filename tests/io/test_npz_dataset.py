"""`.npz` data sets: padded and ragged layouts, topology detection, extra columns, damaged files, real data."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io.npz_dataset import read_npz_dataset, write_npz_dataset
from dtmr.skeleton import KINECT_V1_20, UIPRMD22


def padded_arrays(rng, lengths=(5, 3, 7), joints=20) -> dict:
    n, t = len(lengths), max(lengths)
    data = np.zeros((n, t, joints, 3), dtype=np.float32)
    for i, length in enumerate(lengths):
        data[i, :length] = rng.normal(0, 1, (length, joints, 3)) + 1.0
    return {
        "joints": data,
        "lengths": np.array(lengths, dtype=np.int32),
        "subject": np.arange(n, dtype=np.int16),
        "action": np.arange(n, dtype=np.int16)[::-1].copy(),
        "view": np.array([0, 1, 2][:n], dtype=np.int16),
        "sample_name": np.array([f"clip{i}" for i in range(n)]),
    }


def save(path, **arrays):
    np.savez_compressed(path, **arrays)
    return path


def test_padded_layout_drops_the_padding(rng, tmp_path):
    arrays = padded_arrays(rng)
    path = save(tmp_path / "p.npz", **arrays, joint_names=np.array(KINECT_V1_20.joint_names),
                parents=np.array(KINECT_V1_20.parents), action_names=np.array(["a", "b", "c"]))
    dataset = read_npz_dataset(path)
    assert dataset.topology == "kinect_v1_20"
    assert [c.num_frames for c in dataset.clips] == [5, 3, 7]
    for i, clip in enumerate(dataset.clips):
        np.testing.assert_array_equal(clip.joints, arrays["joints"][i, : clip.num_frames])
    assert [(c.subject, c.action, c.view, c.repetition) for c in dataset.clips] == [
        (0, 2, 0, None), (1, 1, 1, None), (2, 0, 2, None)]
    assert dataset.clips[1].sample_name == "clip1" and dataset.clips[1].source_file == str(path)
    assert dataset.clips[0].fps == 30.0
    assert dataset.action_names == ["a", "b", "c"]


def test_padded_layout_without_lengths_ends_at_the_last_nonzero_frame(rng, tmp_path):
    arrays = padded_arrays(rng)
    del arrays["lengths"]
    dataset = read_npz_dataset(save(tmp_path / "p.npz", **arrays), topology="kinect_v1_20")
    assert [c.num_frames for c in dataset.clips] == [5, 3, 7]


def test_round_trip_through_the_ragged_layout(rng, tmp_path):
    clips = [
        Clip(joints=rng.normal(size=(4, 22, 3)), topology="uiprmd22", fps=25.0, subject=1, action=2,
             repetition=0, sample_name="one", extra={"correct": "1", "note": "a b"}),
        Clip(joints=rng.normal(size=(9, 22, 3)), topology="uiprmd22", fps=30.0, subject=3, view=2,
             source_file="/x/two.txt", extra={"correct": "0"}),
    ]
    clips[1].joints[2, 3] = np.nan
    path = tmp_path / "r.npz"
    write_npz_dataset(path, clips, action_names=["squat", "lunge", "step"])
    with np.load(path) as raw:
        assert str(raw["topology"]) == "uiprmd22" and raw["offsets"].tolist() == [0, 4, 13]
        assert raw["correct"].dtype.kind == "i"
    back = read_npz_dataset(path)
    assert back.topology == "uiprmd22" and back.action_names == ["squat", "lunge", "step"]
    for a, b in zip(clips, back.clips):
        np.testing.assert_array_equal(a.joints, b.joints)
        for field in ("subject", "action", "view", "repetition", "fps", "sample_name"):
            assert getattr(a, field) == getattr(b, field), field
    assert back.clips[0].extra == {"correct": "1", "note": "a b"}
    assert back.clips[1].extra == {"correct": "0", "note": ""}
    assert back.clips[1].source_file == "/x/two.txt" and back.clips[0].source_file == str(path)


def test_write_refuses_mixed_topologies_and_leaves_nothing(rng, tmp_path):
    clips = [Clip(joints=rng.normal(size=(2, 22, 3)), topology="uiprmd22"),
             Clip(joints=rng.normal(size=(2, 20, 3)), topology="kinect_v1_20")]
    with pytest.raises(InputError, match="mix topologies"):
        write_npz_dataset(tmp_path / "m.npz", clips)
    assert list(tmp_path.iterdir()) == []


def ragged(rng, joints=22, **extra):
    flat = rng.normal(size=(10, joints, 3)).astype(np.float32)
    return {"joints_flat": flat, "offsets": np.array([0, 4, 10]), **extra}


@pytest.mark.parametrize(
    "extra, expected",
    [
        ({"joint_names": np.array(UIPRMD22.joint_names), "parents": np.array(UIPRMD22.parents)}, "uiprmd22"),
        ({"parents": np.array(UIPRMD22.parents)}, "uiprmd22"),
        ({}, "uiprmd22"),  # the only registered 22-joint set
        ({"topology": np.array("uiprmd22")}, "uiprmd22"),
    ],
)
def test_topology_detection(rng, tmp_path, extra, expected):
    assert read_npz_dataset(save(tmp_path / "t.npz", **ragged(rng, **extra))).topology == expected


def test_topology_is_decided_by_names_not_only_by_count(rng, tmp_path):
    names = np.array([f"j{i}" for i in range(22)])
    path = save(tmp_path / "t.npz", **ragged(rng, joint_names=names))
    with pytest.raises(InputError, match="match no registered topology"):
        read_npz_dataset(path)
    assert read_npz_dataset(path, topology="uiprmd22").topology == "uiprmd22"


def test_names_with_other_parents_are_refused(rng, tmp_path):
    parents = np.array(UIPRMD22.parents)
    parents[5] = 0
    path = save(tmp_path / "t.npz", **ragged(rng, joint_names=np.array(UIPRMD22.joint_names), parents=parents))
    with pytest.raises(InputError, match="parents differ"):
        read_npz_dataset(path)


def test_undecidable_topology(rng, tmp_path):
    path = save(tmp_path / "t.npz", **ragged(rng, joints=13))
    with pytest.raises(InputError, match="cannot tell the topology of 13 joints"):
        read_npz_dataset(path)
    with pytest.raises(InputError, match="has 25 joints, the file has 13"):
        read_npz_dataset(path, topology="ntu25")
    with pytest.raises(InputError, match="unknown topology"):
        read_npz_dataset(path, topology="nope")


@pytest.mark.parametrize(
    "change, words",
    [
        ({"offsets": np.array([0, 4, 11])}, "'offsets' must run from 0 to 10"),
        ({"offsets": np.array([0, 4, 4, 10])}, "clip 1 has no frames"),
        ({"offsets": np.array([0.0, 4.0, 10.0])}, "'offsets' must hold integers"),
        ({"subject": np.array([1, 2, 3])}, "'subject' must be 2 integers"),
        ({"fps": np.array([30.0, -1.0])}, "'fps' must be from 0.01 to 100000"),
        ({"fps": np.array([30.0, 1e300])}, "'fps' must be from 0.01 to 100000"),
        ({"fps": np.array([1e-300, 30.0])}, "'fps' must be from 0.01 to 100000"),
        ({"sample_name": np.array([1, 2])}, "'sample_name' must be 2 strings"),
        ({"lengths": np.array([5, 5])}, "'lengths' disagrees with 'offsets'"),
        ({"joints_flat": np.zeros((10, 22, 2))}, "ending in 3"),
    ],
)
def test_inconsistent_arrays(rng, tmp_path, change, words):
    arrays = {**ragged(rng), **change}
    with pytest.raises(InputError, match=words) as info:
        read_npz_dataset(save(tmp_path / "bad.npz", **arrays))
    assert info.value.path == str(tmp_path / "bad.npz")


@pytest.mark.parametrize("lengths", [None, np.array([0, 0])], ids=["no lengths", "zero lengths"])
def test_padded_clips_of_no_frames_are_an_input_error(tmp_path, lengths):
    """Issue 20: T = 0 without `lengths` was a traceback (argmax of an empty sequence)."""
    arrays = {"joints": np.zeros((2, 0, 22, 3), dtype=np.float32), "subject": np.array([1, 2])}
    if lengths is not None:
        arrays["lengths"] = lengths
    with pytest.raises(InputError, match="clip 0 has no frames") as info:
        read_npz_dataset(save(tmp_path / "empty.npz", **arrays))
    assert info.value.path == str(tmp_path / "empty.npz")


def test_infinite_coordinates_name_the_clip(rng, tmp_path):
    arrays = ragged(rng)
    arrays["joints_flat"][6, 1, 2] = np.inf
    with pytest.raises(InputError, match="clip 1: .*infinite"):
        read_npz_dataset(save(tmp_path / "inf.npz", **arrays))


def test_missing_joints_array(tmp_path):
    with pytest.raises(InputError, match="no joints"):
        read_npz_dataset(save(tmp_path / "e.npz", subject=np.arange(3)))


def test_pickled_arrays_are_refused(tmp_path):
    path = tmp_path / "obj.npz"
    np.savez(path, joints_flat=np.zeros((2, 22, 3)), offsets=np.array([0, 2]),
             sample_name=np.array([{"evil": 1}], dtype=object))
    with pytest.raises(InputError, match="sample_name"):
        read_npz_dataset(path)


def test_npy_file_is_not_a_data_set(tmp_path):
    path = tmp_path / "a.npz"
    with open(path, "wb") as fh:
        np.save(fh, np.zeros(3))
    with pytest.raises(InputError, match="not an .npz"):
        read_npz_dataset(path)


def test_a_file_of_another_kind_named_npz_gets_no_advice_to_unpickle(tmp_path):
    """Issue 42: a PNG renamed .npz was answered with NumPy's advice to load pickles unsafely."""
    path = tmp_path / "photo.npz"
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    with pytest.raises(InputError, match="not an .npz archive \\(not a zip file") as info:
        read_npz_dataset(path)
    assert "pickle" not in str(info.value)


def test_header_declaring_a_huge_array_is_refused_without_allocating(tmp_path):
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f4", "fortran_order": False, "shape": (10**9, 22, 3)})
    path = tmp_path / "huge.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("joints_flat.npy", buffer.getvalue() + b"\0" * 64)
        archive.writestr("offsets.npy", b"")
    with pytest.raises(InputError, match="declares"):
        read_npz_dataset(path)


GOOD_NPZ = io.BytesIO()
np.savez_compressed(GOOD_NPZ, joints_flat=np.arange(10 * 22 * 3, dtype=np.float32).reshape(10, 22, 3),
                    offsets=np.array([0, 4, 10]), subject=np.array([1, 2]), sample_name=np.array(["a", "b"]))
GOOD = GOOD_NPZ.getvalue()


# derandomized: the same draws on every run (scripts/fuzz_readers.py explores at random, seeded)
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, len(GOOD)), at=st.integers(0, len(GOOD) - 1), junk=st.binary(max_size=6))
def test_damaged_archive_is_valid_or_an_input_error(tmp_path, cut, at, junk):
    path = tmp_path / "damaged.npz"
    path.write_bytes((GOOD[:at] + junk + GOOD[at + len(junk):])[:cut])
    try:
        dataset = read_npz_dataset(path)
    except InputError as exc:
        assert exc.path == str(path) and "\n" not in str(exc)
    else:
        assert all(c.num_joints == 22 for c in dataset.clips)


# -- real data sets (skipped when ../shared/data is absent) ----------------------------------------------
def test_nwucla(shared_data):
    dataset = read_npz_dataset(shared_data / "nwucla.npz")
    assert dataset.topology == "kinect_v1_20"
    assert len(dataset.clips) == 1484
    assert len({c.subject for c in dataset.clips}) == 10
    assert len({c.action for c in dataset.clips}) == 10
    assert sorted({c.view for c in dataset.clips}) == [0, 1, 2]
    with np.load(shared_data / "nwucla.npz") as raw:
        assert [c.num_frames for c in dataset.clips] == raw["lengths"].tolist()
    assert len(dataset.action_names) == 10


def test_uiprmd(shared_data):
    dataset = read_npz_dataset(shared_data / "uiprmd_kinect.npz")
    assert dataset.topology == "uiprmd22"
    assert len(dataset.clips) == 2000
    assert sum(c.num_frames for c in dataset.clips) == 151158
    assert {c.extra["correct"] for c in dataset.clips} == {"0", "1"}
    assert dataset.clips[0].view is None and dataset.clips[0].fps == 30.0
