"""Export dialog: GIF/MP4 of the three views side by side (titles, frame counter, predictions).

Modeless (`show()`), so playback and the other panels stay usable; the work happens in the export `JobThread`
with a progress bar and Cancel. Once prepared it follows the comparison: another clip or model shows at once
(the proposed file name follows the clip; a path the user typed stays). The format follows the path's suffix
as it is typed, and the suffix follows the format chosen. Frames are rendered by `dtmr.render`, as
`dtmr export` renders them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
)

from dtmr.errors import DtmrError
from dtmr.render import DEFAULT_PRESET, PRESETS
from dtmr.render.frame import DEFAULT_PANEL_SIZE

from ..core.export_job import (
    ExportRequest,
    ShownOutputs,
    check_request,
    default_export_folder,
    withheld_predictions,
)
from ..core.provenance import shown_provenance
from ..state.comparison import Comparison, ViewKind
from ..workers.job_thread import JobThread

OVERWRITE_LABEL = "Replace an existing file that is not a video"
FORMAT_FILTERS = {".gif": "GIF animation (*.gif)", ".mp4": "MP4 video, H.264 (*.mp4)"}


class ExportDialog(QDialog):
    """Signal: `exported(str)` with the written path."""

    exported = Signal(str)

    def __init__(self, thread: JobThread, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export video")
        self.thread = thread
        self._request_id: int | None = None
        self._context: dict = {}
        self._comparison: Comparison | None = None
        self._given: dict = {}
        self._folder = Path.home()
        #: the path the dialog proposed (replaced when the clip changes) and the (clip, length) shown
        self._proposed = ""
        self._shown: tuple[str, int] | None = None
        #: the comparison changed during an export: shown when it ends
        self._stale = False

        self.path_edit = QLineEdit()
        self.path_edit.textEdited.connect(lambda _text: self._suffix_to_format())
        self.browse_button = QPushButton("Browse…")
        self.browse_button.clicked.connect(self.browse)
        self.format_box = QComboBox()
        for suffix, label in FORMAT_FILTERS.items():
            self.format_box.addItem(label, suffix)
        self.format_box.currentIndexChanged.connect(self._format_changed)
        self.first_frame = QSpinBox()
        self.last_frame = QSpinBox()
        self.fps_box = QDoubleSpinBox()
        self.fps_box.setRange(1.0, 240.0)
        self.fps_box.setDecimals(2)
        self.width_box = QSpinBox()
        self.height_box = QSpinBox()
        for box in (self.width_box, self.height_box):
            box.setRange(32, 7680)
            box.setSingleStep(16)
        self.width_box.setValue(3 * DEFAULT_PANEL_SIZE[0])
        self.height_box.setValue(DEFAULT_PANEL_SIZE[1])
        self.camera_box = QComboBox()
        for name in PRESETS:
            self.camera_box.addItem(name, name)
        self.camera_box.setCurrentIndex(self.camera_box.findData(DEFAULT_PRESET))
        self.predictions_box = QCheckBox("Predictions (top-1 action and identity per view)")
        #: why a recognizer's predictions are not in the video (`withheld_predictions`), under the check box
        self.predictions_note = QLabel("")
        self.predictions_note.setWordWrap(True)
        self.predictions_note.setStyleSheet("color: #a05000")
        self.feet_box = QCheckBox("Foot-sliding colours")
        self.feet_box.setChecked(True)
        self.overwrite_box = QCheckBox(OVERWRITE_LABEL)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        self.buttons = QDialogButtonBox()
        self.export_button = self.buttons.addButton("Export", QDialogButtonBox.ButtonRole.AcceptRole)
        self.cancel_button = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        self.export_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel_or_close)

        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(self.browse_button)
        range_row = QHBoxLayout()
        range_row.addWidget(self.first_frame)
        range_row.addWidget(QLabel("to"))
        range_row.addWidget(self.last_frame)
        size_row = QHBoxLayout()
        size_row.addWidget(self.width_box)
        size_row.addWidget(QLabel("×"))
        size_row.addWidget(self.height_box)
        form = QFormLayout()
        form.addRow("File", path_row)
        form.addRow("Format", self.format_box)
        form.addRow("Frames", range_row)
        form.addRow("Frames per second", self.fps_box)
        form.addRow("Size (whole frame)", size_row)
        form.addRow("Camera", self.camera_box)
        form.addRow("", self.predictions_box)
        form.addRow("", self.predictions_note)
        form.addRow("", self.feet_box)
        form.addRow("", self.overwrite_box)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.progress)
        layout.addWidget(self.status)
        layout.addWidget(self.buttons)

        thread.job_progress.connect(self._progress)
        thread.job_finished.connect(self._finished)
        thread.job_failed.connect(self._failed)
        thread.job_cancelled.connect(self._cancelled)

    # --- filling in --------------------------------------------------------------------------------
    def prepare(self, comparison: Comparison, recognizers: dict, action_names: dict, device: str,
                default_folder: str, inputs: Sequence[str | Path] = ()) -> bool:
        """Take the current comparison and follow it while the dialog is open; False (and a message) when
        there is nothing to export yet.

        `default_folder` is the library's folder (the file goes there when it is the user's,
        `default_export_folder`); `inputs` are the files the comparison comes from (library, checkpoint):
        never written over."""
        if self._comparison is not comparison:
            if self._comparison is not None:
                self._comparison.clips_changed.disconnect(self._follow)
            comparison.clips_changed.connect(self._follow)
            self._comparison = comparison
        self._given = {"recognizers": recognizers, "action_names": action_names, "device": device,
                       "inputs": tuple(Path(p) for p in inputs)}
        self._folder = default_export_folder(default_folder)
        return self._fill()

    def _follow(self) -> None:
        """The comparison changed (another clip, another model): show it, once no export is running."""
        self._stale = self.running
        if not self.running:
            self._fill()

    def _fill(self) -> bool:
        comparison = self._comparison
        clips = comparison.clips
        if ViewKind.RELEASED not in clips or comparison.reference is None:
            self._context = {}
            self.status.setText("Nothing to export yet: select a clip and wait for the model's views.")
            self.export_button.setEnabled(False)
            return False
        self.export_button.setEnabled(not self.running)
        source = clips[ViewKind.SOURCE]
        released = clips[ViewKind.RELEASED]
        made = shown_provenance(released)
        beta = math.nan if made is None or made.beta is None else made.beta
        method = "model" if made is None else made.method
        if comparison.beta_differs:  # the β slider's β: the released panel's title says it is not the model's
            method = f"{method}, β set in the Studio (the model's β = {comparison.model_beta:g})"
        self._context = dict(
            source=source, reference=comparison.reference,
            outputs=ShownOutputs(clips[ViewKind.RETARGETED], released, beta, method),
            **self._given,
        )
        length = comparison.length
        if self._shown != (source.name, length):  # another clip: its whole range and rate
            self._shown = (source.name, length)
            for box in (self.first_frame, self.last_frame):
                box.setRange(1, length)
            self.first_frame.setValue(1)
            self.last_frame.setValue(length)
            self.fps_box.setValue(source.fps)
        recognizers = self._given["recognizers"]
        self.predictions_box.setEnabled(bool(recognizers))
        self.predictions_box.setChecked(bool(recognizers))
        withheld = withheld_predictions(recognizers, comparison.labels)
        self.predictions_note.setText("\n".join(withheld))
        self.predictions_note.setVisible(bool(withheld))
        if self.path_edit.text() in ("", self._proposed):  # the user's own path stays
            suffix = self.format_box.currentData()
            self._proposed = str(self._folder / f"{source.name}_comparison{suffix}")
            self.path_edit.setText(self._proposed)
        self.status.setText(f"{length} frames; {comparison.model_note}")
        return True

    def browse(self) -> None:
        suffix = self.format_box.currentData()
        path, _ = QFileDialog.getSaveFileName(self, "Export video", self.path_edit.text(),
                                              ";;".join(FORMAT_FILTERS.values()), FORMAT_FILTERS[suffix])
        if path:
            self.path_edit.setText(path)
            self._suffix_to_format()

    def _format_changed(self, _index: int) -> None:
        """The format chosen: the path's suffix follows (and a path typed with a known suffix sets the format)."""
        text = self.path_edit.text()
        if text:
            was_proposed = text == self._proposed
            self.path_edit.setText(str(Path(text).with_suffix(self.format_box.currentData())))
            if was_proposed:
                self._proposed = self.path_edit.text()

    def _suffix_to_format(self) -> None:
        index = self.format_box.findData(Path(self.path_edit.text()).suffix.lower())
        if index >= 0:
            self.format_box.blockSignals(True)
            self.format_box.setCurrentIndex(index)
            self.format_box.blockSignals(False)

    # --- running -----------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._request_id is not None

    def request(self) -> ExportRequest:
        self._suffix_to_format()
        path = Path(self.path_edit.text()).with_suffix(self.format_box.currentData())
        first, last = self.first_frame.value() - 1, self.last_frame.value()
        if last <= first:
            raise ValueError(f"the frame range {first + 1} to {last} is empty")
        c = self._context
        return ExportRequest(
            path=path, source=c["source"], reference=c["reference"], outputs=c["outputs"],
            frames=range(first, last), fps=self.fps_box.value(),
            size=(self.width_box.value(), self.height_box.value()), preset=self.camera_box.currentData(),
            foot_sliding=self.feet_box.isChecked(),
            recognizers=c["recognizers"] if self.predictions_box.isChecked() else None,
            action_names=c["action_names"], labels=self._comparison.labels, device=c["device"], inputs=c["inputs"],
            overwrite=self.overwrite_box.isChecked(),
        )

    def start(self) -> None:
        if self.running or not self._context:
            return
        try:
            request = self.request()
            check_request(replace(request, overwrite=True))
        except (ValueError, DtmrError) as exc:
            self.status.setText(str(exc))
            return
        try:
            check_request(request)
        except DtmrError:
            self.status.setText(f"{request.path} exists and is not a GIF or MP4 video: tick “{OVERWRITE_LABEL}” "
                                "to replace it.")
            return
        self.path_edit.setText(str(request.path))
        self._request_id = self.thread.submit(request)
        self.export_button.setEnabled(False)
        self.cancel_button.setText("Cancel export")
        self.progress.setRange(0, 0)
        self.status.setText(f"Exporting {request.path.name}…")

    def cancel_or_close(self) -> None:
        if self.running:
            self.thread.cancel()
            self.status.setText("Cancelling…")
        else:
            self.reject()

    def _progress(self, request_id: int, done: int, total: int, message: str) -> None:
        if request_id == self._request_id:
            self.progress.setRange(0, max(total, 1))
            self.progress.setValue(done)
            self.status.setText(message)

    def _finished(self, request_id: int, path) -> None:
        if request_id == self._request_id:
            self._done(f"Wrote {path}")
            self.progress.setValue(self.progress.maximum())
            self.exported.emit(str(path))

    def _failed(self, request_id: int, text: str) -> None:
        if request_id == self._request_id:
            self._done(f"Export failed: {text}")

    def _cancelled(self, request_id: int) -> None:
        if request_id == self._request_id:
            self._done("Export cancelled; nothing was written.")
            self.progress.setRange(0, 1)
            self.progress.setValue(0)

    def _done(self, text: str) -> None:
        self._request_id = None
        self.export_button.setEnabled(True)
        self.cancel_button.setText("Close")
        if self._stale:
            self._stale = False
            self._fill()
        self.status.setText(text)
