"""Coalesce frame requests: however many arrive in one event-loop pass, only the latest is rendered.

Scrubbing the slider or holding an arrow key can request dozens of frames between two paints; rendering
each would queue GL work the user never sees (JABS #19, Rerun #12687). A zero-delay single-shot timer
defers the render to the end of the current event-loop pass.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


class FrameCoalescer(QObject):
    def __init__(self, render: Callable[[int], None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._render = render
        self._pending: int | None = None
        self.rendered = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.flush)

    def request(self, frame: int) -> None:
        self._pending = frame
        if not self._timer.isActive():
            self._timer.start()

    def flush(self) -> None:
        """Render the latest request now (also called by the timer)."""
        self._timer.stop()
        if self._pending is None:
            return
        frame, self._pending = self._pending, None
        self.rendered += 1
        self._render(frame)
