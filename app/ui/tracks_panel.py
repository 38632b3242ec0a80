"""Per-frame tracks under the timeline: action and identity probability, and foot sliding, per view.

The action track plots, for each view, the probability of the source's true action (of the source's
most likely action when the label is unknown); the identity track the probability of the source's
subject, which anonymization should push down. The true class is matched by name
(`dtmr.data.label_set.match_classes`): when the recognizer has no class for the source's label, or its
classes are not the library's labels at all (`ClassMatch.withheld`), the track plots nothing and its title
says why. Each track's name is its title (a rotated axis label does not fit
an 80-pixel track); the views' legend is one row, and only the sliding track draws the shared time axis,
so all three entries show inside a short track. Both come from `Recognizer.window_probabilities` (a
sliding window centred on each frame). The sliding track is the fastest contact joint's horizontal speed
on each frame, with gaps where no foot touches the ground; every contact frame is also a dot, so a clip
whose contacts are single frames between gaps (a jittery model output: the line has no segment to draw)
still shows its speeds, and the range reaches every view's own 99th percentile, so a view with a few fast
contact frames is not cut off by the many slow ones of another (issue 42: no curve, caption 1.5 m/s). A
vertical line marks the current frame; clicking a track seeks there. The tracks zoom in time together: the
mouse wheel over a track zooms around the pointer, a drag pans, a double click shows the whole clip again
(within the clip's frames, down to `MIN_ZOOM_FRAMES`). Hovering a track reads its values out on the pointer's
frame, one per view (`hover_text`, shown in the status bar as the views' joint readout is). The reliance
track (shown with the Privacy panel) plots how much the attacker relies on each frame of the released clip:
the drop of its subject score when the frames around it are hidden, over the clip's largest drop
(`dtmr.audit.attribution`).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from ..core.recognition import RecognitionResult, TaskProbabilities
from ..state.comparison import VIEWS, Comparison, ViewKind

VIEW_PENS = {ViewKind.SOURCE: (90, 90, 90), ViewKind.RETARGETED: (230, 140, 20), ViewKind.RELEASED: (40, 110, 220)}
TRACK_HEIGHT = 80
#: the reliance track's curve, the crimson end of the Privacy panel's colour map
RELIANCE_PEN = (190, 0, 40)
#: the sliding track shows at least 0 to this many m/s, so a planted clip reads as flat and low
SLIDING_RANGE = 0.3
#: diameter in pixels of a contact frame's dot on the sliding track
SLIDING_DOT = 4
#: width of every track's left axis, so the tracks' time axes line up
AXIS_WIDTH = 34
TRACK_NAMES = {"action": "P(action)", "subject": "P(identity)", "sliding": "foot sliding (m/s)"}
#: the narrowest time window the tracks zoom to (frames)
MIN_ZOOM_FRAMES = 8


class TracksPanel(QWidget):
    seek_requested = Signal(int)
    #: the values under the pointer, as a line for the status bar ("" when it leaves the tracks)
    hover_text = Signal(str)

    def __init__(self, comparison: Comparison, parent=None) -> None:
        super().__init__(parent)
        self.comparison = comparison
        self.plots: dict[str, pg.PlotWidget] = {}
        self.curves: dict[tuple[str, ViewKind], pg.PlotDataItem] = {}
        #: the sliding track's contact frames as dots, per view
        self.sliding_dots: dict[ViewKind, pg.ScatterPlotItem] = {}
        self.playheads: list[pg.InfiniteLine] = []
        self._ranges: dict[str, tuple[float, float]] = {}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        for name, label in TRACK_NAMES.items():
            plot = pg.PlotWidget(background="w")
            plot.setMinimumHeight(TRACK_HEIGHT)
            plot.setTitle(label, size="8pt")
            plot.getAxis("left").setWidth(AXIS_WIDTH)
            plot.getAxis("left").enableAutoSIPrefix(False)
            plot.showGrid(x=True, y=True, alpha=0.2)
            plot.setMouseEnabled(x=True, y=False)  # time zooms and pans (linked), values stay put
            plot.hideButtons()
            if name != "sliding":
                plot.setYRange(0.0, 1.0)
                plot.getAxis("left").setTicks([[(0.0, "0"), (0.5, ".5"), (1.0, "1")]])
                plot.hideAxis("bottom")  # the tracks share the sliding track's time axis (x-linked)
            legend = None
            if name == "action":
                legend = plot.addLegend(offset=(-5, 1), labelTextSize="8pt", colCount=len(VIEWS),
                                        brush=pg.mkBrush(255, 255, 255, 200))
            for kind in VIEWS:
                curve = plot.plot([], [], pen=pg.mkPen(VIEW_PENS[kind], width=2), connect="finite",
                                  name=kind.title if legend is not None else None)
                self.curves[(name, kind)] = curve
                if name == "sliding":
                    dots = pg.ScatterPlotItem(size=SLIDING_DOT, pen=None, brush=pg.mkBrush(VIEW_PENS[kind]))
                    plot.addItem(dots)
                    self.sliding_dots[kind] = dots
            playhead = pg.InfiniteLine(pos=0, angle=90, pen=pg.mkPen((200, 0, 0), width=1))
            plot.addItem(playhead)
            self.playheads.append(playhead)
            plot.scene().sigMouseClicked.connect(lambda ev, p=plot: self._clicked(p, ev))
            plot.scene().sigMouseMoved.connect(lambda pos, n=name: self._hovered(n, pos))
            self.plots[name] = plot
            layout.addWidget(plot)
        self.plots["subject"].setXLink(self.plots["action"])
        self.plots["sliding"].setXLink(self.plots["action"])
        self.reliance_plot = self._reliance_plot()
        layout.addWidget(self.reliance_plot)
        comparison.clips_changed.connect(self.refresh)
        comparison.recognition_changed.connect(self.refresh)
        self.refresh()

    def _reliance_plot(self) -> pg.PlotWidget:
        plot = pg.PlotWidget(background="w")
        plot.setMinimumHeight(TRACK_HEIGHT)
        plot.getAxis("left").setWidth(AXIS_WIDTH)
        plot.showGrid(x=True, y=True, alpha=0.2)
        plot.setMouseEnabled(x=False, y=False)
        plot.hideButtons()
        plot.setYRange(0.0, 1.0, padding=0.05)
        plot.getAxis("left").setTicks([[(0.0, "0"), (0.5, ".5"), (1.0, "1")]])
        plot.setXLink(self.plots["action"])
        self.reliance_curve = plot.plot([], [], pen=pg.mkPen(RELIANCE_PEN, width=2), fillLevel=0.0,
                                        brush=pg.mkBrush(*RELIANCE_PEN, 60))
        playhead = pg.InfiniteLine(pos=0, angle=90, pen=pg.mkPen((200, 0, 0), width=1))
        plot.addItem(playhead)
        self.playheads.append(playhead)
        plot.scene().sigMouseClicked.connect(lambda ev, p=plot: self._clicked(p, ev))
        plot.setVisible(False)
        return plot

    def show_reliance(self, frames: np.ndarray | None, title: str) -> None:
        """Plot (T,) per-frame reliance in [0, 1] (None: an empty track), titled `title`."""
        y = np.zeros(0) if frames is None else np.asarray(frames, dtype=np.float64)
        self.reliance_curve.setData(np.arange(len(y)), y)
        self.reliance_plot.setTitle(title, size="8pt")

    def set_reliance_visible(self, visible: bool) -> None:
        self.reliance_plot.setVisible(visible)

    def refresh(self) -> None:
        c = self.comparison
        self._set_range("x", 0.0, float(max(c.length - 1, 1)))
        tops = []
        for kind in VIEWS:
            sliding = c.feet.get(kind)
            y = sliding.per_frame() if sliding is not None else np.zeros(0)
            self.curves[("sliding", kind)].setData(np.arange(len(y)), y)
            contact = np.flatnonzero(np.isfinite(y))
            self.sliding_dots[kind].setData(contact.astype(np.float64), y[contact].astype(np.float64))
            if contact.size:
                # each view's own 99th percentile, so one wild frame of an untrained model does not flatten
                # every curve, and a view of few contact frames is not cut off by another view's many
                tops.append(float(np.percentile(y[contact], 99)))
        high = float(np.ceil(max([SLIDING_RANGE, *tops]) * 100) / 100)
        self._set_range("sliding", 0.0, high)
        tasks = c.recognition.tasks if isinstance(c.recognition, RecognitionResult) else {}
        source = c.clips.get(ViewKind.SOURCE)
        for task in ("action", "subject"):
            label = None if source is None else getattr(source, task)
            self._plot_task(task, tasks.get(task), label)

    def _plot_task(self, task: str, probabilities: TaskProbabilities | None, label: int | None) -> None:
        plot = self.plots[task]
        name = TRACK_NAMES[task]
        c = self.comparison
        views = {} if probabilities is None else probabilities.per_frame
        match = c.class_match(task)
        index, title = None, f"{name}: no {task} recognizer" if c.clips else name
        if c.recognition_pending and not views:
            title = f"{name}: computing…"
        elif match is not None and match.withheld:  # another data set's classes: no curve, one line why
            title = f"{name}: {match.withheld}"
        elif match is not None and (label is None or label < 0):
            source_view = ViewKind.SOURCE.value
            if source_view in views:  # unknown label: the source's most likely class, said so
                index = int(np.argmax(views[source_view].mean(axis=0)))
                title = f"P(most likely class: {probabilities.class_names[index]})"
        elif match is not None:
            index = match.class_of(label)
            what = "true action" if task == "action" else "source subject"
            title = f"{name}: {match.missing_note(label)}" if index is None else \
                f"P({what}: {probabilities.class_names[index]})"
        plot.setTitle(title, size="8pt")
        for kind in VIEWS:
            y = probabilities.track(kind.value, index) if index is not None and kind.value in views else np.zeros(0)
            self.curves[(task, kind)].setData(np.arange(len(y)), y)

    def _set_range(self, axis: str, low: float, high: float) -> None:
        """Change an axis range only when it differs: a new range re-lays out the axes (costly). A new time
        range (another clip length) also bounds the zoom and shows the whole clip."""
        if self._ranges.get(axis) == (low, high):
            return
        self._ranges[axis] = (low, high)
        if axis == "x":
            margin = 0.01 * (high - low)
            for plot in self.plots.values():
                plot.setLimits(xMin=low - margin, xMax=high + margin, minXRange=min(MIN_ZOOM_FRAMES, high - low))
            self.plots["action"].setXRange(low, high, padding=0.01)  # the other tracks are linked to it
        else:
            self.plots[axis].setYRange(low, high, padding=0.05)
            # two ticks: automatic ones crowd an 80-pixel track
            self.plots[axis].getAxis("left").setTicks([[(low, f"{low:g}"), (high, f"{high:g}")]])

    def show_frame(self, frame: int) -> None:
        for line in self.playheads:
            line.setValue(frame)

    def show_whole_clip(self) -> None:
        """Zoom out to every frame of the comparison (what a double click on a track does)."""
        low, high = self._ranges.get("x", (0.0, 1.0))
        self.plots["action"].setXRange(low, high, padding=0.01)

    def _clicked(self, plot: pg.PlotWidget, event) -> None:
        if event.double():
            self.show_whole_clip()
            return
        point = plot.getPlotItem().vb.mapSceneToView(event.scenePos())
        frame = int(round(point.x()))
        if 0 <= frame < self.comparison.length:
            self.seek_requested.emit(frame)

    def _hovered(self, name: str, scene_pos) -> None:
        plot = self.plots[name]
        box = plot.getPlotItem().vb
        if not box.sceneBoundingRect().contains(scene_pos):
            self.hover_text.emit("")
            return
        self.hover_text.emit(self.readout(name, int(round(box.mapSceneToView(scene_pos).x()))))

    def readout(self, name: str, frame: int) -> str:
        """`name`'s values on `frame` (0-based) per view, as the status bar shows them ("" off the clip)."""
        if not 0 <= frame < self.comparison.length:
            return ""
        values = []
        for kind in VIEWS:
            _x, y = self.curves[(name, kind)].getData()
            if y is not None and frame < len(y) and np.isfinite(y[frame]):
                value = f"{y[frame]:.3f} m/s" if name == "sliding" else f"{100 * y[frame]:.1f} %"
                values.append(f"{kind.title} {value}")
            else:
                values.append(f"{kind.title} –")
        title = plot_title(self.plots[name])
        return f"frame {frame + 1}, {title}: " + " · ".join(values)


def plot_title(plot: pg.PlotWidget) -> str:
    """The track's title as plain text."""
    return plot.getPlotItem().titleLabel.text.replace("&nbsp;", " ").strip()

