"""The timeline's scrubbing slider with marked frame ranges drawn along its groove (review flags) and the A–B
loop range under them.

`set_marked(ranges)` takes inclusive 0-based frame ranges; each is drawn as a band from half a frame before
its first frame to half a frame after its last, at the slider's own value-to-pixel mapping, so a band sits
exactly under the handle positions of the frames it covers: over the groove, under the handle.
`set_loop_range((a, b))` draws the A–B range the same way, taller and translucent blue, below the flags (the
range bounds playback, `PlaybackClock.loop_range`; users of video and annotation tools expect to see it).
"""

from __future__ import annotations

from PySide6.QtCore import QRect
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QSlider, QStyle, QStyleOptionSlider, QStylePainter


class MarkedSlider(QSlider):
    #: the colour of a flagged range (the review's "implausible" red)
    FLAG_COLOUR = QColor(214, 39, 40)
    #: the colour of the A–B loop range (translucent: the groove shows through)
    LOOP_COLOUR = QColor(31, 119, 180, 120)
    #: the band's height, centred on the groove; the loop range's
    BAND_HEIGHT = 6
    LOOP_HEIGHT = 10

    def __init__(self, orientation, parent=None) -> None:
        super().__init__(orientation, parent)
        self._marked: list[tuple[int, int]] = []
        self._loop: tuple[int, int] | None = None

    def set_marked(self, ranges) -> None:
        """Mark these inclusive frame ranges (replacing the previous ones)."""
        marked = [(int(a), int(b)) for a, b in ranges]
        if marked != self._marked:
            self._marked = marked
            self._changed()

    def set_loop_range(self, loop_range: tuple[int, int] | None) -> None:
        """Draw the inclusive A–B range (None: none)."""
        loop = None if loop_range is None else (int(loop_range[0]), int(loop_range[1]))
        if loop != self._loop:
            self._loop = loop
            self._changed()

    def _changed(self) -> None:
        self.setToolTip(_tooltip(self._marked, self._loop))
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
        return [span for span in (self._span(start, end) for start, end in self._marked) if span is not None]

    def loop_span(self) -> tuple[int, int] | None:
        """The A–B range's band as (left, right) widget pixels; None without a range (or one off the slider)."""
        return None if self._loop is None else self._span(*self._loop)

    def _span(self, start: int, end: int) -> tuple[int, int] | None:
        """Half a frame before `start` to half a frame after `end`, clipped to the slider's range."""
        low, high = self.minimum(), self.maximum()
        half = max((self.frame_x(high) - self.frame_x(low)) / max(high - low, 1) / 2, 1.0)
        start, end = max(start, low), min(end, high)
        if start > end:
            return None
        return int(self.frame_x(start) - half), int(round(self.frame_x(end) + half))

    def paintEvent(self, event) -> None:  # noqa: N802
        """The groove, then the A–B range and the flags' bands over it, then the handle over them."""
        painter = QStylePainter(self)
        option = self._option()
        option.subControls = QStyle.SubControl.SC_SliderGroove
        painter.drawComplexControl(QStyle.ComplexControl.CC_Slider, option)
        groove = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, self._option(),
                                             QStyle.SubControl.SC_SliderGroove, self)
        loop = self.loop_span()
        if loop is not None:
            left, right = loop
            painter.fillRect(QRect(left, groove.center().y() - self.LOOP_HEIGHT // 2 + 1, max(right - left, 2),
                                   self.LOOP_HEIGHT), self.LOOP_COLOUR)
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


def _tooltip(marked: list[tuple[int, int]], loop: tuple[int, int] | None = None) -> str:
    lines = []
    if marked:
        lines.append("Flagged frames (review): " + ", ".join(f"{a + 1}–{b + 1}" if b > a else f"{a + 1}"
                                                             for a, b in marked))
    if loop is not None:
        lines.append(f"A–B loop: frames {loop[0] + 1}–{loop[1] + 1}")
    return "\n".join(lines)
