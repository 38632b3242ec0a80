"""File > Open with options…: a file and what the importer cannot always read off it (the up axis, the unit, a
BVH joint map), as `dtmr.io.import_options.ImportOptions` (the choices of `dtmr data import --up/--units/
--joint-map`). The plain Open detects them; this dialog is for a file that opened lying down or at the wrong size.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from dtmr.io.body_size import UNITS
from dtmr.io.import_options import ImportOptions

from ..core.library import OPEN_FILTER

#: the up-axis choices as shown, and what they mean (None: detect)
UP_LABELS = {"Detect (the format's convention unless the body stands along another axis)": None,
             "+Y": "+y", "-Y": "-y", "+Z": "+z", "-Z": "-z", "+X": "+x", "-X": "-x"}
UNIT_LABELS = {"Detect (the unit that makes the body 0.8–2.5 m tall)": None,
               **{unit: unit for unit in UNITS}}
JOINT_MAP_FILTER = "Joint map (*.json);;All files (*)"


class OpenOptionsDialog(QDialog):
    """Modal; `chosen()` gives (path, options) once accepted. OK stays disabled without a file."""

    def __init__(self, parent: QWidget | None = None, folder: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Open with options")
        self.folder = folder
        self.path_edit = QLineEdit()
        self.path_edit.setPlaceholderText("a .bvh file or a 3-D pose array (.npy / .npz)")
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        self.up_box = QComboBox()
        self.up_box.addItems(list(UP_LABELS))
        self.units_box = QComboBox()
        self.units_box.addItems(list(UNIT_LABELS))
        self.joint_map_edit = QLineEdit()
        self.joint_map_edit.setPlaceholderText("optional: {\"BVH joint\": \"NTU-25 joint\", ...}")
        map_browse = QPushButton("Browse…")
        map_browse.clicked.connect(self._browse_joint_map)

        form = QFormLayout()
        form.addRow("File", _row(self.path_edit, browse))
        form.addRow("Up axis", self.up_box)
        form.addRow("Unit", self.units_box)
        form.addRow("BVH joint map", _row(self.joint_map_edit, map_browse))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.buttons)
        self.path_edit.textChanged.connect(self._update_ok)
        self._update_ok()

    def set_up(self, axis: str | None) -> None:
        self.up_box.setCurrentIndex(list(UP_LABELS.values()).index(axis))

    def set_units(self, unit: str | None) -> None:
        self.units_box.setCurrentIndex(list(UNIT_LABELS.values()).index(unit))

    def options(self) -> ImportOptions:
        joint_map = self.joint_map_edit.text().strip()
        return ImportOptions(up=UP_LABELS[self.up_box.currentText()], units=UNIT_LABELS[self.units_box.currentText()],
                             joint_map=Path(joint_map) if joint_map else None)

    def chosen(self) -> tuple[Path, ImportOptions]:
        return Path(self.path_edit.text().strip()), self.options()

    def _update_ok(self) -> None:
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(bool(self.path_edit.text().strip()))

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open clips", self.folder, OPEN_FILTER)
        if path:
            self.path_edit.setText(path)

    def _browse_joint_map(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "BVH joint map", self.folder, JOINT_MAP_FILTER)
        if path:
            self.joint_map_edit.setText(path)


def _row(*widgets: QWidget) -> QWidget:
    row = QWidget()
    layout = QHBoxLayout(row)
    layout.setContentsMargins(0, 0, 0, 0)
    for widget in widgets:
        layout.addWidget(widget)
    return row

