"""What the Privacy panel shows: the attribution of the clip on screen, or why there is none.

The controller sets it on the GUI thread; the Privacy panel, the reliance track and the view that shows
the released clip listen to `changed`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .events import Signal

if TYPE_CHECKING:
    from ..core.privacy import AttributionResult


class PrivacyState:
    """Signal: `changed()`.

    `result` is an `app.core.privacy.AttributionResult` for the clip now on screen, or None; `message`
    says what is happening or why there is no result ("computing…", a failure, no attacker); `risk` is
    the audit's risk of the selected clip (NaN when unknown).
    """

    def __init__(self) -> None:
        self.result: AttributionResult | None = None
        self.message = ""
        self.pending = False
        self.failed = False
        self.risk = float("nan")
        self.changed = Signal()

    def set_pending(self, message: str) -> None:
        self._set(None, message, pending=True)

    def set_result(self, result: AttributionResult) -> None:
        self._set(result, "")

    def set_message(self, message: str, failed: bool = False) -> None:
        """No attribution, and why (`failed`: the computation itself went wrong)."""
        self._set(None, message, failed=failed)

    def set_risk(self, risk: float) -> None:
        self.risk = float(risk)
        self.changed.emit()

    def _set(self, result: AttributionResult | None, message: str, pending: bool = False, failed: bool = False) -> None:
        self.result, self.message, self.pending, self.failed = result, message, pending, failed
        self.changed.emit()
