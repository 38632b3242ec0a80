"""The HDF5 watchdog: a library whose reading never finishes inside libhdf5 is refused on every reader path,
in bounded time, and a healthy file is checked once per process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from dtmr.cli import main as dtmr_main
from dtmr.data.clip import Clip
from dtmr.errors import DtmrError, InputError
from dtmr.io import hdf5_watchdog
from dtmr.io.library import ClipLibrary
from dtmr.io.outputs import check_output
from dtmr.io.sources import load_clips, open_clip_source

DEMO = Path(__file__).resolve().parents[2] / "resources" / "demo" / "demo_library.h5"
DEADLINE = 3.0


@pytest.fixture(autouse=True)
def short_deadline(monkeypatch):
    monkeypatch.setattr(hdf5_watchdog, "DEADLINE_S", DEADLINE)


def small_library(path: Path) -> Path:
    rng = np.random.default_rng(3)
    clips = [Clip(joints=rng.normal(size=(20, 25, 3)).astype(np.float32), topology="ntu25", subject=i + 1,
                  sample_name=f"s{i}") for i in range(4)]
    ClipLibrary.create(path, clips).close()
    return path


def damaged_at(source: Path, target: Path, offset: int, junk: bytes) -> Path:
    data = bytearray(source.read_bytes())
    data[offset:offset + len(junk)] = junk
    target.write_bytes(bytes(data))
    return target


@pytest.fixture
def spinning(tmp_path) -> Path:
    """Issue 20: two junk bytes in the collection size of the global heap holding the root group's string
    attributes (offset 2056) make h5py spin forever reading them."""
    good = small_library(tmp_path / "good.h5")
    assert good.read_bytes()[2048:2052] == b"GCOL"  # the heap this case damages is where the case expects
    return damaged_at(good, tmp_path / "spinning.h5", 2056, b"\x81\x81")


def assert_refused_in_time(call, path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(InputError, match=r"damaged library \(reading did not finish\)") as info:
        call(path)
    assert info.value.path == str(path)
    assert time.monotonic() - started < DEADLINE + 10


@pytest.mark.parametrize("reader", [ClipLibrary, open_clip_source, load_clips], ids=["ClipLibrary",
                                                                                    "open_clip_source",
                                                                                    "load_clips"])
def test_every_reader_refuses_a_file_libhdf5_cannot_finish(spinning, reader):
    assert_refused_in_time(reader, spinning)


def test_data_info_prints_one_line_and_exits_2(spinning, capsys):
    assert dtmr_main(["data", "info", str(spinning), "--json"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(spinning) in err and "reading did not finish" in err


@pytest.mark.skipif(not DEMO.is_file(), reason="the demo library is not present")
def test_a_zero_block_in_the_demo_library_is_refused(tmp_path):
    damaged = damaged_at(DEMO, tmp_path / "demo.h5", 166_838, b"\0" * 512)
    assert_refused_in_time(open_clip_source, damaged)


def test_the_output_guard_does_not_take_a_spinning_file_for_a_library(spinning):
    with pytest.raises(DtmrError, match="is not a DTMR clip library; use --overwrite"):
        check_output(spinning, kind="clip-library")


def test_a_settled_file_is_checked_once_and_a_changed_one_again(tmp_path, monkeypatch):
    monkeypatch.setattr(hdf5_watchdog, "_SETTLED_NS", 0)
    asked = []
    real_ask = hdf5_watchdog._ask
    monkeypatch.setattr(hdf5_watchdog, "_ask", lambda p: asked.append(p) or real_ask(p))
    path = small_library(tmp_path / "lib.h5")  # `create` opens what it wrote: the first check
    for _ in range(3):
        ClipLibrary(path).close()
    assert len(asked) == 1
    small_library(path)  # rewritten: another inode and other times, so checked again
    ClipLibrary(path).close()
    assert len(asked) == 2


def test_a_just_written_file_is_checked_every_time(tmp_path, monkeypatch):
    """Within the settling time a rewrite can keep size and times; such results are not kept."""
    path = small_library(tmp_path / "lib.h5")
    asked = []
    real_ask = hdf5_watchdog._ask
    monkeypatch.setattr(hdf5_watchdog, "_ask", lambda p: asked.append(p) or real_ask(p))
    ClipLibrary(path).close()
    ClipLibrary(path).close()
    assert len(asked) == 2


def test_a_killed_checking_process_is_replaced(tmp_path):
    path = small_library(tmp_path / "lib.h5")
    hdf5_watchdog.check_readable(path)
    child = hdf5_watchdog._child
    child.process.kill()
    child.process.wait()
    hdf5_watchdog.check_readable(path)
    assert hdf5_watchdog._child is not child and hdf5_watchdog._child.process.poll() is None


def test_a_healthy_library_still_reads_after_a_refused_one(spinning, tmp_path):
    with pytest.raises(InputError):
        ClipLibrary(spinning)
    with open_clip_source(tmp_path / "good.h5") as library:
        assert len(library) == 4 and json.dumps(library.metadata(0))
