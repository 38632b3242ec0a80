"""Issue 42: show/hide each view (View ▸ Show and the toolbar's Show menu) and, in every view, the arms, the legs,
the torso and head and the joint markers; drawn as toggled."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from app.state.comparison import VIEWS, ViewKind
from app.ui.screenshots import coloured_pixels, view_pixels
from dtmr.skeleton.body_parts import BodyPart, joints_of
from studio_fakes import settle


@pytest.mark.timeout(120)
def test_a_view_is_hidden_and_shown_from_the_view_menu_and_the_toolbar(studio):
    panel = studio.views
    menu_actions = studio.actions.show.actions()
    assert all(a in menu_actions for a in panel.visibility_actions())  # View ▸ Show
    assert all(a in panel.show_button.menu().actions() for a in panel.visibility_actions())  # the toolbar's
    widths = {kind: panel.views[kind].widget.width() for kind in VIEWS}
    panel.view_actions[ViewKind.SOURCE].trigger()
    QApplication.processEvents()
    assert not panel.views[ViewKind.SOURCE].widget.isVisible() and not panel.notes[ViewKind.SOURCE].isVisible()
    for kind in (ViewKind.RETARGETED, ViewKind.RELEASED):  # the others share the width
        assert panel.views[kind].widget.width() > 1.3 * widths[kind]
    panel.view_actions[ViewKind.RETARGETED].trigger()
    assert not panel.view_actions[ViewKind.RELEASED].isEnabled()  # the last view shown stays
    panel.view_actions[ViewKind.RELEASED].trigger()  # refused: disabled actions do not trigger
    QApplication.processEvents()
    assert panel.views[ViewKind.RELEASED].widget.isVisible() and panel.beta.isVisible()
    panel.view_actions[ViewKind.SOURCE].trigger()
    panel.view_actions[ViewKind.RETARGETED].trigger()
    QApplication.processEvents()
    assert all(panel.views[kind].widget.isVisible() for kind in VIEWS)
    assert all(a.isEnabled() for a in panel.view_actions.values())


@pytest.mark.timeout(120)
def test_body_parts_and_joint_markers_are_hidden_in_every_view(studio, qtbot):
    panel = studio.views
    studio.clock.seek(10)
    studio.coalescer.flush()
    released = panel.views[ViewKind.RELEASED]
    joints = released.skeleton._joints.pos.shape[0]
    bones = released.skeleton._bones.pos.shape[0] // 2
    shown = coloured_pixels(view_pixels(released))
    panel.part_actions[BodyPart.ARMS].trigger()
    arms = int(joints_of("ntu25", [BodyPart.ARMS]).sum())
    for kind in VIEWS:
        skeleton = panel.views[kind].skeleton
        assert skeleton._joints.pos.shape[0] == joints - arms, kind
        assert skeleton._bones.pos.shape[0] // 2 == bones - arms, kind  # a bone goes with its child joint
    arm_joints = released._scene[10][joints_of("ntu25", [BodyPart.ARMS])]
    drawn = released.skeleton._joints.pos
    assert not any(np.isclose(drawn, point, atol=1e-6).all(axis=1).any() for point in arm_joints)
    assert coloured_pixels(view_pixels(released)) < 0.8 * shown  # the arms' blue and red are gone
    panel.part_actions[BodyPart.LEGS].trigger()
    panel.part_actions[BodyPart.TORSO].trigger()
    assert not released.skeleton._bones.visible() and not released.skeleton._joints.visible()
    for part in BodyPart:
        panel.part_actions[part].trigger()
    panel.markers_action.trigger()  # bones only
    assert released.skeleton._bones.visible() and not released.skeleton._joints.visible()
    c = studio.comparison
    studio.library_panel.select_clip(3)  # the choice holds for the next clip
    qtbot.waitUntil(lambda: c.clips[ViewKind.SOURCE].name == "S01A00V0" and ViewKind.RELEASED in c.clips,
                    timeout=20000)
    settle(qtbot, studio)
    assert released.skeleton._bones.visible() and not released.skeleton._joints.visible()
    panel.markers_action.trigger()
    assert released.skeleton._joints.visible()
