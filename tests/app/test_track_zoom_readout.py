"""The tracks under the timeline zoom in time and read their values out (issue 42: "a zoomable timeline with
value readouts", what aitviewer, Rerun and JABS users expect): the wheel zooms every track together around the
pointer, a double click shows the whole clip again, and hovering a track puts each view's value on the
pointer's frame in the status bar."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QApplication
from studio_fakes import settle

from app.state.comparison import ViewKind


def x_range(window) -> tuple[float, float]:
    return tuple(window.tracks.plots["action"].getPlotItem().vb.viewRange()[0])


def track_point(window, name: str, frame: float) -> QPoint:
    """The widget point of `frame` at mid-height of track `name`."""
    plot = window.tracks.plots[name]
    box = plot.getPlotItem().vb
    scene = box.mapViewToScene(QPointF(frame, box.viewRange()[1][0] + 0.5 * np.ptp(box.viewRange()[1])))
    return plot.mapFromScene(scene)


def wheel(widget, point: QPoint, steps: int) -> None:
    event = QWheelEvent(QPointF(point), QPointF(widget.mapToGlobal(point)), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget.viewport(), event)


def test_the_wheel_zooms_every_track_and_a_double_click_shows_the_whole_clip(studio, qtbot):
    low, high = x_range(studio)
    length = studio.comparison.length
    assert low <= 0 and high >= length - 1
    sliding = studio.tracks.plots["sliding"]
    wheel(sliding, track_point(studio, "sliding", length / 2), 4)  # zoom in around the middle
    settle(qtbot, studio)
    zoomed = x_range(studio)
    assert zoomed[1] - zoomed[0] < 0.8 * (high - low)
    assert zoomed[0] < length / 2 < zoomed[1]
    subject = studio.tracks.plots["subject"].getPlotItem().vb.viewRange()[0]
    assert np.allclose(subject, zoomed)  # the tracks move together
    for _ in range(40):  # no further than MIN_ZOOM_FRAMES
        wheel(sliding, track_point(studio, "sliding", length / 2), 4)
    settle(qtbot, studio)
    narrowest = x_range(studio)
    assert narrowest[1] - narrowest[0] >= 7.9
    point = track_point(studio, "sliding", length / 2)
    qtbot.mouseClick(sliding.viewport(), Qt.MouseButton.LeftButton, pos=point)  # a double click as a mouse gives it
    qtbot.mouseDClick(sliding.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.mouseRelease(sliding.viewport(), Qt.MouseButton.LeftButton, pos=point)
    settle(qtbot, studio)
    assert np.allclose(x_range(studio), (low, high), atol=0.5)


def test_hovering_a_track_reads_out_every_views_value_on_that_frame(studio, qtbot):
    tracks = studio.tracks
    _x, released = tracks.curves[("sliding", ViewKind.RELEASED)].getData()
    frame = int(np.flatnonzero(np.isfinite(released))[0])  # a contact frame of the released view
    text = tracks.readout("sliding", frame)
    assert f"Released {released[frame]:.3f} m/s" in text
    assert text.startswith(f"frame {frame + 1}, foot sliding (m/s): Source ")
    assert "Retargeted" in text and "Released" in text and "m/s" in text
    plot = tracks.plots["sliding"]
    qtbot.mouseMove(plot.viewport(), track_point(studio, "sliding", frame))
    qtbot.waitUntil(lambda: studio.hover_label.text().startswith(f"frame {frame + 1}, foot sliding"), timeout=3000)
    assert tracks.readout("sliding", studio.comparison.length + 5) == ""
