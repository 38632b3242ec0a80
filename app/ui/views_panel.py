"""The three synchronized 3-D views (source, retargeted, released) and their camera/overlay toolbar.

When the model views cannot be made (`Comparison.unavailable`: no retargeting checkpoint, no
reference), each of them is replaced by a message saying why and what to do, in the view's own place.
Overlay mode draws the source translucent under the released clip, in the released view. Hovering a
joint in any view emits `hover_text`: the view, the joint's name and its coordinates on the shown frame.
Under each view one line says what it shows (clip, or method, β and reference); the tooltip has the rest
(the checkpoint's training options, frames, foot sliding). The β slider sits under the released view.

Visibility (napari's layer eye, aitviewer's per-node show): each view can be hidden (the others share its width;
the last one shown cannot be), and in every view the arms, the legs, the torso and head, and the joint markers
(bones kept) can be hidden. The checkable actions (`visibility_actions`) sit in the toolbar's *Show* menu and in
View ▸ Show (`fill_show_menu`); they last for the session.

Cameras (docs/studio.md): a clip is framed over all its frames (all three views' clips together while the
cameras are linked, so the three show one scale). Switching the model, the reference or β keeps every camera.
Another source clip (or the model views' first arrival for it) frames again only when the user has not moved
the camera since the last framing and the clips no longer fit the framed box or are much smaller than it;
Reset (R) always frames again.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QMenu,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

import numpy as np

from dtmr import methods
from dtmr.render.style import DEFAULT_STYLE
from dtmr.skeleton import get_topology
from dtmr.skeleton.body_parts import BodyPart

from ..core.provenance import shown_provenance
from ..render_gl.camera_link import CameraLink
from ..render_gl.skeleton_view import PRESETS, SkeletonView
from ..state.comparison import VIEWS, Comparison, ViewKind
from .beta_slider import BetaSlider
from .elided_label import ElidedLabel

SUBTITLES = {
    ViewKind.SOURCE: "the input clip",
    ViewKind.RETARGETED: "full decoder output D(source action, reference body)",
    ViewKind.RELEASED: "β-blended output of the selected model",
}
MODEL_VIEWS = (ViewKind.RETARGETED, ViewKind.RELEASED)
#: stack pages of a model view
VIEW_PAGE, MESSAGE_PAGE = 0, 1
#: clips still fit the framed box when they stay within it grown by this part of its diagonal
FIT_SLACK = 0.05
#: clips whose box is under this part of the framed box's diagonal are framed again (closer)
SMALLER = 0.6


class ViewsPanel(QWidget):
    #: the joint under the mouse, as a line for the status bar ("" when none)
    hover_text = Signal(str)

    def __init__(self, comparison: Comparison, parent=None) -> None:
        super().__init__(parent)
        self.comparison = comparison
        self.views = {kind: SkeletonView() for kind in VIEWS}
        self.titles = {kind: QLabel() for kind in VIEWS}
        self.notes = {kind: ElidedLabel() for kind in VIEWS}
        self.beta = BetaSlider(comparison)
        self.messages = {kind: self._message_label() for kind in MODEL_VIEWS}
        self.stacks: dict[ViewKind, QStackedWidget] = {}
        for kind in MODEL_VIEWS:
            stack = QStackedWidget()
            stack.addWidget(self.views[kind].widget)
            stack.addWidget(self.messages[kind])
            self.stacks[kind] = stack
        self.link = CameraLink([self.views[k] for k in VIEWS])
        self._held: dict[ViewKind, bool] = {}
        self._shown: dict[ViewKind, object] = {}
        #: the view whose joints show the Privacy panel's reliance colours, if any
        self.reliance_view: ViewKind | None = None
        #: overlay mode: the source drawn under the released clip
        self.overlay = False
        self._hover: tuple[ViewKind, int] | None = None
        self.disposed = False
        for kind, view in self.views.items():
            view.joint_hovered.connect(lambda joint, k=kind: self._joint_hovered(k, joint))

        grid = QGridLayout()
        grid.setSpacing(4)
        self._grid = grid
        for column, kind in enumerate(VIEWS):
            # labels must not widen their column: the views share the width equally, so the same
            # camera shows the same scale in each (pyqtgraph's field of view is horizontal)
            self.titles[kind].setWordWrap(True)
            self.titles[kind].setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            self.titles[kind].setTextFormat(Qt.TextFormat.RichText)
            grid.addWidget(self.titles[kind], 0, column)
            grid.addWidget(self.stacks[kind] if kind in self.stacks else self.views[kind].widget, 1, column)
            grid.addWidget(self.notes[kind], 2, column)
            grid.setColumnStretch(column, 1)
        self.beta.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        grid.addWidget(self.beta, 3, VIEWS.index(ViewKind.RELEASED))
        grid.setRowStretch(1, 1)

        self.link_box = QCheckBox("Link cameras")
        self.link_box.setChecked(True)
        self.link_box.toggled.connect(self.set_linked)
        self.preset_buttons = {}
        toolbar = QHBoxLayout()
        toolbar.addWidget(self.link_box)
        for name in PRESETS:
            button = QToolButton()
            button.setText(name.capitalize())
            button.setToolTip(f"{name.capitalize()} camera")
            button.clicked.connect(lambda _c=False, n=name: self.apply_preset(n))
            self.preset_buttons[name] = button
            toolbar.addWidget(button)
        self.reset_button = QToolButton()
        self.reset_button.setText("Reset")
        self.reset_button.setToolTip("Frame each clip again")
        self.reset_button.clicked.connect(self.reset_cameras)
        toolbar.addWidget(self.reset_button)
        self.view_actions = {kind: self._toggle(f"{kind.title} view", self._views_shown_changed) for kind in VIEWS}
        self.part_actions = {part: self._toggle(part.title, self._parts_changed) for part in BodyPart}
        self.markers_action = self._toggle("Joint markers", self._parts_changed)
        self.show_menu = QMenu("Show", self)
        self.fill_show_menu(self.show_menu)
        self.show_button = QToolButton()
        self.show_button.setText("Show")
        self.show_button.setToolTip("Show or hide views, body parts and joint markers")
        self.show_button.setMenu(self.show_menu)
        self.show_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        toolbar.addWidget(self.show_button)
        self.feet_box = QCheckBox("Foot sliding")
        self.feet_box.setChecked(True)
        self.feet_box.setToolTip("Contact joints coloured by sliding speed (green planted, magenta sliding)")
        self.feet_box.toggled.connect(self.set_feet_enabled)
        self.trail_box = QSpinBox()
        self.trail_box.setRange(0, 300)
        self.trail_box.setSuffix(" frames")
        self.trail_box.setPrefix("trail ")
        self.trail_box.setValue(30)
        self.trail_box.valueChanged.connect(self.set_trail_length)
        self.overlay_box = QCheckBox("Source under released")
        self.overlay_box.setToolTip("Overlay mode: the source clip drawn translucent (teal) under the released one (G)")
        self.overlay_box.toggled.connect(self.set_overlay)
        toolbar.addStretch(1)
        # two rows, so that the views' column fits a 1366-pixel screen beside the docks
        overlays = QHBoxLayout()
        overlays.addWidget(self.feet_box)
        overlays.addWidget(self.trail_box)
        overlays.addWidget(self.overlay_box)
        overlays.addStretch(1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addLayout(grid, 1)
        layout.addLayout(toolbar)
        layout.addLayout(overlays)
        comparison.clips_changed.connect(self.refresh_clips)
        self.refresh_clips()

    def dispose(self) -> None:
        """Delete the GL windows before this panel is destroyed (see `SkeletonView.dispose`)."""
        if self.disposed:
            return
        self.disposed = True
        self.comparison.clips_changed.disconnect(self.refresh_clips)
        for view in self.views.values():
            view.dispose()

    def _toggle(self, text: str, slot) -> QAction:
        action = QAction(text, self)
        action.setCheckable(True)
        action.setChecked(True)
        action.toggled.connect(lambda _on: slot())
        return action

    def visibility_actions(self) -> list[QAction]:
        """The checkable show/hide actions: the three views, the body parts, the joint markers."""
        return [*self.view_actions.values(), *self.part_actions.values(), self.markers_action]

    def fill_show_menu(self, menu: QMenu) -> None:
        """Put the show/hide actions into `menu` (the toolbar's *Show*, View ▸ Show): views, then body parts."""
        menu.addActions(list(self.view_actions.values()))
        menu.addSeparator()
        menu.addActions([*self.part_actions.values(), self.markers_action])

    def _views_shown_changed(self) -> None:
        shown = [kind for kind, action in self.view_actions.items() if action.isChecked()]
        for kind, action in self.view_actions.items():
            visible = kind in shown
            action.setEnabled(not (visible and len(shown) == 1))  # the last view shown stays
            for widget in (self.titles[kind], self.stacks.get(kind, self.views[kind].widget), self.notes[kind]):
                widget.setVisible(visible)
            self._grid.setColumnStretch(VIEWS.index(kind), 1 if visible else 0)
        self.beta.setVisible(ViewKind.RELEASED in shown)

    def _parts_changed(self) -> None:
        hidden = {part for part, action in self.part_actions.items() if not action.isChecked()}
        for view in self.views.values():
            view.set_visibility(hidden, self.markers_action.isChecked())

    @staticmethod
    def _message_label() -> QLabel:
        label = QLabel()
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setWordWrap(True)
        label.setMinimumSize(160, 160)
        label.setMargin(16)
        background = "rgb({}, {}, {})".format(*DEFAULT_STYLE.background)
        text = "rgb({}, {}, {})".format(*DEFAULT_STYLE.text)
        label.setStyleSheet(f"QLabel {{ background: {background}; color: {text}; font-size: 15px; }}")
        return label

    # --- content ---------------------------------------------------------------------------------
    def refresh_clips(self) -> None:
        """Load the comparison's clips into the views; frame them again as the module's docstring says."""
        c = self.comparison
        reframe = False
        for kind in VIEWS:
            clip = c.clips.get(kind)
            before = self._shown.get(kind)
            if clip is before:
                continue  # e.g. the source when the model's views arrive
            # another source clip, or the model views' first clips for it; never another model, reference or β
            reframe |= clip is not None and (kind is ViewKind.SOURCE or before is None)
            self._shown[kind] = clip
            if kind is self.reliance_view:
                self.reliance_view = None  # a new clip drops the colours (`SkeletonView.set_clip`)
            if clip is None:
                self.views[kind].set_clip(None)
            else:
                self.views[kind].set_clip(clip.joints, clip.topology, c.feet.get(kind))
        for kind in MODEL_VIEWS:
            self.messages[kind].setText(c.unavailable)
            self.stacks[kind].setCurrentIndex(MESSAGE_PAGE if c.unavailable else VIEW_PAGE)
        if reframe:
            self._frame_views(force=False)
        if self.link.enabled:
            self.link.set_enabled(True, leader=self.views[ViewKind.SOURCE])
        self._apply_overlay()
        self._held = {}
        self.refresh_titles()

    def show_frame(self, frame: int) -> None:
        if self.disposed:
            return
        held_changed = False
        for kind in VIEWS:
            index = self.comparison.frame_of(kind, frame)
            if index is None:
                continue
            self.views[kind].show_frame(index)
            held = index < frame
            if self._held.get(kind) != held:
                self._held[kind] = held
                held_changed = True
        if held_changed:
            self.refresh_titles()
        if self._hover is not None:  # the hovered joint moves with the frame
            self._joint_hovered(*self._hover)

    def refresh_titles(self) -> None:
        c = self.comparison
        for kind in VIEWS:
            clip = c.clips.get(kind)
            held = " <i>(holding its last frame)</i>" if self._held.get(kind) else ""
            reliance = " <i>(joint colours: the attacker's reliance)</i>" if kind is self.reliance_view else ""
            self.titles[kind].setText(f"<b>{kind.title}</b> — {SUBTITLES[kind]}{held}{reliance}")
            if clip is None:
                caption = "No clip selected." if kind is ViewKind.SOURCE else "" if c.unavailable else c.status
                self.notes[kind].set_caption(caption)
                continue
            sliding = c.feet[kind].mean if kind in c.feet else float("nan")
            facts = f"{clip.name} · {clip.num_frames} frames · foot sliding {sliding:.3f} m/s"
            if kind is ViewKind.SOURCE:
                caption, details = facts, ""
            else:
                caption, details = self._model_caption(kind, clip), "\n".join(filter(None, [facts, c.model_note]))
            if kind is self.reliance_view:
                details += "\nJoint colours: the attacker's reliance (Privacy panel)"
            self.notes[kind].set_caption(caption, details.strip())

    def _model_caption(self, kind: ViewKind, clip) -> str:
        """One line: the method, the β and the reference (the checkpoint's options go to the tooltip)."""
        c = self.comparison
        made = shown_provenance(clip)
        name = "" if made is None else made.method
        method = methods.display_name(name) if methods.is_method(name) else (name or "model")
        if kind is ViewKind.RETARGETED:
            beta = "full retarget"
        elif c.beta_differs:
            beta = f"β {c.shown_beta:.2f} (model {c.model_beta:g})"
        else:
            shown = c.shown_beta if c.shown_beta is not None else None if made is None else made.beta
            beta = "β ?" if shown is None else f"β {shown:g}"
        reference = f"ref {c.reference.name}" if c.reference is not None else ""
        return " · ".join(filter(None, [method, beta, reference]))

    def show_reliance(self, kind: ViewKind | None, rgba=None) -> None:
        """Colour the joints of view `kind` with (J, 4) `rgba`; every other view (or all, for None) plain."""
        if self.disposed:
            return
        for view_kind, view in self.views.items():
            view.set_joint_colours(rgba if view_kind is kind else None)
        self.reliance_view = kind if rgba is not None else None
        self.refresh_titles()

    def _joint_hovered(self, kind: ViewKind, joint: int) -> None:
        clip = self.comparison.clips.get(kind)
        if joint < 0 or clip is None:
            self._hover = None
            self.hover_text.emit("")
            return
        self._hover = (kind, joint)
        x, y, z = self.views[kind].joint_position(joint)
        name = get_topology(clip.topology).joint_names[joint]
        self.hover_text.emit(f"{kind.title}: joint {joint} {name} at x {x:+.3f}, y {y:+.3f}, z {z:+.3f} m")

    # --- cameras and overlays --------------------------------------------------------------------
    def set_overlay(self, enabled: bool) -> None:
        """Overlay mode on or off (the View menu's toggle and the toolbar box both come here)."""
        self.overlay_box.blockSignals(True)
        self.overlay_box.setChecked(enabled)
        self.overlay_box.blockSignals(False)
        self.overlay = bool(enabled)
        self._apply_overlay()

    def _apply_overlay(self) -> None:
        if self.disposed:
            return
        source = self.comparison.clips.get(ViewKind.SOURCE)
        shown = self.overlay and source is not None and self.comparison.clips.get(ViewKind.RELEASED) is not None
        self.views[ViewKind.RELEASED].set_ghost(source.joints if shown else None, source.topology if shown else "")
    def set_linked(self, linked: bool) -> None:
        self.link_box.blockSignals(True)
        self.link_box.setChecked(linked)
        self.link_box.blockSignals(False)
        self.link.set_enabled(linked, leader=self.views[ViewKind.SOURCE])

    def apply_preset(self, name: str) -> None:
        for kind in VIEWS:
            self.views[kind].apply_preset(name)

    def reset_cameras(self) -> None:
        """Frame the clips shown again and go home (R), whatever the user did with the cameras."""
        self._frame_views(force=True)
        if self.link.enabled:
            self.link.set_enabled(True, leader=self.views[ViewKind.SOURCE])

    def _frame_views(self, force: bool) -> None:
        """Frame each view (all of them together while linked) over all frames of its clips: always when
        `force`, else only when the user has not moved the camera and the clips do not fit the framed box."""
        groups = [VIEWS] if self.link.enabled else [(kind,) for kind in VIEWS]
        for group in groups:
            views = [self.views[k] for k in group]
            shown = [self.views[k] for k in group if self.comparison.clips.get(k) is not None]
            if not shown:
                continue
            bounds = [v.clip_bounds() for v in shown]
            lo, hi = np.min([b[0] for b in bounds], axis=0), np.max([b[1] for b in bounds], axis=0)
            if not force:
                if any(v.moved_by_user for v in views):
                    continue
                if all(v.framed is not None and _fits((lo, hi), v.framed) for v in views):
                    continue
            for view in views:
                view.frame(lo, hi)

    def set_feet_enabled(self, enabled: bool) -> None:
        self.feet_box.blockSignals(True)
        self.feet_box.setChecked(enabled)
        self.feet_box.blockSignals(False)
        for view in self.views.values():
            view.set_feet_enabled(enabled)

    def set_trail_length(self, frames: int) -> None:
        self.trail_box.blockSignals(True)
        self.trail_box.setValue(frames)
        self.trail_box.blockSignals(False)
        for view in self.views.values():
            view.set_trail_length(frames)


def _fits(bounds: tuple[np.ndarray, np.ndarray], framed: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether the box `bounds` lies within the `framed` box (grown by `FIT_SLACK`) and is not much smaller."""
    (lo, hi), (framed_lo, framed_hi) = bounds, framed
    size = float(np.linalg.norm(framed_hi - framed_lo))
    slack = FIT_SLACK * size
    inside = bool(np.all(lo >= framed_lo - slack) and np.all(hi <= framed_hi + slack))
    return inside and float(np.linalg.norm(hi - lo)) >= SMALLER * size
