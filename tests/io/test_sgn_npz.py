"""SGN / CTR-GCN preprocessed NTU arrays (`NTU60_CS.npz`): recognition by member names, clip lengths, main
actor, labels, block-wise reading, and damaged or malformed archives."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reader_fuzz import (
    CHANGES,
    CUTS,
    FUZZ,
    assert_clips_or_one_line_error,
    damaged,
    truncated,
)

from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io import sgn_npz
from dtmr.io.npz_dataset import write_npz_dataset
from dtmr.io.sgn_npz import is_sgn_npz, read_sgn_npz


def arrays(rng, frames=20) -> dict[str, np.ndarray]:
    """Three training rows (one body; two bodies of which the second moves most; one body the whole way)
    and one test row, as CTR-GCN lays them out."""
    x = np.zeros((3, frames, 150), np.float32)
    x[0, :12, :75] = rng.normal(0, 1, (12, 75))
    x[1, :7, :75] = rng.normal(0, 0.1, (7, 75))
    x[1, 2:9, 75:] = rng.normal(0, 1, (7, 75))
    x[2, :, :75] = rng.normal(0, 1, (frames, 75))
    x[2, :, 3:6] = 0  # the joint the preprocessing puts at the origin: a coordinate, not a missing joint
    return {"x_train": x, "y_train": np.eye(60, dtype=np.float32)[[3, 7, 59]],
            "x_test": x[:1].copy(), "y_test": np.array([5], dtype=np.int64)}


def save(path, compressed=True, **members):
    (np.savez_compressed if compressed else np.savez)(path, **members)
    return path


def expect_error(path, fragment) -> None:
    with pytest.raises(InputError) as info:
        read_sgn_npz(path)
    assert info.value.path == str(path) and "\n" not in str(info.value)
    assert fragment in str(info.value), str(info.value)


@pytest.mark.parametrize("compressed", [False, True])
def test_rows_become_main_actor_clips_without_padding(rng, tmp_path, compressed):
    members = arrays(rng)
    x = members["x_train"]
    dataset = read_sgn_npz(save(tmp_path / "NTU60_CS.npz", compressed, **members))
    assert (dataset.topology, dataset.format, dataset.action_names) == ("ntu25", "sgn-npz", None)
    first, second, third, test = dataset.clips
    np.testing.assert_array_equal(first.joints, x[0, :12, :75].reshape(12, 25, 3))
    np.testing.assert_array_equal(second.joints, x[1, 2:9, 75:].reshape(7, 25, 3))  # body 2, its frames
    np.testing.assert_array_equal(third.joints, x[2, :, :75].reshape(20, 25, 3))
    np.testing.assert_array_equal(test.joints, first.joints)
    assert not np.isnan(third.joints).any()
    assert [c.action for c in dataset.clips] == [3, 7, 59, 5]
    assert [c.extra for c in dataset.clips] == [
        {"part": "train", "body_index": "0"}, {"part": "train", "body_index": "1"},
        {"part": "train", "body_index": "0"}, {"part": "test", "body_index": "0"}]
    assert [c.sample_name for c in dataset.clips] == ["train_000000", "train_000001", "train_000002", "test_000000"]
    assert {(c.subject, c.view, c.repetition, c.fps) for c in dataset.clips} == {(None, None, None, 30.0)}


def test_block_wise_reading_gives_the_same_clips(rng, tmp_path, monkeypatch):
    path = save(tmp_path / "a.npz", **arrays(rng))
    whole = read_sgn_npz(path).clips
    monkeypatch.setattr(sgn_npz, "BLOCK_BYTES", 20 * 150 * 4)  # one row per block
    for clip, again in zip(whole, read_sgn_npz(path).clips, strict=True):
        np.testing.assert_array_equal(clip.joints, again.joints)


def test_one_part_and_one_body_layouts(rng, tmp_path):
    members = arrays(rng)
    path = save(tmp_path / "test_only.npz", x_test=members["x_train"][:, :, :75], y_test=np.array([0, -1, 2]))
    clips = read_sgn_npz(path).clips
    assert [c.action for c in clips] == [0, None, 2] and {c.extra["part"] for c in clips} == {"test"}


def test_is_sgn_npz_tells_it_from_the_projects_own_npz(rng, tmp_path):
    assert is_sgn_npz(save(tmp_path / "sgn.npz", **arrays(rng)))
    write_npz_dataset(tmp_path / "own.npz", [Clip(joints=np.ones((3, 25, 3)))])
    padded = save(tmp_path / "padded.npz", joints=np.ones((1, 3, 25, 3)), x_train=np.ones((1, 3, 150)))
    (tmp_path / "text.npz").write_text("PK but not really")
    for path in (tmp_path / "own.npz", padded, tmp_path / "text.npz", tmp_path / "missing.npz", tmp_path):
        assert not is_sgn_npz(path)


def test_is_sgn_npz_reads_no_array(rng, tmp_path, monkeypatch):
    path = save(tmp_path / "sgn.npz", **arrays(rng))
    monkeypatch.setattr(zipfile.ZipFile, "open", lambda *a, **k: pytest.fail("an array was read"))
    assert is_sgn_npz(path)


def test_topology_argument(rng, tmp_path):
    path = save(tmp_path / "a.npz", **arrays(rng))
    assert read_sgn_npz(path, topology="ntu25").topology == "ntu25"
    with pytest.raises(InputError, match="topology coco17 has 17 joints, the file has 25"):
        read_sgn_npz(path, topology="coco17")
    with pytest.raises(InputError, match="unknown topology"):
        read_sgn_npz(path, topology="nope")


def _without(members, name):
    return {k: v for k, v in members.items() if k != name}


@pytest.mark.parametrize("change, fragment", [
    (lambda m: {"y_train": m["y_train"]}, "no 'x_train' or 'x_test'"),
    (lambda m: _without(m, "y_train"), "'x_train' without 'y_train'"),
    (lambda m: {**m, "x_train": m["x_train"][:, :, :100]}, "(N, T, 75 x bodies)"),
    (lambda m: {**m, "x_train": m["x_train"][:, :0]}, "(N, T, 75 x bodies)"),
    (lambda m: {**m, "x_train": m["x_train"].reshape(3, 20, 50, 3)}, "(N, T, 75 x bodies)"),
    (lambda m: {**m, "x_train": m["x_train"].astype("U3")}, "not numbers"),
    (lambda m: {**m, "y_train": m["y_train"][:2]}, "has 3 rows but 'y_train' has 2"),
    (lambda m: {**m, "y_train": m["y_train"] * 0}, "row 0 is not one-hot"),
    (lambda m: {**m, "y_train": m["y_train"] + np.eye(60, dtype=np.float32)[[0, 1, 2]]}, "row 0 is not one-hot"),
    (lambda m: {**m, "y_train": np.full((3, 60), np.nan)}, "NaN or infinite"),
    (lambda m: {**m, "y_train": np.array([1.0, 2.0, 3.0])}, "one-hot or (N,) integers"),
    (lambda m: {**m, "x_train": m["x_train"] * np.float32([1, 1, 0])[:, None, None]}, "row 2 is all zeros"),
    (lambda m: {**m, "x_train": m["x_train"].astype(np.float64) * 1e300}, "infinite"),
    (lambda m: {**m, "x_train": np.asfortranarray(m["x_train"])}, "Fortran order"),
])
def test_malformed_archives_are_one_line_errors(rng, tmp_path, change, fragment):
    expect_error(save(tmp_path / "bad.npz", **change(arrays(rng))), fragment)


def _with_header(path, name, shape):
    """An archive whose `name` member declares `shape` over 16 bytes of data."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f4", "fortran_order": False, "shape": shape})
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{name}.npy", buffer.getvalue() + bytes(16))
        archive.writestr("y_train.npy", _npy(np.array([0])))
    return path


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_declared_sizes_are_checked_before_anything_is_read(tmp_path):
    expect_error(_with_header(tmp_path / "huge.npz", "x_train", (10**6, 300, 150)), "GiB; at most")
    expect_error(_with_header(tmp_path / "row.npz", "x_train", (1, 10**6, 150)), "larger than 64 MiB")
    expect_error(_with_header(tmp_path / "short.npz", "x_train", (1, 300, 150)), "bytes of data after")


