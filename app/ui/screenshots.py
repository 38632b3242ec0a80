"""Reading back what a GL view shows (for the self-test, the benchmark, the tests and the screenshot key).

The screenshot key (P) writes the three views, with their titles and notes, as a PNG named after the
source clip and the frame (``S001A002_frame0012.png``, ``…_2.png`` if taken twice) into the folder of the
`screenshot_dir` setting, by default "DTMR Studio" in the user's Pictures folder (home if there is none).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
from PySide6.QtCore import QPoint, QRect, QStandardPaths
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QWidget

from dtmr.io.outputs import unused_path

from ..render_gl.skeleton_view import SkeletonView


def image_array(image: QImage) -> np.ndarray:
    """(H, W, 4) uint8 RGBA copy of a QImage, whatever its device-pixel ratio."""
    image = image.convertToFormat(QImage.Format.Format_RGBA8888)
    width, height = image.width(), image.height()
    data = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    return data.reshape(height, image.bytesPerLine())[:, : width * 4].reshape(height, width, 4).copy()


def render_now(view: SkeletonView) -> QImage:
    """What the view shows now, drawn and read back.

    `QOpenGLWindow.grabFramebuffer` reads the framebuffer as it is: without a paint first it holds the
    last frame drawn by the event loop, which lags a frame change made just before."""
    if view.isValid():
        view.makeCurrent()
        view.paintGL()
    return view.grabFramebuffer()


def view_pixels(view: SkeletonView) -> np.ndarray:
    """The view's framebuffer (rendered now, in device pixels) as (H, W, 4) uint8."""
    return image_array(render_now(view))


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
            painter.drawImage(QRect(origin, view.widget.size()), render_now(view))
    finally:
        painter.end()
    return image


def default_screenshot_dir() -> Path:
    pictures = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.PicturesLocation)
    return Path(pictures or Path.home()) / "DTMR Studio"


def screenshot_path(folder: Path, clip_name: str, frame: int) -> Path:
    """A new file in `folder` for clip `clip_name` at 0-based `frame` (never one that exists)."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", clip_name).strip("._") or "studio"
    return unused_path(folder, f"{stem}_frame{frame + 1:04d}", ".png")


def save_screenshot(panel: QWidget, views: list[SkeletonView], folder: Path, clip_name: str, frame: int) -> Path:
    """Write `panel` with its GL `views` painted in as a PNG; OSError with the path when it cannot be written."""
    folder.mkdir(parents=True, exist_ok=True)
    path = screenshot_path(folder, clip_name, frame)
    if not grab_window(panel, views).save(str(path), "PNG"):
        raise OSError(f"{path}: the screenshot could not be written")
    return path
