"""The frozen `dtmr-studio` program also serves the `python [-u] -m MODULE` calls of the Trainer tab."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("studio_entry", REPO / "packaging" / "studio_entry.py")
studio_entry = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(studio_entry)


@pytest.mark.parametrize(("argv", "expected"), [
    (["-m", "dtmr", "train", "--data", "x.h5"], ("dtmr", ["train", "--data", "x.h5"], False)),
    (["-u", "-m", "dtmr", "train"], ("dtmr", ["train"], True)),
    (["-m", "torch.distributed.run", "--nproc_per_node", "2", "-m", "dtmr", "train"],
     ("torch.distributed.run", ["--nproc_per_node", "2", "-m", "dtmr", "train"], False)),
    ([], None),
    (["library.h5"], None),
    (["--self-test", "out.png"], None),
    (["-m", "dtmr.io.hdf5_probe"], ("dtmr.io.hdf5_probe", [], False)),
    (["-m", "dtmr.io.c3d_child", "a.c3d", "o.npz"], ("dtmr.io.c3d_child", ["a.c3d", "o.npz"], False)),
    (["-m", "os"], None),  # only the modules the Studio starts
    (["-m"], None),
])
def test_module_invocation(argv, expected):
    assert studio_entry.module_invocation(argv) == expected


def test_the_entry_runs_dtmr_as_a_module_and_passes_its_exit_status(tmp_path):
    script = REPO / "packaging" / "studio_entry.py"
    ok = subprocess.run([sys.executable, str(script), "-u", "-m", "dtmr", "--version"], cwd=REPO,
                        check=False, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and ok.stdout.startswith("dtmr "), ok.stderr
    bad = subprocess.run([sys.executable, str(script), "-m", "dtmr", "data", "info", str(tmp_path / "none.h5")],
                         cwd=REPO, check=False, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "none.h5" in bad.stderr


@pytest.mark.parametrize("entry", ["studio_entry.py", "dtmr_entry.py"])
def test_both_frozen_programs_serve_the_hdf5_probe(entry):
    """dtmr/io/hdf5_watchdog.py starts `sys.executable -m dtmr.io.hdf5_probe`: in a frozen build that is
    one of these programs, which must answer as the probe does (not open a Studio, not parse a CLI)."""
    script = REPO / "packaging" / entry
    request = '{"path": "' + str(REPO / "resources" / "demo" / "demo_library.h5") + '", "deadline": 30}\n'
    done = subprocess.run([sys.executable, str(script), "-m", "dtmr.io.hdf5_probe"], cwd=REPO, input=request,
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ready", "done"]


@pytest.mark.parametrize("entry", ["studio_entry.py", "dtmr_entry.py"])
def test_both_frozen_programs_serve_the_c3d_child(entry, tmp_path):
    """dtmr/io/c3d_file.py starts `sys.executable -m dtmr.io.c3d_child IN OUT` in a frozen build (issue 45)."""
    ezc3d = pytest.importorskip("ezc3d")
    import numpy as np

    c3d = ezc3d.c3d()
    c3d["parameters"]["POINT"]["RATE"]["value"] = [100.0]
    c3d["parameters"]["POINT"]["LABELS"]["value"] = ("LASI",)
    c3d["data"]["points"] = np.ones((4, 1, 3))
    c3d.write(str(tmp_path / "one.c3d"))
    done = subprocess.run([sys.executable, str(REPO / "packaging" / entry), "-m", "dtmr.io.c3d_child",
                           str(tmp_path / "one.c3d"), str(tmp_path / "out.npz")], cwd=REPO, check=False,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    with np.load(tmp_path / "out.npz") as saved:
        assert saved["points"].shape == (3, 1, 3) and saved["labels"].tolist() == ["LASI"]
