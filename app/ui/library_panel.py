"""Library panel: open buttons, search and filters, and the clip table. Selecting a row picks the source.

Only the user moving the current row picks a source: while a search or filter hides rows, Qt moves the
current row to a neighbour, and the panel ignores that (before, typing in the search box changed the source
clip). After a filter change the source's row is current again, or no row is when the filter hides it.

For a release the panel says whether its key is open (then the table knows each clip's source subject)
and which audit fills the Risk column. The Plausibility column fills from the controller's
`plausibility_scored` signal (`set_plausibility`), while the clips are scored.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from ..core.library import OpenedLibrary
from ..core.plausibility import PlausibilityColumn
from .clip_table import ClipFilterProxy, ClipTableModel, ClipTableView

FILTER_KEYS = (("subject", "All subjects"), ("action", "All actions"), ("view", "All views"))


class LibraryPanel(QWidget):
    """Signals: `clip_selected(int)` (the source index), `pin_requested(int)` (use a clip as the pinned
    reference, from the table's context menu), `open_file_requested()`, `open_folder_requested()`."""

    clip_selected = Signal(int)
    pin_requested = Signal(int)
    open_file_requested = Signal()
    open_folder_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.model = ClipTableModel(self)
        self.proxy = ClipFilterProxy(self.model, self)
        self.library: OpenedLibrary | None = None
        #: the source clip this panel last picked or was told about (None: none)
        self.source_index: int | None = None
        self._filtering = False
        self.proxy.filter_about_to_change.connect(self._filter_about_to_change)
        self.proxy.filter_changed.connect(self._filter_done)

        self.open_file_button = QPushButton("Open file…")
        self.open_folder_button = QPushButton("Open folder…")
        self.open_file_button.clicked.connect(self.open_file_requested)
        self.open_folder_button.clicked.connect(self.open_folder_requested)
        self.path_label = QLabel("No library open. Open a file or drop one here.")
        self.path_label.setWordWrap(True)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search clip or action name")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.proxy.set_search)
        self.filters: dict[str, QComboBox] = {}
        filter_row = QHBoxLayout()
        for key, everything in FILTER_KEYS:
            combo = QComboBox()
            combo.addItem(everything, None)
            combo.currentIndexChanged.connect(lambda _i, k=key: self._filter_changed(k))
            self.filters[key] = combo
            filter_row.addWidget(combo)
        self.count_label = QLabel("")
        self.table = ClipTableView()
        self.table.setModel(self.proxy)
        self.table.selectionModel().currentRowChanged.connect(self._row_changed)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._context_menu)
        self.context_menu = QMenu(self)
        self.pin_action = self.context_menu.addAction("Use as pinned reference")
        self.pin_action.triggered.connect(self._pin_clicked_row)
        self._menu_row = -1
        self.proxy.rowsInserted.connect(self._update_count)
        self.proxy.modelReset.connect(self._update_count)
        self.proxy.layoutChanged.connect(self._update_count)
        self.proxy.rowsRemoved.connect(self._update_count)

        buttons = QHBoxLayout()
        buttons.addWidget(self.open_file_button)
        buttons.addWidget(self.open_folder_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(buttons)
        layout.addWidget(self.path_label)
        layout.addWidget(self.search)
        layout.addLayout(filter_row)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count_label)

    def set_library(self, library: OpenedLibrary | None) -> None:
        self.library = library
        self.source_index = None
        self.model.set_library(library)
        self.path_label.setText(library_text(library) if library else "No library open.")
        for key, combo in self.filters.items():
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(dict(FILTER_KEYS)[key], None)
            values = np.unique(self.model.column_values(key))
            for value in values[values >= 0]:
                text = library.action_name(int(value)) if key == "action" else f"{key} {value}"
                combo.addItem(text, int(value))
            combo.setEnabled(combo.count() > 1)
            combo.blockSignals(False)
            self.proxy.filters[key] = None
        self.proxy.set_search(self.search.text())
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self._update_count()

    def set_audit(self, library: OpenedLibrary) -> None:
        """The same clips with another audit: refill the Risk column."""
        self.library = library
        self.model.library = library
        self.model.set_risk(library.risk)
        self.path_label.setText(library_text(library))

    def set_plausibility(self, column: PlausibilityColumn) -> None:
        """More clips of the open library scored: refill the Plausibility column."""
        self.model.set_plausibility(column)

    def select_clip(self, index: int) -> None:
        """Make source clip `index` the current row (clearing filters that hide it)."""
        self.source_index = index
        row = self.proxy.proxy_row(index)
        if row < 0:
            self.search.clear()
            for combo in self.filters.values():
                combo.setCurrentIndex(0)
            self.proxy.set_verdict_filter(None)
            row = self.proxy.proxy_row(index)
        self.table.selectRow(row)
        self.table.scrollTo(self.proxy.index(row, 0))

    def _filter_changed(self, key: str) -> None:
        self.proxy.set_filter(key, self.filters[key].currentData())
        self._update_count()

    def _row_changed(self, current, _previous) -> None:
        if current.isValid() and not self._filtering:
            self.source_index = self.proxy.mapToSource(current).row()
            self.clip_selected.emit(self.source_index)

    def _filter_about_to_change(self) -> None:
        self._filtering = True

    def _filter_done(self) -> None:
        """Put the current row back on the source clip (none when the filter hides it)."""
        try:
            selection = self.table.selectionModel()
            row = -1 if self.source_index is None else self.proxy.proxy_row(self.source_index)
            if row < 0:
                selection.clear()
            else:
                index = self.proxy.index(row, 0)
                selection.setCurrentIndex(index, selection.SelectionFlag.ClearAndSelect
                                          | selection.SelectionFlag.Rows)
        finally:
            self._filtering = False

    def _context_menu(self, pos) -> None:
        index = self.table.indexAt(pos)
        if index.isValid():
            self._menu_row = self.proxy.mapToSource(index).row()
            self.context_menu.popup(self.table.viewport().mapToGlobal(pos))

    def _pin_clicked_row(self) -> None:
        if self._menu_row >= 0:
            self.pin_requested.emit(self._menu_row)

    def _update_count(self, *_args) -> None:
        total = self.model.rowCount()
        shown = self.proxy.rowCount()
        self.count_label.setText(f"{shown} of {total} clips" if shown != total else f"{total} clips")


def library_text(library: OpenedLibrary) -> str:
    """The library's path and, for a release, its key and audit."""
    lines = [str(library.path)]
    if library.release:
        if library.key is not None:
            lines.append(f"Release with its key ({Path(library.key.path).name}): source subjects known")
        else:
            lines.append("Release without its key: subjects unknown (File ▸ Open release key…)")
    if library.audit is not None:
        known = int((~np.isnan(library.risk)).sum())
        lines.append(f"Risk from {library.audit.path} ({known} of {len(library.source)} clips)")
    elif library.release:
        lines.append("No audit: Risk empty (File ▸ Open audit…)")
    return "\n".join(lines)
