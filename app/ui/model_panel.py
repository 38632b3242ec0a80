"""Model panel: the retargeting checkpoints (one per β), the recognizers, the device, inference status."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..core.checkpoints import ModelCatalog
from .stable_size import keep_space_when_hidden, pin_label_lines

PATH_ROLE = Qt.ItemDataRole.UserRole
#: the inference status ("Retargeting: running the β = 1 model (2/3)") wraps to at most this many lines
STATUS_LINES = 3


class ModelPanel(QWidget):
    """Signals: `model_selected(str)` (checkpoint path), `device_selected(str)`, `add_requested()`,
    `rescan_requested()`."""

    model_selected = Signal(str)
    device_selected = Signal(str)
    add_requested = Signal()
    rescan_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.list = QListWidget()
        self.list.currentItemChanged.connect(self._item_changed)
        self.empty_label = QLabel("")
        self.empty_label.setWordWrap(True)
        self.recognizer_label = QLabel("")
        self.recognizer_label.setWordWrap(True)
        self.add_button = QPushButton("Add checkpoint…")
        self.add_button.clicked.connect(self.add_requested)
        self.rescan_button = QPushButton("Rescan")
        self.rescan_button.clicked.connect(self.rescan_requested)
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
        device = QHBoxLayout()
        device.addWidget(QLabel("Device"))
        device.addWidget(self.device_box, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(QLabel("Retargeting model (released view)"))
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty_label)
        layout.addLayout(buttons)
        layout.addWidget(self.recognizer_label)
        layout.addLayout(device)
        layout.addWidget(self.status_label)
        layout.addWidget(self.busy)

    def show_catalog(self, catalog: ModelCatalog, selected: str, models_dir: Path) -> None:
        """List the retargeters (selecting the path `selected`) and the recognizers found in `models_dir`."""
        self.list.blockSignals(True)
        self.list.clear()
        for info in catalog.retargeters:
            item = QListWidgetItem(info.label)
            item.setData(PATH_ROLE, str(info.path))
            item.setToolTip(str(info.path))
            self.list.addItem(item)
            if str(info.path) == selected:
                self.list.setCurrentItem(item)
        self.list.blockSignals(False)
        notes = []
        if not catalog.retargeters:
            notes.append(f"No retargeting checkpoint in {models_dir}: the retargeted and released views "
                         "stay empty. Add one with Add checkpoint…, or train one in the Train tab.")
        notes += catalog.problems
        self.empty_label.setText("\n".join(notes))
        self.empty_label.setVisible(bool(notes))
        lines = [f"{task}: {info.label}" for task, info in sorted(catalog.recognizers.items())]
        missing = [t for t in ("action", "subject") if t not in catalog.recognizers]
        if missing:
            lines.append(f"No {' or '.join(missing)} recognizer: those predictions are not shown.")
        self.recognizer_label.setText("Recognizers\n" + "\n".join(lines))

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
