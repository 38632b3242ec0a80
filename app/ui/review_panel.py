"""Review mode: the Review dock, its menu and its keys (`install_review`), over `app.state.review`.

Keys (window-wide; a focused text field keeps its typed characters): 1 / 2 / 3 plausible / implausible /
unsure, 0 clears the verdict, `[` / `]` a flag's first / last frame at the current frame, N / Shift+N the
next / previous clip without a verdict in the table's order, M the note field (Enter saves the note and
leaves the focus in the review panel, never on the clip table hidden behind it), Ctrl+Z undoes the last
review change. Frames are shown 1-based, as the frame counter shows them; the clip's flags are drawn on the
timeline's slider. The verdict buttons show the stored verdict: a click gives that verdict (the active one
stays), *Clear verdict* removes it.
The annotator's name is asked once (a non-modal dialog, so it can be answered from the keyboard) and
remembered in the Studio's settings (`review/annotator`).
"""

from __future__ import annotations

import getpass

from PySide6.QtCore import Qt, Signal
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

from dtmr.review import VERDICTS, flag_text

from ..state.review import ReviewState

ANNOTATOR_SETTING = "review/annotator"
VERDICT_KEYS = dict(zip(VERDICTS, ("1", "2", "3")))
CLEAR_KEY = "0"
UNDO_KEY = "Ctrl+Z"
#: a settings key naming another folder for the reviews of bundled or read-only libraries
DATA_DIR_SETTING = "review/data_dir"
#: the rows of Help ▸ Keyboard shortcuts and docs/studio.md that review mode adds
REVIEW_SHORTCUTS = (
    ("1 / 2 / 3", "verdict: plausible / implausible / unsure"),
    ("0", "clear the verdict"),
    ("[ / ]", "flag: first / last implausible frame (at the current frame)"),
    ("N / Shift+N", "next / previous clip without a verdict"),
    ("M", "write a note (Enter saves it)"),
    ("Ctrl+Z", "undo the last review change (verdict, flag, note, tags)"),
)
FILTERS = (("All verdicts", None), ("Not reviewed", ""), *((v.capitalize(), v) for v in VERDICTS))


