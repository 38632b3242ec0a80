"""Keys typed into a control go to the control, not to the window's single-key shortcuts.

The transport and review shortcuts are window-wide single keys (Space, arrows, Home/End, digits, N, [, ]). Qt
asks the focused widget first (a `ShortcutOverride` event) and fires the shortcut unless the widget accepts it;
a line edit accepts printable keys but not ↑/↓, a spin box not ↑/↓ either, a slider no key at all, so ↑ in the
trail box stepped the clip ten frames and → on the β slider stepped a frame. `TypingGuard` accepts the override
for the keys such a control uses: every key without Ctrl, Alt or Meta (Escape, Tab and F-keys excepted) in a
text field or spin box; the arrows, Home/End and Page Up/Down on a slider. Ctrl shortcuts (Ctrl+O, Ctrl+G, …)
still work from anywhere. It watches the controls of its window as they take the focus (`focusChanged`), so
controls made later are covered too, and it costs nothing while the focus stays put.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QAbstractSlider, QAbstractSpinBox, QApplication, QLineEdit, QPlainTextEdit, QTextEdit

TEXT_CONTROLS = (QLineEdit, QAbstractSpinBox, QTextEdit, QPlainTextEdit)
SLIDER_KEYS = frozenset({Qt.Key.Key_Left, Qt.Key.Key_Right, Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Home,
                         Qt.Key.Key_End, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown})
#: keys a text field leaves to the window (dialog keys, focus moves, function keys)
NOT_TYPED = frozenset({Qt.Key.Key_Escape, Qt.Key.Key_Tab, Qt.Key.Key_Backtab,
                       *(Qt.Key(Qt.Key.Key_F1.value + i) for i in range(24))})
COMMAND = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.MetaModifier


def keeps_key(widget: QObject, key: int, modifiers: Qt.KeyboardModifier) -> bool:
    """Whether `widget` (having the focus) uses `key` itself rather than leaving it to a shortcut."""
    if modifiers & COMMAND:
        return False
    if isinstance(widget, TEXT_CONTROLS):
        return key not in NOT_TYPED
    if isinstance(widget, QAbstractSlider):
        return key in SLIDER_KEYS
    return False


class TypingGuard(QObject):
    def __init__(self, window) -> None:
        super().__init__(window)
        self._window = window
        self._watched: set[int] = set()
        QApplication.instance().focusChanged.connect(self._focus_changed)

    def _focus_changed(self, _old, new) -> None:
        if new is None or id(new) in self._watched or not isinstance(new, (*TEXT_CONTROLS, QAbstractSlider)):
            return
        if new.window() is self._window:
            self._watched.add(id(new))
            new.installEventFilter(self)
            new.destroyed.connect(lambda _o=None, key=id(new): self._watched.discard(key))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt naming)
        if event.type() == QEvent.Type.ShortcutOverride and keeps_key(watched, event.key(), event.modifiers()):
            event.accept()
            return True
        return False
