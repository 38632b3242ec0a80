"""Issue 42: cameras kept across model and reference switches; automatic framing over the whole clip (all three
views' clips while linked) that keeps every joint in view during playback at any window size, 1366×768 included."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication

from app.state.comparison import VIEWS, ViewKind
from app.ui.screenshots import coloured_pixels, view_pixels
from dtmr.io.npz_dataset import write_npz_dataset
from studio_fakes import ACTION_NAMES, make_clip, settle

#: the border, in device pixels, where no skeleton pixel may be
BORDER = 3


def camera(view) -> tuple:
    o, centre = view.opts, view.opts["center"]
    return (round(centre.x(), 6), round(centre.y(), 6), round(centre.z(), 6), round(o["distance"], 6),
            o["elevation"], o["azimuth"])


def cameras(window) -> dict:
    return {kind: camera(window.views.views[kind]) for kind in VIEWS}


def move_cameras(window) -> None:
    """Orbit, zoom and pan as a user does (linked: every view follows)."""
    source = window.views.views[ViewKind.SOURCE]
    source.orbit(35, 12)
    wheel = QWheelEvent(QPointF(20, 20), QPointF(20, 20), QPoint(0, 0), QPoint(0, 240), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(source, wheel)
    source.pan(0.1, 0.0, 0.05)


@pytest.mark.timeout(120)
def test_switching_the_model_or_the_reference_keeps_every_camera(studio, qtbot):
    c = studio.comparison
    move_cameras(studio)
    before = cameras(studio)
    full = next(m for m in studio.controller.catalog.retargeters if m.beta == 1.0)
    released = c.clips[ViewKind.RELEASED]
    studio.controller.select_model(str(full.path))
    qtbot.waitUntil(lambda: c.clips.get(ViewKind.RELEASED) is not released and studio.controller.model == full,
                    timeout=20000)
    settle(qtbot, studio)
    assert cameras(studio) == before
    released = c.clips[ViewKind.RELEASED]
    reference = c.reference
    studio.selection.random_reference()
    qtbot.waitUntil(lambda: c.reference is not reference and c.clips.get(ViewKind.RELEASED) not in (None, released),
                    timeout=20000)
    settle(qtbot, studio)
    assert cameras(studio) == before


@pytest.mark.timeout(120)
def test_another_clip_of_another_size_is_framed_again_only_if_the_camera_was_not_moved(studio, qtbot):
    c, views = studio.comparison, studio.views.views
    source = views[ViewKind.SOURCE]
    framed = source.framed
    studio.library_panel.select_clip(2)  # the sway: the body slides 0.4 m sideways, a wider box
    qtbot.waitUntil(lambda: c.clips[ViewKind.SOURCE].name == "S00A02V0" and ViewKind.RELEASED in c.clips,
                    timeout=20000)
    settle(qtbot, studio)
    assert not np.allclose(source.framed[0], framed[0])  # framed again, over the new clip...
    lo, hi = source.framed
    for kind in VIEWS:  # ...and all three views' clips together, one home for the linked views
        view = views[kind]
        assert view.framed[0] == pytest.approx(lo) and view.framed[1] == pytest.approx(hi)
        clip_lo, clip_hi = view.clip_bounds()
        assert (clip_lo >= lo - 1e-6).all() and (clip_hi <= hi + 1e-6).all()
    move_cameras(studio)
    before = cameras(studio)
    studio.library_panel.select_clip(6)  # another subject's wave: smaller, elsewhere; the user's camera stays
    qtbot.waitUntil(lambda: c.clips[ViewKind.SOURCE].name == "S02A00V0" and ViewKind.RELEASED in c.clips,
                    timeout=20000)
    settle(qtbot, studio)
    assert cameras(studio) == before
    studio.actions.reset_cameras.trigger()  # R frames the clip shown
    assert not np.allclose(source.framed[0], lo)
    assert not any(v.moved_by_user for v in views.values())


def travelling_library(path):
    """Clips that cross the floor: 2.4 m sideways and 1.6 m towards the sensor, arms waving over the head."""
    clips = []
    for subject in range(2):
        clip = make_clip(subject, 0, 60)
        t = np.linspace(0.0, 1.0, clip.num_frames, dtype=np.float32)[:, None]
        joints = clip.joints.copy()
        joints[..., 0] += (2.4 * t - 1.2)
        joints[..., 2] -= 1.6 * t
        joints[:, [7, 11, 21, 22, 23, 24], 1] += 0.5  # hands over the head
        clips.append(clip.replace(joints=joints, sample_name=f"S{subject:02d}A00V0"))
    write_npz_dataset(path, clips, action_names=ACTION_NAMES)
    return path


def border_pixels(pixels: np.ndarray) -> int:
    edge = np.zeros(pixels.shape[:2], dtype=bool)
    edge[:BORDER], edge[-BORDER:], edge[:, :BORDER], edge[:, -BORDER:] = True, True, True, True
    return coloured_pixels(pixels[edge][None])


@pytest.mark.timeout(240)
@pytest.mark.parametrize("size", [(1366, 728), (1024, 600)])
@pytest.mark.parametrize("linked", [True, False])
def test_no_joint_leaves_the_view_during_playback(make_studio, tmp_path, qtbot, size, linked):
    window = make_studio(size=size)
    window.views.set_linked(linked)
    window.open_path(travelling_library(tmp_path / "travel.npz"))
    c = window.comparison
    qtbot.waitUntil(lambda: ViewKind.RELEASED in c.clips, timeout=20000)
    settle(qtbot, window)
    QApplication.processEvents()
    for frame in range(0, c.length, 3):
        window.clock.seek(frame)
        window.coalescer.flush()
        for kind in VIEWS:
            pixels = view_pixels(window.views.views[kind])
            assert coloured_pixels(pixels) > 30, (kind, frame)
            assert border_pixels(pixels) == 0, (kind, frame, pixels.shape)
