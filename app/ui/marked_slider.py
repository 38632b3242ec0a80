"""The timeline's scrubbing slider with marked frame ranges drawn along its groove (review flags).

`set_marked(ranges)` takes inclusive 0-based frame ranges; each is drawn as a band from half a frame before
its first frame to half a frame after its last, at the slider's own value-to-pixel mapping, so a band sits
exactly under the handle positions of the frames it covers: over the groove, under the handle.
"""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSlider, QStyle, QStyleOptionSlider, QStylePainter


class MarkedSlider(QSlider):
    #: the colour of a flagged range (the review's "implausible" red)
    FLAG_COLOUR = QColor(214, 39, 40)
    #: the band's height, centred on the groove
    BAND_HEIGHT = 6

    def __init__(self, orientation, parent=None) -> None:
        super().__init__(orientation, parent)
        self._marked: list[tuple[int, int]] = []

    def set_marked(self, ranges) -> None:
        """Mark these inclusive frame ranges (replacing the previous ones)."""
        marked = [(int(a), int(b)) for a, b in ranges]
        if marked != self._marked:
            self._marked = marked
            self.setToolTip(_tooltip(marked))
            self.update()

    def frame_x(self, frame: int) -> int:
        """The x (widget pixels) of the handle's centre at `frame`."""
        option = self._option()
        groove = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                             QStyle.SubControl.SC_SliderGroove, self)
        handle = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, option,
                                             QStyle.SubControl.SC_SliderHandle, self)
        span = max(groove.width() - handle.width(), 1)
        offset = QStyle.sliderPositionFromValue(self.minimum(), self.maximum(), int(frame), span,
                                                option.upsideDown)
        return groove.x() + offset + handle.width() // 2

    def marked_spans(self) -> list[tuple[int, int]]:
        """Each marked range's band as (left, right) widget pixels, in the order of the ranges."""
        low, high = self.minimum(), self.maximum()
        half = max((self.frame_x(high) - self.frame_x(low)) / max(high - low, 1) / 2, 1.0)
        spans = []
        for start, end in self._marked:
            start, end = max(start, low), min(end, high)
            if start <= end:
                spans.append((int(self.frame_x(start) - half), int(round(self.frame_x(end) + half))))
        return spans

    def paintEvent(self, event) -> None:  # noqa: N802
        """The groove, then the bands over it, then the handle over them."""
        painter = QStylePainter(self)
        option = self._option()
        option.subControls = QStyle.SubControl.SC_SliderGroove
        painter.drawComplexControl(QStyle.ComplexControl.CC_Slider, option)
        groove = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, self._option(),
                                             QStyle.SubControl.SC_SliderGroove, self)
        top = groove.center().y() - self.BAND_HEIGHT // 2 + 1
        for left, right in self.marked_spans():
            painter.fillRect(QRect(left, top, max(right - left, 2), self.BAND_HEIGHT), self.FLAG_COLOUR)
        option = self._option()
        option.subControls = QStyle.SubControl.SC_SliderHandle | QStyle.SubControl.SC_SliderTickmarks
        painter.drawComplexControl(QStyle.ComplexControl.CC_Slider, option)
        painter.end()

    def _option(self) -> QStyleOptionSlider:
        option = QStyleOptionSlider()
        self.initStyleOption(option)
        return option


def _tooltip(marked: list[tuple[int, int]]) -> str:
    if not marked:
        return ""
    shown = ", ".join(f"{a + 1}–{b + 1}" if b > a else f"{a + 1}" for a, b in marked)
    return f"Flagged frames (review): {shown}"
