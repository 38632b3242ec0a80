"""The library's clip list: a table model over the metadata table, and a filtering/sorting proxy.

Filters and sorting are evaluated with numpy over whole columns (`ClipTableModel.sort_keys`): the proxy
holds the shown source rows in their order as one array, so a filter or a sort of a 50k-clip library takes
milliseconds and never calls back into Python per row or per comparison. (A QSortFilterProxyModel sorts by
asking `data()` at every comparison: opening N-UCLA's 1,484 clips spent 0.8 s of the GUI thread there, issue 42.)

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
    QAbstractProxyModel,
    QAbstractTableModel,
    QModelIndex,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtWidgets import QAbstractItemView, QStyle, QTableView

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
#: what the Plausibility column shows before a clip's score arrives, and for a clip that could not be scored
NOT_SCORED_TEXT, SCORE_FAILED_TEXT = "…", "–"
#: the tooltip of a score of a release opened with its key (its subjects are known, their bodies are not)
KEYED_RELEASE_TIP = ("Scored against the clip's own mean bone lengths: the key names each clip's source "
                     "subject, not that subject's body")
#: ascending sort of the Verdict column: the clips that need a look first, unreviewed last
VERDICT_ORDER = {"implausible": 0, "unsure": 1, "plausible": 2, "": 3}
#: where a clip without a risk sorts (risks lie in [0, 1])
NO_RISK = -1.0
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
            return verdict if role == Qt.ItemDataRole.DisplayRole else None
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
        if role == Qt.ItemDataRole.DisplayRole:
            return "" if np.isnan(risk) else _two_decimals(risk)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def _plausibility_data(self, row: int, role):
        column = self._plausibility
        scored = column is not None and bool(column.scored[row])
        value = float(column.values[row]) if scored else float("nan")
        if role == Qt.ItemDataRole.DisplayRole:
            return NOT_SCORED_TEXT if not scored else SCORE_FAILED_TEXT if np.isnan(value) else _two_decimals(value)
        if role == Qt.ItemDataRole.ToolTipRole:
            if not scored:
                return "Being scored…"
            if np.isnan(value):
                return f"Could not be scored: {column.reasons[row]}"
            return KEYED_RELEASE_TIP if self.library is not None and self.library.key is not None else None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def sort_keys(self, column: int) -> np.ndarray:
        """Every row's sort key in `column`, one array (ascending order = the column's ascending sort)."""
        n = len(self._names)
        if column == 0:
            return np.arange(n)
        if column == 1:
            return self._names.astype(str) if n else np.zeros(0, dtype=str)
        if column == RISK_COLUMN:
            risk = np.asarray(self._risk, dtype=np.float64)
            return np.where(np.isnan(risk), NO_RISK, risk) if len(risk) == n else np.full(n, NO_RISK)
        if column == VERDICT_COLUMN:
            order = np.array([VERDICT_ORDER[str(v)] for v in self._verdicts], dtype=np.int64)
            return order if len(order) == n else np.full(n, VERDICT_ORDER[""])
        if column == PLAUSIBILITY_COLUMN:
            scores = self._plausibility
            if scores is None:
                return np.full(n, NOT_SCORED)
            values = np.asarray(scores.values, dtype=np.float64)
            scored = np.asarray(scores.scored, dtype=bool)
            return np.where(~scored, NOT_SCORED, np.where(np.isnan(values), SCORE_FAILED, values))
        return self._ints[INT_KEYS[column - 2]] if self._ints else np.zeros(0, dtype=np.int64)

    def display_texts(self, column: int) -> list[str]:
        """The distinct texts `column` shows over every row (what `data` gives for DisplayRole), computed over
        the whole column at once: the view sizes its columns from them without a `data()` call per cell."""
        n = len(self._names)
        if column == 0:
            return [str(n - 1)] if n else []
        if column == 1:
            return list(np.unique(self._names.astype(str))) if n else []
        if column == 3:
            return list(np.unique(self._actions.astype(str))) if n else []
        if column == RISK_COLUMN:
            risk = np.asarray(self._risk, dtype=np.float64)
            return [_two_decimals(v) for v in np.unique(np.round(risk[np.isfinite(risk)], 2))]
        if column == VERDICT_COLUMN:
            return [str(v) for v in set(self._verdicts.tolist())]
        if column == PLAUSIBILITY_COLUMN:
            scores = self._plausibility
            if scores is None:
                return [NOT_SCORED_TEXT] if n else []
            values = np.asarray(scores.values, dtype=np.float64)[np.asarray(scores.scored, dtype=bool)]
            return [NOT_SCORED_TEXT, SCORE_FAILED_TEXT,
                    *(_two_decimals(v) for v in np.unique(np.round(values[np.isfinite(values)], 2)))]
        values = self._ints[INT_KEYS[column - 2]] if self._ints else np.zeros(0, dtype=np.int64)
        return [str(v) for v in np.unique(values) if v >= 0]

    def _source_tip(self, row: int) -> str | None:
        """For a release opened with its key: the source clip the released clip was made from."""
        library = self.library
        if library is None or library.key is None:
            return None
        entry = library.key.entries[row]
        subject = "unknown subject" if entry.subject is None else f"subject {entry.subject}"
        return f"from {entry.source_clip or f'source clip {entry.source_index}'} ({subject})"


def _two_decimals(value: float) -> str:
    """A risk's or a score's text."""
    return f"{value:.2f}"


def _int_column(values, n: int) -> np.ndarray:
    if values is None:
        return np.full(n, -1, dtype=np.int64)
    return np.asarray(values).astype(np.int64).reshape(-1)


class ClipFilterProxy(QAbstractProxyModel):
    """The shown clips in their order: search text (in the clip name or action name), exact
    subject/action/view filters and a verdict filter (None: every clip; "": the unreviewed ones), sorted by
    one column (stable, ties in library order).

    `_order` holds the shown source rows in view order and `_position` each source row's view row (-1 when
    hidden). A filter change resets the proxy (between `filter_about_to_change` and `filter_changed`); a sort
    is a layout change that keeps the selection on its clips."""

    filter_about_to_change = Signal()
    filter_changed = Signal()

    def __init__(self, source: ClipTableModel, parent=None) -> None:
        super().__init__(parent)
        self._table = source
        self._order = np.zeros(0, dtype=np.int64)
        self._position = np.zeros(0, dtype=np.int64)
        self._sort_column, self._sort_order = -1, Qt.SortOrder.AscendingOrder
        self.search = ""
        self.filters: dict[str, int | None] = {"subject": None, "action": None, "view": None}
        self.verdict: str | None = None
        self.setSourceModel(source)
        self._set_order(np.flatnonzero(self._mask()))
        source.modelReset.connect(self._recompute)
        source.dataChanged.connect(self._source_data_changed)

    # --- filters and sorting ----------------------------------------------------------------------
    def set_search(self, text: str) -> None:
        self.search = text.strip().lower()
        self._recompute()

    def set_filter(self, key: str, value: int | None) -> None:
        self.filters[key] = value
        self._recompute()

    def set_verdict_filter(self, verdict: str | None) -> None:
        self.verdict = verdict
        self._recompute()

    def _mask(self) -> np.ndarray:
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
        return mask

    def _sorted(self, rows: np.ndarray) -> np.ndarray:
        """`rows` (source rows, ascending) in the sort column's order; stable both ways."""
        if self._sort_column < 0 or rows.size == 0:
            return rows
        keys = self._table.sort_keys(self._sort_column)[rows]
        if self._sort_order == Qt.SortOrder.AscendingOrder:
            return rows[np.argsort(keys, kind="stable")]
        rank = np.unique(keys, return_inverse=True)[1].reshape(-1)
        return rows[np.argsort(-rank, kind="stable")]

    def _set_order(self, order: np.ndarray) -> None:
        self._order = order.astype(np.int64, copy=False)
        self._position = np.full(self._table.rowCount(), -1, dtype=np.int64)
        self._position[self._order] = np.arange(len(self._order))

    def _recompute(self) -> None:
        """The filters changed (or the library): the shown rows again, sorted."""
        self.filter_about_to_change.emit()
        self.beginResetModel()
        self._set_order(self._sorted(np.flatnonzero(self._mask())))
        self.endResetModel()
        self.filter_changed.emit()

    def sort(self, column: int, order: Qt.SortOrder = Qt.SortOrder.AscendingOrder) -> None:
        self._sort_column, self._sort_order = column, order
        self._relayout()

    def _relayout(self) -> None:
        """The same rows in the sort column's order; persistent indexes (selection, current) follow their clip."""
        self.layoutAboutToBeChanged.emit()
        before = self.persistentIndexList()
        clips = [int(self._order[i.row()]) if 0 <= i.row() < len(self._order) else -1 for i in before]
        self._set_order(self._sorted(np.sort(self._order)))
        after = [self.index(int(self._position[c]), i.column()) if c >= 0 else QModelIndex()
                 for c, i in zip(clips, before)]
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def _source_data_changed(self, top_left, bottom_right, _roles=()) -> None:
        columns = range(top_left.column(), bottom_right.column() + 1)
        if self.verdict is not None and VERDICT_COLUMN in columns:
            self._recompute()
            return
        if self._sort_column in columns:
            self._relayout()
        if len(self._order):
            self.dataChanged.emit(self.index(0, columns.start), self.index(len(self._order) - 1, columns.stop - 1))

    # --- rows ---------------------------------------------------------------------------------------
    def source_row(self, proxy_row: int) -> int:
        return int(self._order[proxy_row]) if 0 <= proxy_row < len(self._order) else -1

    def proxy_row(self, source_row: int) -> int:
        return int(self._position[source_row]) if 0 <= source_row < len(self._position) else -1

    # --- QAbstractProxyModel ------------------------------------------------------------------------
    def mapToSource(self, proxy_index):
        if not proxy_index.isValid() or not 0 <= proxy_index.row() < len(self._order):
            return QModelIndex()
        return self._table.index(int(self._order[proxy_index.row()]), proxy_index.column())

    def mapFromSource(self, source_index):
        row = self.proxy_row(source_index.row()) if source_index.isValid() else -1
        return QModelIndex() if row < 0 else self.index(row, source_index.column())

    def index(self, row: int, column: int, parent=QModelIndex()):
        if parent.isValid() or not (0 <= row < len(self._order) and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column)

    def parent(self, _index=QModelIndex()):
        return QModelIndex()

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else self._table.columnCount()

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        return self._table.headerData(section, orientation, role)

    def display_texts(self, column: int) -> list[str]:
        """`ClipTableModel.display_texts` of every clip, shown or not: the columns keep their widths across
        filters."""
        return self._table.display_texts(column)


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
        # Qt's own fit (a double click on a divider) measures the rows on screen and ROWS_MEASURED more, not every
        # row: on a 1,484-clip library measuring all of them took 2.4 s of the GUI thread (issue 42)
        self.horizontalHeader().setResizeContentsPrecision(self.ROWS_MEASURED)
        # one fit per turn of the event loop: opening a library resets, filters, sorts and fills the verdicts in
        # one handler, and fitting after each took four passes of 80-100 ms in a row on N-UCLA
        self._fit = QTimer(self)
        self._fit.setSingleShot(True)
        self._fit.setInterval(0)
        self._fit.timeout.connect(self.fit_columns_now)

    def setModel(self, model) -> None:  # noqa: N802
        """Columns are fitted to their contents when the rows change (a library opened, a filter) and when a
        column other than Plausibility changes; the user may resize them in between. Not at every layout
        (`ResizeToContents`): the plausibility scores arriving 48 clips at a time re-measured every column
        each time, the longest stall left while N-UCLA opened (issue 42)."""
        super().setModel(model)
        model.modelReset.connect(self.fit_columns)
        model.layoutChanged.connect(self.fit_columns)
        model.dataChanged.connect(self._data_changed)

    def fit_columns(self) -> None:
        """Fit the columns once the event loop is back (several requests in one handler: one fit)."""
        self._fit.start()

    def fit_columns_now(self) -> None:
        """Each column as wide as the widest text it shows in any row, or its header. The texts come from the
        model's whole columns (`display_texts`) and are measured with the view's font: Qt's own fit asked
        `data()` for several roles of each cell of the rows measured, 97 ms of the GUI thread on N-UCLA."""
        model = self.model()
        if model is None:
            return
        metrics = self.fontMetrics()
        margin = 2 * (self.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, self) + 1) + 2
        header = self.horizontalHeader()
        for column in range(model.columnCount()):
            texts = model.display_texts(column)
            content = max((metrics.horizontalAdvance(t) for t in texts), default=0) + margin
            header.resizeSection(column, max(content, header.sectionSizeHint(column)))

    def _data_changed(self, top_left, bottom_right, _roles=()) -> None:
        if top_left.column() == bottom_right.column() == PLAUSIBILITY_COLUMN:
            return  # scores are at most "9.99" wide, within the header's width
        self.fit_columns()

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
