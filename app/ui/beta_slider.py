"""The β slider: blends the released view live between the source (β = 0) and the full retarget (β = 1).

It drives `Comparison.set_beta`, which re-blends the one model run's `ReleaseParts` (`dtmr.models.blend`): no
model runs while it moves. The checkpoint's own β is marked on the groove; "Model β" goes back to it. It fits
under a view 200 pixels wide (the caption above it says when the β shown is not the model's). Moves are
coalesced: a drag that delivers several values in one event-loop pass blends once, at the last value.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from ..state.comparison import Comparison
from .marked_slider import MarkedSlider

#: slider steps per unit of β
STEPS = 100


class BetaSlider(QWidget):
    def __init__(self, comparison: Comparison, parent=None) -> None:
        super().__init__(parent)
        self.comparison = comparison
        self.label = QLabel("β")
        self.slider = MarkedSlider(Qt.Orientation.Horizontal)
        self.slider.FLAG_COLOUR = QColor(31, 119, 180)  # the model's β: not a review flag
        self.slider.setRange(0, STEPS)
        self.slider.setMinimumWidth(70)
        self.slider.setToolTip("β of the released view: 0 = the source, 1 = the full retarget")
        self.value_label = QLabel()
        self.value_label.setMinimumWidth(self.value_label.fontMetrics().horizontalAdvance("0.00") + 4)
        self.reset_button = QToolButton()
        self.reset_button.setText("Model β")
        self.reset_button.setToolTip("Reset to the model's β (the β the checkpoint releases with)")
        self._pending: float | None = None
        self._apply = QTimer(self)
        self._apply.setSingleShot(True)
        self._apply.setInterval(0)
        self._apply.timeout.connect(self._apply_pending)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.label, self.slider, self.value_label, self.reset_button):
            layout.addWidget(widget)
        self.slider.valueChanged.connect(self._moved)
        self.reset_button.clicked.connect(lambda: comparison.set_beta(None))
        comparison.beta_changed.connect(self.refresh)
        comparison.clips_changed.connect(self.refresh)
        self.refresh()

    def _moved(self, value: int) -> None:
        self._pending = value / STEPS
        self._apply.start()

    def _apply_pending(self) -> None:
        beta, self._pending = self._pending, None
        if beta is None:
            return
        model = self.comparison.model_beta
        # landing on the model's own step is the model's β (the slider cannot hit every β exactly)
        self.comparison.set_beta(None if model is not None and round(model * STEPS) == round(beta * STEPS) else beta)

    def refresh(self) -> None:
        """Follow the comparison: the β shown, the model's β marked, disabled without model output."""
        c = self.comparison
        model, shown = c.model_beta, c.shown_beta
        self.setEnabled(model is not None)
        if model is None:
            self.slider.set_marked([])
            self.value_label.setText("—")
            self.reset_button.setEnabled(False)
            return
        mark = round(model * STEPS)
        self.slider.set_marked([(mark, mark)])
        self.slider.setToolTip(f"β of the released view: 0 = the source, 1 = the full retarget; "
                               f"the model's β = {model:g} is marked")
        if self._pending is None:
            self.slider.blockSignals(True)
            self.slider.setValue(round(shown * STEPS))
            self.slider.blockSignals(False)
        self.value_label.setText(f"{shown:.2f}")
        self.value_label.setToolTip(f"β shown {shown:g}; the model's β {model:g}")
        self.reset_button.setEnabled(c.beta_differs)
