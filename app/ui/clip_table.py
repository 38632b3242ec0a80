"""The library's clip list: a table model over the metadata table, and a filtering/sorting proxy.

Filters are evaluated with numpy over whole columns when they change (a 50k-clip library filters in
milliseconds); `filterAcceptsRow` then only reads the precomputed mask.

The Risk column is each clip's risk from the release's audit (`audit.json`: the probability the worst
attacker gives the clip's true subject), empty where the audit gives none; it sorts numerically, clips
without a risk below every risk. The Verdict column is the open review's verdict (app.state.review); it
sorts implausible first, then unsure, plausible and unreviewed. The Plausibility column is each clip's
plausibility score (`dtmr.eval.plausibility`, 0 = plausible, higher = less), filled by the controller's
plausibility job as it scores the clips ("…" until then, "–" for a clip that could not be scored); it
sorts numerically with the unscored clips below every score, so a descending sort puts the worst first.

Every filter change is bracketed by the proxy's `filter_about_to_change` / `filter_changed` signals: while
rows disappear Qt moves the view's current row to a neighbour, which must not count as the user picking a
clip (the library panel ignores current-row changes in between).
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableView

from ..core.library import OpenedLibrary
from ..core.plausibility import PlausibilityColumn

COLUMNS = ("#", "Clip", "Subject", "Action", "View", "Rep.", "Frames", "Risk", "Verdict", "Plausibility")
#: the integer metadata column behind each table column from the third to the seventh (-1 = unknown, shown empty)
INT_KEYS = ("subject", "action", "view", "repetition", "num_frames")
RISK_COLUMN = COLUMNS.index("Risk")
VERDICT_COLUMN = COLUMNS.index("Verdict")
PLAUSIBILITY_COLUMN = COLUMNS.index("Plausibility")
#: where a clip sorts before its score arrives, and when it could not be scored (scores are >= 0)
NOT_SCORED, SCORE_FAILED = -2.0, -1.0
#: the tooltip of a score of a release opened with its key (its subjects are known, their bodies are not)
KEYED_RELEASE_TIP = ("Scored against the clip's own mean bone lengths: the key names each clip's source "
                     "subject, not that subject's body")
#: ascending sort of the Verdict column: the clips that need a look first, unreviewed last
VERDICT_ORDER = {"implausible": 0, "unsure": 1, "plausible": 2, "": 3}
#: where a clip without a risk sorts (risks lie in [0, 1])
NO_RISK = -1.0
SORT_ROLE = Qt.ItemDataRole.UserRole
HEADER_TIPS = {
    "Subject": "The performer (for a release: from its key, when it is open)",
    "Risk": "From the release's audit: the probability the worst attacker gives the clip's true subject",
    "Verdict": "Your review of the clip (keys 1 / 2 / 3: plausible / implausible / unsure)",
    "Plausibility": ("Plausibility score (docs/evaluation.md): 0 = plausible, higher = less; bone lengths "
                     "against the clip's own mean lengths. Sort descending for the worst first"),
}


class ClipTableModel(QAbstractTableModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.library: OpenedLibrary | None = None
        self._names = np.zeros(0, dtype=object)
        self._ints: dict[str, np.ndarray] = {}
        self._actions = np.zeros(0, dtype=object)
        self._risk = np.zeros(0)
        self._verdicts = np.zeros(0, dtype=object)
        #: the open library's plausibility column (None until its job reported; `app.core.plausibility`)
        self._plausibility: PlausibilityColumn | None = None

    def set_library(self, library: OpenedLibrary | None) -> None:
        self.beginResetModel()
        self.library = library
        if library is None:
            self._names = np.zeros(0, dtype=object)
            self._ints = {}
            self._actions = np.zeros(0, dtype=object)
        else:
            n = len(library.source)
            table = library.table
            self._ints = {k: _int_column(table.get(k), n) for k in INT_KEYS}
            names = table.get("sample_name")
            self._names = np.array([str(v) if str(v) else f"clip {i}" for i, v in
                                    enumerate(names if names is not None else [""] * n)], dtype=object)
            self._actions = np.array([library.action_name(int(a)) for a in self._ints["action"]], dtype=object)
        self._risk = np.zeros(0) if library is None else library.risk
        self._verdicts = np.full(len(self._names), "", dtype=object)
        self._plausibility = None
        self.endResetModel()

    def set_risk(self, risk: np.ndarray) -> None:
        """A new risk column (another audit for the same clips)."""
        self._risk = np.asarray(risk, dtype=np.float64)
        self.dataChanged.emit(self.index(0, RISK_COLUMN), self.index(max(self.rowCount() - 1, 0), RISK_COLUMN))

    @property
    def risk(self) -> np.ndarray:
        return self._risk

    def set_verdicts(self, verdicts: list[str]) -> None:
        """Every clip's verdict ("" where none), e.g. after a review was loaded."""
        self._verdicts = np.array(list(verdicts), dtype=object).reshape(-1)
        self.dataChanged.emit(self.index(0, VERDICT_COLUMN),
                              self.index(max(self.rowCount() - 1, 0), VERDICT_COLUMN))

    def set_verdict(self, row: int, verdict: str) -> None:
        if 0 <= row < len(self._verdicts):
            self._verdicts[row] = verdict
            self.dataChanged.emit(self.index(row, VERDICT_COLUMN), self.index(row, VERDICT_COLUMN))

    @property
    def verdicts(self) -> np.ndarray:
        return self._verdicts

    def set_plausibility(self, column: PlausibilityColumn) -> None:
        """More clips scored (the controller's plausibility job for this library)."""
        if len(column) != len(self._names):
            return  # a column of another library (its result crossed a reset)
        self._plausibility = column
        self.dataChanged.emit(self.index(0, PLAUSIBILITY_COLUMN),
                              self.index(max(self.rowCount() - 1, 0), PLAUSIBILITY_COLUMN))

    # --- columns used by the filters -------------------------------------------------------------
    def column_values(self, key: str) -> np.ndarray:
        return self._ints.get(key, np.zeros(0, dtype=np.int64))

    @property
    def names(self) -> np.ndarray:
        return self._names

    @property
    def action_names(self) -> np.ndarray:
        return self._actions

    # --- QAbstractTableModel ---------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._names)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS.get(COLUMNS[section])
        return None

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, col = index.row(), index.column()
        if col == RISK_COLUMN:
            return self._risk_data(row, role)
        if col == PLAUSIBILITY_COLUMN:
            return self._plausibility_data(row, role)
        if col == VERDICT_COLUMN:
            verdict = str(self._verdicts[row]) if row < len(self._verdicts) else ""
            if role == SORT_ROLE:
                return VERDICT_ORDER[verdict]
            return verdict if role == Qt.ItemDataRole.DisplayRole else None
        if role == SORT_ROLE:
            return row if col == 0 else self._names[row] if col == 1 else int(self._ints[INT_KEYS[col - 2]][row])
        if role == Qt.ItemDataRole.ToolTipRole and col == 1:
            return self._source_tip(row)
        if role == Qt.ItemDataRole.DisplayRole:
            if col == 0:
                return str(row)
            if col == 1:
                return self._names[row]
            if col == 3:
                return self._actions[row]
            value = int(self._ints[INT_KEYS[col - 2]][row])
            return "" if value < 0 else str(value)
        if role == Qt.ItemDataRole.TextAlignmentRole and col not in (1, 3):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _risk_data(self, row: int, role):
        risk = float(self._risk[row]) if row < len(self._risk) else float("nan")
        if role == SORT_ROLE:
            return NO_RISK if np.isnan(risk) else risk
        if role == Qt.ItemDataRole.DisplayRole:
            return "" if np.isnan(risk) else f"{risk:.2f}"
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _plausibility_data(self, row: int, role):
        column = self._plausibility
        scored = column is not None and bool(column.scored[row])
        value = float(column.values[row]) if scored else float("nan")
        if role == SORT_ROLE:
            return value if scored and not np.isnan(value) else SCORE_FAILED if scored else NOT_SCORED
        if role == Qt.ItemDataRole.DisplayRole:
            return "…" if not scored else "–" if np.isnan(value) else f"{value:.2f}"
        if role == Qt.ItemDataRole.ToolTipRole:
            if not scored:
                return "Being scored…"
            if np.isnan(value):
                return f"Could not be scored: {column.reasons[row]}"
            return KEYED_RELEASE_TIP if self.library is not None and self.library.key is not None else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _source_tip(self, row: int) -> str | None:
        """For a release opened with its key: the source clip the released clip was made from."""
        library = self.library
        if library is None or library.key is None:
            return None
        entry = library.key.entries[row]
        subject = "unknown subject" if entry.subject is None else f"subject {entry.subject}"
        return f"from {entry.source_clip or f'source clip {entry.source_index}'} ({subject})"


