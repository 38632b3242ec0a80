"""The icon in resources/icons is what packaging/make_icon.py draws, and it is a usable app icon."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
ICONS = REPO / "resources" / "icons"
SCRIPT = REPO / "packaging" / "make_icon.py"


def _make_icon(*args) -> subprocess.CompletedProcess:
    # a subprocess: the script makes its own (offscreen) QGuiApplication, which must not become the test
    # session's QApplication
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], check=False, capture_output=True,
                          text=True, timeout=120)


def _rgba(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGBA"), dtype=np.int16)


def test_checked_in_icon_is_what_the_script_draws(tmp_path):
    assert _make_icon("--check").returncode == 0
    made = _make_icon("--out", tmp_path)
    assert made.returncode == 0, made.stderr
    assert (tmp_path / "dtmr-studio.svg").read_text() == (ICONS / "dtmr-studio.svg").read_text()
    fresh, checked_in = _rgba(tmp_path / "dtmr-studio.png"), _rgba(ICONS / "dtmr-studio.png")
    assert fresh.shape == checked_in.shape == (256, 256, 4)
    # rasterisers of other Qt versions may move antialiased edges a little, never the picture
    assert np.abs(fresh - checked_in).mean() < 2.0


def test_check_reports_a_stale_svg(tmp_path):
    (tmp_path / "dtmr-studio.svg").write_text((ICONS / "dtmr-studio.svg").read_text().replace("#1f77b4", "#000000"))
    stale = _make_icon("--check", "--out", tmp_path)
    assert stale.returncode == 1 and "make_icon.py" in stale.stderr


def test_icon_is_a_rounded_tile_with_both_side_colours():
    pixels = _rgba(ICONS / "dtmr-studio.png")
    alpha = pixels[..., 3]
    assert alpha[0, 0] == 0 and alpha[-1, -1] == 0  # rounded, transparent corners
    assert (alpha[40:-40, 40:-40] == 255).all()  # an opaque tile
    rgb = pixels[alpha == 255][:, :3]
    blue = (rgb[:, 2] > 150) & (rgb[:, 0] < 60)
    red = (rgb[:, 0] > 180) & (rgb[:, 1] < 60) & (rgb[:, 2] < 60)
    assert blue.sum() > 500 and red.sum() > 500  # the released figure's left and right limbs
