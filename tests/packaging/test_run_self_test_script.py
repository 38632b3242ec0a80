"""packaging/run_self_test.sh: runs a program on its own Xvfb display and passes its exit status through."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "packaging" / "run_self_test.sh"

pytestmark = pytest.mark.skipif(shutil.which("Xvfb") is None, reason="Xvfb is not installed (make display-deps)")

#: a stand-in for the frozen dtmr-studio: records its display and arguments, checks the X server's socket
FAKE_STUDIO = """#!/bin/sh
echo "$DISPLAY" > "$RECORD/display"
echo "$@" > "$RECORD/args"
test -S "/tmp/.X11-unix/X${DISPLAY#:}" || exit 9
sleep "${FAKE_SLEEP:-0}"
exit "${FAKE_STATUS:-0}"
"""


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    fake = tmp_path / "dtmr-studio"
    fake.write_text(FAKE_STUDIO)
    fake.chmod(0o755)
    environment = {**os.environ, "RECORD": str(tmp_path), **env}
    environment.pop("DISPLAY", None)
    return subprocess.run(["bash", str(SCRIPT), str(fake), *args], env=environment, check=False,
                          capture_output=True, text=True, timeout=60)


def test_runs_the_self_test_on_a_private_display_and_stops_it(tmp_path):
    result = _run(tmp_path, "out.png", "library.h5")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "args").read_text().split() == ["--self-test", "out.png", "library.h5"]
    display = (tmp_path / "display").read_text().strip()
    assert display.startswith(":")
    assert not Path(f"/tmp/.X11-unix/X{display[1:]}").exists()  # Xvfb was stopped


def test_passes_the_exit_status_through(tmp_path):
    assert _run(tmp_path, "out.png", FAKE_STATUS="1").returncode == 1


def test_a_hanging_self_test_times_out(tmp_path):
    assert _run(tmp_path, "out.png", FAKE_SLEEP="30", DTMR_SELF_TEST_TIMEOUT="1").returncode == 124


def test_usage_error_without_an_output_file(tmp_path):
    result = subprocess.run(["bash", str(SCRIPT), "dtmr-studio"], check=False, capture_output=True, text=True,
                            timeout=10)
    assert result.returncode == 2 and "usage" in result.stderr