# -- damaged files (property tests) ---------------------------------------------------------------------------
def _valid() -> dict[str, bytes]:
    members = arrays(np.random.default_rng(4), frames=12)
    files = {}
    for compressed in (False, True):
        buffer = io.BytesIO()
        (np.savez_compressed if compressed else np.savez)(buffer, **members)
        files["deflated" if compressed else "stored"] = buffer.getvalue()
    return files


VALID = _valid()


@FUZZ
@given(which=st.sampled_from(sorted(VALID)), cut=CUTS)
def test_truncated_archives_read_or_fail_cleanly(tmp_path_factory, which, cut):
    path = tmp_path_factory.mktemp("cut") / "t.npz"
    assert_clips_or_one_line_error(read_sgn_npz, path, truncated(VALID[which], cut))


@FUZZ
@given(which=st.sampled_from(sorted(VALID)), changes=CHANGES)
def test_damaged_bytes_read_or_fail_cleanly(tmp_path_factory, which, changes):
    path = tmp_path_factory.mktemp("flip") / "f.npz"
    assert_clips_or_one_line_error(read_sgn_npz, path, damaged(VALID[which], changes))


@FUZZ
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=4).map(tuple),
       y_shape=st.lists(st.integers(0, 4), min_size=0, max_size=2).map(tuple),
       dtype=st.sampled_from(["<f4", ">f8", "<i2", "u1", "?", "<f2"]),
       value=st.sampled_from([0.0, 1.0, -2.5, np.nan, np.inf, 1e300]))
def test_wrong_shapes_dtypes_and_values_read_or_fail_cleanly(tmp_path_factory, shape, y_shape, dtype, value):
    scale = 75 if len(shape) == 3 else 1  # reach the per-row checks with a valid width now and then
    x_shape = shape[:-1] + (shape[-1] * scale,)
    with np.errstate(over="ignore", invalid="ignore"):  # 1e300 as float32 is inf, NaN as an integer: on purpose
        x = np.full(x_shape, value, dtype=np.float64).astype(dtype)
        y = np.full(y_shape, 1, dtype=dtype)
    buffer = io.BytesIO()
    np.savez(buffer, x_train=x, y_train=y)
    assert_clips_or_one_line_error(read_sgn_npz, tmp_path_factory.mktemp("types") / "w.npz", buffer.getvalue())
