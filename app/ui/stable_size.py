"""Widgets whose size does not follow their changing content, so an update never re-lays out the window.

A QLabel's size hint follows its text. When a label in a dock grows or shrinks (a new top-5 list, a
status line, a progress bar shown or hidden), Qt re-lays out the main window: the dock area and the
central widget change size, the three GL views are resized and everything is repainted in one pass.
With software OpenGL that pass took 80–90 ms, the Studio's longest event-loop stall while the models ran
(docs/studio.md, "Performance"). Labels that change while the models run get a fixed number of lines and
a width that comes from the layout, not from the text; widgets that come and go keep their space.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


def pin_label_lines(label: QLabel, lines: int) -> QLabel:
    """Make `label` `lines` text lines high and as wide as the layout gives it, whatever its text."""
    label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
    margins = label.contentsMargins()
    label.setFixedHeight(lines * label.fontMetrics().lineSpacing() + margins.top() + margins.bottom()
                         + 2 * label.margin())
    return label


def keep_space_when_hidden(widget: QWidget) -> QWidget:
    """Hiding or showing `widget` leaves the layout as it is."""
    policy = widget.sizePolicy()
    policy.setRetainSizeWhenHidden(True)
    widget.setSizePolicy(policy)
    return widget
