"""Shared steps of the review-mode tests: a 21-clip library, a shown Studio on it with an annotator set, keys
sent to the widget that has the keyboard focus (as a user's keys are)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from studio_fakes import make_clip, settle

from app.state.comparison import ViewKind
from dtmr.io.npz_dataset import write_npz_dataset

NAMES = ["wave", "march", "sway", "kick"]


def write_library(path):
    """21 clips (7 subjects x 3 actions, 30-34 frames) with distinct sample names."""
    write_npz_dataset(path, [make_clip(s, a, 30 + 2 * a) for s in range(7) for a in range(3)], action_names=NAMES)
    return path


def open_reviewing(make_studio, qtbot, path, settings_file, annotator="ada"):
    """A shown Studio on `path`, the Review tab in front, `annotator` remembered; the window active."""
    window = make_studio(settings_file=settings_file)
    if annotator:
        window.qsettings.setValue("review/annotator", annotator)
        window.review.state.set_annotator(annotator)
    window.open_path(path)
    qtbot.waitUntil(lambda: ViewKind.SOURCE in window.comparison.clips, timeout=20000)
    settle(qtbot, window)
    window.review.dock.raise_()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    return window


def press(qtbot, window, key, modifier=Qt.KeyboardModifier.NoModifier):
    """A key as the user types it: to the focused widget (the window when none)."""
    qtbot.keyClick(QApplication.focusWidget() or window, key, modifier)
    window.coalescer.flush()
