"""The first-start hint: a banner over the three views saying what each one shows, until the user dismisses it.

Dismissing it ("Got it") stores `hints/three_views_dismissed` in the Studio's settings file, so it is never shown
again; a settings file without that key (a first start, or a Studio updated from a version without the hint)
shows it once. It is a banner in the layout rather than an overlay: the views are native GL windows, which a
widget cannot be drawn over.
"""

from __future__ import annotations

from PySide6.QtCore import QSettings, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton

#: the settings key set once the hint was dismissed
DISMISSED_KEY = "hints/three_views_dismissed"

TEXT = ("<b>Three views of the same clip.</b> <b>Source</b>: the clip as recorded. "
        "<b>Retargeted</b>: the same action on the body of the reference clip (the full retarget). "
        "<b>Released</b>: what would be published, a blend of the two set by the model's β "
        "(the β slider under it tries others). Drag in a view to orbit, scroll to zoom; R frames the clips again.")


def dismissed(qsettings: QSettings) -> bool:
    value = qsettings.value(DISMISSED_KEY, False)
    return value is True or str(value).lower() in ("true", "1")


class FirstStartHint(QFrame):
    """Signal: `closed()` once dismissed. Hidden from the start when it was dismissed before."""

    closed = Signal()

    def __init__(self, qsettings: QSettings, parent=None) -> None:
        super().__init__(parent)
        self.qsettings = qsettings
        self.setObjectName("first-start-hint")
        self.setStyleSheet("#first-start-hint { background: #fff6d5; border: 1px solid #e0c060; border-radius: 3px; }")
        self.label = QLabel(TEXT)
        self.label.setWordWrap(True)
        self.dismiss_button = QPushButton("Got it")
        self.dismiss_button.setToolTip("Hide this hint for good")
        self.dismiss_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.dismiss_button)
        self.setVisible(not dismissed(qsettings))

    def dismiss(self) -> None:
        self.hide()
        self.qsettings.setValue(DISMISSED_KEY, True)
        self.qsettings.sync()
        self.closed.emit()
