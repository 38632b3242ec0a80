"""`SkeletonView`: an OpenGL view of one clip (skeleton, foot overlay, ground grid).

It is pyqtgraph's `GLViewMixin` (orbit camera, item tree, mouse controls) on a `QOpenGLWindow`, put into
the widget tree with `QWidget.createWindowContainer` (`view.widget`), rather than a `GLViewWidget`
(a QOpenGLWidget). A QOpenGLWidget makes Qt compose the whole top-level window through OpenGL on every
repaint of any widget; with a software renderer (Mesa llvmpipe, Xvfb, remote desktops) a label or
slider update then costs ~25 ms and a played frame ~120 ms, stalling the event loop. A native GL window
renders on its own (~3 ms per view) and raster widgets repaint without OpenGL (`dtmr bench studio`).
The window never takes keyboard focus, so the transport shortcuts keep working after a click in a view.
It shares the global OpenGL context (`Qt.AA_ShareOpenGLContexts`), as pyqtgraph's items cache their
shader programs across views.

GL items are created in `initializeGL`, once the view has a context (pyqtgraph #1871); a clip given
before that is kept and applied then.

Ownership: the view is created in Python, so Python owns it, but its container deletes it too. Whoever
creates views calls `dispose()` before their container goes away (the main window does when it
closes); otherwise the window would be deleted twice. The camera presets are those of the exported videos
(`dtmr.render.camera.PRESETS`: front = the sensor's viewpoint, side, top, oblique), converted to
pyqtgraph's orbit angles; the home camera looks from the export's default direction.
Presets keep the current centre and distance and change only the direction.
Any camera move emits `camera_changed` so `CameraLink` can mirror it; a move by the user (orbit, pan, zoom,
a preset) also sets `moved_by_user` until the camera is framed again.

Framing (`frame`): the home camera looks at the centre of given bounds (all frames of the clip, or of all
three views' clips: `ViewsPanel` decides) from far enough that the sphere around them fits the view from any
direction, with a margin. The field of view spans the view's shorter side (pyqtgraph's spans its width), so
the fit holds at any window size and aspect without framing again. `set_clip` frames by itself only a view
never framed before; `ViewsPanel` decides when a shown clip is framed again (docs/studio.md, Cameras).

Visibility: `set_visibility` hides body parts (`dtmr.skeleton.body_parts`: arms, legs, torso and head) and the
joint markers, in the clip and its ghost; it holds for every clip the view shows next.

Overlay mode: `set_ghost` draws a second clip (the source) translucent under this one, at the same frame.
Hovering with no button held emits `joint_hovered(joint)`: the joint of the shown frame nearest to the
mouse within `picking.PICK_RADIUS` pixels, or -1 when none (also when the mouse leaves).
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph.opengl as gl
import shiboken6
from OpenGL import GL
from pyqtgraph.opengl.GLViewWidget import GLViewMixin
from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QMatrix4x4, QOpenGLContext, QVector3D
from PySide6.QtOpenGL import QOpenGLWindow
from PySide6.QtWidgets import QWidget

from dtmr.render.camera import DEFAULT_PRESET
from dtmr.render.camera import PRESETS as EXPORT_PRESETS
from dtmr.render.ground import ground_level
from dtmr.skeleton.body_parts import BodyPart, joints_of

from ..core.foot_sliding import FootSliding
from .coordinates import to_scene
from .foot_overlay import FootSlidingOverlay
from .palette import BACKGROUND, GHOST_RGBA, GRID
from .picking import nearest_point, project
from .skeleton_item import SkeletonItem



def orbit_angles(export_azimuth: float, export_elevation: float) -> tuple[float, float]:
    """An export camera direction as pyqtgraph (elevation, azimuth).

    The export's eye at azimuth θ sits towards (sin θ, ·, -cos θ) in data space (θ = 0: the sensor);
    in the scene (x, -z, y) that is (sin θ, cos θ) on the floor, i.e. pyqtgraph azimuth 90° - θ.
    """
    return export_elevation, 90.0 - export_azimuth


#: (elevation, azimuth) of pyqtgraph's camera for each export preset
PRESETS = {name: orbit_angles(*angles) for name, angles in EXPORT_PRESETS.items()}
HOME = PRESETS[DEFAULT_PRESET]
MIN_DISTANCE = 1.5
#: the radius of the framed bounds' sphere times this fills the view's shorter side
FRAMING_MARGIN = 1.12
GRID_SPACING = 0.5


class SkeletonView(GLViewMixin, QOpenGLWindow):
    camera_changed = Signal()
    joint_hovered = Signal(int)

    def __init__(self) -> None:
        super().__init__(QOpenGLContext.globalShareContext(), QOpenGLWindow.UpdateBehavior.NoPartialUpdate)
        self.setFlag(Qt.WindowType.WindowDoesNotAcceptFocus)
        self.setBackgroundColor(BACKGROUND)
        #: the QWidget standing for this view in layouts (it owns the window)
        self.widget = QWidget.createWindowContainer(self)
        self.widget.setMinimumSize(160, 160)
        self.skeleton: SkeletonItem | None = None
        self.feet: FootSlidingOverlay | None = None
        self.ghost: SkeletonItem | None = None
        self._ghost_scene: np.ndarray | None = None
        self._ghost_topology = ""
        #: the joint under the mouse (-1: none)
        self.hovered_joint = -1
        self._grid: gl.GLGridItem | None = None
        self._scene: np.ndarray | None = None
        self._topology = ""
        self._sliding: FootSliding | None = None
        self._joint_colours: np.ndarray | None = None
        self._frame = 0
        self._feet_enabled = True
        #: the body parts left out, and whether joint markers are drawn
        self.hidden_parts: frozenset[BodyPart] = frozenset()
        self.markers = True
        self._trail_length: int | None = None
        self.home_center = QVector3D(0, 0, 1)
        self.home_distance = 4.0
        #: the scene bounds (lo, hi) of the last framing (None: never framed)
        self.framed: tuple[np.ndarray, np.ndarray] | None = None
        #: the camera was moved by the user since the last framing
        self.moved_by_user = False
        self._ground = 0.0
        self._grid_size = 4.0

    # --- GL lifetime -----------------------------------------------------------------------------
    def devicePixelRatioF(self) -> float:  # noqa: N802 (GLViewMixin asks widgets for it)
        return self.devicePixelRatio()

    def paintGL(self) -> None:  # noqa: N802
        # unlike QOpenGLWidget, QOpenGLWindow does not set the viewport after a resize
        GL.glViewport(0, 0, self.deviceWidth(), self.deviceHeight())
        super().paintGL()

    def initializeGL(self) -> None:
        super().initializeGL()
        if self.skeleton is None:
            self._grid = gl.GLGridItem(color=GRID)
            self._grid.setSpacing(GRID_SPACING, GRID_SPACING, 1)
            self.addItem(self._grid)
            self.ghost = SkeletonItem(self, ghost_rgba=GHOST_RGBA)
            self.skeleton = SkeletonItem(self)
            self.feet = FootSlidingOverlay(self)
            self.feet.set_enabled(self._feet_enabled)
            if self._trail_length is not None:
                self.feet.set_trail_length(self._trail_length)
            self._apply_ghost()
            self._apply_clip()

    @property
    def ready(self) -> bool:
        return self.skeleton is not None

    def dispose(self) -> None:
        """Take the GL window out of its container and delete it; safe to call twice."""
        if shiboken6.isValid(self):
            self.setParent(None)  # the container forgets a window that leaves it
            shiboken6.delete(self)

    # --- content ---------------------------------------------------------------------------------
    def set_clip(self, joints: np.ndarray | None, topology: str = "", sliding: FootSliding | None = None) -> None:
        """Show a (T, J, 3) data-space clip (None clears the view), keeping the camera unless the view was never
        framed (then its own bounds frame it)."""
        self._scene = None if joints is None else to_scene(joints)
        self._topology = topology
        self._set_hovered(-1)
        self._sliding = sliding
        self._joint_colours = None  # per-joint colours belong to the clip they were made for
        if self._scene is not None:
            self._frame = min(self._frame, len(self._scene) - 1)
            self._ground = ground_level([joints], [topology])  # the export's floor height (data y = scene z)
            if self.framed is None:
                self.frame(*self.clip_bounds())
        self._apply_clip()

    def clip_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lo, hi) scene coordinates over every frame of the clip shown (a unit box without a tracked joint)."""
        points = np.zeros((0, 3)) if self._scene is None else self._scene.reshape(-1, 3)
        points = points[np.isfinite(points).all(axis=1)]
        if not len(points):
            return np.zeros(3), np.ones(3)
        return points.min(axis=0).astype(np.float64), points.max(axis=0).astype(np.float64)

    def frame(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Make the scene box (lo, hi) the home camera's subject and go home (see the module's docstring)."""
        lo, hi = np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)
        radius = float(np.linalg.norm(hi - lo)) / 2.0
        half_fov = math.radians(self.opts["fov"]) / 2.0
        self.home_center = QVector3D(*map(float, (lo + hi) / 2.0))
        self.home_distance = max(MIN_DISTANCE, FRAMING_MARGIN * radius / math.sin(half_fov))
        self._grid_size = max(4.0, 2.0 * math.ceil(float(np.max(hi - lo))))
        self.framed = (lo, hi)
        self._place_grid()
        self.reset_camera()

    def set_ghost(self, joints: np.ndarray | None, topology: str = "") -> None:
        """Draw the (T, J, 3) data-space clip `joints` translucent under this view's clip (None: no ghost).

        It keeps this view's camera and frame (frame numbers past its end show its last frame)."""
        self._ghost_scene = None if joints is None else to_scene(joints)
        self._ghost_topology = topology
        self._apply_ghost()
        if self.ready:
            self.show_frame(self._frame)

    def _apply_ghost(self) -> None:
        if not self.ready:
            return
        if self._ghost_scene is None:
            self.ghost.set_visible(False)
        else:
            self.ghost.set_clip(self._ghost_scene, self._ghost_topology)
            self._apply_visibility()

    def show_frame(self, frame: int) -> None:
        self._frame = frame
        if self.ready and self._scene is not None:
            self.skeleton.set_frame(frame)
            self.feet.set_frame(frame)
            if self._ghost_scene is not None:
                self.ghost.set_frame(min(frame, len(self._ghost_scene) - 1))
            self.update()

    # --- hovering --------------------------------------------------------------------------------
    def joint_pixels(self) -> np.ndarray:
        """(J, 2) positions of the shown frame's joints in this view's logical pixels (NaN: missing)."""
        if self._scene is None:
            return np.zeros((0, 2))
        viewport = (0, 0, self.deviceWidth(), self.deviceHeight())
        mvp = self.projectionMatrix(viewport, viewport) * self.viewMatrix()
        matrix = np.array(mvp.data(), dtype=np.float64).reshape(4, 4).T  # Qt stores column-major
        return project(self._scene[self._frame], matrix, self.width(), self.height())

    def joint_position(self, joint: int) -> np.ndarray:
        """Data-space (x, y, z) of `joint` on the shown frame (metres, the clip's own coordinates)."""
        x, y, z = self._scene[self._frame, joint]
        return np.array([x, z, -y])  # the inverse of `to_scene`

    def mouseMoveEvent(self, ev) -> None:  # noqa: N802
        super().mouseMoveEvent(ev)
        if ev.buttons() == Qt.MouseButton.NoButton:
            position = ev.position()
            joint = nearest_point(self.joint_pixels(), position.x(), position.y())
            self._set_hovered(-1 if joint is None else joint)

    def event(self, ev) -> bool:
        if ev.type() == QEvent.Type.Leave:
            self._set_hovered(-1)
        return super().event(ev)

    def _set_hovered(self, joint: int) -> None:
        if joint != self.hovered_joint:
            self.hovered_joint = joint
            self.joint_hovered.emit(joint)

    def set_joint_colours(self, rgba: np.ndarray | None) -> None:
        """(J, 4) RGBA per joint of the clip shown (the Privacy panel's reliance), or None: side colours."""
        self._joint_colours = None if rgba is None else np.asarray(rgba, dtype=np.float32)
        if self.ready and self._scene is not None:
            self.skeleton.set_joint_colours(self._joint_colours)
            self.show_frame(self._frame)

    def set_visibility(self, hidden_parts, markers: bool) -> None:
        """Leave out the body parts `hidden_parts` (bones and joints); `markers`: draw the joints as points."""
        self.hidden_parts, self.markers = frozenset(hidden_parts), bool(markers)
        self._apply_visibility()
        if self.ready:
            self.show_frame(self._frame)

    def _apply_visibility(self) -> None:
        if not self.ready:
            return
        for item, topology in ((self.skeleton, self._topology), (self.ghost, self._ghost_topology)):
            if topology:
                item.set_hidden(joints_of(topology, self.hidden_parts), self.markers)

    def set_feet_enabled(self, enabled: bool) -> None:
        self._feet_enabled = enabled
        if self.ready:
            self.feet.set_enabled(enabled)
            self.show_frame(self._frame)

    def set_trail_length(self, frames: int) -> None:
        self._trail_length = frames
        if self.ready:
            self.feet.set_trail_length(frames)
            self.show_frame(self._frame)

    def _apply_clip(self) -> None:
        if not self.ready:
            return
        if self._scene is None:
            self.skeleton.set_visible(False)
            self.feet.clear()
            self.update()
            return
        self.skeleton.set_clip(self._scene, self._topology)
        self._apply_visibility()
        if self._joint_colours is not None:
            self.skeleton.set_joint_colours(self._joint_colours)
        if self._sliding is not None:
            self.feet.set_clip(self._scene, self._sliding)
        else:
            self.feet.clear()
        self._frame = min(self._frame, len(self._scene) - 1)
        self._place_grid()
        self.show_frame(self._frame)

    def _place_grid(self) -> None:
        if self._grid is None or self._scene is None:
            return
        self._grid.setSize(self._grid_size, self._grid_size, 1)
        self._grid.resetTransform()
        c = self.home_center
        self._grid.translate(c.x(), c.y(), self._ground)

    # --- camera ----------------------------------------------------------------------------------
    def projectionMatrix(self, region, viewport):  # noqa: N802 (pyqtgraph naming)
        """pyqtgraph's frustum with the field of view across the shorter side, not always the width."""
        x0, y0, w, h = viewport
        dist = self.opts["distance"]
        near, far = dist * 0.001, dist * 1000.0
        half = near * math.tan(0.5 * math.radians(self.opts["fov"]))
        r, t = (half, half * h / w) if w <= h else (half * w / h, half)
        left = r * ((region[0] - x0) * (2.0 / w) - 1)
        right = r * ((region[0] + region[2] - x0) * (2.0 / w) - 1)
        bottom = t * ((region[1] - y0) * (2.0 / h) - 1)
        top = t * ((region[1] + region[3] - y0) * (2.0 / h) - 1)
        matrix = QMatrix4x4()
        matrix.frustum(left, right, bottom, top, near, far)
        return matrix

    def reset_camera(self) -> None:
        self.setCameraPosition(pos=QVector3D(self.home_center), distance=self.home_distance,
                               elevation=HOME[0], azimuth=HOME[1])
        self.moved_by_user = False

    def apply_preset(self, name: str) -> None:
        elevation, azimuth = PRESETS[name]
        self.setCameraPosition(elevation=elevation, azimuth=azimuth)
        self.moved_by_user = True

    def setCameraPosition(self, *args, **kwargs) -> None:  # noqa: N802 (Qt naming)
        super().setCameraPosition(*args, **kwargs)
        self.camera_changed.emit()

    def orbit(self, azim, elev) -> None:
        self.moved_by_user = True
        super().orbit(azim, elev)
        self.camera_changed.emit()

    def pan(self, dx, dy, dz, relative="global") -> None:
        self.moved_by_user = True
        super().pan(dx, dy, dz, relative)
        self.camera_changed.emit()

    def wheelEvent(self, ev) -> None:  # noqa: N802
        self.moved_by_user = True
        super().wheelEvent(ev)
        self.camera_changed.emit()
