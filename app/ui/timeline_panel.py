"""Transport bar: play/pause, steps, the scrubbing slider, a go-to-frame box, the A–B loop range, speed,
loop mode and the length policy.

The widgets only drive the `PlaybackClock` and mirror its signals; the slider's value follows the clock
with its own signals blocked, so a programmatic move never echoes back as a seek. Frames are shown and
typed 1-based ("frame 1 / 40"), as the frame counter shows them; the clock counts from 0. The review's
flagged frame ranges of the source clip are drawn along the slider (`show_marked_ranges`), and so is the A–B range.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QStyle,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from ..state.comparison import LENGTH_POLICY
from ..state.playback import SPEED_STEPS, LoopMode, PlaybackClock, format_speed
from .marked_slider import MarkedSlider

LOOP_LABELS = {LoopMode.ONCE: "Play once", LoopMode.LOOP: "Loop", LoopMode.BOUNCE: "Back-and-forth"}
INVALID_STYLE = "QLineEdit { background: #ffd6d6; }"


def parse_frame(text: str, num_frames: int) -> int:
    """A typed 1-based frame number as the clock's 0-based frame; ValueError with a one-line reason."""
    text = text.strip()
    if not text.isdigit() or not 1 <= int(text) <= num_frames:
        raise ValueError(f"go to frame: {text!r} is not a frame number from 1 to {num_frames}")
    return int(text) - 1


