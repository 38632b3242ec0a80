"""The Studio's main window: wires the state objects, the controller, the panels and the menus.

Layout: the "Compare" tab holds the three views, the transport bar and the per-frame tracks; docks hold
the library (left) with the reference below it, and on the right, tabbed, the live predictions, the model and the
privacy attribution (computed only while its tab is shown; brought to the front when a release opens). The
window fits a 1366×768 screen: its minimum size is under 1366×728 (docs/studio.md, "Window size"), and a
first start never opens it larger than the screen's available area. The
"Train" tab runs `dtmr train` in a separate process. Every frame change goes through one
`FrameCoalescer`, so the views, tracks, predictions and slider are updated once per event-loop pass.
Viewer conventions (docs/studio.md): View ▸ Panels shows or hides every dock, the window layout is saved
on close and restored on start (View ▸ Reset layout goes back to the one built here), P writes a
screenshot of the three views, and the status bar names the joint under the mouse.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QFrame,
    QLabel,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QTabWidget,
)

from dtmr.errors import DtmrError

from .. import __doc__ as app_doc
from ..core.audit_file import read_audit
from ..core.export_job import export_comparison
from ..core.library import OPEN_FILTER, OpenedLibrary
from ..core.model_scan import ScanResult
from ..core.retargeting import NO_MODEL_MESSAGE
from ..render_gl.palette import reliance_colours
from ..state.comparison import Comparison, ViewKind
from ..state.playback import LoopMode, PlaybackClock
from ..state.privacy import PrivacyState
from ..state.selection import ReferenceChoice, Selection
from ..state.settings import SettingsModel
from ..workers.job_thread import JobThread
from .export_dialog import ExportDialog
from .first_start_hint import FirstStartHint
from .frame_coalescer import FrameCoalescer
from .library_panel import LibraryPanel
from .menus import SHORTCUTS, build_menus
from .model_panel import ModelPanel
from .motion_fitter import MotionFitter
from .open_options_dialog import OpenOptionsDialog
from .playback_driver import PlaybackDriver
from .predictions_panel import PredictionsPanel
from .privacy_panel import PrivacyPanel
from .reference_panel import ReferencePanel
from .review_panel import install_review
from .screenshots import default_screenshot_dir, save_screenshot
from .settings_store import SettingsStore
from .studio_controller import StudioController
from .timeline_panel import TimelinePanel
from .trainer_tab import TrainerTab
from .tracks_panel import TracksPanel
from .typing_guard import TypingGuard
from .views_panel import ViewsPanel

CHECKPOINT_FILTER = "Checkpoints (*.pt *.pth *.ckpt);;All files (*)"
KEY_FILTER = "Release keys (*.key.json);;JSON (*.json);;All files (*)"
AUDIT_FILTER = "Audits (audit.json);;JSON (*.json);;All files (*)"
LOOP_ORDER = (LoopMode.ONCE, LoopMode.LOOP, LoopMode.BOUNCE)
#: the first start's window size, within the screen's available area
DEFAULT_SIZE = (1500, 920)
#: the first start's widths of the left (library, reference) and right (predictions, model…) dock columns
DOCK_WIDTHS = (320, 280)


class MainWindow(QMainWindow):
    def __init__(self, qsettings: QSettings, retargeting=None, recognition=None, models_dir: Path | None = None,
                 parent=None, attribution=None, plausibility=None, motion_fit=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("DTMR Studio")
        self.setAcceptDrops(True)
        self.qsettings = qsettings
        self.settings = SettingsModel()
        self.settings_store = SettingsStore(self.settings, qsettings)
        self.clock = PlaybackClock()
        self.selection = Selection()
        self.comparison = Comparison()
        self.privacy = PrivacyState()
        self.controller = StudioController(self.selection, self.comparison, self.clock, self.settings,
                                           retargeting, recognition, models_dir, self, attribution, self.privacy,
                                           plausibility=plausibility)
        self.driver = PlaybackDriver(self.clock, self)
        self.coalescer = FrameCoalescer(self._render_frame, self)
        self.message_boxes: list[QMessageBox] = []
        #: File > Open with options…, while it is shown
        self.open_options: OpenOptionsDialog | None = None

        self.views = ViewsPanel(self.comparison)
        #: what the three views are, above them until dismissed once (`app.ui.first_start_hint`)
        self.first_start_hint = FirstStartHint(qsettings)
        self.views.layout().insertWidget(0, self.first_start_hint)
        self.timeline = TimelinePanel(self.clock)
        self.tracks = TracksPanel(self.comparison)
        compare = QSplitter(Qt.Orientation.Vertical)
        compare.addWidget(self.views)
        compare.addWidget(self.timeline)
        compare.addWidget(self.tracks)
        compare.setStretchFactor(0, 3)
        compare.setStretchFactor(1, 0)
        compare.setStretchFactor(2, 1)
        compare.setSizes([560, 70, 220])
        self.trainer = TrainerTab()
        self.tabs = QTabWidget()
        self.tabs.addTab(compare, "Compare")
        # the trainer's form scrolls rather than widening the window past a 1366-pixel screen
        #: the Train tab's page (the trainer in a scroll area)
        self.trainer_page = QScrollArea()
        self.trainer_page.setWidgetResizable(True)
        self.trainer_page.setFrameShape(QFrame.Shape.NoFrame)
        self.trainer_page.setWidget(self.trainer)
        self.tabs.addTab(self.trainer_page, "Train")
        self.setCentralWidget(self.tabs)
        self.export_thread = JobThread(export_comparison, "export", self)
        # "Fit k-same on this library" (`motion_fit`: the job, in-process in tests; default a child process)
        self.motion_fitter = MotionFitter(self) if motion_fit is None else \
            MotionFitter(self, make_job=lambda: motion_fit)
        self.export_dialog = ExportDialog(self.export_thread, self)

        self.library_panel = LibraryPanel()
        self.reference_panel = ReferencePanel()
        self.model_panel = ModelPanel()
        self.predictions = PredictionsPanel(self.comparison)
        self.privacy_panel = PrivacyPanel(self.privacy)
        self.docks = {
            "library": self._dock("Library", self.library_panel, Qt.DockWidgetArea.LeftDockWidgetArea),
            "reference": self._dock("Reference", self.reference_panel, Qt.DockWidgetArea.LeftDockWidgetArea),
            "model": self._dock("Model", self.model_panel, Qt.DockWidgetArea.RightDockWidgetArea),
            "predictions": self._dock("Predictions", self.predictions, Qt.DockWidgetArea.RightDockWidgetArea),
            "privacy": self._dock("Privacy", self.privacy_panel, Qt.DockWidgetArea.RightDockWidgetArea),
        }
        # the model panel is needed to set up, the predictions all the time: they share a tab group
        self.tabifyDockWidget(self.docks["predictions"], self.docks["model"])
        self.tabifyDockWidget(self.docks["model"], self.docks["privacy"])
        self.docks["predictions"].raise_()
        self.status_label = QLabel()
        self.statusBar().addWidget(self.status_label, 1)
        self.hover_label = QLabel()
        self.statusBar().addPermanentWidget(self.hover_label)

        self.actions = build_menus(self)
        #: the keys typed into a text field, spin box or slider stay there (`app.ui.typing_guard`)
        self.typing_guard = TypingGuard(self)
        self.views.fill_show_menu(self.actions.show)
        self._connect()
        self._apply_settings()
        install_review(self)  # before the layout is saved and restored: the Review dock's place is too
        # docks as wide as their panels need, the rest to the views (else the right dock takes half the width)
        self.resizeDocks([self.docks["library"], self.docks["predictions"]], list(DOCK_WIDTHS),
                         Qt.Orientation.Horizontal)
        self.default_layout = self.saveState()
        self._restore_layout()
        self.controller.rescan_models()

    # --- construction ----------------------------------------------------------------------------
    def _dock(self, title: str, widget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock-{title.lower()}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _connect(self) -> None:
        a, clock, views = self.actions, self.clock, self.views
        clock.frame_changed.connect(self.coalescer.request)
        self.comparison.clips_changed.connect(lambda: self.coalescer.request(clock.frame))
        self.comparison.status_changed.connect(self._status_changed)
        self.tracks.seek_requested.connect(clock.seek)
        self.privacy.changed.connect(self._privacy_changed)
        self.docks["privacy"].visibilityChanged.connect(self._privacy_shown)

        self.library_panel.open_file_requested.connect(self.open_file_dialog)
        self.library_panel.open_folder_requested.connect(self.open_folder_dialog)
        self.library_panel.clip_selected.connect(self.selection.select_source)
        self.library_panel.pin_requested.connect(self.pin_reference)
        self.reference_panel.random_requested.connect(self.selection.random_reference)
        self.reference_panel.seed_changed.connect(self.selection.set_seed)
        self.reference_panel.pin_toggled.connect(self._pin_toggled)
        self.selection.reference_changed.connect(self._show_reference)
        self.model_panel.model_selected.connect(self.controller.select_model)
        self.model_panel.device_selected.connect(self.controller.select_device)
        self.model_panel.add_requested.connect(self.add_checkpoint_dialog)
        self.model_panel.rescan_requested.connect(self.controller.rescan_models)
        self.model_panel.remove_requested.connect(self.controller.remove_checkpoint)
        self.model_panel.fit_requested.connect(self.fit_on_library)
        self.model_panel.fit_cancel_requested.connect(self.motion_fitter.cancel)
        self.motion_fitter.progress.connect(
            lambda text: self.model_panel.show_fit_status(text, self.motion_fitter.running))
        self.motion_fitter.failed.connect(lambda text: self.model_panel.show_fit_status(text, False))
        self.motion_fitter.fitted.connect(self._model_fitted)

        self.controller.library_opened.connect(self._library_opened)
        self.controller.audit_changed.connect(self.library_panel.set_audit)
        self.controller.plausibility_scored.connect(self.library_panel.set_plausibility)
        self.controller.catalog_changed.connect(self._catalog_changed)
        self.controller.message.connect(self.status_label.setText)
        self.controller.error.connect(self.show_error)
        self.trainer.load_model_requested.connect(self.load_trained_model)
        self.export_dialog.exported.connect(lambda path: self.status_label.setText(f"Exported {path}"))

        a.open_file.triggered.connect(self.open_file_dialog)
        a.open_folder.triggered.connect(self.open_folder_dialog)
        a.open_with_options.triggered.connect(self.open_with_options_dialog)
        a.open_key.triggered.connect(self.open_key_dialog)
        a.open_audit.triggered.connect(self.open_audit_dialog)
        a.add_checkpoint.triggered.connect(self.add_checkpoint_dialog)
        a.export.triggered.connect(self.open_export_dialog)
        a.quit.triggered.connect(self.close)
        a.link_cameras.toggled.connect(lambda on: self.settings.set("link_cameras", on))
        for name, action in a.presets.items():
            action.triggered.connect(lambda _c=False, n=name: views.apply_preset(n))
        a.reset_cameras.triggered.connect(views.reset_cameras)
        a.feet.toggled.connect(lambda on: self.settings.set("show_feet", on))
        a.overlay.toggled.connect(lambda on: self.settings.set("overlay_source", on))
        a.screenshot.triggered.connect(self.take_screenshot)
        a.reset_layout.triggered.connect(self.reset_layout)
        a.go_to_frame.triggered.connect(self._focus_frame_box)
        a.loop_start.triggered.connect(lambda: clock.set_loop_start(clock.frame))
        a.loop_end.triggered.connect(lambda: clock.set_loop_end(clock.frame))
        a.clear_loop.triggered.connect(clock.clear_loop_range)
        a.play.triggered.connect(clock.toggle)
        a.previous_frame.triggered.connect(lambda: clock.step(-1))
        a.next_frame.triggered.connect(lambda: clock.step(1))
        a.back_ten.triggered.connect(lambda: clock.step(-10))
        a.forward_ten.triggered.connect(lambda: clock.step(10))
        a.first_frame.triggered.connect(clock.home)
        a.last_frame.triggered.connect(clock.end)
        a.slower.triggered.connect(clock.slower)
        a.faster.triggered.connect(clock.faster)
        a.cycle_loop.triggered.connect(self._cycle_loop)
        for mode, action in a.loop_modes.items():
            action.triggered.connect(lambda _c=False, m=mode: clock.set_loop_mode(m))
        a.every_frame.toggled.connect(clock.set_play_every_frame)
        a.shortcuts_help.triggered.connect(self.show_shortcuts)
        a.about.triggered.connect(self.show_about)

        # settings <-> widgets: the settings model is the single source of truth
        views.link_box.toggled.connect(lambda on: self.settings.set("link_cameras", on))
        views.feet_box.toggled.connect(lambda on: self.settings.set("show_feet", on))
        views.overlay_box.toggled.connect(lambda on: self.settings.set("overlay_source", on))
        views.hover_text.connect(self.hover_label.setText)
        self.tracks.hover_text.connect(self.hover_label.setText)
        self.timeline.frame_error.connect(self.status_label.setText)
        views.trail_box.valueChanged.connect(lambda n: self.settings.set("trail_length", n))
        clock.speed_changed.connect(lambda s: self.settings.set("speed", s))
        clock.loop_mode_changed.connect(self._loop_mode_changed)
        clock.every_frame_changed.connect(self._every_frame_changed)
        self.settings.changed.connect(self._setting_changed)

    def _apply_settings(self) -> None:
        for key, value in self.settings.items():
            self._setting_changed(key, value)
        self.clock.set_speed(self.settings.get("speed"))
        try:
            self.clock.set_loop_mode(LoopMode(self.settings.get("loop_mode")))
        except ValueError:
            self.settings.set("loop_mode", LoopMode.LOOP.value)
        self.clock.set_play_every_frame(self.settings.get("play_every_frame"))
        self._loop_mode_changed(self.clock.loop_mode)

    def _restore_layout(self) -> None:
        geometry = self.qsettings.value("window/geometry")
        state = self.qsettings.value("window/state")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            available = self.screen().availableGeometry()
            self.resize(min(DEFAULT_SIZE[0], available.width()), min(DEFAULT_SIZE[1], available.height()))
        if state is not None:
            self.restoreState(state)

    # --- frame rendering -------------------------------------------------------------------------
    def _render_frame(self, frame: int) -> None:
        self.views.show_frame(frame)
        self.timeline.show_frame(frame)
        self.tracks.show_frame(frame)
        self.predictions.show_frame(frame)

    # --- library, reference, models --------------------------------------------------------------
    def open_path(self, path: str | Path) -> None:
        self.controller.open_path(path)

    def open_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open clips", self.settings.get("last_dir"), OPEN_FILTER)
        if path:
            self.open_path(path)

    def open_with_options_dialog(self) -> None:
        """File > Open with options…: a BVH file or pose array with its up axis, unit or joint map (window-modal,
        not blocking: `open_options` is the dialog while it is shown)."""
        dialog = OpenOptionsDialog(self, self.settings.get("last_dir"))
        self.open_options = dialog
        dialog.accepted.connect(lambda: self._open_chosen(dialog))
        dialog.finished.connect(lambda _result: self._open_options_closed(dialog))
        dialog.open()

    def _open_chosen(self, dialog: OpenOptionsDialog) -> None:
        path, options = dialog.chosen()
        self.controller.open_path(path, options=options)

    def _open_options_closed(self, dialog: OpenOptionsDialog) -> None:
        if self.open_options is dialog:
            self.open_options = None
        dialog.deleteLater()

    def open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a folder of .skeleton files or OpenPose frames",
                                                self.settings.get("last_dir"))
        if path:
            self.open_path(path)

    def open_key_dialog(self) -> None:
        """File ▸ Open release key…: open the current release again, with the key chosen."""
        library = self.controller.library
        if library is None or not library.release:
            self.show_error("Open a release first (a library written by dtmr anonymize): a key opens its own "
                            "release only.")
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open the release's key", str(library.path.parent), KEY_FILTER)
        if path:
            self.controller.open_path(library.path, key=path)

    def open_audit_dialog(self) -> None:
        """File ▸ Open audit…: the risks and the worst attacker of the open release from an audit.json."""
        library = self.controller.library
        if library is None:
            self.show_error("Open a release first: an audit gives the risk of its clips.")
            return
        path, _ = QFileDialog.getOpenFileName(self, "Open an audit", str(library.path.parent), AUDIT_FILTER)
        if path:
            self.open_audit(path)

    def open_audit(self, path: str | Path) -> None:
        library = self.controller.library
        if library is None:
            return
        try:
            audit = read_audit(path)
        except DtmrError as exc:
            self.show_error(str(exc))
            return
        if np.isnan(audit.risk_column(library.table.get("sample_name", []))).all():
            self.show_error(f"{audit.path}: lists none of the clips of {library.path.name} (another release?)")
            return
        self.controller.set_audit(audit)

    def add_checkpoint_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Add a checkpoint", self.settings.get("last_dir"), CHECKPOINT_FILTER)
        if path:
            self.controller.add_checkpoint(path)

    def open_export_dialog(self) -> None:
        library, model = self.controller.library, self.controller.model
        inputs = [p for p in (library.path if library else None, model.path if model else None) if p]
        self.export_dialog.prepare(self.comparison, dict(self.controller.catalog.recognizers),
                                   library.action_names if library else {}, self.controller.device,
                                   self.settings.get("last_dir"), inputs=inputs)
        self.export_dialog.show()  # modeless: playback and the other panels stay usable
        self.export_dialog.raise_()

    def fit_on_library(self, method: str) -> None:
        """The Model panel's "Fit k-same on this library": fit `method` on the open library in the worker."""
        library = self.controller.library
        if library is None or library.release:
            return
        self.model_panel.show_fit_status(f"Fitting {method} on {library.path.name}…", True)
        self.motion_fitter.fit(library.path, method)

    def _model_fitted(self, path: str, text: str, details: str) -> None:
        """The fitted file joins the model list and is selected, so the views show it."""
        self.model_panel.show_fit_status(text, False, details)
        self.controller.add_checkpoint(path)

    def load_trained_model(self, path: str) -> None:
        """"Load this model" in the Train tab: add the checkpoint, select it and go back to comparing."""
        self.controller.add_checkpoint(path)
        self.tabs.setCurrentIndex(0)

    def pin_reference(self, index: int) -> None:
        try:
            self.selection.pin(index)
        except ValueError as exc:
            self.show_error(str(exc))

    def _pin_toggled(self, pinned: bool) -> None:
        ref = self.selection.reference
        if ref is None:
            return
        if pinned:
            self.selection.pin(ref.index)
        else:
            self.selection.unpin()

    def _library_opened(self, library: OpenedLibrary) -> None:
        self.library_panel.set_library(library)
        self.trainer.set_library(library.path, library.table)
        self.model_panel.set_fit_available("A release has no subjects or actions to fit a motion model on."
                                           if library.release else "")
        self.reference_panel.set_enabled(len(library.source) > 1)
        if library.release:
            self.docks["privacy"].raise_()  # where a release's risk is explained
        if len(library.source):
            self.library_panel.select_clip(0)

    def _show_reference(self, choice: ReferenceChoice | None) -> None:
        library = self.controller.library
        sel = self.selection
        pool = 0 if sel.pool is None or sel.source_index is None else len(sel.pool.candidates(sel.source_index))
        if choice is None or library is None:
            self.reference_panel.show_choice(None, "", "", None, pool)
            return
        table = library.table
        subject = int(table["subject"][choice.index])
        action = int(table["action"][choice.index])
        names = table.get("sample_name")
        name = str(names[choice.index]) if names is not None and str(names[choice.index]) else f"clip {choice.index}"
        detail = f"clip {choice.index} · subject {subject} · {library.action_name(action) or 'unknown action'}"
        self.reference_panel.show_choice(choice, name, detail, library.source.read(choice.index), pool)

    def _catalog_changed(self, result: ScanResult) -> None:
        selected = "" if self.controller.model is None else str(self.controller.model.path)
        self.model_panel.show_catalog(result.catalog, selected, self.controller.models_dir)
        self.model_panel.show_devices(result.devices, self.controller.device)
        self.trainer.set_devices(result.devices)
        self.trainer.set_start_checkpoints(result.catalog.retargeters)
        if not result.catalog.retargeters:
            self.status_label.setText(NO_MODEL_MESSAGE)
            self.docks["model"].raise_()  # where the checkpoint is added

    def _privacy_shown(self, visible: bool) -> None:
        self.tracks.set_reliance_visible(visible)
        self.controller.set_privacy_active(visible)

    def _privacy_changed(self) -> None:
        """Draw the attribution on the view of the clip it explains and as the reliance track."""
        result = self.privacy.result
        kind = None if result is None else ViewKind(result.request.view)
        if result is not None and self.comparison.clips.get(kind) is result.request.clip:
            a = result.attribution
            self.views.show_reliance(kind, reliance_colours(a.joints_normalized))
            self.tracks.show_reliance(a.frames_normalized,
                                      f"attacker reliance per frame (drop of P({result.target} {result.class_label}))")
            return
        self.views.show_reliance(None)
        title = "computing…" if self.privacy.pending else "attribution failed" if self.privacy.failed else ""
        self.tracks.show_reliance(None, title)

    def _status_changed(self, status: str) -> None:
        self.model_panel.show_status(status, self.comparison.busy)
        self.views.refresh_titles()

    # --- settings --------------------------------------------------------------------------------
    def _setting_changed(self, key: str, value) -> None:
        if key == "link_cameras":
            self.views.set_linked(value)
            self.actions.link_cameras.setChecked(value)
        elif key == "show_feet":
            self.views.set_feet_enabled(value)
            self.actions.feet.setChecked(value)
        elif key == "trail_length":
            self.views.set_trail_length(value)
        elif key == "overlay_source":
            self.views.set_overlay(value)
            self.actions.overlay.setChecked(value)
        elif key == "recent_files":
            self._rebuild_recent(value)

    def _rebuild_recent(self, paths: list[str]) -> None:
        menu = self.actions.recent
        menu.clear()
        for path in paths:
            action = menu.addAction(path)
            action.triggered.connect(lambda _c=False, p=path: self.open_path(p))
        menu.setEnabled(bool(paths))

    def _loop_mode_changed(self, mode: LoopMode) -> None:
        self.settings.set("loop_mode", LoopMode(mode).value)
        for m, action in self.actions.loop_modes.items():
            action.setChecked(m is mode)

    def _every_frame_changed(self, enabled: bool) -> None:
        self.settings.set("play_every_frame", enabled)
        self.actions.every_frame.setChecked(enabled)

    def _cycle_loop(self) -> None:
        self.clock.set_loop_mode(LOOP_ORDER[(LOOP_ORDER.index(self.clock.loop_mode) + 1) % len(LOOP_ORDER)])

    # --- viewer conventions ----------------------------------------------------------------------
    def take_screenshot(self) -> None:
        """P: the three views as a PNG (see `app.ui.screenshots`); the status bar names the file."""
        self.coalescer.flush()  # the frame the slider shows, not the one before it
        source = self.comparison.clips.get(ViewKind.SOURCE)
        folder = self.settings.get("screenshot_dir")
        folder = Path(folder) if folder else default_screenshot_dir()
        try:
            path = save_screenshot(self.views, list(self.views.views.values()), folder,
                                   source.name if source is not None else "studio", self.clock.frame)
        except OSError as exc:
            self.show_error(f"Screenshot not written: {exc}")
            return
        self.status_label.setText(f"Screenshot written to {path}")

    def reset_layout(self) -> None:
        """View ▸ Reset layout: every dock back where this window first put it, shown."""
        self.restoreState(self.default_layout)
        for dock in self.docks.values():
            dock.show()
        self.docks["predictions"].raise_()

    def _focus_frame_box(self) -> None:
        self.tabs.setCurrentIndex(0)
        self.timeline.frame_box.setFocus()
        self.timeline.frame_box.selectAll()

    # --- messages --------------------------------------------------------------------------------
    def show_error(self, text: str) -> None:
        """A non-modal message box (never blocks playback or tests) plus the status bar."""
        self.status_label.setText(text)
        self._message("DTMR Studio", text, QMessageBox.Icon.Warning)

    def show_shortcuts(self) -> None:
        rows = "".join(f"<tr><td><b>{k}</b></td><td>&nbsp;{d}</td></tr>" for k, d in SHORTCUTS)
        self._message("Keyboard shortcuts", f"<table>{rows}</table>", QMessageBox.Icon.Information)

    def show_about(self) -> None:
        self._message("About DTMR Studio", (app_doc or "").strip().splitlines()[0], QMessageBox.Icon.Information)

    def _message(self, title: str, text: str, icon) -> QMessageBox:
        box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, self)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.finished.connect(lambda _r, b=box: self.message_boxes.remove(b) if b in self.message_boxes else None)
        self.message_boxes.append(box)
        box.open()
        return box

    # --- drag and drop, closing ------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        paths = [url.toLocalFile() for url in event.mimeData().urls() if url.isLocalFile()]
        if paths:
            self.open_path(paths[0])
            event.acceptProposedAction()

    def closeEvent(self, event) -> None:  # noqa: N802
        self.clock.pause()
        self.qsettings.setValue("window/geometry", self.saveGeometry())
        self.qsettings.setValue("window/state", self.saveState())
        self.qsettings.sync()
        self.controller.shutdown()
        self.export_thread.stop()
        self.motion_fitter.stop()
        self.trainer.shutdown()
        self.export_dialog.close()
        for box in list(self.message_boxes):
            box.close()
        self.views.dispose()
        super().closeEvent(event)