def _int_column(values, n: int) -> np.ndarray:
    if values is None:
        return np.full(n, -1, dtype=np.int64)
    return np.asarray(values).astype(np.int64).reshape(-1)


class ClipFilterProxy(QSortFilterProxyModel):
    """Search text (in the clip name or action name), exact subject/action/view filters and a verdict filter
    (None: every clip; "": the unreviewed ones)."""

    filter_about_to_change = Signal()
    filter_changed = Signal()

    def __init__(self, source: ClipTableModel, parent=None) -> None:
        super().__init__(parent)
        self.setSourceModel(source)
        self.setSortRole(SORT_ROLE)
        self._table = source
        self._mask = np.ones(0, dtype=bool)
        self.search = ""
        self.filters: dict[str, int | None] = {"subject": None, "action": None, "view": None}
        self.verdict: str | None = None
        source.modelReset.connect(self._recompute)
        source.dataChanged.connect(self._verdicts_changed)

    def set_search(self, text: str) -> None:
        self.search = text.strip().lower()
        self._recompute()

    def set_filter(self, key: str, value: int | None) -> None:
        self.filters[key] = value
        self._recompute()

    def set_verdict_filter(self, verdict: str | None) -> None:
        self.verdict = verdict
        self._recompute()

    def _verdicts_changed(self, top_left, _bottom_right, _roles=()) -> None:
        if self.verdict is not None and top_left.column() == VERDICT_COLUMN:
            self._recompute()

    def _recompute(self) -> None:
        self.filter_about_to_change.emit()
        self.beginFilterChange()
        names, actions = self._table.names, self._table.action_names
        mask = np.ones(len(names), dtype=bool)
        for key, value in self.filters.items():
            if value is not None:
                mask &= self._table.column_values(key) == value
        if self.search:
            needle = self.search
            hit = np.fromiter(((needle in n.lower()) or (needle in a.lower()) for n, a in zip(names, actions)),
                              dtype=bool, count=len(names))
            mask &= hit
        if self.verdict is not None and len(self._table.verdicts) == len(mask):
            mask &= self._table.verdicts == self.verdict
        self._mask = mask
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        self.filter_changed.emit()

    def filterAcceptsRow(self, source_row: int, source_parent) -> bool:
        return bool(self._mask[source_row]) if source_row < len(self._mask) else True

    def source_row(self, proxy_row: int) -> int:
        return self.mapToSource(self.index(proxy_row, 0)).row()

    def proxy_row(self, source_row: int) -> int:
        return self.mapFromSource(self._table.index(source_row, 0)).row()


