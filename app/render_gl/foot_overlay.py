"""Foot-sliding overlay: contact joints coloured by sliding speed, and a fading trail of each foot.

On a frame where a contact joint (ankle or toe) touches the ground it gets a marker coloured by its
horizontal speed on the export's colour map (green = planted, magenta = sliding at `Style.sliding_max`
m/s or more). Each foot's toe leaves a trail over the last `trail_length` frames: segments on contact
frames take the sliding colour, airborne segments are grey, and older segments fade out.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph.opengl as gl

from ..core.foot_sliding import FootSliding
from .palette import sliding_colours

MARKER_SIZE = 13.0
TRAIL_WIDTH = 2.5
DEFAULT_TRAIL = 30


class FootSlidingOverlay:
    def __init__(self, view: gl.GLViewWidget) -> None:
        self._markers = gl.GLScatterPlotItem(size=MARKER_SIZE, pxMode=True, glOptions="translucent")
        self._trail = gl.GLLinePlotItem(mode="lines", width=TRAIL_WIDTH, antialias=True, glOptions="translucent")
        view.addItem(self._trail)
        view.addItem(self._markers)
        self.trail_length = DEFAULT_TRAIL
        self.enabled = True
        self._loaded = False
        self._feet = np.zeros((1, 0, 3), dtype=np.float32)
        self._contacts = np.zeros((1, 0), dtype=bool)
        self._rgba = np.zeros((1, 0, 4), dtype=np.float32)
        self._toes = np.zeros(0, dtype=np.int64)
        self._hide()

    def set_clip(self, scene_joints: np.ndarray, sliding: FootSliding) -> None:
        columns = {j: c for c, j in enumerate(sliding.contact_joints)}
        self._feet = np.asarray(scene_joints, dtype=np.float32)[:, list(sliding.contact_joints)]
        self._contacts = sliding.contacts
        self._rgba = sliding_colours(sliding.speeds)
        self._toes = np.array([columns[foot[-1]] for foot in sliding.feet], dtype=np.int64)
        self._loaded = True

    def clear(self) -> None:
        self._loaded = False
        self._hide()

    def set_trail_length(self, frames: int) -> None:
        self.trail_length = max(int(frames), 0)

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = bool(enabled)
        if not self.enabled:
            self._hide()

    def set_frame(self, frame: int) -> None:
        if not (self.enabled and self._loaded):
            self._hide()
            return
        touching = self._contacts[frame] & np.isfinite(self._feet[frame]).all(axis=1)
        self._markers.setData(pos=self._feet[frame][touching], color=self._rgba[frame][touching])
        self._markers.setVisible(bool(touching.any()))
        self._set_trail(frame)

    def _set_trail(self, frame: int) -> None:
        start = max(frame - self.trail_length, 0)
        if frame <= start:
            self._trail.setVisible(False)
            return
        toes = self._feet[start : frame + 1][:, self._toes]  # (K + 1, feet, 3)
        heads, tails = toes[1:], toes[:-1]
        rgba = self._rgba[start + 1 : frame + 1][:, self._toes].copy()  # (K, feet, 4)
        age = np.arange(1, frame - start + 1, dtype=np.float32) / (frame - start)
        rgba[..., 3] = age[:, None]
        valid = np.isfinite(heads).all(axis=-1) & np.isfinite(tails).all(axis=-1)
        segments = np.stack([tails[valid], heads[valid]], axis=1).reshape(-1, 3)
        colours = np.repeat(rgba[valid], 2, axis=0)
        self._trail.setData(pos=segments, color=colours)
        self._trail.setVisible(bool(valid.any()))

    def _hide(self) -> None:
        self._markers.setVisible(False)
        self._trail.setVisible(False)