class ReviewPanel(QWidget):
    """Shows the current clip's review; edits go straight to the `ReviewState` (which saves them).

    Signal: `verdict_clicked(str)`: a verdict button was clicked (the window gives the verdict, asking for the
    annotator first if needed; the buttons then show the stored verdict)."""

    verdict_clicked = Signal(str)

    def __init__(self, state: ReviewState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        # takes the keyboard focus back from the note and tags fields, and on a click: the window's keys act
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
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
            button.clicked.connect(lambda _c=False, v=verdict: self._verdict_clicked(v))
            self.verdict_buttons[verdict] = button
            verdict_row.addWidget(button)
        self.clear_button = QPushButton(f"Clear verdict ({CLEAR_KEY})")
        self.clear_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.undo_button = QPushButton(f"Undo ({UNDO_KEY})")
        self.undo_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        #: where the review is saved (the full path in its tooltip)
        self.saved_label = QLabel()
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
        progress = QHBoxLayout()
        progress.addWidget(self.progress_label, 1)
        progress.addWidget(self.saved_label)
        edits = QHBoxLayout()  # one row: the dock must still fit a 900-pixel-high window beside the library's
        edits.addWidget(self.remove_flag_button)
        edits.addWidget(self.clear_button)
        edits.addWidget(self.undo_button)
        layout.addLayout(who)
        layout.addLayout(progress)
        layout.addLayout(verdict_row)
        layout.addWidget(QLabel("Implausible frames ([ and ] at the current frame)"))
        layout.addWidget(self.flags)
        layout.addLayout(edits)
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
        self.clear_button.setEnabled(enabled and clip is not None and clip.verdict is not None)
        last = state.undo_stack[-1] if state.can_undo else None
        self.undo_button.setEnabled(last is not None)
        self.undo_button.setToolTip("Nothing to undo" if last is None else
                                    f"Undo the last change: the {last.what} of clip {state.keys[last.index]}")
        self.flags.clear()
        for flag in clip.flags if clip is not None else ():
            item = QListWidgetItem(flag_text(flag))
            item.setData(Qt.ItemDataRole.UserRole, flag)
            self.flags.addItem(item)
        self.remove_flag_button.setEnabled(enabled and self.flags.count() > 0)
        pending = state.pending_start
        self.pending_label.setText(f"Flag starts at frame {pending[1] + 1}: press ] at its last frame"
                                   if pending and pending[0] == self.index else "")
        self._show_where_saved()
        for field, text in ((self.note, clip.note if clip else ""), (self.tags, ", ".join(clip.tags) if clip else "")):
            if not field.hasFocus() or field.text() == text:
                field.setText(text)
            field.setEnabled(enabled)

    def _show_where_saved(self) -> None:
        path = self.state.path
        if path is None:
            self.saved_label.setText("")
            self.saved_label.setToolTip("")
        elif self.state.in_data_folder:
            self.saved_label.setText("saved in your data folder")
            self.saved_label.setToolTip(f"This library is bundled or read-only: its review is saved in {path}")
        else:
            self.saved_label.setText("saved beside the library")
            self.saved_label.setToolTip(f"The review is saved in {path}")

    def _verdict_clicked(self, verdict: str) -> None:
        self.verdict_clicked.emit(verdict)
        self.refresh()  # a checkable button unchecks itself on a click: show what is stored

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
        data_dir = str(window.qsettings.value(DATA_DIR_SETTING, "") or "")
        self.state = ReviewState(data_dir or None)
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
        window.selection.source_changed.connect(self._source_changed)
        self.state.reset.connect(lambda: table.model.set_verdicts(self.state.verdicts()))
        self.state.reset.connect(self._show_flags)
        self.state.clip_changed.connect(self._clip_changed)
        self.state.message.connect(window.show_error)
        self.panel.filter.currentIndexChanged.connect(
            lambda _i: table.proxy.set_verdict_filter(self.panel.filter.currentData()))
        self.panel.annotator_button.clicked.connect(self.ask_annotator)
        # Enter leaves the keyboard in the review panel: the clip table may be hidden behind the Review tab,
        # where ↓/↑ would switch the clip under review unseen
        self.panel.note.returnPressed.connect(self.panel.setFocus)
        self.panel.tags.returnPressed.connect(self.panel.setFocus)
        self.panel.verdict_clicked.connect(self.give_verdict)
        self.panel.clear_button.clicked.connect(self.clear_verdict)
        self.panel.undo_button.clicked.connect(self.undo)
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
        add("clear", "Clear the verdict", CLEAR_KEY, self.clear_verdict)
        add("undo", "Undo the last review change", UNDO_KEY, self.undo)
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

    def clear_verdict(self) -> None:
        index = self.window.selection.source_index
        if self.state.active and index is not None:
            self.state.set_verdict(index, None)

    def undo(self) -> None:
        """Take back the last review change, whichever clip it was on; the status bar says what it was."""
        entry = self.state.undo()
        if entry is None:
            self.window.status_label.setText("Nothing to undo in the review")
            return
        self.window.status_label.setText(f"Undone: the {entry.what} of clip {self.state.keys[entry.index]}")
        self.panel.refresh()

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

    def _source_changed(self, index: int | None) -> None:
        self.panel.show_clip(index)
        self._show_flags()

    def _clip_changed(self, index: int) -> None:
        self.window.library_panel.model.set_verdict(index, self.state.clip(index).verdict or "")
        self.panel.refresh()
        if index == self.window.selection.source_index:
            self._show_flags()

    def _show_flags(self) -> None:
        """The source clip's flags on the timeline (frames are the comparison's, which starts with the source)."""
        index = self.window.selection.source_index
        flags = () if index is None else self.state.clip(index).flags
        self.window.timeline.show_marked_ranges(list(flags))


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
