"""One skeleton in a GL view: bones as a single line item, joints as a single scatter item.

All bones go into one `GLLinePlotItem` in 'lines' mode with per-vertex colours (pyqtgraph #1335: many
line items are slow). A bone with a missing (NaN) end and a missing joint are left out of the frame.
Joints are coloured by body side, or by per-joint colours given with `set_joint_colours` (the Privacy
panel's reliance map); then each bone takes its child joint's colour and joints are drawn larger.
A ghost (overlay mode: the source under the released clip) is a translucent item of one fixed colour,
drawn before the others (a lower depth value) so the opaque skeleton covers it where they overlap.
`set_hidden` leaves out joints (a body part: `dtmr.skeleton.body_parts`) with the bones into them, and can
leave out every joint marker, keeping the bones.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl

from dtmr.skeleton import get_topology

from .palette import bone_colours, joint_colours

BONE_WIDTH = 3.0
JOINT_SIZE = 6.0
#: joints drawn with per-joint colours are this much larger, so their colour reads at a glance
COLOURED_JOINT_SCALE = 2.0


class SkeletonItem:
    def __init__(self, view: gl.GLViewWidget, bone_width: float = BONE_WIDTH, joint_size: float = JOINT_SIZE,
                 ghost_rgba: tuple[float, float, float, float] | None = None) -> None:
        options = "opaque" if ghost_rgba is None else "translucent"
        self._bones = gl.GLLinePlotItem(mode="lines", width=bone_width, antialias=True, glOptions=options)
        self._joints = gl.GLScatterPlotItem(size=joint_size, pxMode=True, glOptions=options)
        self._ghost_rgba = ghost_rgba
        if ghost_rgba is not None:
            self._bones.setDepthValue(-1)
            self._joints.setDepthValue(-1)
        view.addItem(self._bones)
        view.addItem(self._joints)
        self._frames = np.zeros((1, 0, 3), dtype=np.float32)
        self._parents = np.zeros(0, dtype=np.int64)
        self._children = np.zeros(0, dtype=np.int64)
        self._bone_rgba = np.zeros((0, 4), dtype=np.float32)
        self._joint_rgba = np.zeros((0, 4), dtype=np.float32)
        self._side_rgba = (self._bone_rgba, self._joint_rgba)
        self._joint_size = joint_size
        self._num_joints = 0
        self._hidden = np.zeros(0, dtype=bool)
        self.markers = True
        self.joint_colours: np.ndarray | None = None
        self.set_visible(False)

    def set_clip(self, scene_joints: np.ndarray, topology: str) -> None:
        """(T, J, 3) joints already in scene coordinates."""
        topo = get_topology(topology)
        self._frames = np.asarray(scene_joints, dtype=np.float32)
        self._parents, self._children = topo.bone_parents, topo.bone_children
        self._num_joints = topo.num_joints
        self._hidden = np.zeros(topo.num_joints, dtype=bool)
        if self._ghost_rgba is None:
            self._side_rgba = (np.repeat(bone_colours(topo), 2, axis=0).reshape(-1, 2, 4), joint_colours(topo))
        else:
            rgba = np.asarray(self._ghost_rgba, dtype=np.float32)
            self._side_rgba = (np.tile(rgba, (topo.num_bones, 2, 1)), np.tile(rgba, (topo.num_joints, 1)))
        self.set_joint_colours(None)  # colours given for another clip do not carry over

    def set_joint_colours(self, rgba: np.ndarray | None) -> None:
        """(J, 4) float RGBA per joint (bones take their child's), or None for the side colours.

        Takes effect at the next `set_frame`.
        """
        if rgba is None:
            self.joint_colours = None
            self._bone_rgba, self._joint_rgba = self._side_rgba
            self._joints.setData(size=self._joint_size)
            return
        rgba = np.asarray(rgba, dtype=np.float32)
        if rgba.shape != (self._num_joints, 4):
            raise ValueError(f"need ({self._num_joints}, 4) joint colours, got {rgba.shape}")
        self.joint_colours = rgba
        self._joint_rgba = rgba
        self._bone_rgba = np.repeat(rgba[self._children][:, None], 2, axis=1)  # (B, 2, 4)
        self._joints.setData(size=self._joint_size * COLOURED_JOINT_SCALE)

    def set_hidden(self, joints: np.ndarray | None, markers: bool = True) -> None:
        """Leave out the (J,) bool `joints` (None: none) and the bones into them; `markers`: draw the joints.

        Takes effect at the next `set_frame`."""
        self._hidden = np.zeros(self._num_joints, dtype=bool) if joints is None else np.asarray(joints, dtype=bool)
        self.markers = bool(markers)

    def set_frame(self, frame: int) -> None:
        pose = self._frames[frame]
        present = np.isfinite(pose).all(axis=1)
        bones = present[self._parents] & present[self._children] & ~self._hidden[self._children]
        present &= ~self._hidden
        segments = np.stack([pose[self._parents[bones]], pose[self._children[bones]]], axis=1)
        self._bones.setData(pos=segments.reshape(-1, 3), color=self._bone_rgba[bones].reshape(-1, 4))
        self._joints.setData(pos=pose[present], color=self._joint_rgba[present])
        self._bones.setVisible(bool(bones.any()))
        self._joints.setVisible(self.markers and bool(present.any()))

    def set_visible(self, visible: bool) -> None:
        self._bones.setVisible(visible)
        self._joints.setVisible(visible)
