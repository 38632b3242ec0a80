"""Model panel: the retargeting checkpoints (one per β), the recognizers, the device, inference status.

Each model says which data it fits, on a second line (`dtmr.models.checkpoints.data_fit`: "fitted on this
library", "trained on synthetic — this library's data set", "trained on synthetic — not this library's
skeleton, actions, people"), with the details in its tooltip; one trained on another data set than the open
library's is also marked ⚠. Files that
could not be read are one elided line each, at most `PROBLEM_WIDTH` pixels wide (the whole text in the
tooltip), so a long error never widens the dock; one the user added has a Remove button.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QFontMetrics
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from dtmr.methods import KSAME, display_name, names
from dtmr.models.checkpoints.data_fit import data_fit

from ..core.checkpoints import CheckpointProblem, ModelCatalog
from .stable_size import keep_space_when_hidden, pin_label_lines

PATH_ROLE = Qt.ItemDataRole.UserRole
#: the inference status ("Retargeting: running the β = 1 model (2/3)") wraps to at most this many lines
STATUS_LINES = 3
#: the most pixels a line about an unreadable checkpoint takes (elided beyond; tooltip: the whole line)
PROBLEM_WIDTH = 220
#: marks a checkpoint trained on another data set than the open library's
OTHER_DATA_SET_MARK = "⚠ "
#: the data-fit line under a model's name
FIT_INDENT = "    "
#: the fit button's tooltip; the time is `dtmr.train.motion_fit` on N-UCLA's 1,020 training clips, measured in
#: the Studio's job on the shared 2-core CI machine (docs/studio.md, "Fitting k-same on the open library")
FIT_TOOLTIP = ("Fit a motion model on the open library's clips (the training half of the split its layout "
               "proposes) and show it; k-same on N-UCLA (1,020 training clips) took 11-24 s. The file goes into "
               "your models folder, under a new name.")
#: the fit status wraps to at most this many lines (the longest, a fit on every clip, takes 4 in the 272-px dock)
FIT_STATUS_LINES = 4


def fit_action_text(method: str) -> str:
    return f"Fit {display_name(method)} on this library"


class ModelPanel(QWidget):
    """Signals: `model_selected(str)` (checkpoint path), `device_selected(str)`, `add_requested()`,
    `rescan_requested()`, `remove_requested(str)` (a user-added checkpoint to forget)."""

    remove_requested = Signal(str)
    #: a fitted method's name (`dtmr.methods`, kind "fitted") to fit on the open library; and its cancel
    fit_requested = Signal(str)
    fit_cancel_requested = Signal()
    model_selected = Signal(str)
    device_selected = Signal(str)
    add_requested = Signal()
    rescan_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.setWordWrap(True)  # a model's data-fit line wraps in a narrow dock rather than being cut
        self.list.currentItemChanged.connect(self._item_changed)
        self.empty_label = QLabel("")
        self.empty_label.setWordWrap(True)
        self.problems = QVBoxLayout()  # one row per unreadable file (`_problem_row`)
        self.problems.setContentsMargins(0, 0, 0, 0)
        self.problem_rows: list[QWidget] = []
        self.recognizer_label = QLabel("")
        self.recognizer_label.setWordWrap(True)
        self.add_button = QPushButton("Add checkpoint…")
        self.add_button.clicked.connect(self.add_requested)
        self.rescan_button = QPushButton("Rescan")
        self.rescan_button.clicked.connect(self.rescan_requested)
        self.fit_button = self._fit_button()
        self.fit_cancel_button = QPushButton("Cancel")
        self.fit_cancel_button.clicked.connect(self.fit_cancel_requested)
        keep_space_when_hidden(self.fit_cancel_button)
        self.fit_cancel_button.setVisible(False)
        self.fit_status = QLabel("")
        self.fit_status.setWordWrap(True)
        pin_label_lines(self.fit_status, FIT_STATUS_LINES)
        self.set_fit_available("Open a library to fit a model on it.")
        self.device_box = QComboBox()
        self.device_box.currentIndexChanged.connect(self._device_changed)
        self.status_label = QLabel("")  # changes during every inference: it must not re-lay out the window
        self.status_label.setWordWrap(True)
        pin_label_lines(self.status_label, STATUS_LINES)
        self.busy = QProgressBar()
        self.busy.setTextVisible(False)
        self.busy.setMaximumHeight(8)
        keep_space_when_hidden(self.busy)
        self.busy.setVisible(False)

        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.rescan_button)
        fit_row = QHBoxLayout()
        fit_row.addWidget(self.fit_button, 1)
        fit_row.addWidget(self.fit_cancel_button)
        device = QHBoxLayout()
        device.addWidget(QLabel("Device"))
        device.addWidget(self.device_box, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(QLabel("Retargeting model (released view)"))
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty_label)
        layout.addLayout(self.problems)
        layout.addLayout(buttons)
        layout.addLayout(fit_row)
        layout.addWidget(self.fit_status)
        layout.addWidget(self.recognizer_label)
        layout.addLayout(device)
        layout.addWidget(self.status_label)
        layout.addWidget(self.busy)

    def _fit_button(self) -> QToolButton:
        """One click fits k-same; its menu offers every fitted method (`dtmr.methods`, kind "fitted")."""
        button = QToolButton()
        button.setPopupMode(QToolButton.ToolButtonPopupMode.MenuButtonPopup)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        menu = QMenu(button)
        self.fit_actions: dict[str, QAction] = {}
        for method in names("fitted"):
            action = menu.addAction(fit_action_text(method))
            action.triggered.connect(lambda _=False, m=method: self.fit_requested.emit(m))
            self.fit_actions[method] = action
        button.setMenu(menu)
        button.setDefaultAction(self.fit_actions[KSAME.name])
        return button

    def set_fit_available(self, reason: str = "") -> None:
        """Fitting is offered ("" ) or not, and why not (`reason`, in the tooltip and the status line)."""
        for action in self.fit_actions.values():
            action.setEnabled(not reason)
        self.fit_button.setEnabled(not reason)
        self.fit_button.setToolTip(reason or FIT_TOOLTIP)

    def show_fit_status(self, text: str, running: bool, details: str = "") -> None:
        """What the fit is doing or did (one line, wrapped; `details` in the tooltip); while `running` the button
        waits and Cancel shows."""
        self.fit_status.setText(text)
        self.fit_status.setToolTip(f"{text}\n{details}" if details else text)
        self.fit_cancel_button.setVisible(running)
        for action in self.fit_actions.values():
            action.setEnabled(not running)
        self.fit_button.setEnabled(not running)

    def show_catalog(self, catalog: ModelCatalog, selected: str, models_dir: Path) -> None:
        """List the retargeters (selecting the path `selected`) and the recognizers found in `models_dir`."""
        self.list.blockSignals(True)
        self.list.clear()
        for info in catalog.retargeters:
            fit = data_fit(info, catalog.library)
            mark = OTHER_DATA_SET_MARK if fit.fits is False else ""
            item = QListWidgetItem(f"{mark}{info.label}\n{FIT_INDENT}{fit.line}")
            item.setData(PATH_ROLE, str(info.path))
            item.setToolTip(f"{info.path}\n{fit.details}")
            self.list.addItem(item)
            if str(info.path) == selected:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        notes = []
        if not catalog.retargeters:
            notes.append(f"No retargeting checkpoint in {models_dir}: the retargeted and released views "
                         "stay empty. Add one with Add checkpoint…, or train one in the Train tab.")
        self.empty_label.setText("\n".join(notes))
        self.empty_label.setVisible(bool(notes))
        self._show_problems(catalog.problems)
        lines, details = [], []
        for task, info in sorted(catalog.recognizers.items()):
            fit = data_fit(info, catalog.library)
            mark = OTHER_DATA_SET_MARK if fit.fits is False else ""
            lines.append(f"{task}: {mark}{info.label}\n{FIT_INDENT}{fit.line}")
            details.append(f"{info.path}\n{fit.details}")
        missing = [t for t in ("action", "subject") if t not in catalog.recognizers]
        if missing:
            lines.append(f"No {' or '.join(missing)} recognizer: those predictions are not shown.")
        self.recognizer_label.setText("Recognizers\n" + "\n".join(lines))
        self.recognizer_label.setToolTip("\n\n".join(details))

    def _show_problems(self, problems: list[CheckpointProblem]) -> None:
        for row in self.problem_rows:
            self.problems.removeWidget(row)
            row.deleteLater()
        self.problem_rows = [self._problem_row(p) for p in problems]
        for row in self.problem_rows:
            self.problems.addWidget(row)

    def _problem_row(self, problem: CheckpointProblem) -> QWidget:
        """One unreadable file: its line elided to PROBLEM_WIDTH, and Remove when the user added it."""
        row = QWidget()
        layout = QHBoxLayout(row)
        layout.setContentsMargins(0, 0, 0, 0)
        label = QLabel(QFontMetrics(self.font()).elidedText(problem.text, Qt.TextElideMode.ElideMiddle,
                                                            PROBLEM_WIDTH))
        label.setToolTip(problem.text)
        label.setMaximumWidth(PROBLEM_WIDTH)
        label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)  # never widens the dock
        label.setStyleSheet("color: #a00000")
        layout.addWidget(label, 1)
        if problem.removable is not None:
            remove = QPushButton("Remove")
            remove.setToolTip(f"Forget {problem.removable}: it is no longer listed")
            remove.clicked.connect(lambda _=False, p=str(problem.removable): self.remove_requested.emit(p))
            layout.addWidget(remove)
        return row

    def show_devices(self, devices: list[str], selected: str) -> None:
        self.device_box.blockSignals(True)
        self.device_box.clear()
        for device in devices:
            self.device_box.addItem(device, device)
        index = self.device_box.findData(selected)
        self.device_box.setCurrentIndex(max(index, 0))
        self.device_box.blockSignals(False)

    def show_status(self, text: str, busy: bool) -> None:
        self.status_label.setText(text)
        self.busy.setVisible(busy)
        self.busy.setRange(0, 0 if busy else 1)

    @property
    def selected_path(self) -> str:
        item = self.list.currentItem()
        return "" if item is None else str(item.data(PATH_ROLE))

    def _item_changed(self, current, _previous) -> None:
        if current is not None:
            self.model_selected.emit(str(current.data(PATH_ROLE)))

    def _device_changed(self, _index: int) -> None:
        device = self.device_box.currentData()
        if device:
            self.device_selected.emit(device)
