"""The Linux desktop entry and the script that installs it for the frozen build."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
from pathlib import Path

import tomllib

REPO = Path(__file__).resolve().parents[2]
ENTRY = REPO / "packaging" / "dtmr-studio.desktop"
INSTALLER = REPO / "packaging" / "install-desktop-entry.sh"


def _desktop(path: Path) -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # keys are case-sensitive
    parser.read_string(path.read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def test_entry_starts_the_gui_script_with_the_bundled_icon():
    entry = _desktop(ENTRY)
    assert entry["Type"] == "Application" and entry["Name"] == "DTMR Studio"
    assert entry["Terminal"] == "false"
    gui_scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["gui-scripts"]
    program, *arguments = entry["Exec"].split()
    assert program in gui_scripts and arguments == ["%f"] and entry["TryExec"] == program
    assert (REPO / "resources" / "icons" / f"{entry['Icon']}.svg").is_file()
    assert (REPO / "resources" / "icons" / f"{entry['Icon']}.png").is_file()
    for key in ("Categories", "Keywords"):
        assert entry[key].endswith(";")
    assert "Science" in entry["Categories"].split(";")


def _fake_build(folder: Path) -> Path:
    """The top of a frozen build as the spec lays it out, with a stand-in executable."""
    icons = folder / "_internal" / "resources" / "icons"
    icons.mkdir(parents=True)
    for name in ("dtmr-studio.svg", "dtmr-studio.png"):
        shutil.copy(REPO / "resources" / "icons" / name, icons / name)
    shutil.copy(ENTRY, folder)
    shutil.copy(INSTALLER, folder)
    (folder / "dtmr-studio").write_text("#!/bin/sh\n")
    (folder / "dtmr-studio").chmod(0o755)
    return folder / INSTALLER.name


def _run(script: Path, data: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_DATA_HOME": str(data)}
    return subprocess.run(["sh", str(script), *args], env=env, check=False, capture_output=True, text=True,
                          timeout=30)


def test_installer_points_the_menu_entry_at_the_unpacked_folder_and_removes_it(tmp_path):
    build = tmp_path / "unpacked here" / "dtmr-studio-cpu"  # a space in the path
    script = _fake_build(build)
    data = tmp_path / "data"
    result = _run(script, data)
    assert result.returncode == 0, result.stderr
    installed = _desktop(data / "applications" / "dtmr-studio.desktop")
    assert installed["Exec"] == f'"{build}/dtmr-studio" %f'
    assert installed["TryExec"] == f"{build}/dtmr-studio"
    assert installed["Icon"] == "dtmr-studio" and installed["Name"] == "DTMR Studio"
    png = data / "icons" / "hicolor" / "256x256" / "apps" / "dtmr-studio.png"
    svg = data / "icons" / "hicolor" / "scalable" / "apps" / "dtmr-studio.svg"
    assert png.read_bytes() == (REPO / "resources" / "icons" / "dtmr-studio.png").read_bytes()
    assert svg.is_file()

    removed = _run(script, data, "--remove")
    assert removed.returncode == 0
    assert not (data / "applications" / "dtmr-studio.desktop").exists() and not png.exists() and not svg.exists()


def test_installer_refuses_a_folder_without_the_program(tmp_path):
    script = _fake_build(tmp_path / "build")
    (tmp_path / "build" / "dtmr-studio").unlink()
    result = _run(script, tmp_path / "data")
    assert result.returncode == 1 and "not found" in result.stderr
    assert not (tmp_path / "data" / "applications").exists()
