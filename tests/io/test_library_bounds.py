"""A clip library is checked against what its file holds before anything is read: declared shapes that the
stored chunks cannot fill, links and virtual datasets that reach other files, columns of the wrong type."""

from __future__ import annotations

import time
import warnings
import zlib

import h5py
import numpy as np
import pytest

from dtmr.data.clip import Clip
from dtmr.errors import InputError
from dtmr.io.library import ClipLibrary

NAMES = ("joints_flat", "offsets", "clips", "action_names")


def clips(count=4, dtype=np.float32):
    rng = np.random.default_rng(8)
    return [Clip(joints=rng.normal(size=(5 + i, 25, 3)).astype(dtype), topology="ntu25", subject=i, action=1)
            for i in range(count)]


@pytest.fixture
def library(tmp_path):
    path = tmp_path / "lib.h5"
    ClipLibrary.create(path, clips(), action_names=["walk", "run"]).close()
    return path


def copy_attrs(source: h5py.File, target: h5py.File) -> None:
    for key, value in source.attrs.items():
        target.attrs[key] = value


def refused(path, words: str) -> InputError:
    started = time.monotonic()
    with pytest.raises(InputError, match=words) as caught:
        with ClipLibrary(path) as lib:
            lib.read(0)
    assert caught.value.path == str(path) and "\n" not in str(caught.value)
    assert time.monotonic() - started < 5
    return caught.value


def test_declared_frames_beyond_the_stored_chunks_are_refused_before_reading(library):
    with h5py.File(library, "r+") as f:  # a consistent header: 10^8 frames, offsets (checksum valid) agree
        f["joints_flat"].resize(10**8, axis=0)
        offsets = f["offsets"]
        offsets[-1] = 10**8
        offsets.attrs["crc32"] = zlib.crc32(offsets[()].tobytes())
    refused(library, r"'/joints_flat' declares shape \(100000000, 25, 3\).*stores 1 of its chunks")


def test_declared_clips_beyond_the_stored_offsets_are_refused(library):
    with h5py.File(library, "r+") as f:
        f["offsets"].resize(10**12, axis=0)
    refused(library, "'/offsets' declares shape")


def test_a_huge_chunk_is_refused(library, tmp_path):
    with h5py.File(library, "r") as f:
        data = f["clips/subject"][()]
        crc = f["clips/subject"].attrs["crc32"]
    with h5py.File(library, "r+") as f:
        del f["clips/subject"]
        ds = f["clips"].create_dataset("subject", data=data, chunks=(1 << 22,), maxshape=(None,))
        ds.attrs["crc32"] = crc
    refused(library, "declares chunks of")


def test_contiguous_dataset_without_its_storage_is_refused(library):
    with h5py.File(library, "r+") as f:
        names = f["action_names"].attrs["crc32"]
        del f["action_names"]
        ds = f.create_dataset("action_names", shape=(10**9,), dtype=h5py.string_dtype())  # never written
        ds.attrs["crc32"] = names
    refused(library, "'/action_names' declares shape")


@pytest.mark.parametrize("name", NAMES)
def test_external_links_are_refused(library, tmp_path, name):
    linking = tmp_path / "linking.h5"
    with h5py.File(library, "r") as source, h5py.File(linking, "w") as f:
        copy_attrs(source, f)
        for other in NAMES:
            if other == name:
                f[other] = h5py.ExternalLink(str(library), other)
            else:
                source.copy(other, f)
    refused(linking, f"'/{name}' links to another file")


def test_external_link_to_a_column_is_refused(library, tmp_path):
    linking = tmp_path / "linking.h5"
    with h5py.File(library, "r") as source, h5py.File(linking, "w") as f:
        copy_attrs(source, f)
        for name in NAMES:
            source.copy(name, f)
        del f["clips/subject"]
        f["clips/subject"] = h5py.ExternalLink(str(library), "clips/subject")
    refused(linking, "'/clips/subject' links to another file")


def test_soft_links_are_refused(library, tmp_path):
    with h5py.File(library, "r+") as f:
        f.move("joints_flat", "elsewhere")
        f["joints_flat"] = h5py.SoftLink("/elsewhere")
    refused(library, "'/joints_flat' is a link")


def test_virtual_datasets_are_refused(library, tmp_path):
    other = tmp_path / "other.h5"
    ClipLibrary.create(other, clips()).close()
    with h5py.File(library, "r+") as f:
        shape = f["joints_flat"].shape
        layout = h5py.VirtualLayout(shape=shape, dtype="f4")
        layout[:] = h5py.VirtualSource(str(other), "joints_flat", shape=shape)
        del f["joints_flat"]
        f.create_virtual_dataset("joints_flat", layout)
    refused(library, "'/joints_flat' is a virtual dataset")


def test_external_raw_storage_is_refused(library, tmp_path):
    raw = tmp_path / "raw.bin"
    with h5py.File(library, "r+") as f:
        values, crc = f["offsets"][()], f["offsets"].attrs["crc32"]
        values.tofile(raw)
        del f["offsets"]
        ds = f.create_dataset("offsets", shape=values.shape, dtype=values.dtype,
                              external=[(str(raw), 0, values.nbytes)])
        ds.attrs["crc32"] = crc
    refused(library, "'/offsets' keeps its data in external files")


def test_a_float_label_column_is_refused(library):
    with h5py.File(library, "r+") as f:
        values, crc = f["clips/subject"][()], f["clips/subject"].attrs["crc32"]
        del f["clips/subject"]
        ds = f["clips"].create_dataset("subject", data=np.where(values == 0, np.nan, values.astype(float)))
        ds.attrs["crc32"] = crc
    refused(library, "'clips/subject' must hold integers")


def test_float64_joints_beyond_float32_give_one_error_and_no_warning(tmp_path):
    path = tmp_path / "wide.h5"
    ClipLibrary.create(path, clips()).close()
    with h5py.File(path, "r+") as f:
        flat = f["joints_flat"][()].astype(np.float64)
        flat[0, 0, 0] = 1e300
        del f["joints_flat"]
        f.create_dataset("joints_flat", data=flat, chunks=(16, 25, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        refused(path, "clip 0")


def test_an_intact_library_still_opens(library):
    with ClipLibrary(library) as lib:
        assert len(lib) == 4 and lib.read(3).num_frames == 8 and lib.action_names == ["walk", "run"]
