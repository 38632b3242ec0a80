"""The legend of a loss plot as a list below it: one entry per loss, in its curve's colour, wrapped into as
many columns as fit. Stage 3 plots 24 losses: a legend inside the plot covered the curves. Unticking an
entry hides its curve (`visibility_changed(name, shown)`)."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QListView, QListWidget, QListWidgetItem

#: the legend's height at most (about four rows), scrolled beyond it
MAX_HEIGHT = 84
SWATCH = QSize(14, 4)


class LossLegend(QListWidget):
    visibility_changed = Signal(str, bool)

    def __init__(self, text_size: str = "9pt", parent=None) -> None:
        super().__init__(parent)
        self.setFlow(QListView.Flow.LeftToRight)
        self.setWrapping(True)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setUniformItemSizes(True)
        self.setSelectionMode(QListWidget.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setMaximumHeight(MAX_HEIGHT)
        self.setIconSize(SWATCH)
        font = self.font()
        font.setPointSizeF(float(text_size.rstrip("pt")))
        self.setFont(font)
        self.setToolTip("Loss curves: untick one to hide its curve")
        self.itemChanged.connect(lambda item: self.visibility_changed.emit(
            item.text(), item.checkState() == Qt.CheckState.Checked))
        self.setVisible(False)

    def add(self, name: str, colour) -> None:
        """An entry for the curve `name` drawn in `colour` (an (r, g, b) tuple), ticked."""
        swatch = QPixmap(SWATCH)
        swatch.fill(QColor(*colour))
        item = QListWidgetItem(QIcon(swatch), name)
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
        item.setCheckState(Qt.CheckState.Checked)
        self.blockSignals(True)
        self.addItem(item)
        self.blockSignals(False)
        self.setVisible(True)

    def names(self) -> list[str]:
        return [self.item(i).text() for i in range(self.count())]

    def clear(self) -> None:
        super().clear()
        self.setVisible(False)
