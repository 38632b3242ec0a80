"""The Privacy panel: which joints and frames the attacker relies on to name the selected clip's subject.

It shows `PrivacyState`: which attacker is explained (the audit's worst, or the Studio's subject
recognizer when no attacker file loads, said plainly), the score explained, the colour map of the joint
colours on the released clip's view and of the reliance track under the timeline, and the joints and
frames relied on most. The numbers come from `dtmr.audit.attribution.occlusion_attribution`, computed in
the attribution worker; a failure there is a message here, never a crash.
"""

from __future__ import annotations

import html
import math

import numpy as np
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor, QLinearGradient, QPainter
from PySide6.QtWidgets import QHBoxLayout, QLabel, QVBoxLayout, QWidget

from dtmr.skeleton import get_topology

from ..core.privacy import AttackerFile, AttributionResult
from ..render_gl.palette import RELIANCE_STOPS
from ..state.privacy import PrivacyState
from .stable_size import pin_label_lines

TOP_JOINTS = 5
WHAT = ("Joint colours on the released clip's view and the reliance track under the timeline: how much the "
        "attacker's probability of the subject drops when that joint, or the frames around that moment, "
        "are hidden (occlusion), relative to the largest drop.")


class RelianceLegendBar(QWidget):
    """The colour map as a horizontal bar (`RELIANCE_STOPS`, as the joints are drawn)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setFixedHeight(14)
        self.setMinimumWidth(80)

    def paintEvent(self, _event) -> None:  # noqa: N802
        painter = QPainter(self)
        gradient = QLinearGradient(QPointF(0, 0), QPointF(self.width(), 0))
        for position, rgb in RELIANCE_STOPS:
            gradient.setColorAt(position, QColor(*rgb))
        painter.fillRect(self.rect(), gradient)
        painter.end()


class PrivacyPanel(QWidget):
    def __init__(self, state: PrivacyState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.attacker_label = self._label(4)
        self.target_label = self._label(2)
        self.message_label = self._label(3)
        self.legend = RelianceLegendBar()
        legend_row = QHBoxLayout()
        legend_row.addWidget(QLabel("not relied on"))
        legend_row.addWidget(self.legend, 1)
        legend_row.addWidget(QLabel("most relied on"))
        self.what_label = QLabel(WHAT)
        self.what_label.setWordWrap(True)
        self.joints_label = self._label(1 + TOP_JOINTS)
        self.frames_label = self._label(2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        for widget in (self.attacker_label, self.target_label, self.message_label):
            layout.addWidget(widget)
        layout.addLayout(legend_row)
        layout.addWidget(self.what_label)
        layout.addWidget(self.joints_label)
        layout.addWidget(self.frames_label)
        layout.addStretch(1)
        state.changed.connect(self.refresh)
        self.refresh()

    @staticmethod
    def _label(lines: int) -> QLabel:
        label = QLabel()
        label.setWordWrap(True)
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        return pin_label_lines(label, lines)  # new results never re-lay out the window

    def refresh(self) -> None:
        s = self.state
        colour = "#b00020" if s.failed else "#444"
        self.message_label.setText(f'<span style="color:{colour}">{html.escape(s.message, quote=False)}</span>')
        result: AttributionResult | None = s.result
        if result is None:
            for label in (self.attacker_label, self.target_label, self.joints_label, self.frames_label):
                label.setText("")
            return
        self.attacker_label.setText(attacker_text(result))
        a = result.attribution
        risk = "" if math.isnan(s.risk) else f" · audit risk {s.risk:.2f}"
        self.target_label.setText(f"Explains P({result.target} {result.class_label}) = {a.base_probability:.2f}"
                                  f"{risk} on the {html.escape(result.request.view, quote=False)} view's clip")
        names = get_topology(result.request.clip.topology).joint_names
        rows = [f"{html.escape(names[j].replace('_', ' '), quote=False)}: −{a.joints[j]:.3f}"
                for j in a.top_joints(TOP_JOINTS) if a.joints[j] > 0]
        self.joints_label.setText("<b>Joints relied on most</b> (drop of P)<br>"
                                  + ("<br>".join(rows) or "none: hiding any one joint changes nothing"))
        self.frames_label.setText(frames_text(a.frames))


def attacker_text(result: AttributionResult) -> str:
    predictor = result.predictor
    kind = "Attacker" if isinstance(predictor, AttackerFile) else "Attacker stand-in"
    text = f"<b>{kind}:</b> {html.escape(predictor.label, quote=False)}"
    notes = [n for n in (result.request.note, result.fallback) if n]
    if notes:
        text += "<br><i>" + html.escape("; ".join(notes), quote=False) + "</i>"
    return text


def frames_text(frames: np.ndarray) -> str:
    """Where the largest drop is (first to last frame at it), 1-based as the timeline counts frames."""
    if not frames.size or frames.max() <= 0:
        return "<b>Frames</b>: hiding any window of frames changes nothing"
    peak = frames.max()
    top = np.flatnonzero(frames >= peak - 1e-12)
    return f"<b>Frames relied on most</b>: {top[0] + 1}–{top[-1] + 1} (drop of P −{peak:.3f})"
