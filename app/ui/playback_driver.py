"""A QTimer that ticks the Qt-free `PlaybackClock` while it plays.

The timer only says "look at the wall clock now"; the clock decides the frame from elapsed time × speed,
so the interval does not set the playback rate and a busy event loop drops frames instead of slowing
down (unless "play every frame" is on). Runs only while playing, so an idle Studio costs nothing.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer

from ..state.playback import PlaybackClock

TICK_MS = 10


class PlaybackDriver(QObject):
    def __init__(self, clock: PlaybackClock, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.clock = clock
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(TICK_MS)
        self._timer.timeout.connect(clock.tick)
        clock.playing_changed.connect(self._on_playing)

    def _on_playing(self, playing: bool) -> None:
        if playing:
            self._timer.start()
        else:
            self._timer.stop()

    @property
    def active(self) -> bool:
        return self._timer.isActive()
