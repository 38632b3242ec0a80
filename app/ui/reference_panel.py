"""Reference panel: the clip lending its body, the seeded "Random" draw and "Pin this clip"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ..state.selection import ReferenceChoice
from .skeleton_thumbnail import SkeletonThumbnail

if TYPE_CHECKING:
    from dtmr.data.clip import Clip

MAX_SEED = 2**31 - 1


class ReferencePanel(QWidget):
    """Signals: `random_requested()`, `seed_changed(int)`, `pin_toggled(bool)`.

    Any library clip can also be pinned from the clip table's context menu ("Use as pinned reference").
    """

    random_requested = Signal()
    seed_changed = Signal(int)
    pin_toggled = Signal(bool)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.thumbnail = SkeletonThumbnail()
        self.name_label = QLabel("No reference")
        self.name_label.setWordWrap(True)
        self.detail_label = QLabel("")
        self.detail_label.setWordWrap(True)
        self.pool_label = QLabel("")
        self.pool_label.setWordWrap(True)
        self.seed_box = QSpinBox()
        self.seed_box.setRange(0, MAX_SEED)
        self.seed_box.setToolTip("The draw is the same for the same seed and source clip")
        self.seed_box.valueChanged.connect(self.seed_changed)
        self.random_button = QPushButton("Random")
        self.random_button.setToolTip("Draw another reference (next seed)")
        self.random_button.clicked.connect(self.random_requested)
        self.pin_box = QPushButton("Pin this clip")
        self.pin_box.setCheckable(True)
        self.pin_box.setToolTip("Keep this reference when the source changes (while its subject differs)")
        self.pin_box.toggled.connect(self.pin_toggled)

        text = QVBoxLayout()
        text.addWidget(self.name_label)
        text.addWidget(self.detail_label)
        text.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.thumbnail)
        top.addLayout(text, 1)
        controls = QGridLayout()
        controls.addWidget(QLabel("Seed"), 0, 0)
        controls.addWidget(self.seed_box, 0, 1)
        controls.addWidget(self.random_button, 0, 2)
        controls.addWidget(self.pin_box, 1, 0, 1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addLayout(controls)
        layout.addWidget(self.pool_label)
        layout.addStretch(1)
        self.set_enabled(False)

    def set_enabled(self, enabled: bool) -> None:
        for w in (self.seed_box, self.random_button, self.pin_box):
            w.setEnabled(enabled)

    def show_choice(self, choice: ReferenceChoice | None, name: str, detail: str, clip: Clip | None, pool_size: int) -> None:
        """Show the current reference (`clip` is its Clip, None while unknown)."""
        self.set_enabled(pool_size > 0)
        self.seed_box.blockSignals(True)
        self.pin_box.blockSignals(True)
        if choice is None:
            self.name_label.setText("No reference" if pool_size else "No reference: no clip of another subject")
            self.detail_label.setText("")
            self.pin_box.setChecked(False)
        else:
            self.name_label.setText(f"<b>{name}</b>")
            self.detail_label.setText(detail)
            self.seed_box.setValue(choice.seed)
            self.pin_box.setChecked(choice.pinned)
        self.pin_box.setEnabled(choice is not None)
        self.seed_box.blockSignals(False)
        self.pin_box.blockSignals(False)
        self.pool_label.setText(f"Pool: {pool_size} clips of other subjects" if pool_size else "")
        self.thumbnail.set_clip(clip)
