import os

import pytest

from dtmr.io.atomic import atomic_write


def test_atomic_write_replaces_only_on_success(tmp_path):
    target = tmp_path / "lib.h5"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("crash")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["lib.h5"]
    with atomic_write(target) as tmp:
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert os.listdir(tmp_path) == ["lib.h5"]
    assert (target.stat().st_mode & 0o777) == 0o644


def test_atomic_write_creates_missing_folders(tmp_path):
    with atomic_write(tmp_path / "a" / "b.txt") as tmp:
        tmp.write_text("x")
    assert (tmp_path / "a" / "b.txt").read_text() == "x"
