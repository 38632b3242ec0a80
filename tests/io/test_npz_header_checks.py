"""`.npz` members whose `.npy` header disagrees with the member's length, garbage headers, values that do not
fit their target type: each is one InputError naming the file, never shifted numbers or a NumPy warning."""

from __future__ import annotations

import io
import struct
import warnings
import zipfile

import numpy as np
import pytest

from dtmr.errors import InputError
from dtmr.io.npz_dataset import read_npz_dataset

FLAT = np.random.default_rng(5).normal(size=(10, 22, 3)).astype(np.float32)
OFFSETS = np.array([0, 4, 10])


def npy_bytes(array: np.ndarray) -> bytearray:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return bytearray(buffer.getvalue())


def write_archive(path, members: dict[str, bytes], compression: int) -> str:
    """An archive whose CRCs match its (possibly damaged) members, as a careless writer would produce."""
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(f"{name}.npy", bytes(data))
    return str(path)


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
@pytest.mark.parametrize("change", [-40, -16, 16])
def test_header_length_that_does_not_fit_the_member_is_refused(tmp_path, compression, change):
    member = npy_bytes(FLAT)
    (length,) = struct.unpack("<H", member[8:10])
    member[8:10] = struct.pack("<H", length + change)  # the data would start `change` bytes off
    path = write_archive(tmp_path / "shifted.npz", {"joints_flat": member, "offsets": npy_bytes(OFFSETS)},
                         compression)
    # shorter: the data would start inside the header's padding; longer: the header would take data bytes
    with pytest.raises(InputError, match="joints_flat.*(header declares|header cannot be parsed)") as caught:
        read_npz_dataset(path)
    assert caught.value.path == path and caught.value.reason.isprintable()


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_member_longer_or_shorter_than_its_header_is_refused(tmp_path, compression):
    for name, member in (("long", npy_bytes(FLAT) + b"\0" * 12), ("short", npy_bytes(FLAT)[:-12])):
        path = write_archive(tmp_path / f"{name}.npz", {"joints_flat": member, "offsets": npy_bytes(OFFSETS)},
                             compression)
        with pytest.raises(InputError, match="declares"):
            read_npz_dataset(path)


@pytest.mark.parametrize("damage", ["unterminated", "not a dict", "bad version"])
def test_garbage_header_is_an_input_error_naming_the_file(tmp_path, damage):
    member = npy_bytes(FLAT)
    if damage == "unterminated":  # NumPy's Python-2 fallback tokenizes it: tokenize.TokenError
        member[member.index(b"}")] = ord(" ")
    elif damage == "not a dict":
        member[member.index(b"{")] = ord("[")
    else:
        member[6] = 7
    path = write_archive(tmp_path / "garbage.npz", {"joints_flat": member, "offsets": npy_bytes(OFFSETS)},
                         zipfile.ZIP_STORED)
    with pytest.raises(InputError, match="joints_flat") as caught:
        read_npz_dataset(path)
    assert caught.value.path == path and "\n" not in str(caught.value)


def test_single_npy_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "one.npz"
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (10**12,)})
    path.write_bytes(header.getvalue())  # would ask NumPy for 4 TB
    with pytest.raises(InputError, match="single .npy array"):
        read_npz_dataset(path)


def test_an_intact_archive_still_reads_exactly(tmp_path):
    path = write_archive(tmp_path / "good.npz", {"joints_flat": npy_bytes(FLAT), "offsets": npy_bytes(OFFSETS)},
                         zipfile.ZIP_STORED)
    clips = read_npz_dataset(path).clips
    np.testing.assert_array_equal(clips[1].joints, FLAT[4:])


def test_float64_beyond_float32_is_one_error_and_no_warning(tmp_path):
    flat = FLAT.astype(np.float64)
    flat[6, 2, 1] = 1e300
    path = tmp_path / "huge_values.npz"
    np.savez(path, joints_flat=flat, offsets=OFFSETS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(InputError, match="clip 1: .*too large for float32"):
            read_npz_dataset(path)


def test_uint64_label_beyond_int64_is_refused_not_read_as_unknown(tmp_path):
    path = tmp_path / "labels.npz"
    np.savez(path, joints_flat=FLAT, offsets=OFFSETS, subject=np.array([2**64 - 1, 3], dtype=np.uint64))
    with pytest.raises(InputError, match="'subject' holds a value too large"):
        read_npz_dataset(path)