class ClipTableView(QTableView):
    """A clip table that keeps its navigation keys (↑/↓, Home/End) when it has focus.

    The transport shortcuts use the same keys window-wide; accepting the ShortcutOverride event here
    tells Qt the focused table wants them, as a text field does with typed characters.
    """

    NAVIGATION_KEYS = (Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_Home, Qt.Key.Key_End,
                       Qt.Key.Key_PageUp, Qt.Key.Key_PageDown)
    #: rows beyond the visible ones whose contents size the columns
    ROWS_MEASURED = 100

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setSortingEnabled(True)
        self.setAlternatingRowColors(True)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        self.verticalHeader().setDefaultSectionSize(22)
        self.horizontalHeader().setStretchLastSection(False)
        self.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # sized from the rows on screen and ROWS_MEASURED more, not from every row: on a 1,484-clip library
        # measuring all of them took 2.4 s of the GUI thread at every layout (issue 42)
        self.horizontalHeader().setResizeContentsPrecision(self.ROWS_MEASURED)

    def mousePressEvent(self, event) -> None:
        """A right click opens the context menu on its row without making that row the source (issue 42: "Use
        as pinned reference" then always refused, the clicked clip being the source itself)."""
        if event.button() == Qt.MouseButton.RightButton:
            event.accept()
            return
        super().mousePressEvent(event)

    def event(self, ev) -> bool:
        if ev.type() == ev.Type.ShortcutOverride and ev.key() in self.NAVIGATION_KEYS:
            ev.accept()
            return True
        return super().event(ev)
