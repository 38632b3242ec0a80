"""`dtmr anonymize --workers N` and under `torchrun`: every process writes its share of the parts, one merges,
and the release is byte for byte that of one process with the same drawn order and token (`run.json`); a
killed worker's run resumes to the same release."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dtmr.cli import main
from dtmr.io.library import ClipLibrary
from dtmr.release import chunks
from dtmr.release.key import key_path_for
from dtmr.release.run import RUN_STATE
from dtmr.resources import resource_path

DEMO = resource_path("demo/demo_library.h5")
MODEL = resource_path("models/dtmr_small_beta0.2.pt")


@pytest.fixture
def source(tmp_path):
    """18 demo clips (every 20th)."""
    path = tmp_path / "input.h5"
    with ClipLibrary(DEMO) as demo:
        ClipLibrary.create(path, demo.read_many(range(0, len(demo), 20)), action_names=demo.action_names).close()
    return path


def _command(source, out, *args) -> list[str]:
    return ["anonymize", str(source), *args, "--chunk", "2", "-o", str(out)]


def _one_process_release(source, out, monkeypatch, *args) -> str:
    """A one-process release at `out`; returns its run.json, drawn by a first run stopped after one part."""
    real_write = ClipLibrary.write

    def stop_at_the_second_part(path, clips, *a, **k):
        if str(path).endswith("part-00001.h5"):
            raise KeyboardInterrupt
        return real_write(path, clips, *a, **k)

    with monkeypatch.context() as patch:
        patch.setattr(ClipLibrary, "write", staticmethod(stop_at_the_second_part))
        assert main(_command(source, out, *args)) == 130
    state = (out.parent / (out.name + ".parts") / RUN_STATE).read_text()
    assert main(_command(source, out, *args)) == 0
    return state


def _same_run(out: Path, state: str) -> None:
    """Give the run at `out` the drawn order and token of another (what a resumed run reads back)."""
    parts = out.parent / (out.name + ".parts")
    parts.mkdir(parents=True)
    (parts / RUN_STATE).write_text(state)


def _assert_identical(a: Path, b: Path) -> None:
    assert a.read_bytes() == b.read_bytes()
    assert key_path_for(a).read_bytes() == key_path_for(b).read_bytes()
    assert not (b.parent / (b.name + ".parts")).exists()


@pytest.mark.slow
@pytest.mark.parametrize("how", [["--method", "naive"], ["--model", str(MODEL), "--device", "cpu", "--seed", "4"]],
                         ids=["naive", "checkpoint"])
def test_two_workers_write_the_one_process_release_byte_for_byte(source, tmp_path, monkeypatch, how):
    one = tmp_path / "one" / "released.h5"
    one.parent.mkdir()
    state = _one_process_release(source, one, monkeypatch, *how)
    two = tmp_path / "two" / "released.h5"
    _same_run(two, state)
    assert main(_command(source, two, *how, "--workers", "2")) == 0
    _assert_identical(one, two)


@pytest.mark.parametrize("provenance", [[], ["--with-provenance"]], ids=["scrubbed", "provenance"])
def test_parts_kept_in_memory_merge_into_the_release_that_reading_them_back_gives(source, tmp_path, monkeypatch,
                                                                                   provenance):
    """A process keeps the parts it writes in their stored form instead of reading them back (and `--workers`
    send that form): the release must be the one merged from the part files."""
    how = ["--model", str(MODEL), "--device", "cpu", *provenance]
    kept = tmp_path / "kept" / "released.h5"
    kept.parent.mkdir()
    state = _one_process_release(source, kept, monkeypatch, *how)
    read = tmp_path / "read" / "released.h5"
    _same_run(read, state)
    monkeypatch.setattr(chunks, "KEEP_BYTES", 0)  # nothing kept: every part is read from its file
    assert main(_command(source, read, *how)) == 0
    _assert_identical(kept, read)


@pytest.mark.slow
def test_torchrun_ranks_with_gloo_write_the_one_process_release(source, tmp_path, monkeypatch):
    one = tmp_path / "one" / "released.h5"
    one.parent.mkdir()
    state = _one_process_release(source, one, monkeypatch, "--method", "naive")
    two = tmp_path / "two" / "released.h5"
    _same_run(two, state)
    environment = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    run = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
                          "-m", "dtmr", *_command(source, two, "--method", "naive", "--device", "cpu")],
                         check=False, env=environment, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.count("wrote release") == 1  # rank 0 reports, alone
    _assert_identical(one, two)


def _spawned_workers(pid: int) -> list[int]:
    """The `multiprocessing` spawn children of `pid` (not its resource tracker)."""
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if not children.exists():
        return []
    found = []
    for child in children.read_text().split():
        with open(f"/proc/{child}/cmdline", "rb") as fh:
            if b"spawn_main" in fh.read():
                found.append(int(child))
    return found


@pytest.mark.slow
def test_a_killed_worker_stops_the_run_and_the_rerun_completes_the_same_release(tmp_path):
    source = tmp_path / "input.h5"
    with ClipLibrary(DEMO) as demo:  # 60 clips: parts keep coming for a few seconds
        ClipLibrary.create(source, demo.read_many(range(0, len(demo), 6)), action_names=demo.action_names).close()
    out = tmp_path / "released.h5"
    parts = tmp_path / "released.h5.parts"
    how = ["--model", str(MODEL), "--device", "cpu"]
    command = [sys.executable, "-m", "dtmr", *_command(source, out, *how, "--workers", "2")]
    parent = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not any(parts.glob("part-*.h5")) and parent.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        workers = _spawned_workers(parent.pid)
        assert len(workers) == 2 and parent.poll() is None
        os.kill(workers[1], signal.SIGKILL)
        _, stderr = parent.communicate(timeout=240)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    assert parent.returncode == 2 and "stopped (exit code -9)" in stderr and "rerun the same command" in stderr
    assert not out.exists() and not key_path_for(out).exists()
    written = sorted(p.name for p in parts.glob("part-*.h5"))
    assert 0 < len(written) < 30
    state = (parts / RUN_STATE).read_text()

    assert main(_command(source, out, *how, "--workers", "2")) == 0
    straight = tmp_path / "straight" / "released.h5"
    _same_run(straight, state)
    assert main(_command(source, straight, *how)) == 0
    _assert_identical(straight, out)


def test_workers_under_torchrun_are_refused(source, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    out = tmp_path / "released.h5"
    assert main(_command(source, out, "--method", "raw", "--workers", "2")) == 2
    assert "under torchrun leave it out" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "released.h5.parts").exists()


@pytest.mark.slow
def test_a_model_a_worker_cannot_load_is_the_run_s_one_line_error(source, tmp_path, capsys):
    """The parent never loads the model: a worker's error is raised as the parent's, before the lock."""
    bad = tmp_path / "model.pt"
    bad.write_bytes(b"not a checkpoint")
    out = tmp_path / "released.h5"
    assert main(_command(source, out, "--model", str(bad), "--device", "cpu", "--workers", "2")) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "checkpoint" in err and "Traceback" not in err
    assert not out.exists() and not (tmp_path / "released.h5.parts").exists()


@pytest.mark.slow
def test_a_worker_s_error_while_writing_stops_the_run_with_its_message(tmp_path, capsys):
    one_subject = tmp_path / "one_subject.h5"
    with ClipLibrary(DEMO) as demo:
        clips = [c for c in demo.read_many(range(40)) if c.subject == demo.read(0).subject][:6]
        ClipLibrary.create(one_subject, clips, action_names=demo.action_names).close()
    out = tmp_path / "released.h5"
    assert main(_command(one_subject, out, "--method", "naive", "--workers", "2")) == 2
    err = capsys.readouterr().err
    assert "no reference clip of another known subject" in err and "Traceback" not in err
    assert not out.exists() and not key_path_for(out).exists()

