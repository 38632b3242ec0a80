"""`Signal`: a Qt-free observer list, so state objects can be tested without a QApplication."""

from __future__ import annotations

from collections.abc import Callable


class Signal:
    """Callbacks run synchronously, in connection order, on the thread that calls `emit`.

    State objects live on the GUI thread; workers never touch them (they emit Qt signals instead).
    """

    def __init__(self) -> None:
        self._slots: list[Callable[..., object]] = []

    def connect(self, slot: Callable[..., object]) -> None:
        self._slots.append(slot)

    def disconnect(self, slot: Callable[..., object]) -> None:
        self._slots.remove(slot)

    def emit(self, *args: object) -> None:
        for slot in list(self._slots):
            slot(*args)
