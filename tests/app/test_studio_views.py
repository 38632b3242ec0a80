"""The three GL views: non-empty renders, missing joints hidden, linked cameras, presets, foot overlay."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication, QHBoxLayout, QWidget

from app.core.foot_sliding import FootSliding
from app.render_gl.skeleton_view import PRESETS, SkeletonView
from app.state.comparison import VIEWS, ViewKind
from app.ui.screenshots import coloured_pixels, grab_window, image_array, view_pixels
from studio_fakes import make_clip, settle


def test_three_views_render_skeletons_and_the_screenshot_includes_them(studio, qtbot):
    studio.clock.seek(20)
    studio.coalescer.flush()
    for kind in VIEWS:
        pixels = view_pixels(studio.views.views[kind])
        assert pixels[..., :3].std() > 2.0, kind
        assert coloured_pixels(pixels) > 50, kind
    shot = image_array(grab_window(studio, list(studio.views.views.values())))
    view = studio.views.views[ViewKind.RELEASED].widget
    origin = view.mapTo(studio, QPoint(0, 0))
    region = shot[origin.y(): origin.y() + view.height(), origin.x(): origin.x() + view.width()]
    assert coloured_pixels(region) > 50  # the GL content is in the window screenshot


def test_missing_joints_and_their_bones_are_hidden(qtbot):
    holder = QWidget()
    layout = QHBoxLayout(holder)
    view = SkeletonView()
    layout.addWidget(view.widget)
    qtbot.addWidget(holder)
    holder.resize(300, 300)
    holder.show()
    qtbot.waitUntil(lambda: view.ready, timeout=10000)
    clip = make_clip(0, 0, frames=30, missing=True)  # left hand (joint 7) missing from frame 10 on
    view.set_clip(clip.joints, clip.topology, FootSliding.of(clip.joints, clip.topology, clip.fps))
    view.show_frame(0)
    assert view.skeleton._joints.pos.shape == (25, 3)
    assert view.skeleton._bones.pos.shape == (48, 3)  # 24 bones
    view.show_frame(20)
    assert view.skeleton._joints.pos.shape == (24, 3)
    assert view.skeleton._bones.pos.shape == (2 * 21, 3)  # wrist-hand, hand-tip, hand-thumb gone
    assert np.isfinite(view.skeleton._bones.pos).all()
    view.dispose()
    holder.close()


def test_cameras_link_by_default_and_unlink(studio, qtbot):
    source, released = studio.views.views[ViewKind.SOURCE], studio.views.views[ViewKind.RELEASED]
    source.orbit(40, 10)
    assert released.opts["azimuth"] == pytest.approx(source.opts["azimuth"])
    assert released.opts["elevation"] == pytest.approx(source.opts["elevation"])
    wheel = QWheelEvent(QPointF(20, 20), QPointF(20, 20), QPoint(0, 0), QPoint(0, 240), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(released, wheel)  # zoom in the released view: mirrored to the source
    assert source.opts["distance"] == pytest.approx(released.opts["distance"])
    qtbot.mouseClick(studio.views.link_box, Qt.MouseButton.LeftButton)
    assert not studio.views.link.enabled and not studio.settings.get("link_cameras")
    before = released.opts["azimuth"]
    source.orbit(30, 0)
    assert released.opts["azimuth"] == before
    studio.actions.link_cameras.trigger()  # View > Link cameras (C) links again and aligns
    assert studio.views.link_box.isChecked()
    assert released.opts["azimuth"] == pytest.approx(source.opts["azimuth"])


def test_presets_and_reset(studio, qtbot):
    views = studio.views.views.values()
    qtbot.mouseClick(studio.views.preset_buttons["top"], Qt.MouseButton.LeftButton)
    assert all(v.opts["elevation"] == PRESETS["top"][0] for v in views)
    studio.actions.presets["side"].trigger()
    assert all(v.opts["azimuth"] == PRESETS["side"][1] for v in views)
    for view in views:
        view.orbit(17, 3)
    qtbot.mouseClick(studio.views.reset_button, Qt.MouseButton.LeftButton)
    for view in views:
        assert (view.opts["elevation"], view.opts["azimuth"]) == PRESETS["oblique"]
        assert view.opts["center"] == view.home_center


def test_foot_overlay_toggle_and_trail_length(studio, qtbot):
    view = studio.views.views[ViewKind.SOURCE]
    studio.library_panel.select_clip(2)  # sway: feet slide while planted
    settle(qtbot, studio)
    studio.clock.seek(35)
    studio.coalescer.flush()
    feet = view.feet
    assert feet._markers.visible() and feet._trail.visible()
    sliding = studio.comparison.feet[ViewKind.SOURCE]
    assert feet._markers.pos.shape[0] == int(sliding.contacts[35].sum())
    studio.views.trail_box.setValue(5)
    assert feet.trail_length == 5 and studio.settings.get("trail_length") == 5
    assert feet._trail.pos.shape[0] <= 2 * 5 * 2  # 5 segments per foot, 2 feet
    qtbot.mouseClick(studio.views.feet_box, Qt.MouseButton.LeftButton)
    assert not feet._markers.visible() and not feet._trail.visible()
    assert not studio.actions.feet.isChecked()
    studio.actions.feet.trigger()
    assert feet._markers.visible()
    notes = studio.views.notes[ViewKind.SOURCE].full_text
    assert f"{sliding.mean:.3f} m/s" in notes
