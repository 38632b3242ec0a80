"""Issue 43: what a full disk does to `atomic_write` and to HDF5 outputs, without a full disk (the tmpfs tests
are tests/cli/test_disk_full.py): one DiskFullError naming the output, never its temporary name, the temporary
file removed, and an HDF5 file that failed closed cleanly."""

from __future__ import annotations

import errno

import h5py
import numpy as np
import pytest

from dtmr.data.synthetic import generate_clips
from dtmr.io import atomic
from dtmr.io.atomic import DiskFullError, atomic_write
from dtmr.io.hdf5_output import hdf5_output
from dtmr.io.library import ClipLibrary



def open_hdf5_files(folder) -> list[bytes]:
    """The HDF5 files of `folder` this process still holds open (other tests of the same worker may hold theirs)."""
    prefix = str(folder).encode()
    return [f.name for f in h5py.h5f.get_obj_ids(types=h5py.h5f.OBJ_FILE) if f.name.startswith(prefix)]

def _full(*_args, **_kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_enospc_is_one_line_naming_the_output_and_leaves_nothing(tmp_path):
    out = tmp_path / "out.json"
    out.write_text("old")
    with pytest.raises(DiskFullError) as error:
        with atomic_write(out) as tmp:
            tmp.write_text("half")
            _full()
    assert str(error.value).startswith(f"{out}: no space left on the device") and "\n" not in str(error.value)
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


def test_a_library_written_inside_atomic_write_names_the_outer_output(tmp_path):
    """The release merge writes a library into atomic_write's temporary file: the error names the output."""
    clips = generate_clips(subjects=1, actions=1, repetitions=1, seed=0)

    def clips_then_full():
        yield from clips
        _full()

    out = tmp_path / "release.h5"
    with pytest.raises(DiskFullError) as error:
        with atomic_write(out) as tmp:
            ClipLibrary.write(tmp, clips_then_full())
    assert error.value.path == str(out)
    assert list(tmp_path.iterdir()) == []
    assert open_hdf5_files(tmp_path) == []  # the failed file was closed


def test_torch_write_failure_counts_as_full_only_on_a_nearly_full_disk(tmp_path, monkeypatch):
    out = tmp_path / "model.pt"
    failure = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 128 vs 0")
    monkeypatch.setattr(atomic, "_free_bytes", lambda folder: 4096)
    with pytest.raises(DiskFullError):
        with atomic_write(out):
            raise failure
    monkeypatch.setattr(atomic, "_free_bytes", lambda folder: 10 << 30)
    with pytest.raises(RuntimeError, match="unexpected pos"):
        with atomic_write(out):
            raise failure
    with pytest.raises(RuntimeError, match="a model bug"):  # not a write failure: never called a full disk
        monkeypatch.setattr(atomic, "_free_bytes", lambda folder: 0)
        with atomic_write(out):
            raise RuntimeError("a model bug")


def test_a_failed_hdf5_output_is_closed_with_its_writes_discarded(tmp_path):
    path = tmp_path / "x.h5"
    with pytest.raises(KeyError):
        with hdf5_output(path) as h5:
            h5.create_dataset("x", data=np.arange(10))
            raise KeyError("stop")
    assert open_hdf5_files(tmp_path) == []
