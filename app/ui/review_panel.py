"""Review mode: the Review dock, its menu and its keys (`install_review`), over `app.state.review`.

Keys (window-wide; a focused text field keeps its typed characters): 1 / 2 / 3 plausible / implausible /
unsure, `[` / `]` a flag's first / last frame at the current frame, N / Shift+N the next / previous clip
without a verdict in the table's order, M the note field (Enter saves the note and gives the keys back).
The annotator's name is asked once (a non-modal dialog, so it can be answered from the keyboard) and
remembered in the Studio's settings (`review/annotator`).
"""

from __future__ import annotations

import getpass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from dtmr.review import VERDICTS

from ..state.review import ReviewState

ANNOTATOR_SETTING = "review/annotator"
VERDICT_KEYS = dict(zip(VERDICTS, ("1", "2", "3")))
#: the rows of Help ▸ Keyboard shortcuts and docs/studio.md that review mode adds
REVIEW_SHORTCUTS = (
    ("1 / 2 / 3", "verdict: plausible / implausible / unsure"),
    ("[ / ]", "flag: first / last implausible frame (at the current frame)"),
    ("N / Shift+N", "next / previous clip without a verdict"),
    ("M", "write a note (Enter saves it)"),
)
FILTERS = (("All verdicts", None), ("Not reviewed", ""), *((v.capitalize(), v) for v in VERDICTS))


