"""scripts/fuzz_readers.py: a few seeded variants per format run through `dtmr data info` in a child."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fuzz_readers.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=300)


def test_a_short_run_counts_every_variant_and_finds_no_problem():
    result = run("--variants", "4", "--junk-2056", "3", "--hostile", "1", "--seed", "7", "--hdf5-deadline", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in result.stdout.splitlines() if line.startswith("| `")}
    hostile = {"`pkl-self-sharing`", "`pkl-shared-keypoints`", "`pkl-huge-shape`", "`pkl-big-label`", "`json-deep`",
               "`sidecar-deep`", "`bvh-nonfinite`", "`fifo`", "`skeleton-device`", "`h5-uint64-labels`",
               "`mmpose-empty-frames`"}  # issue 43
    assert set(rows) == {"`skeleton`", "`npz`", "`h5`", "`h5@2056`", "`bvh`", "`json`", "`pkl`", "`sgn`", "`npy`", "`c3d`",
                         *hostile}
    for name, cells in rows.items():
        variants, counts = int(cells[0]), [int(c) for c in cells[1:7]]
        assert variants == (3 if name == "`h5@2056`" else 1 if name in hostile else 4) == sum(counts)
        assert counts[3:] == [0, 0, 0]  # no unclear outcome, traceback or hang
        if name in hostile:
            assert counts[0] == variants  # every hostile variant refused


def test_the_same_seed_gives_the_same_table():
    first, second = (run("--variants", "5", "--formats", "npz", "--seed", "11") for _ in range(2))
    assert first.returncode == 0 and first.stdout == second.stdout


def test_a_hang_is_reported_and_fails_the_run(tmp_path):
    """The classifier itself: a variant the child cannot finish in --limit is a hang, and the exit is 1.
    A watchdog deadline longer than the limit lets the junk-at-2056 libraries hang the child."""
    result = run("--variants", "0", "--junk-2056", "40", "--seed", "20", "--formats", "h5",
                 "--limit", "2", "--hdf5-deadline", "30")
    assert result.returncode == 1
    assert "hang no answer within 2 s" in result.stdout


def test_a_malicious_pickle_variant_is_refused_and_never_runs(tmp_path, monkeypatch):
    """Every crafted PYSKL variant is a pickle that would create a marker file if its code ran."""
    import random

    monkeypatch.syspath_prepend(str(SCRIPT.parent))
    import fuzz_readers

    out = tmp_path / "evil.pkl"
    for i in range(6):
        what = fuzz_readers.craft_pickle(tmp_path / "base.pkl", out, random.Random(i))
        assert what.startswith("malicious pickle")
        kind, detail = fuzz_readers.classify(str(out), None)
        assert kind == "error" and "refused to load" in detail, detail
        assert not (tmp_path / fuzz_readers.MARKER).exists()