class TimelinePanel(QWidget):
    #: a typed frame number that is not one (the main window shows it in the status bar)
    frame_error = Signal(str)

    def __init__(self, clock: PlaybackClock, parent=None) -> None:
        super().__init__(parent)
        self.clock = clock
        icon = self.style().standardIcon
        self.play_icon = icon(QStyle.StandardPixmap.SP_MediaPlay)
        self.pause_icon = icon(QStyle.StandardPixmap.SP_MediaPause)
        self.home_button = _tool(icon(QStyle.StandardPixmap.SP_MediaSkipBackward), "First frame (Home)", clock.home)
        self.back_button = _tool(icon(QStyle.StandardPixmap.SP_MediaSeekBackward), "Previous frame (← or ,)",
                                 lambda: clock.step(-1))
        self.play_button = _tool(self.play_icon, "Play/pause (Space)", clock.toggle)
        self.forward_button = _tool(icon(QStyle.StandardPixmap.SP_MediaSeekForward), "Next frame (→ or .)",
                                    lambda: clock.step(1))
        self.end_button = _tool(icon(QStyle.StandardPixmap.SP_MediaSkipForward), "Last frame (End)", clock.end)
        self.slider = MarkedSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, 0)
        self.slider.setTracking(True)
        self.slider.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # arrow keys belong to the transport shortcuts
        self.slider.valueChanged.connect(clock.seek)
        self.frame_label = QLabel()
        self.frame_label.setMinimumWidth(110)
        self.frame_box = QLineEdit()
        self.frame_box.setPlaceholderText("go to frame")
        self.frame_box.setMaximumWidth(90)
        self.frame_box.setToolTip("Type a frame number and press Enter (Ctrl+G)")
        self.frame_box.returnPressed.connect(self.go_to_typed_frame)
        self.frame_box.textEdited.connect(lambda _t: self.frame_box.setStyleSheet(""))
        self.range_label = QLabel()
        self.range_label.setToolTip("A–B loop range: A sets its start, B its end, X clears it")
        self.speed_box = QComboBox()
        for speed in SPEED_STEPS:
            self.speed_box.addItem(format_speed(speed), speed)
        self.speed_box.setToolTip("Playback speed (− slower, + faster)")
        self.speed_box.currentIndexChanged.connect(lambda _i: clock.set_speed(self.speed_box.currentData()))
        self.speed_label = QLabel()
        self.loop_box = QComboBox()
        for mode, label in LOOP_LABELS.items():
            self.loop_box.addItem(label, mode.value)
        self.loop_box.setToolTip("Loop mode (L cycles)")
        self.loop_box.currentIndexChanged.connect(lambda _i: clock.set_loop_mode(LoopMode(self.loop_box.currentData())))
        self.every_frame_box = QCheckBox("Play every frame")
        self.every_frame_box.setToolTip("Show every frame even when the display cannot keep up (slower than real time)")
        self.every_frame_box.toggled.connect(clock.set_play_every_frame)
        self.policy_label = QLabel()
        self.policy_label.setWordWrap(True)
        self.policy_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.policy_label.setToolTip(f"Length policy, shared with `dtmr export`: the comparison {LENGTH_POLICY}")

        transport = QHBoxLayout()
        for w in (self.home_button, self.back_button, self.play_button, self.forward_button, self.end_button):
            transport.addWidget(w)
        transport.addWidget(self.slider, 1)
        transport.addWidget(self.frame_label)
        transport.addWidget(self.frame_box)
        transport.addWidget(self.range_label)
        options = QHBoxLayout()
        options.addWidget(QLabel("Speed"))
        options.addWidget(self.speed_box)
        options.addWidget(self.speed_label)
        options.addWidget(self.loop_box)
        options.addWidget(self.every_frame_box)
        options.addWidget(self.policy_label, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addLayout(transport)
        layout.addLayout(options)

        clock.length_changed.connect(self._on_length)
        clock.playing_changed.connect(self._on_playing)
        clock.speed_changed.connect(self._on_speed)
        clock.loop_mode_changed.connect(self._on_loop_mode)
        clock.every_frame_changed.connect(self._on_every_frame)
        clock.loop_range_changed.connect(self._on_loop_range)
        self._on_loop_range(clock.loop_range)
        self._on_length(clock.num_frames)
        self._on_playing(clock.playing)
        self._on_speed(clock.speed)
        self._on_loop_mode(clock.loop_mode)
        self._on_every_frame(clock.play_every_frame)

    def show_frame(self, frame: int) -> None:
        """Mirror the clock's frame (called once per rendered frame)."""
        self.slider.blockSignals(True)
        self.slider.setValue(frame)
        self.slider.blockSignals(False)
        self.frame_label.setText(f"frame {frame + 1} / {self.clock.num_frames}")

    def show_marked_ranges(self, ranges) -> None:
        """Draw these inclusive 0-based frame ranges (the source clip's review flags) along the slider."""
        self.slider.set_marked(ranges)

    def go_to_typed_frame(self) -> None:
        """Enter in the frame box: jump there and give the keys back to the transport; else say why not."""
        try:
            frame = parse_frame(self.frame_box.text(), self.clock.num_frames)
        except ValueError as exc:
            self.frame_box.setStyleSheet(INVALID_STYLE)
            self.frame_error.emit(str(exc))
            return
        self.frame_box.clear()
        self.frame_box.clearFocus()
        self.clock.seek(frame)

    def _on_loop_range(self, loop_range: tuple[int, int] | None) -> None:
        self.slider.set_loop_range(loop_range)
        self.range_label.setVisible(loop_range is not None)
        if loop_range is not None:
            self.range_label.setText(f"A–B loop: {loop_range[0] + 1}–{loop_range[1] + 1}")

    def _on_length(self, num_frames: int) -> None:
        self.slider.blockSignals(True)
        self.slider.setRange(0, num_frames - 1)
        self.slider.blockSignals(False)
        self.policy_label.setText(f"{num_frames} frames: {LENGTH_POLICY}")
        self.show_frame(self.clock.frame)
        self._on_speed(self.clock.speed)

    def _on_playing(self, playing: bool) -> None:
        self.play_button.setIcon(self.pause_icon if playing else self.play_icon)

    def _on_speed(self, speed: float) -> None:
        self.speed_label.setText(f"({format_speed(speed)} speed, {self.clock.fps * speed:g} fps)")
        index = self.speed_box.findData(speed)
        self.speed_box.blockSignals(True)
        if index < 0:
            self.speed_box.addItem(format_speed(speed), speed)
            index = self.speed_box.count() - 1
        self.speed_box.setCurrentIndex(index)
        self.speed_box.blockSignals(False)

    def _on_loop_mode(self, mode: LoopMode) -> None:
        self.loop_box.blockSignals(True)
        self.loop_box.setCurrentIndex(self.loop_box.findData(LoopMode(mode).value))
        self.loop_box.blockSignals(False)

    def _on_every_frame(self, enabled: bool) -> None:
        self.every_frame_box.blockSignals(True)
        self.every_frame_box.setChecked(enabled)
        self.every_frame_box.blockSignals(False)


def _tool(icon: QIcon, tip: str, action) -> QToolButton:
    button = QToolButton()
    button.setIcon(icon)
    button.setToolTip(tip)
    button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
    button.clicked.connect(lambda _checked=False: action())
    return button
