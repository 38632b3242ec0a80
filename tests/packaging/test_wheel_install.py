"""The sdist and the wheel build, install into a fresh virtual environment and run from there.

Offline and fast: `python -m build --no-isolation` builds the sdist and then the wheel *from the sdist*
(so a file missing from the sdist is missing from the wheel too) with the project venv's setuptools. The
fresh venv has no pip and no packages of its own; a .pth file in its site-packages adds a folder of links
to the project venv's installed distributions (the dependencies: numpy, torch, h5py, ...), leaving out the
project's own editable install, so `dtmr` can only come from the wheel. The wheel is installed with
`pip --python NEW install --no-index --no-deps`, and `pip check` then verifies that every dependency the
wheel declares is satisfied by what the new environment sees. The installed `dtmr` runs `--help` and
`data synth`, and `dtmr.resources` must find the bundled resources under `<prefix>/share/dtmr-studio`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VERSION_LINE = '__version__ = "'


def _run(cmd: list, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    result = subprocess.run([str(c) for c in cmd], check=False, cwd=cwd, env=env, capture_output=True,
                            text=True, timeout=timeout)
    assert result.returncode == 0, f"{cmd} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return result


def _project_version() -> str:
    line = next(line for line in (REPO / "dtmr" / "__init__.py").read_text().splitlines()
                if line.startswith(VERSION_LINE))
    return line[len(VERSION_LINE):-1]


def _dependency_links(folder: Path) -> Path:
    """A folder of symbolic links to the project venv's site-packages entries, less the project itself."""
    site = Path(sysconfig.get_paths()["purelib"])
    folder.mkdir()
    for entry in site.iterdir():
        name = entry.name
        if name.startswith(("__editable__", "dtmr_studio")) or name.endswith(".pth") or name == "__pycache__":
            continue
        (folder / name).symlink_to(entry)
    return folder


@pytest.mark.slow
def test_wheel_installs_into_a_fresh_venv_and_runs(tmp_path):
    version = _project_version()
    out = tmp_path / "dist"
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, REPO], cwd=REPO, timeout=240)
    wheel = out / f"dtmr_studio-{version}-py3-none-any.whl"
    sdist = out / f"dtmr_studio-{version}.tar.gz"
    assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in out.iterdir())

    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
    data = f"dtmr_studio-{version}.data/data/share/dtmr-studio/resources/"
    assert data + "demo/demo_library.h5" in names
    assert {data + "icons/dtmr-studio.svg", data + "icons/dtmr-studio.png"} <= set(names)
    assert f"dtmr_studio-{version}.dist-info/licenses/LICENSE" in names
    assert {name.split("/")[0] for name in names} == {
        "dtmr", "app", f"dtmr_studio-{version}.dist-info", f"dtmr_studio-{version}.data"}

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=tmp_path)
    python = venv / "bin" / "python"
    new_site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         cwd=tmp_path).stdout.strip())
    (new_site / "project_dependencies.pth").write_text(f"{_dependency_links(tmp_path / 'deps')}\n")
    pip = [sys.executable, "-m", "pip", "--python", python]
    _run([*pip, "install", "--no-index", "--no-deps", "--quiet", wheel], cwd=tmp_path)
    _run([*pip, "check"], cwd=tmp_path)

    dtmr = venv / "bin" / "dtmr"
    assert "data" in _run([dtmr, "--help"], cwd=tmp_path).stdout
    _run([dtmr, "data", "synth", "-o", tmp_path / "X.h5", "--subjects", "2", "--actions", "2",
          "--repetitions", "1"], cwd=tmp_path)
    assert "4 clip(s)" in _run([dtmr, "data", "info", tmp_path / "X.h5"], cwd=tmp_path).stdout

    probe = ("import dtmr, dtmr.resources as r; from dtmr.resources import DEMO_LIBRARY;"
             "print(dtmr.__file__); print(r.resources_dir()); print(r.resource_path(*DEMO_LIBRARY))")
    where = _run([python, "-c", probe], cwd=tmp_path).stdout.splitlines()
    installed = (venv / "share" / "dtmr-studio" / "resources").resolve()
    assert Path(where[0]).resolve().is_relative_to(new_site.resolve())  # the wheel's dtmr, not the checkout
    assert Path(where[1]).resolve() == installed
    assert Path(where[2]).is_file() and (installed / "icons" / "dtmr-studio.png").is_file()
