"""Issue 43: a full disk ends `dtmr data import`, `dtmr anonymize` and `dtmr train` with one line naming the file
and exit 2, the partial file removed: no segmentation fault (exit 139) or bus error after h5py's "Exception
ignored" tracebacks, no torch traceback. Each command runs in a child process on a small tmpfs that the test
fills up (mounting needs root: skipped otherwise), with a timeout so that a hang fails one test."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dtmr.data.synthetic import generate_clips
from dtmr.io.library import ClipLibrary

REPO = Path(__file__).resolve().parents[2]


def _tiny_training():
    """tests/train/tiny_training.py: the tiny model options and library the trainer tests use."""
    spec = importlib.util.spec_from_file_location("tiny_training", REPO / "tests" / "train" / "tiny_training.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def small_disk(tmp_path):
    """A 16 MB tmpfs (filled by each test but what it leaves), unmounted after the test."""
    folder = tmp_path / "disk"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(folder)],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot mount a tmpfs: {exc}")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a 16 MB tmpfs: {done.stderr.strip()}")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], capture_output=True, timeout=30, check=False)


def _fill(disk: Path, leave: int) -> None:
    """Take all but `leave` bytes of the disk."""
    stat = os.statvfs(disk)
    with open(disk / "filler", "wb") as fh:
        fh.write(bytes(max(0, stat.f_bavail * stat.f_frsize - leave)))


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """200 synthetic clips, 3 MB: more than a nearly full disk takes."""
    path = tmp_path_factory.mktemp("data") / "source.h5"
    ClipLibrary.create(path, generate_clips(subjects=10, actions=10, repetitions=2, seed=0)).close()
    return path


def _dtmr(*args: object, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dtmr", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _assert_one_line(done: subprocess.CompletedProcess, names: Path) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr[-2000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("dtmr: error:")]
    assert len(errors) == 1 and str(names) in errors[0], done.stderr
    assert "No space left on device" in errors[0] or "no space left on the device" in errors[0]
    return errors[0]


def _temporaries(folder: Path) -> list[str]:
    return [p.name for p in folder.rglob("*") if p.name.endswith(".tmp")]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_data_import_on_a_full_disk_is_one_line_and_leaves_nothing(source, small_disk):
    _fill(small_disk, 1 << 20)
    out = small_disk / "library.h5"
    _assert_one_line(_dtmr("data", "import", source, "-o", out), out)
    assert sorted(os.listdir(small_disk)) == ["filler"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_anonymize_on_a_full_disk_is_one_line_and_keeps_only_finished_parts(source, small_disk):
    _fill(small_disk, 1 << 20)
    out = small_disk / "released.h5"
    _assert_one_line(_dtmr("anonymize", source, "--method", "raw", "-o", out), small_disk / "released.h5.parts")
    assert not out.exists() and not (small_disk / "released.key.json").exists()
    assert _temporaries(small_disk) == []
    (small_disk / "filler").unlink()  # space freed: the rerun finishes the release
    done = _dtmr("anonymize", source, "--method", "raw", "-o", out)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(small_disk)) == ["released.h5", "released.key.json"]


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.parametrize("leave, file", [(0, "events.jsonl"), (200_000, "train_state.pt")])
def test_train_on_a_full_disk_is_one_line_naming_the_file(tmp_path, small_disk, leave, file):
    tiny = _tiny_training()
    library = tiny.create_tiny_library(tmp_path / "tiny.h5")
    _fill(small_disk, leave)
    run = small_disk / "run"
    options = [arg for key, value in tiny.TINY.items() for arg in ("--model-option", f"{key}={json.dumps(value)}")]
    done = _dtmr("train", "--data", library, "--split", "synthetic", "--preset", "small", "--beta", "0.5",
                 "--out", run, "--epochs", "1,0,0", "--batch", "4", "--quadruplets", "8", "--device", "cpu",
                 *options)
    _assert_one_line(done, run / file)
    assert _temporaries(small_disk) == []
