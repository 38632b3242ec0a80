"""Issue 42: each view's caption is one line (clip facts, or method, β and reference); the checkpoint's training
options and the rest are in its tooltip."""

from __future__ import annotations

import pytest

from app.state.comparison import VIEWS, ViewKind
from studio_fakes import settle


@pytest.mark.timeout(120)
def test_captions_are_one_line_with_the_details_on_hover(make_studio, library_file, qtbot):
    window = make_studio(size=(1366, 728))
    window.open_path(library_file)
    c = window.comparison
    qtbot.waitUntil(lambda: ViewKind.RELEASED in c.clips, timeout=20000)
    settle(qtbot, window)
    notes = window.views.notes
    line = notes[ViewKind.SOURCE].fontMetrics().lineSpacing()
    for kind in VIEWS:
        label = notes[kind]
        assert "\n" not in label.text() and label.height() < 2 * line, (kind, label.text())
    model = window.controller.model
    released = notes[ViewKind.RELEASED]
    assert released.full_text == f"DisentangledTMR · β 0.2 · ref {c.reference.name}"
    assert notes[ViewKind.RETARGETED].full_text == f"DisentangledTMR · full retarget · ref {c.reference.name}"
    assert model.label in released.toolTip()  # the checkpoint with its training options
    assert f"{c.clips[ViewKind.RELEASED].num_frames} frames" in released.toolTip()
    source = c.clips[ViewKind.SOURCE]
    assert notes[ViewKind.SOURCE].full_text.startswith(f"{source.name} · {source.num_frames} frames")
