"""A small 2-D drawing of a clip's body (its mean pose seen from the front), painted with QPainter.

Used for the reference clip: what matters there is the body it lends (proportions, posture), which the
mean pose shows at a glance without another GL context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from dtmr.render.style import DEFAULT_STYLE, bone_colours
from dtmr.skeleton import get_topology, mean_pose

if TYPE_CHECKING:
    from dtmr.data.clip import Clip

MARGIN = 6


class SkeletonThumbnail(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setFixedSize(QSize(96, 128))
        self._pose: np.ndarray | None = None
        self._topology = ""

    def set_clip(self, clip: Clip | None) -> None:
        """Show `clip`'s mean pose (None clears the drawing)."""
        if clip is None:
            self._pose = None
        else:
            pose = mean_pose(clip.joints, clip.topology)
            self._pose = pose if np.isfinite(pose).any() else None
            self._topology = clip.topology
        self.update()

    @property
    def has_pose(self) -> bool:
        return self._pose is not None

    def paintEvent(self, _event) -> None:  # noqa: N802
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), QColor(*DEFAULT_STYLE.background))
        if self._pose is None:
            painter.setPen(QColor(*DEFAULT_STYLE.text))
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "no\nreference")
            return
        topo = get_topology(self._topology)
        xy = self._pose[:, :2]
        lo, hi = np.nanmin(xy, axis=0), np.nanmax(xy, axis=0)
        scale = min((self.width() - 2 * MARGIN) / max(hi[0] - lo[0], 1e-3),
                    (self.height() - 2 * MARGIN) / max(hi[1] - lo[1], 1e-3))
        centre = (lo + hi) / 2.0
        px = self.width() / 2.0 + (xy[:, 0] - centre[0]) * scale
        py = self.height() / 2.0 - (xy[:, 1] - centre[1]) * scale  # y up in data, down on screen
        colours = bone_colours(topo)
        for (parent, child), rgb in zip(topo.bones, colours):
            if np.isfinite([px[parent], py[parent], px[child], py[child]]).all():
                painter.setPen(QPen(QColor(*map(int, rgb)), 2.0))
                painter.drawLine(QPointF(px[parent], py[parent]), QPointF(px[child], py[child]))
