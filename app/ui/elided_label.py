"""A one-line label that elides its text to its width ("…") instead of wrapping or widening its column;
the whole text, and any details, are in its tooltip."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSizePolicy


class ElidedLabel(QLabel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setTextFormat(Qt.TextFormat.PlainText)

    def set_caption(self, text: str, details: str = "") -> None:
        """Show `text` on one line; the tooltip holds it whole, then `details`."""
        self._full = text
        self.setToolTip("\n".join(filter(None, [text, details])))
        self._elide()

    @property
    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = max(self.contentsRect().width(), 1)
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, width))