class ReviewPanel(QWidget):
    """Shows the current clip's review; edits go straight to the `ReviewState` (which saves them)."""

    def __init__(self, state: ReviewState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.index: int | None = None
        self.annotator_label = QLabel()
        self.annotator_button = QPushButton("Change…")
        self.progress_label = QLabel()
        self.verdict_buttons: dict[str, QPushButton] = {}
        verdict_row = QHBoxLayout()
        for verdict, key in VERDICT_KEYS.items():
            button = QPushButton(f"{verdict.capitalize()} ({key})")
            button.setCheckable(True)
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            self.verdict_buttons[verdict] = button
            verdict_row.addWidget(button)
        self.flags = QListWidget()
        self.flags.setMaximumHeight(90)
        self.remove_flag_button = QPushButton("Remove flag")
        self.pending_label = QLabel()
        self.note = QLineEdit()
        self.note.setPlaceholderText("Note (M; Enter saves)")
        self.tags = QLineEdit()
        self.tags.setPlaceholderText("Tags, comma-separated")
        self.filter = QComboBox()
        for text, value in FILTERS:
            self.filter.addItem(text, value)
        self.previous_button = QPushButton("◀ Previous unreviewed")
        self.next_button = QPushButton("Next unreviewed ▶")

        who = QHBoxLayout()
        who.addWidget(self.annotator_label, 1)
        who.addWidget(self.annotator_button)
        form = QFormLayout()
        form.addRow("Note", self.note)
        form.addRow("Tags", self.tags)
        form.addRow("Show", self.filter)
        moves = QHBoxLayout()
        moves.addWidget(self.previous_button)
        moves.addWidget(self.next_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(who)
        layout.addWidget(self.progress_label)
        layout.addLayout(verdict_row)
        layout.addWidget(QLabel("Implausible frames ([ and ] at the current frame)"))
        layout.addWidget(self.flags)
        layout.addWidget(self.remove_flag_button)
        layout.addWidget(self.pending_label)
        layout.addLayout(form)
        layout.addLayout(moves)
        layout.addStretch(1)

        self.note.editingFinished.connect(self._note_edited)
        self.tags.editingFinished.connect(self._tags_edited)
        self.remove_flag_button.clicked.connect(self._remove_flag)
        state.reset.connect(self.refresh)
        state.clip_changed.connect(lambda i: self.refresh() if i == self.index else None)
        self.refresh()

    def show_clip(self, index: int | None) -> None:
        self._note_edited()  # a note being typed belongs to the clip it was typed for
        self._tags_edited()
        self.index = index
        self.refresh()

    def refresh(self) -> None:
        state = self.state
        self.annotator_label.setText(f"Annotator: {state.annotator}" if state.annotator else "Annotator: not set")
        self.progress_label.setText(f"{state.reviewed} of {state.total} reviewed" if state.active else
                                    "Give a verdict (1 / 2 / 3) to start reviewing")
        enabled = state.active and self.index is not None
        clip = state.clip(self.index) if self.index is not None else None
        for verdict, button in self.verdict_buttons.items():
            button.setChecked(clip is not None and clip.verdict == verdict)
        self.flags.clear()
        for start, end in clip.flags if clip is not None else ():
            item = QListWidgetItem(f"frames {start}–{end}" if end > start else f"frame {start}")
            item.setData(Qt.ItemDataRole.UserRole, (start, end))
            self.flags.addItem(item)
        self.remove_flag_button.setEnabled(enabled and self.flags.count() > 0)
        pending = state.pending_start
        self.pending_label.setText(f"Flag starts at frame {pending[1]}: press ] at its last frame"
                                   if pending and pending[0] == self.index else "")
        for field, text in ((self.note, clip.note if clip else ""), (self.tags, ", ".join(clip.tags) if clip else "")):
            if not field.hasFocus() or field.text() == text:
                field.setText(text)
            field.setEnabled(enabled)

    def _note_edited(self) -> None:
        if self.index is not None and self.state.active:
            self.state.set_note(self.index, self.note.text())

    def _tags_edited(self) -> None:
        if self.index is not None and self.state.active:
            self.state.set_tags(self.index, self.tags.text().split(","))

    def _remove_flag(self) -> None:
        item = self.flags.currentItem() or self.flags.item(self.flags.count() - 1)
        if item is not None and self.index is not None:
            self.state.remove_flag(self.index, item.data(Qt.ItemDataRole.UserRole))


class ReviewMode:
    """The glue between the window (library, source clip, current frame, table) and the review."""

    def __init__(self, window) -> None:
        self.window = window
        self.state = ReviewState()
        self.panel = ReviewPanel(self.state)
        self.name_dialog: QInputDialog | None = None
        self._after_name: list = []
        self.dock = QDockWidget("Review", window)
        self.dock.setObjectName("dock-review")
        self.dock.setWidget(self.panel)
        window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, self.dock)
        # a tab beside the library, not below it: the left column must still fit a 900-pixel-high window
        window.tabifyDockWidget(window.docks["library"], self.dock)
        window.docks["library"].raise_()
        window.docks["review"] = self.dock
        self.actions = self._build_actions()

        table = window.library_panel
        window.controller.library_opened.connect(self._library_opened)
        window.selection.source_changed.connect(self.panel.show_clip)
        self.state.reset.connect(lambda: table.model.set_verdicts(self.state.verdicts()))
        self.state.clip_changed.connect(self._clip_changed)
        self.state.message.connect(window.show_error)
        self.panel.filter.currentIndexChanged.connect(
            lambda _i: table.proxy.set_verdict_filter(self.panel.filter.currentData()))
        self.panel.annotator_button.clicked.connect(self.ask_annotator)
        self.panel.note.returnPressed.connect(table.table.setFocus)
        self.panel.tags.returnPressed.connect(table.table.setFocus)
        self.panel.next_button.clicked.connect(lambda: self.move(1))
        self.panel.previous_button.clicked.connect(lambda: self.move(-1))
        name = str(window.qsettings.value(ANNOTATOR_SETTING, "") or "")
        if name:
            self.state.set_annotator(name)

    def _build_actions(self) -> dict[str, QAction]:
        window = self.window
        bar = window.menuBar()
        help_action = next((a for a in bar.actions() if a.text().replace("&", "") == "Help"), None)
        menu = QMenu("&Review", bar)
        if help_action is None:
            bar.addMenu(menu)
        else:
            bar.insertMenu(help_action, menu)
        actions: dict[str, QAction] = {}

        def add(name: str, text: str, keys: str, slot) -> None:
            action = QAction(text, window)
            action.setShortcut(QKeySequence(keys))
            action.triggered.connect(slot)
            menu.addAction(action)
            window.addAction(action)
            actions[name] = action

        for verdict, key in VERDICT_KEYS.items():
            add(verdict, f"Verdict: {verdict}", key, lambda _c=False, v=verdict: self.give_verdict(v))
        menu.addSeparator()
        add("flag_start", "Flag starts at this frame", "[", lambda: self._with_annotator(self._flag_start))
        add("flag_end", "Flag ends at this frame", "]", lambda: self._with_annotator(self._flag_end))
        add("note", "Write a note", "M", self._focus_note)
        menu.addSeparator()
        add("next", "Next unreviewed clip", "N", lambda: self.move(1))
        add("previous", "Previous unreviewed clip", "Shift+N", lambda: self.move(-1))
        menu.addSeparator()
        annotator = menu.addAction("Annotator…")
        annotator.triggered.connect(self.ask_annotator)
        menu.addAction(self.dock.toggleViewAction())
        return actions

    # --- the annotator -----------------------------------------------------------------------------
    def ask_annotator(self) -> None:
        """A non-modal name dialog; what waits for the name runs once it is given."""
        if self.name_dialog is not None:
            self.name_dialog.raise_()
            return
        dialog = QInputDialog(self.window)
        dialog.setWindowTitle("Review")
        dialog.setLabelText("Your name as the annotator of this review\n(remembered; each annotator has a sidecar file)")
        dialog.setTextValue(self.state.annotator or _login())
        dialog.textValueSelected.connect(self._name_given)
        dialog.finished.connect(self._name_dialog_closed)
        self.name_dialog = dialog
        dialog.open()

    def _name_given(self, name: str) -> None:
        if name.strip():
            self.window.qsettings.setValue(ANNOTATOR_SETTING, name.strip())
            self.state.set_annotator(name)
            pending, self._after_name = self._after_name, []
            for run in pending:
                run()

    def _name_dialog_closed(self, result: int) -> None:
        # QInputDialog emits `finished` before `textValueSelected`: only a cancel drops what waits
        if result != QInputDialog.DialogCode.Accepted:
            self._after_name = []
        if self.name_dialog is not None:
            self.name_dialog.deleteLater()
        self.name_dialog = None

    def _with_annotator(self, run) -> None:
        if self.state.active:
            run()
        elif self.state.library_path is not None:
            self._after_name.append(run)
            self.ask_annotator()

    # --- review actions ----------------------------------------------------------------------------
    def give_verdict(self, verdict: str) -> None:
        def run():
            index = self.window.selection.source_index
            if index is not None:
                self.state.set_verdict(index, verdict)

        self._with_annotator(run)

    def _flag_start(self) -> None:
        index = self.window.selection.source_index
        if index is not None:
            self.state.mark_start(index, self.window.clock.frame)

    def _flag_end(self) -> None:
        index = self.window.selection.source_index
        if index is not None:
            self.state.mark_end(index, self.window.clock.frame)

    def _focus_note(self) -> None:
        if self.state.active and self.window.selection.source_index is not None:
            self.dock.show()
            self.dock.raise_()
            self.panel.note.setFocus()
            self.panel.note.selectAll()

    def move(self, step: int) -> None:
        """Select the next (1) / previous (-1) clip without a verdict, in the table's order."""
        proxy = self.window.library_panel.proxy
        order = [proxy.source_row(r) for r in range(proxy.rowCount())]
        index = self.state.next_unreviewed(order, self.window.selection.source_index, step)
        if index is None:
            self.window.status_label.setText("Every clip shown is reviewed")
            return
        self.window.library_panel.select_clip(index)

    # --- listening ---------------------------------------------------------------------------------
    def _library_opened(self, library) -> None:
        names = library.table.get("sample_name")
        # without names the keys are the clips' indices
        self.state.open_library(library.path, [""] * len(library.source) if names is None else names)
        self.panel.show_clip(self.window.selection.source_index)

    def _clip_changed(self, index: int) -> None:
        self.window.library_panel.model.set_verdict(index, self.state.clip(index).verdict or "")
        self.panel.refresh()


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""


def install_review(window) -> ReviewMode:
    """Add review mode to the main window: the Review dock (a tab beside the library), the Review menu and
    its keys. The window keeps it as `window.review`."""
    window.review = ReviewMode(window)
    return window.review
