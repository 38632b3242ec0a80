"""The controller: turns selection and model changes into background jobs, and their results into state.

It owns one long-lived `JobThread` per kind of job: opening a library, scanning the model folders,
retargeting (inference), recognition, the Privacy panel's attribution and the clip table's
plausibility scores (every clip of a library scored once it opens, `app.core.plausibility`); retargeting and recognition
run in child processes (`ProcessJob`), which their threads wait on. The attribution runs in its thread:
it runs once per clip and only while the Privacy panel is shown, so it does not need a third child
process holding its own torch. A newer request of a kind supersedes the running one; a result
whose request is no longer the latest is dropped. The UI never waits on any of them: panels listen to
`Selection`, `Comparison` and `PlaybackClock`, which only change here, on the GUI thread.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal

from dtmr.data.label_set import LabelSet
from dtmr.io.import_options import ImportOptions
from dtmr.resources import MODELS_DIR, resource_path

from ..core.checkpoints import CheckpointInfo, ModelCatalog
from ..core.audit_file import AuditInfo
from ..core.library import OpenedLibrary, OpenRequest, open_library
from ..core.model_scan import ScanRequest, ScanResult, scan_models
from ..core.plausibility import ChunkScorer, PlausibilityColumn, PlausibilityJob, PlausibilityRequest
from ..core.privacy import AttackerFile, AttributionRequest, AttributionResult, PrivacyAttribution, SubjectRecognizer
from ..core.recognition import Recognition, RecognitionRequest, RecognitionResult, TaskProbabilities
from ..core.retargeting import NO_MODEL_MESSAGE, RetargetRequest, RetargetResult, Retargeting
from ..state.comparison import VIEWS, Comparison, ViewKind
from ..state.playback import PlaybackClock
from ..state.privacy import PrivacyState
from ..state.selection import Selection
from ..state.settings import SettingsModel
from ..workers.job_thread import JobThread, stop_threads
from ..workers.process_job import ProcessJob


#: what the model processes import before their first request (torch comes with them)
MODEL_MODULES = ("dtmr.models.anonymizer", "dtmr.models.recognizers")
#: the released view's predictions and attribution follow the β slider once it rests this long
BETA_SETTLE_MS = 300


class StudioController(QObject):
    """Signals: `library_opened(OpenedLibrary)`, `audit_changed(OpenedLibrary)` (the same library with
    another audit), `catalog_changed(ScanResult)`, `message(str)` (status bar), `error(str)` (a failed
    job, one line), `plausibility_scored(PlausibilityColumn)` (more clips of the open library scored)."""

    library_opened = Signal(object)
    audit_changed = Signal(object)
    catalog_changed = Signal(object)
    message = Signal(str)
    error = Signal(str)
    plausibility_scored = Signal(object)

    def __init__(self, selection: Selection, comparison: Comparison, clock: PlaybackClock,
                 settings: SettingsModel, retargeting=None, recognition=None,
                 models_dir: Path | None = None, parent: QObject | None = None, attribution=None,
                 privacy: PrivacyState | None = None, plausibility=None) -> None:
        super().__init__(parent)
        self.selection = selection
        self.comparison = comparison
        self.privacy = privacy if privacy is not None else PrivacyState()
        #: whether the Privacy panel is shown (the attribution runs only then)
        self.privacy_active = False
        #: the clip and the rest of the last attribution request, so an equal one is not sent again
        self._attribution_clip = None
        self._attribution_key: tuple | None = None
        self.clock = clock
        self.settings = settings
        self.models_dir = Path(models_dir) if models_dir is not None else resource_path(*MODELS_DIR)
        self.library: OpenedLibrary | None = None
        self.catalog = ModelCatalog()
        #: False until the first scan of the model folders has finished
        self.catalog_scanned = False
        self.devices: list[str] = ["cpu"]
        self.model: CheckpointInfo | None = None
        self.device = "cpu"
        self.last_result: RetargetResult | None = None
        #: the model whose β the slider's β belongs to (another model starts at its own β)
        self._beta_model: CheckpointInfo | None = None
        self._beta_settled = QTimer(self)
        self._beta_settled.setSingleShot(True)
        self._beta_settled.setInterval(BETA_SETTLE_MS)
        self._beta_settled.timeout.connect(self._released_reblended)
        comparison.beta_changed.connect(self._beta_settled.start)
        #: (library, index) of the source clip on screen: a new reference keeps that Clip object
        self._source_key: tuple[object, int] | None = None
        #: per view: the clip recognized and each task's (T, C) probabilities, for `_recognized_with`
        self._recognized: dict[str, tuple[object, dict[str, np.ndarray]]] = {}
        self._recognized_with: tuple | None = None
        #: the last probabilities of each task (their class names, labels and classes)
        self._recognized_tasks: dict[str, TaskProbabilities] = {}
        self.threads = {
            "library": JobThread(open_library, "library loader", self),
            "models": JobThread(scan_models, "model scanner", self),
            # the model jobs run in child processes, off the UI's GIL (app/workers/process_job.py); they
            # import the model code while the library and the model folders load
            "inference": JobThread(retargeting or ProcessJob(Retargeting, "inference", preload=MODEL_MODULES),
                                   "inference", self),
            "recognition": JobThread(recognition or ProcessJob(Recognition, "recognition", preload=MODEL_MODULES),
                                     "recognition", self),
            "attribution": JobThread(attribution or PrivacyAttribution(), "attribution", self),
            # its scoring runs in a child process too: NumPy on small arrays holds the GIL between calls
            "plausibility": JobThread(PlausibilityJob(plausibility or ProcessJob(ChunkScorer, "plausibility scorer",
                                                                                 threads=1)),
                                      "plausibility scorer", self),
        }
        #: the column the latest plausibility job fills (None before a library opened)
        self.plausibility: PlausibilityColumn | None = None
        self._latest: dict[str, int] = {}
        self.threads["library"].job_finished.connect(self._library_finished)
        self.threads["models"].job_finished.connect(self._scan_finished)
        self.threads["inference"].job_finished.connect(self._inference_finished)
        self.threads["inference"].job_progress.connect(self._inference_progress)
        self.threads["recognition"].job_finished.connect(self._recognition_finished)
        self.threads["attribution"].job_finished.connect(self._attribution_finished)
        self.threads["attribution"].job_progress.connect(self._attribution_progress)
        self.threads["plausibility"].job_progress.connect(self._plausibility_progress)
        self.threads["plausibility"].job_finished.connect(self._plausibility_finished)
        for kind, thread in self.threads.items():
            thread.job_failed.connect(lambda rid, text, k=kind: self._failed(k, rid, text))
        selection.pair_changed.connect(self._pair_changed)

    # --- requests from the UI --------------------------------------------------------------------
    def open_path(self, path: str | Path, key: str | Path | None = None,
                  options: ImportOptions | None = None) -> None:
        """Open a clip source; `key`: the release key to open a release with (else the one beside it); `options`:
        the up axis, unit or joint map of a BVH file or pose array (File > Open with options…)."""
        path = Path(path)
        self.message.emit(f"Opening {path}…")
        self._submit("library", OpenRequest(path, None if key is None else Path(key), options))

    def set_audit(self, audit: AuditInfo) -> None:
        """Use `audit` (File ▸ Open audit…) for the open library: its risks and its worst attacker."""
        if self.library is None:
            return
        self.library = dataclasses.replace(self.library, audit=audit, audit_error="")
        known = int((~np.isnan(self.library.risk)).sum())
        self.audit_changed.emit(self.library)
        self.message.emit(f"Audit {audit.path}: risk of {known} of {len(self.library.source)} clips")
        self._show_risk()
        self.run_attribution()

    def set_privacy_active(self, active: bool) -> None:
        """The Privacy panel was shown or hidden: compute for the clip on screen, or stop."""
        self.privacy_active = active
        self.run_attribution()

    def rescan_models(self) -> None:
        files = tuple(Path(p) for p in self.settings.get("user_checkpoints"))
        self._submit("models", ScanRequest((self.models_dir,), files))

    def add_checkpoint(self, path: str | Path) -> None:
        self.settings.add_user_checkpoint(str(path))
        self.settings.set("last_model", str(path))
        self.rescan_models()

    def remove_checkpoint(self, path: str | Path) -> None:
        """Forget a checkpoint the user added (the Model panel's Remove): it is no longer scanned."""
        paths = self.settings.get("user_checkpoints")
        kept = [p for p in paths if Path(p) != Path(path)]
        if kept != paths:
            self.settings.set("user_checkpoints", kept)
            self.rescan_models()

    def select_model(self, path: str) -> None:
        info = self.catalog.find(path)
        if info is None or info == self.model:
            return
        self.model = info
        self.settings.set("last_model", str(info.path))
        self.run_inference()

    def select_device(self, device: str) -> None:
        if device == self.device:
            return
        self.device = device
        self.settings.set("device", device)
        self.run_inference()

    def run_inference(self) -> None:
        """Retarget the current pair with the current model (superseding any running request).

        The views keep the previous output of the same pair until the new one arrives (a new source
        has already cleared them), so switching models or devices does not blank the screen. Without
        a retargeting checkpoint nothing runs: the model views say that one is needed.
        """
        source = self.comparison.clips.get(ViewKind.SOURCE)
        reference = self.comparison.reference
        if source is None or reference is None:
            return
        if self.model is None and not self.catalog_scanned:
            self.comparison.set_status("Looking for retargeting checkpoints…")
            return  # the scan's end runs this again
        if self.model is None:
            self.threads["inference"].cancel()
            self._latest.pop("inference", None)  # a result still on its way came from a model now gone
            self.comparison.set_unavailable(NO_MODEL_MESSAGE)
            self.comparison.set_status(NO_MODEL_MESSAGE)
            return
        if self.model != self._beta_model:
            self._beta_model = self.model
            self.comparison.set_beta(None)
        names = None if self.library is None else self.library.source.action_names
        request = RetargetRequest(source, reference, self.model, self.catalog.full_model(self.model), self.device,
                                  None if names is None else tuple(names))
        self.comparison.set_unavailable("")
        self.comparison.set_status(f"Retargeting with {self.model.label}…", busy=True)
        self._submit("inference", request)

    def shutdown(self) -> None:
        """Cancel every job and end the worker threads (called when the window closes)."""
        self._latest.clear()  # results still queued for the GUI thread are dropped
        stop_threads(self.threads.values())

    @property
    def busy(self) -> bool:
        return any(t.busy for t in self.threads.values())

    # --- results ---------------------------------------------------------------------------------
    def _library_finished(self, request_id: int, library: OpenedLibrary) -> None:
        if not self._is_latest("library", request_id):
            return
        previous, self.library = self.library, library
        self.threads["plausibility"].cancel()  # it reads the previous source, closed below
        self._latest.pop("plausibility", None)
        if previous is not None and previous.source is not library.source:
            previous.source.close()
        self.settings.add_recent(str(library.path))
        self.settings.set("last_dir", str(library.path.parent))
        labels = LabelSet.build(library.path.stem, library.source.topology, library.table["action"],
                                library.source.action_names, library.table["subject"])
        self.comparison.set_labels(labels)
        self.catalog.library = labels
        self.selection.set_library(library.source, library.table["subject"])
        self.library_opened.emit(library)
        if self.catalog_scanned:  # the model list marks the checkpoints trained on another data set
            self.catalog_changed.emit(ScanResult(self.catalog, self.devices))
        notes = "".join(f"; {note}" for note in library.import_notes)
        self.message.emit(f"Opened {library.path.name}: {len(library.source)} clips{_release_note(library)}{notes}")
        if library.import_warnings:
            self.error.emit("\n".join(f"{library.path.name}: {w}" for w in library.import_warnings))
        if library.audit_error:
            self.error.emit(f"The audit beside the release was not used: {library.audit_error}")
        self.plausibility = PlausibilityColumn(len(library.source))
        self._submit("plausibility", PlausibilityRequest(library.source, self.plausibility))

    def _plausibility_progress(self, request_id: int, _done: int, _total: int, _message: str) -> None:
        if self._is_latest("plausibility", request_id):
            self.plausibility_scored.emit(self.plausibility)

    def _plausibility_finished(self, request_id: int, column: PlausibilityColumn) -> None:
        if not self._is_latest("plausibility", request_id):
            return
        self.plausibility_scored.emit(column)

    def _scan_finished(self, request_id: int, result: ScanResult) -> None:
        if not self._is_latest("models", request_id):
            return
        before = (self.model, self.catalog.full_model(self.model), self.device)
        first_scan = not self.catalog_scanned
        self.catalog = result.catalog
        self.catalog.library = self.comparison.labels
        self.catalog_scanned = True
        self.devices = result.devices
        self.device = self.settings.get("device") if self.settings.get("device") in result.devices else result.devices[0]
        self.model = self._default_model(result.catalog)
        self.catalog_changed.emit(result)
        if first_scan or (self.model, self.catalog.full_model(self.model), self.device) != before:
            self.run_inference()
        self.run_attribution()  # the subject recognizer may have come or gone

    def _default_model(self, catalog: ModelCatalog) -> CheckpointInfo | None:
        last = catalog.find(self.settings.get("last_model")) if self.settings.get("last_model") else None
        if last is not None:
            return last
        return catalog.recommended()

    def _pair_changed(self) -> None:
        sel, library = self.selection, self.library
        self._show_risk()
        if library is None or sel.source_index is None:
            self._source_key = None
            self.comparison.set_source(None, None)
            self.comparison.set_status("No clip selected")
            self.clock.set_length(1, 30.0)
            self.run_attribution()
            return
        shown = self.comparison.clips.get(ViewKind.SOURCE)
        key = (library.source, sel.source_index)
        source = shown if shown is not None and key == self._source_key else library.source.read(sel.source_index)
        self._source_key = key
        reference = None if sel.reference is None else library.source.read(sel.reference.index)
        self.comparison.set_source(source, reference)
        self.clock.set_length(self.comparison.length, self.comparison.fps)
        self._run_recognition()
        self.run_attribution()
        if reference is None:
            reason = "No reference: the library has no clip of another subject"
            self.comparison.set_unavailable(reason)
            self.comparison.set_status(reason)
            return
        self.run_inference()

    def _inference_progress(self, request_id: int, done: int, total: int, message: str) -> None:
        if self._is_latest("inference", request_id):
            self.comparison.set_status(f"Retargeting: {message} ({done}/{total})", busy=True)

    def _inference_finished(self, request_id: int, result: RetargetResult) -> None:
        if not self._is_latest("inference", request_id):
            return
        self.last_result = result
        self.comparison.set_outputs(result.retargeted, result.released, result.note, result.parts)
        self.comparison.set_status("Ready")
        self.clock.set_length(self.comparison.length, self.comparison.fps)
        self.message.emit(result.note)
        self._run_recognition()
        self.run_attribution()

    def _released_reblended(self) -> None:
        """The β slider came to rest: the released view's predictions and attribution follow its clip."""
        if ViewKind.RELEASED in self.comparison.clips:
            self._run_recognition()
            self.run_attribution()

    def _run_recognition(self) -> None:
        """Recognize the views whose clip is new; the others keep their probabilities (a new reference
        changes the model views only), and they stay on screen meanwhile."""
        recognizers = self.catalog.recognizers
        if not recognizers:
            self._recognized, self._recognized_tasks = {}, {}
            self.comparison.set_recognition(None)
            return
        action, subject = recognizers.get("action"), recognizers.get("subject")
        if (action, subject, self.device) != self._recognized_with:
            self._recognized_with = (action, subject, self.device)
            self._recognized, self._recognized_tasks = {}, {}
        clips = {kind.value: self.comparison.clips[kind] for kind in VIEWS if kind in self.comparison.clips}
        self._recognized = {v: done for v, done in self._recognized.items() if clips.get(v) is done[0]}
        todo = {view: clip for view, clip in clips.items() if view not in self._recognized}
        request = RecognitionRequest(todo, action, subject, self.device)
        if not todo:
            self.comparison.set_recognition(self._recognition_so_far(request))
            return
        self.comparison.set_recognition(self._recognition_so_far(request), pending=True)
        self._submit("recognition", request)

    def _recognition_finished(self, request_id: int, result: RecognitionResult) -> None:
        if not self._is_latest("recognition", request_id):
            return
        for view, clip in result.request.clips.items():
            self._recognized[view] = (clip, {task: p.per_frame[view] for task, p in result.tasks.items()})
        self._recognized_tasks = dict(result.tasks)
        self.comparison.set_recognition(self._recognition_so_far(result.request))

    def _recognition_so_far(self, request: RecognitionRequest) -> RecognitionResult | None:
        """The probabilities of every view recognized so far, as one result (None before the first)."""
        if not self._recognized or not self._recognized_tasks:
            return None
        tasks = {task: meta.with_views({v: per[task] for v, (_, per) in self._recognized.items() if task in per})
                 for task, meta in self._recognized_tasks.items()}
        clips = {view: clip for view, (clip, _) in self._recognized.items()}
        return RecognitionResult(dataclasses.replace(request, clips=clips), tasks)

    # --- privacy: attribution of the released clip ------------------------------------------------
    def run_attribution(self) -> None:
        """Explain the released clip on screen with the audit's worst attacker (or the subject recognizer).

        Runs only while the Privacy panel is shown; a request equal to the last one is not repeated, and
        a newer one supersedes the running one.
        """
        privacy = self.privacy
        if not self.privacy_active:
            self._stop_attribution()
            if privacy.result is not None or privacy.pending:
                privacy.set_message("")
            return
        target = self._attribution_target()
        if isinstance(target, str):
            self._stop_attribution()
            privacy.set_message(target)
            return
        view, clip = target
        predictors, note = self._attribution_predictors()
        if not predictors:
            self._stop_attribution()
            privacy.set_message(f"No attacker to explain: {note}. Open an audit with its attacker files "
                                "(File ▸ Open audit…) or add a subject recognizer (Model panel).")
            return
        source = self.comparison.clips[ViewKind.SOURCE]
        key = (view, predictors, source.subject, self.device)
        if clip is self._attribution_clip and key == self._attribution_key:
            return
        self._attribution_clip, self._attribution_key = clip, key
        privacy.set_pending(f"Computing which joints and frames {predictors[0].label} relies on…")
        self._submit("attribution", AttributionRequest(clip, view.value, source.subject, predictors, self.device,
                                                       note))

    def _stop_attribution(self) -> None:
        self.threads["attribution"].cancel()
        self._latest.pop("attribution", None)
        self._attribution_clip = self._attribution_key = None

    def _attribution_target(self) -> tuple[ViewKind, object] | str:
        """(view, clip) of the clip as released, or why there is none: a release's own clips are released
        clips; otherwise the selected model's output is."""
        c = self.comparison
        if ViewKind.SOURCE not in c.clips:
            return "No clip selected."
        if self.library is not None and self.library.release:
            return ViewKind.SOURCE, c.clips[ViewKind.SOURCE]
        if ViewKind.RELEASED in c.clips:
            return ViewKind.RELEASED, c.clips[ViewKind.RELEASED]
        return f"No released clip: {c.unavailable}" if c.unavailable else "Waiting for the released clip…"

    def _attribution_predictors(self) -> tuple[tuple, str]:
        """The predictors to try, best first, and a note on what is missing (\"\" when nothing is)."""
        audit = None if self.library is None else self.library.audit
        worst = None if audit is None else audit.worst
        predictors: list = []
        note = ""
        if worst is not None and worst.file is not None and worst.file.is_file():
            figures = f"{worst.accuracy:.1f} % re-identified, {worst.times_chance:.1f}× chance"
            predictors.append(AttackerFile(worst.file, f"{worst.label}, the audit's worst attacker ({figures})"))
        elif audit is None:
            note = "no audit is open for this library"
        elif worst.file is None:
            note = f"{audit.path} names no saved file for its worst attacker, {worst.label}"
        else:
            note = f"the worst attacker's file {worst.file} is missing"
        recognizer = self.catalog.recognizers.get("subject")
        if recognizer is not None:
            label = f"the Studio's subject recognizer ({recognizer.path.name})"
            predictors.append(SubjectRecognizer(recognizer, label))
            if note:
                note += "; the Studio's subject recognizer stands in for the attacker"
        return tuple(predictors), note

    def _attribution_progress(self, request_id: int, done: int, total: int, message: str) -> None:
        if self._is_latest("attribution", request_id):
            self.privacy.set_pending(f"Attribution: {message} ({done}/{total})")

    def _attribution_finished(self, request_id: int, result: AttributionResult) -> None:
        if self._is_latest("attribution", request_id):
            self.privacy.set_result(result)

    def _show_risk(self) -> None:
        library, index = self.library, self.selection.source_index
        self.privacy.set_risk(np.nan if library is None or index is None else float(library.risk[index]))

    def _failed(self, kind: str, request_id: int, text: str) -> None:
        if not self._is_latest(kind, request_id):
            return
        if kind == "attribution":  # shown in the Privacy panel; the Studio carries on (the same request
            # is not tried again until the clip, the attacker or the device changes)
            self.privacy.set_message(f"Attribution failed: {text}", failed=True)
            return
        if kind == "inference":
            self.comparison.set_status(f"Retargeting failed: {text}")
        elif kind == "recognition":
            self._recognized, self._recognized_tasks = {}, {}
            self.comparison.set_recognition(None)
        self.error.emit(f"{kind}: {text}")

    # --- bookkeeping -----------------------------------------------------------------------------
    def _submit(self, kind: str, request) -> None:
        self._latest[kind] = self.threads[kind].submit(request)

    def _is_latest(self, kind: str, request_id: int) -> bool:
        return self._latest.get(kind) == request_id


def _release_note(library: OpenedLibrary) -> str:
    if not library.release:
        return ""
    key = "with its key" if library.key is not None else "without its key (subjects unknown)"
    audit = f", audit {library.audit.path.parent.name}" if library.audit is not None else ""
    return f" (a release, {key}{audit})"
