"""Live predictions: top-5 actions and top-5 identities of each view for the window at the current frame.

The probabilities of every frame's window are computed once per clip/reference/model in the recognition
worker; moving the playhead only reads another row. The true label is marked ✔ (the source's action;
the source's subject for identity) and the reference's subject is marked ◆: a good anonymization moves
identity mass away from ✔, ideally towards ◆. Which class is the true label is matched by name
(`dtmr.data.label_set.match_classes`). A recognizer whose classes are not the library's labels (the
bundled synthetic-trained ones on N-UCLA) shows no class and no probability: its cells say "no
prediction" and the notes under the header give the one-line reason (`ClassMatch.withheld`), wrapped in
as many lines as it needs (`NOTES_LINES` at the default window size, tests/app/test_honest_predictions.py).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QGridLayout, QLabel, QVBoxLayout, QWidget

from ..core.recognition import TOP_K, RecognitionResult, TaskProbabilities
from ..state.comparison import VIEWS, Comparison, ViewKind
from .stable_size import pin_label_lines

TASK_TITLES = {"action": "Action", "subject": "Identity"}
#: the header wraps to at most this many lines in a narrow dock
HEADER_LINES = 3
#: why a task's predictions are not shown or its true label is not marked (one line per task, wrapped): the two
#: withheld lines of the bundled recognizers take 5 lines in the right dock (272 px, default size and 1366 x 768)
NOTES_LINES = 6
#: a withheld task's cell: no class, no probability (the notes line says why)
WITHHELD_CELL = '<span style="color: #808080">no prediction</span>'


class PredictionsPanel(QWidget):
    def __init__(self, comparison: Comparison, parent=None) -> None:
        super().__init__(parent)
        self.comparison = comparison
        self.cells: dict[tuple[str, ViewKind], QLabel] = {}
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.notes = QLabel()
        self.notes.setWordWrap(True)
        self.notes.setStyleSheet("color: #a05000")
        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(2)
        for view_index, kind in enumerate(VIEWS):  # one block per view: its name, then action | identity
            grid.addWidget(QLabel(f"<b>{kind.title}</b>"), 2 * view_index, 0, 1, 2)
            for task_index, task in enumerate(("action", "subject")):
                cell = QLabel()
                cell.setTextFormat(Qt.TextFormat.RichText)
                cell.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
                pin_label_lines(cell, 1 + TOP_K)  # the task's title, then the top 5
                self.cells[(task, kind)] = cell
                grid.addWidget(cell, 2 * view_index + 1, task_index)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        pin_label_lines(self.header, HEADER_LINES)
        pin_label_lines(self.notes, NOTES_LINES)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 2, 4, 2)
        layout.addWidget(self.header)
        layout.addWidget(self.notes)
        layout.addLayout(grid)
        layout.addStretch(1)
        self._frame = 0
        self._sized_for: dict[str, tuple[str, ...]] = {}
        comparison.recognition_changed.connect(self._recognition_changed)
        comparison.clips_changed.connect(lambda: self.show_frame(self._frame))
        self.show_frame(0)

    def _recognition_changed(self) -> None:
        result = self.comparison.recognition
        if isinstance(result, RecognitionResult):
            self._fit_class_names(result)
        self.show_frame(self._frame)

    def _fit_class_names(self, result: RecognitionResult) -> None:
        """Widen a task's cells to its longest class name, once per set of recognizers: the cells' width
        never follows the text shown (`stable_size`), so this is the one relayout they cause."""
        bold = QFont(self.font())
        bold.setBold(True)
        metrics = QFontMetrics(bold)
        for task, probabilities in result.tasks.items():
            match = self.comparison.class_match(task)
            if match is not None and match.withheld:  # its classes are never shown
                continue
            names = tuple(probabilities.class_names)
            if self._sized_for.get(task) == names:
                continue
            self._sized_for[task] = names
            width = max(metrics.horizontalAdvance(f"100.0% {name} ✔") for name in names) + 4
            for kind in VIEWS:
                self.cells[(task, kind)].setMinimumWidth(width)

    def show_frame(self, frame: int) -> None:
        self._frame = frame
        c = self.comparison
        result = c.recognition if isinstance(c.recognition, RecognitionResult) else None
        source = c.clips.get(ViewKind.SOURCE)
        if source is None:
            self.header.setText("Select a clip to see predictions.")
        elif c.recognition_pending and result is None:
            self.header.setText("Predictions: the recognizers are running…")
        elif result is None:
            self.header.setText("No action or subject recognizer in the model folder: predictions are not shown.")
        else:
            self.header.setText(f"Top-5 for the {result.request.window}-frame window centred on frame {frame + 1}. "
                                "✔ true label, ◆ reference's subject.")
        notes = [] if source is None else [n for n in (self._note(task, source) for task in ("action", "subject")) if n]
        self.notes.setText("\n".join(notes))
        self.notes.setToolTip("\n".join(notes))
        for task in ("action", "subject"):
            probabilities = result.tasks.get(task) if result else None
            for kind in VIEWS:
                self.cells[(task, kind)].setText(self._cell(task, kind, probabilities, frame))

    def _note(self, task: str, source) -> str:
        """Why the `task` recognizer shows no prediction, or why the source's true label is not marked ("" when
        it is, or no recognizer ran)."""
        match = self.comparison.class_match(task)
        return "" if match is None else match.withheld or match.missing_note(getattr(source, task))

    def _cell(self, task: str, kind: ViewKind, probabilities: TaskProbabilities | None, frame: int) -> str:
        title = f"<u>{TASK_TITLES[task]}</u><br>"
        c = self.comparison
        clip_frame = c.frame_of(kind, frame)
        if probabilities is None:
            if c.recognition_pending:
                return title + "computing…"
            return title + ("no recognizer" if c.recognition is not None else "—")
        if clip_frame is None or kind.value not in probabilities.per_frame:
            # the model view is not there yet, or its predictions are on their way
            return title + ("computing…" if c.recognition_pending and clip_frame is not None else "—")
        source = c.clips[ViewKind.SOURCE]
        match = c.class_match(task)
        if match.withheld:  # another data set's classes: no guess is shown, the notes say why
            return title + WITHHELD_CELL
        true_class = match.class_of(getattr(source, task))
        reference = match.class_of(getattr(c.reference, "subject", None)) if task == "subject" else None
        lines = []
        for p in probabilities.top_k(kind.value, clip_frame):
            mark = " ✔" if p.class_index == true_class else (" ◆" if p.class_index == reference else "")
            text = f"{p.probability * 100:5.1f}% {html.escape(p.name)}{mark}"
            lines.append(f"<b>{text}</b>" if mark == " ✔" else text)
        return title + "<br>".join(lines)
