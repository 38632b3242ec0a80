"""Menu bar and keyboard shortcuts of the main window (JABS `menu_builder` style).

`build_menus` creates every action, attaches it to the window (so its shortcut works window-wide) and
returns them in a dataclass; the main window connects them. `SHORTCUTS` is the table shown in
Help ▸ Keyboard shortcuts and in docs/studio.md. View ▸ Panels lists every dock of the window, those added
after the menus too (it is filled each time it opens), with the dock's own show/hide action
(`QDockWidget.toggleViewAction`), so a closed dock comes back from there.
Keys kept free for review mode: 1, 2, 3, 0, [, ], N, Shift+N and Ctrl+Z.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu

from ..state.playback import LoopMode
from .review_panel import REVIEW_SHORTCUTS
from .timeline_panel import LOOP_LABELS

SHORTCUTS = (
    ("Space", "play / pause"),
    ("← / →  or  , / .", "previous / next frame"),
    ("↓ / ↑", "10 frames back / forward"),
    ("Home / End", "first / last frame"),
    ("− / +", "slower / faster"),
    ("L", "next loop mode (once, loop, back-and-forth)"),
    ("A / B / X", "A–B loop: start here / end here / clear"),
    ("Ctrl+G", "type a frame number to go to"),
    ("C", "link / unlink the cameras"),
    ("F / S / T / O / R", "front, side, top, oblique camera; reset the cameras"),
    ("G", "overlay mode: the source under the released clip"),
    ("P", "screenshot of the three views (PNG)"),
    ("Ctrl+O / Ctrl+Shift+O", "open a file / a folder"),
    ("Ctrl+E", "export a GIF or MP4"),
    *REVIEW_SHORTCUTS,
)


@dataclass
class MenuActions:
    open_file: QAction
    open_folder: QAction
    recent: QMenu
    open_key: QAction
    open_audit: QAction
    export: QAction
    add_checkpoint: QAction
    quit: QAction
    link_cameras: QAction
    presets: dict[str, QAction]
    reset_cameras: QAction
    feet: QAction
    overlay: QAction
    screenshot: QAction
    #: View ▸ Show: the views panel's show/hide actions go here (`ViewsPanel.visibility_actions`)
    show: QMenu
    panels: QMenu
    reset_layout: QAction
    play: QAction
    previous_frame: QAction
    next_frame: QAction
    back_ten: QAction
    forward_ten: QAction
    first_frame: QAction
    last_frame: QAction
    slower: QAction
    faster: QAction
    cycle_loop: QAction
    loop_modes: dict[LoopMode, QAction]
    every_frame: QAction
    go_to_frame: QAction
    loop_start: QAction
    loop_end: QAction
    clear_loop: QAction
    shortcuts_help: QAction
    about: QAction
    open_with_options: QAction | None = None


def _action(window: QMainWindow, menu: QMenu, text: str, *keys: str | QKeySequence.StandardKey,
            checkable: bool = False) -> QAction:
    action = QAction(text, window)
    if keys:
        action.setShortcuts([QKeySequence(k) for k in keys])
    action.setCheckable(checkable)
    menu.addAction(action)
    window.addAction(action)  # shortcuts work while the menu bar is hidden or unfocused
    return action


def fill_panels_menu(menu: QMenu, window: QMainWindow) -> None:
    """One checkable entry per dock of `window`, checked while the dock is shown."""
    menu.clear()
    for dock in window.findChildren(QDockWidget):
        menu.addAction(dock.toggleViewAction())


def build_menus(window: QMainWindow) -> MenuActions:
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    open_file = _action(window, file_menu, "&Open file…", QKeySequence.StandardKey.Open)
    open_folder = _action(window, file_menu, "Open &folder…", "Ctrl+Shift+O")
    open_with_options = _action(window, file_menu, "Open with &options (up axis, unit)…")
    recent = file_menu.addMenu("Open &recent")
    open_key = _action(window, file_menu, "Open release &key…")
    open_audit = _action(window, file_menu, "Open &audit…")
    file_menu.addSeparator()
    export = _action(window, file_menu, "&Export video…", "Ctrl+E")
    add_checkpoint = _action(window, file_menu, "Add &checkpoint…")
    file_menu.addSeparator()
    quit_action = _action(window, file_menu, "&Quit", QKeySequence.StandardKey.Quit)

    view_menu = bar.addMenu("&View")
    link = _action(window, view_menu, "&Link cameras", "C", checkable=True)
    presets = {name: _action(window, view_menu, f"{name.capitalize()} camera", key)
               for name, key in (("front", "F"), ("side", "S"), ("top", "T"), ("oblique", "O"))}
    reset = _action(window, view_menu, "&Reset cameras", "R")
    view_menu.addSeparator()
    feet = _action(window, view_menu, "Foot-sliding &overlay", checkable=True)
    overlay = _action(window, view_menu, "Source &under released (overlay mode)", "G", checkable=True)
    screenshot = _action(window, view_menu, "&Screenshot of the views", "P")
    show = view_menu.addMenu("S&how")
    view_menu.addSeparator()
    panels = view_menu.addMenu("&Panels")
    panels.aboutToShow.connect(lambda: fill_panels_menu(panels, window))
    fill_panels_menu(panels, window)
    reset_layout = _action(window, view_menu, "Reset &layout")

    play_menu = bar.addMenu("&Playback")
    play = _action(window, play_menu, "&Play / pause", "Space")
    previous_frame = _action(window, play_menu, "Previous frame", "Left", ",")
    next_frame = _action(window, play_menu, "Next frame", "Right", ".")
    back_ten = _action(window, play_menu, "10 frames back", "Down")
    forward_ten = _action(window, play_menu, "10 frames forward", "Up")
    first = _action(window, play_menu, "First frame", "Home")
    last = _action(window, play_menu, "Last frame", "End")
    play_menu.addSeparator()
    slower = _action(window, play_menu, "Slower", "-")
    faster = _action(window, play_menu, "Faster", "+", "=")
    cycle = _action(window, play_menu, "Next loop mode", "L")
    loop_menu = play_menu.addMenu("Loop mode")
    group = QActionGroup(window)
    loop_modes = {}
    for mode, label in LOOP_LABELS.items():
        action = _action(window, loop_menu, label, checkable=True)
        group.addAction(action)
        loop_modes[mode] = action
    every_frame = _action(window, play_menu, "Play every frame", checkable=True)
    play_menu.addSeparator()
    go_to_frame = _action(window, play_menu, "&Go to frame…", "Ctrl+G")
    loop_start = _action(window, play_menu, "Set loop start (A) here", "A")
    loop_end = _action(window, play_menu, "Set loop end (B) here", "B")
    clear_loop = _action(window, play_menu, "Clear the A–B loop", "X")

    help_menu = bar.addMenu("&Help")
    shortcuts_help = _action(window, help_menu, "&Keyboard shortcuts")
    about = _action(window, help_menu, "&About DTMR Studio")
    return MenuActions(open_file, open_folder, recent, open_key, open_audit, export, add_checkpoint, quit_action, link,
                       presets, reset, feet, overlay, screenshot, show, panels, reset_layout, play, previous_frame,
                       next_frame, back_ten, forward_ten, first, last, slower, faster, cycle, loop_modes, every_frame,
                       go_to_frame, loop_start, loop_end, clear_loop, shortcuts_help, about, open_with_options)
