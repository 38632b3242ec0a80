"""Reading back what a GL view shows (for the self-test, the benchmark and the tests)."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QWidget

from ..render_gl.skeleton_view import SkeletonView


def image_array(image: QImage) -> np.ndarray:
    """(H, W, 4) uint8 RGBA copy of a QImage, whatever its device-pixel ratio."""
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    width, height = image.width(), image.height()
    data = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    return data.reshape(height, image.bytesPerLine())[:, : width * 4].reshape(height, width, 4).copy()


def view_pixels(view: SkeletonView) -> np.ndarray:
    """The view's framebuffer (rendered now, in device pixels) as (H, W, 4) uint8."""
    return image_array(view.grabFramebuffer())


#: a pixel whose channels differ this much is a coloured (left/right) bone, not the grey grid or background
SATURATION = 60


def coloured_pixels(pixels: np.ndarray) -> int:
    """How many pixels of an (H, W, 4) image are saturated colour: bones of a body side, sliding feet."""
    rgb = pixels[..., :3].astype(np.int16)
    return int(((rgb.max(axis=-1) - rgb.min(axis=-1)) > SATURATION).sum())


def grab_window(window: QWidget, views: list[SkeletonView]) -> QImage:
    """A screenshot of `window` with the GL `views` painted in.

    `QWidget.grab()` renders the widget tree only; each view is a native GL window in a container, so
    its framebuffer is read back and drawn over its container's rectangle.
    """
    image = window.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    painter = QPainter(image)
    try:
        for view in views:
            if not view.widget.isVisible():
                continue
            origin = view.widget.mapTo(window, QPoint(0, 0))
            painter.drawImage(QRect(origin, view.widget.size()), view.grabFramebuffer())
    finally:
        painter.end()
    return image
