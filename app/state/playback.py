"""The playback clock: which frame is shown, computed from wall time, independent of UI load.

The clock keeps an *unwrapped* position (frames since the start of play, never folded) anchored at a
wall-clock time. In real-time mode every `tick()` recomputes the position as
``anchor_position + elapsed_seconds × fps × speed``, so a slow UI drops frames but never drifts.
In "play every frame" mode (aitviewer's *playback without skipping*) a tick advances at most one frame,
so nothing is skipped and playback slows down instead. The loop mode folds the unwrapped position into
``[0, num_frames)``: once (stop on the last frame), loop, or back-and-forth. An A–B range (`loop_range`),
when set, takes the place of the whole clip: playback starts at A when outside the range, and folds into
``[A, B]`` under the same loop mode. Stepping and seeking stay free (the range bounds playback only).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from enum import Enum

from .events import Signal

SPEED_MIN = 0.1
SPEED_MAX = 8.0
#: the steps of the speed menu and of the slower/faster keys
SPEED_STEPS = (0.1, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 8.0)


class LoopMode(str, Enum):
    ONCE = "once"
    LOOP = "loop"
    BOUNCE = "back-and-forth"


def format_speed(speed: float) -> str:
    """'1×', '1.5×', '0.25×' — the multiplier as shown in the UI."""
    return f"{speed:g}×"


def fold(position: float, num_frames: int, mode: LoopMode) -> int:
    """The frame shown at an unwrapped position under a loop mode."""
    last = num_frames - 1
    if last <= 0:
        return 0
    step = math.floor(position)
    if mode is LoopMode.ONCE:
        return min(max(step, 0), last)
    if mode is LoopMode.LOOP:
        return step % num_frames
    period = 2 * last
    phase = step % period
    return phase if phase <= last else period - phase


class PlaybackClock:
    """Frame index, play state, speed multiplier and loop mode of the comparison.

    `now` returns seconds (monotonic); tests inject a fake. Signals: `frame_changed(int)`,
    `playing_changed(bool)`, `speed_changed(float)`, `loop_mode_changed(LoopMode)`,
    `length_changed(int)`, `every_frame_changed(bool)`, `loop_range_changed(tuple[int, int] | None)`.
    """

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self.num_frames = 1
        self.fps = 30.0
        self.frame = 0
        self.playing = False
        self.speed = 1.0
        self.loop_mode = LoopMode.LOOP
        self.play_every_frame = False
        #: (A, B), first and last frame played, both inclusive; None plays the whole clip
        self.loop_range: tuple[int, int] | None = None
        self._anchor_time = 0.0
        self._anchor_position = 0.0
        self._position = 0.0
        self.frame_changed = Signal()
        self.playing_changed = Signal()
        self.speed_changed = Signal()
        self.loop_mode_changed = Signal()
        self.length_changed = Signal()
        self.every_frame_changed = Signal()
        self.loop_range_changed = Signal()

    # --- configuration -------------------------------------------------------------------------
    def set_length(self, num_frames: int, fps: float) -> None:
        """A new comparison: `num_frames` (the longest clip) at its native `fps`; keeps the frame if it fits."""
        self.num_frames = max(int(num_frames), 1)
        self.fps = float(fps) if fps > 0 else 30.0
        self.length_changed.emit(self.num_frames)
        if self.loop_range is not None:  # a range that still fits the new length is kept, clipped
            start, end = self.loop_range
            self._set_range(None if start > self.num_frames - 1 else (start, min(end, self.num_frames - 1)))
        self.seek(min(self.frame, self.num_frames - 1))

    def set_speed(self, speed: float) -> None:
        speed = min(max(float(speed), SPEED_MIN), SPEED_MAX)
        if speed == self.speed:
            return
        self._reanchor()
        self.speed = speed
        self.speed_changed.emit(speed)

    def faster(self) -> None:
        self.set_speed(next((s for s in SPEED_STEPS if s > self.speed + 1e-9), SPEED_STEPS[-1]))

    def slower(self) -> None:
        self.set_speed(next((s for s in reversed(SPEED_STEPS) if s < self.speed - 1e-9), SPEED_STEPS[0]))

    def set_loop_mode(self, mode: LoopMode) -> None:
        mode = LoopMode(mode)
        if mode is self.loop_mode:
            return
        self.loop_mode = mode
        self._restart_from(self.frame)
        self.loop_mode_changed.emit(mode)

    def set_play_every_frame(self, enabled: bool) -> None:
        enabled = bool(enabled)
        if enabled == self.play_every_frame:
            return
        self.play_every_frame = enabled
        self._restart_from(self.frame)
        self.every_frame_changed.emit(enabled)

    def set_loop_start(self, frame: int) -> None:
        """A: playback starts here; B stays if it is not before A, else becomes the last frame."""
        frame = self._clamp(frame)
        end = self.loop_range[1] if self.loop_range is not None else self.num_frames - 1
        self._set_range((frame, end if end >= frame else self.num_frames - 1))

    def set_loop_end(self, frame: int) -> None:
        """B: playback ends (or turns) here; A stays if it is not after B, else becomes the first frame."""
        frame = self._clamp(frame)
        start = self.loop_range[0] if self.loop_range is not None else 0
        self._set_range((start if start <= frame else 0, frame))

    def clear_loop_range(self) -> None:
        self._set_range(None)

    def _set_range(self, loop_range: tuple[int, int] | None) -> None:
        if loop_range == self.loop_range:
            return
        self.loop_range = loop_range
        self._restart_from(self.frame)
        self.loop_range_changed.emit(loop_range)

    @property
    def play_bounds(self) -> tuple[int, int]:
        """First and last frame that playback shows: the A–B range, or the whole clip."""
        return self.loop_range if self.loop_range is not None else (0, self.num_frames - 1)

    # --- transport -----------------------------------------------------------------------------
    def play(self) -> None:
        if self.playing:
            return
        start, end = self.play_bounds
        if not start <= self.frame <= end or (self.loop_mode is LoopMode.ONCE and self.frame >= end):
            self.seek(start)
        self._restart_from(self.frame)
        self.playing = True
        self.playing_changed.emit(True)

    def pause(self) -> None:
        if not self.playing:
            return
        self.playing = False
        self.playing_changed.emit(False)

    def toggle(self) -> None:
        self.pause() if self.playing else self.play()

    def seek(self, frame: int) -> None:
        """Show `frame` (clamped); while playing, playback continues from there."""
        frame = self._clamp(frame)
        self._restart_from(frame)
        self._show(frame)

    def step(self, delta: int) -> None:
        """Move by `delta` frames (clamped, no wrap) and pause, as a frame-stepping key does."""
        self.pause()
        self.seek(self.frame + int(delta))

    def home(self) -> None:
        self.seek(0)

    def end(self) -> None:
        self.seek(self.num_frames - 1)

    def tick(self) -> None:
        """Advance to the frame due now; called by a timer while playing."""
        if not self.playing:
            return
        now = self._now()
        rate = self.fps * self.speed
        if self.play_every_frame:
            if (now - self._anchor_time) * rate < 1.0 - 1e-6:
                return
            self._position += 1.0
            self._anchor_time, self._anchor_position = now, self._position
        else:
            self._position = self._anchor_position + (now - self._anchor_time) * rate
        start, end = self.play_bounds
        frame = start + fold(self._position - start, end - start + 1, self.loop_mode)
        self._show(frame)
        if self.loop_mode is LoopMode.ONCE and self._position >= end:
            self.pause()

    # --- internals -----------------------------------------------------------------------------
    def _clamp(self, frame: int) -> int:
        return min(max(int(frame), 0), self.num_frames - 1)

    def _restart_from(self, frame: int) -> None:
        self._position = float(frame)
        self._anchor_position = float(frame)
        self._anchor_time = self._now()

    def _reanchor(self) -> None:
        """Fix the position reached so far, before the rate changes."""
        now = self._now()
        if self.playing and not self.play_every_frame:
            self._position = self._anchor_position + (now - self._anchor_time) * self.fps * self.speed
        self._anchor_position = self._position
        self._anchor_time = now

    def _show(self, frame: int) -> None:
        if frame != self.frame:
            self.frame = frame
            self.frame_changed.emit(frame)
