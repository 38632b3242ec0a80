"""Trainer tab: a form for `dtmr train`, run as a separate process with live curves, ETA, log and Cancel.

Training runs in its own process (QProcess), never in the Studio: torch's work cannot stall the UI and a
crash in training cannot take the Studio down. Its stdout carries JSON-line progress events
(`dtmr.train.progress`), parsed incrementally; stderr goes to the log. Cancel terminates the process
(then kills it after a grace period); the last finished epoch's state (`train_state.pt`) stays, so Resume
continues from it. Resume is enabled only when the output folder holds such a state; a cancel before the first
epoch ended says that nothing was saved. When the process fails, its last error line is shown above the log.

The data and split follow the library the Studio opens (`set_library`) until the user picks other data; the
split is the one of the library's layout (`dtmr.data.split_choice.choose_split`), with a line saying why and
whether it can be used on these clips.

The progress line (state, bar, samples/s and ETA) belongs to the run that is running: a cancel or a new
start clears it. Resume is offered only for an output folder whose run did not finish. The loss legend is
a list below each stage's plot (`LossLegend`), never over its curves; unticking a loss hides its curve.

The form shows the library's defaults of the chosen preset (`dtmr.train.presets`) and passes only the
settings the user changed from them, so `dtmr train` applies its own defaults; it is locked while a run runs.
The method (DisentangledTMR, DMR, PMR) is `--method`; DisentangledTMR-only fields are disabled for the others.
"Start from" fine-tunes a model of the model list (`--init`, `set_start_checkpoints`): the form takes the
checkpoint's method, preset and model options (`dtmr.train.fine_tuning`) and locks them, since the weights fit
no other network; its β is proposed, and the data, split, epochs and folder stay the run's own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QProcess, QProcessEnvironment, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from dtmr.data.split_choice import choose_split
from dtmr.data.splits import SPLITS
from dtmr.errors import DtmrError
from dtmr.models.checkpoints.header import CheckpointHeader
from dtmr.train.fine_tuning import FineTuning, fine_tuning
from dtmr.train.presets import (
    BASELINE,
    BETAS,
    DEFAULT_BETA,
    DEFAULT_PRESET,
    DEFAULT_SEED,
    MAX_BATCH,
    MAX_DEFAULT_QUADRUPLETS,
    MAX_QUADRUPLETS,
    PRESETS,
)
from dtmr.train.progress import (
    EventStreamParser,
    ProgressEvent,
    format_duration,
    format_event,
)

from ..core import training_command as commands
from ..core.checkpoints import CHECKPOINT_SUFFIXES
from ..core.training_command import (
    DEFAULT_METHOD,
    METHODS,
    TrainingConfig,
    child_environment,
    form_fine_tuning,
    parse_loss_weights,
    training_command,
)
from ..state.training import TrainingProgress
from .loss_legend import LossLegend

KILL_AFTER_MS = 3000
#: "Start from" without a checkpoint
NEW_WEIGHTS = "new weights"
STAGES = (1, 2, 3)
CURVE_COLOURS = ((31, 119, 180), (214, 39, 40), (44, 160, 44), (255, 127, 14), (148, 103, 189), (140, 86, 75),
                 (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207))
MAX_LOG_LINES = 5000
LR_DECIMALS = 6
MAX_SEED = 2**31 - 1  # QSpinBox's limit
#: loss plots: readable legends and a useful least size (tested at the Studio's default window size)
LEGEND_TEXT = "9pt"
PLOT_MIN_SIZE = (320, 220)
#: the form's widest: the plots and log take the rest of the tab
FORM_MAX_WIDTH = 420


class TrainerTab(QWidget):
    """Signal: `load_model_requested(str)` with the trained checkpoint's path."""

    load_model_requested = Signal(str)

    def __init__(self, command: Callable[[TrainingConfig], list[str]] = training_command, parent=None) -> None:
        super().__init__(parent)
        self.command = command
        self.progress = TrainingProgress()
        self.progress.changed.connect(self._event)
        self.parser = EventStreamParser()
        self.process: QProcess | None = None
        self.run_config: TrainingConfig | None = None
        self._cancelling = False
        self._checkpoints_at_start = 0
        #: the last non-empty line the process wrote to stderr: the reason when it fails
        self.last_error_line = ""
        #: the library path put in the Data field by `set_library` (replaced when another library opens)
        self._library_data = ""
        #: the checkpoint chosen in "Start from" (None: new weights)
        self.tuning: FineTuning | None = None
        self._build_form()
        self._build_display()
        self.set_devices(["cpu"])
        self._preset_changed()
        self._set_running(False)

    # --- form ----------------------------------------------------------------------------------------
    def _build_form(self) -> None:
        self.data_edit = QLineEdit()
        self.data_edit.setPlaceholderText(".npz data set or .h5 library")
        self.data_button = QPushButton("Browse…")
        self.data_button.clicked.connect(self._browse_data)
        self.method_box = QComboBox()
        for method, name in METHODS.items():
            self.method_box.addItem(name, method)
        self.method_box.setCurrentIndex(self.method_box.findData(DEFAULT_METHOD))
        self.method_box.setToolTip("--method: DisentangledTMR, or the DMR / PMR baselines (their own schedules)")
        self.method_box.currentIndexChanged.connect(self._method_changed)
        self.start_box = QComboBox()
        self.start_box.addItem(NEW_WEIGHTS, None)
        self.start_box.setToolTip("--init: fine-tune a model of the model list on this data (its weights, method, "
                                  "preset and model options), or start from new weights")
        self.start_box.currentIndexChanged.connect(self._start_changed)
        self.start_note = QLabel()
        self.start_note.setWordWrap(True)
        self.start_note.setVisible(False)
        self.split_box = QComboBox()
        for name, split in SPLITS.items():
            self.split_box.addItem(name, name)
            self.split_box.setItemData(self.split_box.count() - 1, split.description, Qt.ItemDataRole.ToolTipRole)
        #: why the split was proposed for the open library, and whether it can be used on its clips
        self.split_note = QLabel()
        self.split_note.setWordWrap(True)
        self.split_note.setVisible(False)  # shown once a library proposes its split
        self.preset_box = QComboBox()
        for preset in PRESETS.values():
            self.preset_box.addItem(preset.name)
            self.preset_box.setItemData(self.preset_box.count() - 1, preset.description, Qt.ItemDataRole.ToolTipRole)
        self.preset_box.setCurrentText(DEFAULT_PRESET)
        self.preset_box.currentIndexChanged.connect(self._preset_changed)
        self.defaults_label = QLabel()
        self.defaults_label.setWordWrap(True)
        self.beta_box = QComboBox()
        self.beta_box.setEditable(True)
        for beta in BETAS:
            self.beta_box.addItem(f"{beta:g}", beta)
        self.beta_box.setCurrentIndex(BETAS.index(DEFAULT_BETA))
        self.epoch_boxes = [QSpinBox() for _ in STAGES]
        for box in self.epoch_boxes:
            box.setRange(0, 1000)
        self.batch_box = QSpinBox()
        self.batch_box.setRange(1, MAX_BATCH)  # what `dtmr train --batch` accepts
        self.batch_box.setToolTip("quadruplets per optimizer step, over all processes")
        self.lr_box = QDoubleSpinBox()
        self.lr_box.setDecimals(LR_DECIMALS)
        self.lr_box.setRange(1e-6, 1.0)
        self.lr_box.setSingleStep(1e-4)
        self.quadruplets_box = QSpinBox()
        self.quadruplets_box.setRange(0, MAX_QUADRUPLETS)  # 0: the library's default
        self.quadruplets_box.setSpecialValueText(f"2× the training clips, ≤ {MAX_DEFAULT_QUADRUPLETS:,}")
        self.quadruplets_box.setToolTip("quadruplets per epoch (--quadruplets)")
        self.seed_box = QSpinBox()
        self.seed_box.setRange(0, MAX_SEED)
        self.seed_box.setValue(DEFAULT_SEED)
        # short texts, the flags in the tooltips: the form stays narrow enough for the plots beside it
        self.naive_residual_box = QCheckBox("naive")
        self.naive_residual_box.setToolTip("--model-option residual=naive: blend the decoder output with the source "
                                           "retargeted to the reference's bone lengths instead of the source itself")
        self.kinematic_output_box = QCheckBox("kinematic")
        self.kinematic_output_box.setToolTip("--model-option output_head=kinematic: the decoder predicts the root and "
                                             "bone directions, placed on the reference's bone lengths (a body by "
                                             "construction; the bundled models use it)")
        self.warm_critics_box = QCheckBox("warm in stage 2")
        self.warm_critics_box.setToolTip("--warm-output-critics: train the output critics already in stage 2")
        self.adversary_lr_box = QDoubleSpinBox()
        self.adversary_lr_box.setDecimals(LR_DECIMALS)
        self.adversary_lr_box.setRange(0.0, 1.0)  # 0: the stage's rate
        self.adversary_lr_box.setSingleStep(1e-4)
        self.adversary_lr_box.setSpecialValueText("the stage's")
        self.adversary_lr_box.setToolTip("learning rate of the output identity adversary (--output-adversary-lr)")
        self.loss_weights_edit = QLineEdit()
        self.loss_weights_edit.setPlaceholderText("e.g. output_action_ce=0, output_identity_adversary=1")
        self.loss_weights_edit.setToolTip("replace loss terms' published weights (--loss-weight TERM=W; "
                                          "terms: docs/losses.md)")
        self.device_box = QComboBox()
        self.out_edit = QLineEdit()
        self.out_edit.setPlaceholderText("folder for checkpoints")
        self.out_edit.textChanged.connect(lambda _text: self._update_resume())
        self.out_button = QPushButton("Browse…")
        self.out_button.clicked.connect(self._browse_out)
        self.start_button = QPushButton("Start")
        self.start_button.clicked.connect(lambda: self.start(resume=False))
        self.resume_button = QPushButton("Resume")
        self.resume_button.clicked.connect(lambda: self.start(resume=True))
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.load_button = QPushButton("Load this model")
        self.load_button.setToolTip("Add the trained checkpoint to the Model panel and compare with it")
        self.load_button.clicked.connect(self._load_model)

    def _build_display(self) -> None:
        data_row = QHBoxLayout()
        data_row.addWidget(self.data_edit, 1)
        data_row.addWidget(self.data_button)
        out_row = QHBoxLayout()
        out_row.addWidget(self.out_edit, 1)
        out_row.addWidget(self.out_button)
        epochs_row = QHBoxLayout()
        for stage, box in zip(STAGES, self.epoch_boxes):
            box.setToolTip(f"epochs of stage {stage}")
            epochs_row.addWidget(box)
        form = QFormLayout()
        form.addRow("Data", data_row)
        form.addRow("Split", self.split_box)
        form.addRow("", self.split_note)
        form.addRow("Start from", self.start_box)
        form.addRow("", self.start_note)
        form.addRow("Method", self.method_box)
        form.addRow("Preset", self.preset_box)
        form.addRow("", self.defaults_label)
        form.addRow("β", self.beta_box)
        form.addRow("Epochs (stages 1-3)", epochs_row)
        form.addRow("Batch", self.batch_box)
        form.addRow("Learning rate", self.lr_box)
        form.addRow("Quadruplets", self.quadruplets_box)
        form.addRow("Seed", self.seed_box)
        form.addRow("Residual", self.naive_residual_box)
        form.addRow("Output head", self.kinematic_output_box)
        form.addRow("Output critics", self.warm_critics_box)
        form.addRow("Output adversary lr", self.adversary_lr_box)
        form.addRow("Loss weights", self.loss_weights_edit)
        form.addRow("Device", self.device_box)
        form.addRow("Output", out_row)
        buttons = QHBoxLayout()
        for button in (self.start_button, self.resume_button, self.cancel_button, self.load_button):
            buttons.addWidget(button)
        form_box = QWidget()
        form_layout = QVBoxLayout(form_box)
        form_layout.addLayout(form)
        form_layout.addLayout(buttons)
        form_layout.addStretch(1)
        form_box.setMaximumWidth(FORM_MAX_WIDTH)

        self.state_label = QLabel("Not running.")
        self.state_label.setWordWrap(True)
        self.state_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.bar = QProgressBar()
        self.rate_label = QLabel("")
        self.plots: dict[int, pg.PlotWidget] = {}
        #: each stage's legend, below its plot: 24 loss names in stage 3 would cover the curves inside it
        self.legends: dict[int, LossLegend] = {}
        self.curves: dict[tuple[int, str], pg.PlotDataItem] = {}
        # one stage's plot at a time, as wide as the pane: three side by side left ~70 px each
        self.plot_tabs = QTabWidget()
        for stage in STAGES:
            plot = pg.PlotWidget(background="w")
            plot.setLabel("bottom", "step")
            plot.setLabel("left", "loss")
            plot.setLogMode(y=False)
            plot.setMinimumSize(*PLOT_MIN_SIZE)
            legend = LossLegend(LEGEND_TEXT)
            legend.visibility_changed.connect(lambda name, shown, s=stage: self._show_curve(s, name, shown))
            page = QWidget()
            page_layout = QVBoxLayout(page)
            page_layout.setContentsMargins(0, 0, 0, 0)
            page_layout.setSpacing(2)
            page_layout.addWidget(plot, 1)
            page_layout.addWidget(legend)
            self.plots[stage] = plot
            self.legends[stage] = legend
            self.plot_tabs.addTab(page, f"stage {stage}")
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(MAX_LOG_LINES)
        status = QWidget()
        status_layout = QVBoxLayout(status)
        status_layout.addWidget(self.state_label)
        status_layout.addWidget(self.bar)
        status_layout.addWidget(self.rate_label)
        status_layout.addWidget(self.plot_tabs, 1)
        right = QSplitter()
        right.setOrientation(Qt.Orientation.Vertical)
        right.addWidget(status)
        right.addWidget(self.log)
        layout = QHBoxLayout(self)
        splitter = QSplitter()
        splitter.addWidget(form_box)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 0)
        splitter.setStretchFactor(1, 1)
        right.setStretchFactor(0, 3)
        right.setStretchFactor(1, 1)
        layout.addWidget(splitter)

    def set_devices(self, devices: list[str]) -> None:
        """CUDA devices first, then "cpu"; with several GPUs, an "all N GPUs" choice runs torchrun."""
        self.device_box.clear()
        gpus = [d for d in devices if d.startswith("cuda")]
        if len(gpus) > 1:
            self.device_box.addItem(f"all {len(gpus)} GPUs (torchrun)", ("cuda", len(gpus)))
        for device in devices:
            self.device_box.addItem(device, (device, 1))

    def _preset_changed(self) -> None:
        """Show the library's defaults of the chosen preset; fields left at them are not passed."""
        preset = PRESETS[self.preset_box.currentText()]
        for box, epochs in zip(self.epoch_boxes, preset.epochs):
            box.setValue(epochs)
        self.batch_box.setValue(preset.batch)
        self.lr_box.setValue(preset.base_lr)
        self.defaults_label.setText(
            f"{preset.name}: {preset.description}. Defaults: epochs {','.join(map(str, preset.epochs))}, learning "
            f"rate {preset.base_lr:g}, batch {preset.batch}; `dtmr train` applies them itself, only changes are "
            "passed.")

    def _method_changed(self) -> None:
        """DMR and PMR have their own stages and defaults (`dtmr.train.presets.BASELINE`): the DisentangledTMR
        fields are disabled and the batch and rate show the baselines' defaults."""
        dtmr = self.method_box.currentData() == DEFAULT_METHOD
        if dtmr:
            self._preset_changed()
        else:
            self.batch_box.setValue(BASELINE.batch)
            self.lr_box.setValue(BASELINE.lr)
            self.defaults_label.setText(f"{self.method_box.currentText()}: the public schedule of its stages; "
                                        f"defaults: learning rate {BASELINE.lr:g}, batch {BASELINE.batch}.")
        self._lock_dtmr_fields()

    def _lock_dtmr_fields(self) -> None:
        if not self.running:
            dtmr = self.method_box.currentData() == DEFAULT_METHOD
            for widget in self._dtmr_widgets():
                widget.setEnabled(dtmr)
            for widget in self._network_widgets():  # a start from a checkpoint fixes its network
                widget.setEnabled(self.tuning is None and (dtmr or widget is self.method_box))

    def _network_widgets(self) -> list[QWidget]:
        return [self.method_box, self.preset_box, self.naive_residual_box, self.kinematic_output_box]

    def set_start_checkpoints(self, headers: list[CheckpointHeader]) -> None:
        """The models a run can start from: the model list's trained ones (the choice is kept when still there)."""
        chosen = self.tuning.path if self.tuning is not None else None
        self.start_box.blockSignals(True)
        self.start_box.clear()
        self.start_box.addItem(NEW_WEIGHTS, None)
        for header in headers:
            if header.method.lower() in METHODS:
                self.start_box.addItem(header.label, header)
                self.start_box.setItemData(self.start_box.count() - 1, str(header.path), Qt.ItemDataRole.ToolTipRole)
        index = next((i for i in range(1, self.start_box.count()) if self.start_box.itemData(i).path == chosen), 0)
        self.start_box.setCurrentIndex(index)
        self.start_box.blockSignals(False)
        if index == 0 and chosen is not None:
            self._start_changed()

    def _start_changed(self) -> None:
        """A checkpoint to start from: its method, preset and model options fill the form, locked."""
        header = self.start_box.currentData()
        try:
            self.tuning = None if header is None else fine_tuning(header)
        except DtmrError as exc:
            self.tuning = None
            self.start_note.setText(str(exc))
            self.start_note.setVisible(True)
            self._lock_dtmr_fields()
            return
        if self.tuning is not None:
            form = form_fine_tuning(self.tuning)
            self.method_box.setCurrentIndex(self.method_box.findData(self.tuning.method))
            if self.tuning.preset is not None:
                self.preset_box.setCurrentText(self.tuning.preset)
            self.naive_residual_box.setChecked(form.naive_residual)
            self.kinematic_output_box.setChecked(form.kinematic_output)
            if self.tuning.beta is not None:
                self.beta_box.setCurrentText(f"{self.tuning.beta:g}")
            extra = ", ".join(f"{k}={v}" for k, v in form.model_options)
            self.start_note.setText(f"Fine-tunes {header.path.name} (--init): its method, preset and model options"
                                    f"{f' ({extra})' if extra else ''} are locked; β, data, split, epochs and the "
                                    "output folder are this run's.")
        self.start_note.setVisible(self.tuning is not None)
        self._lock_dtmr_fields()

    def _dtmr_widgets(self) -> list[QWidget]:
        return [self.preset_box, self.beta_box, *self.epoch_boxes, self.naive_residual_box, self.kinematic_output_box,
                self.warm_critics_box,
                self.adversary_lr_box, self.loss_weights_edit]

    def set_library(self, path: str | Path, metadata) -> None:
        """The Studio opened a library: it becomes the training data (unless the user chose other data) and the
        split of its layout (`dtmr.data.split_choice.choose_split`) the split; `split_note` says why, and
        whether that split can be used on these clips."""
        text = self.data_edit.text().strip()
        if self.running or text not in ("", self._library_data):
            return
        self._library_data = str(path)
        self.data_edit.setText(self._library_data)
        choice = choose_split(metadata)
        if choice.split is not None:
            self.split_box.setCurrentIndex(self.split_box.findData(choice.split))
        note = choice.reason + (f". Not usable on these clips: {choice.problem}" if choice.problem else "")
        self.split_note.setText(note)
        self.split_note.setToolTip(note)
        self.split_note.setVisible(True)

    def _browse_data(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Training data", self.data_edit.text(),
                                              "Clip data (*.npz *.h5 *.hdf5);;All files (*)")
        if path:
            self.data_edit.setText(path)

    def _browse_out(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Checkpoint folder", self.out_edit.text())
        if path:
            self.out_edit.setText(path)

    def form_config(self, resume: bool) -> TrainingConfig:
        device, gpus = self.device_box.currentData() or ("cpu", 1)
        beta_text = self.beta_box.currentText().strip()
        try:
            beta = float(beta_text)
        except ValueError:
            raise ValueError(f"β must be a number, got {beta_text!r}") from None
        preset = PRESETS[self.preset_box.currentText()]
        method = self.method_box.currentData()
        dtmr = method == DEFAULT_METHOD
        epochs = tuple(box.value() for box in self.epoch_boxes)
        batch, lr = self.batch_box.value(), self.lr_box.value()
        default_batch, default_lr = (preset.batch, preset.base_lr) if dtmr else (BASELINE.batch, BASELINE.lr)
        config = TrainingConfig(
            data=self.data_edit.text().strip(), split=self.split_box.currentData(), preset=preset.name, beta=beta,
            out=self.out_edit.text().strip(), device=device, gpus=gpus, resume=resume, method=method,
            epochs=None if not dtmr or epochs == preset.epochs else epochs,
            batch=None if batch == default_batch else batch,
            lr=None if round(lr, LR_DECIMALS) == round(default_lr, LR_DECIMALS) else lr,
            quadruplets=self.quadruplets_box.value() or None,
            seed=None if self.seed_box.value() == DEFAULT_SEED else self.seed_box.value(),
            naive_residual=dtmr and self.naive_residual_box.isChecked(),
            kinematic_output=dtmr and self.kinematic_output_box.isChecked(),
            warm_output_critics=dtmr and self.warm_critics_box.isChecked(),
            output_adversary_lr=(self.adversary_lr_box.value() or None) if dtmr else None,
            loss_weights=parse_loss_weights(self.loss_weights_edit.text()) if dtmr else (),
            init=None if self.tuning is None or resume else str(self.tuning.path),
            model_options=() if self.tuning is None else form_fine_tuning(self.tuning).model_options,
        )
        config.validate()
        return config

    def _form_widgets(self) -> list[QWidget]:
        """Every field and browse button: locked while a run is running."""
        return [self.data_edit, self.data_button, self.start_box, self.split_box, self.method_box, self.preset_box,
                self.beta_box, *self.epoch_boxes,
                self.batch_box, self.lr_box, self.quadruplets_box, self.seed_box, self.naive_residual_box,
                self.kinematic_output_box, self.warm_critics_box, self.adversary_lr_box, self.loss_weights_edit, self.device_box,
                self.out_edit, self.out_button]

    # --- running -------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self.process is not None

    def start(self, resume: bool = False) -> None:
        if self.running:
            return
        try:
            config = self.form_config(resume)
        except ValueError as exc:
            self.state_label.setText(str(exc))
            return
        program, *arguments = self.command(config)
        self.run_config = config
        if not resume:
            self.progress.reset()
            self._clear_curves()
        else:
            self.progress.reset_position()  # the curves continue; the counts are the new run's
        self._clear_progress_line()
        self.parser = EventStreamParser()
        self._cancelling = False
        self._checkpoints_at_start = len(self.progress.checkpoints)
        self.last_error_line = ""
        self.process = QProcess(self)
        self.process.setProgram(program)
        self.process.setArguments(arguments)
        environment = QProcessEnvironment()
        for key, value in child_environment(dict(os.environ)).items():
            environment.insert(key, value)
        self.process.setProcessEnvironment(environment)
        self.process.readyReadStandardOutput.connect(self._stdout)
        self.process.readyReadStandardError.connect(self._stderr)
        self.process.finished.connect(self._finished)
        self.process.errorOccurred.connect(self._process_error)
        self._append_log("$ " + " ".join([program, *arguments]))
        self._set_running(True)
        self.state_label.setText("Starting…")
        self.process.start()

    def cancel(self) -> None:
        """Terminate the run (SIGTERM, then SIGKILL after KILL_AFTER_MS)."""
        if not self.running:
            return
        self._cancelling = True
        self.state_label.setText("Cancelling…")
        process = self.process
        process.terminate()
        QTimer.singleShot(KILL_AFTER_MS, lambda: process.kill() if self.process is process else None)

    def shutdown(self) -> None:
        """Stop a running training when the Studio closes (waits for the process to end)."""
        if self.running:
            process = self.process
            self.cancel()
            if not process.waitForFinished(KILL_AFTER_MS):
                process.kill()
                process.waitForFinished(KILL_AFTER_MS)

    def _stdout(self) -> None:
        chunk = bytes(self.process.readAllStandardOutput()).decode("utf-8", errors="replace")
        for event in self.parser.feed(chunk):
            self.progress.add(event)

    def _stderr(self) -> None:
        self._log_stderr(bytes(self.process.readAllStandardError()).decode("utf-8", errors="replace"))

    def _log_stderr(self, text: str) -> None:
        for line in text.splitlines():
            self._append_log(line)
            if line.strip():
                self.last_error_line = line.strip()

    def _finished(self, exit_code: int, _status) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        for event in self.parser.feed(bytes(process.readAllStandardOutput()).decode("utf-8", errors="replace")):
            self.progress.add(event)
        for event in self.parser.finish():
            self.progress.add(event)
        self._stderr_rest(process)
        if self._cancelling:
            text = self._cancelled_text()
            self.progress.reset_position()
            self._clear_progress_line()
        elif exit_code == 0 and self.progress.done:
            text = "Done. “Load this model” compares with the trained checkpoint."
        else:
            reason = self.progress.error or self.last_error_line or "it wrote no reason"
            text = f"Training failed (exit status {exit_code}): {reason}"
        self.state_label.setText(text)
        self._append_log(text)
        self._set_running(False)
        process.deleteLater()

    def _stderr_rest(self, process: QProcess) -> None:
        self._log_stderr(bytes(process.readAllStandardError()).decode("utf-8", errors="replace"))

    def _cancelled_text(self) -> str:
        """What a cancel kept: say what is true, from the run's events and the output folder."""
        saved = len(self.progress.checkpoints) > self._checkpoints_at_start
        if saved:
            return "Cancelled. The last completed epoch is saved: Resume continues from it."
        if self.run_config is not None and commands.resumable(self.run_config.out):
            return ("Cancelled before an epoch ended: nothing new was saved; Resume continues from the last "
                    "epoch saved before.")
        return "Cancelled before the first epoch ended: nothing was saved. Start begins again."

    def _process_error(self, error) -> None:
        if error == QProcess.ProcessError.FailedToStart and self.process is not None:
            self._append_log(f"cannot start {self.process.program()}: {self.process.errorString()}")
            process, self.process = self.process, None
            self.state_label.setText("Training could not start.")
            self._set_running(False)
            process.deleteLater()

    def _set_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        self.load_button.setEnabled(not running and self.trained_checkpoint() is not None and self.progress.done)
        for widget in self._form_widgets():
            widget.setEnabled(not running)
        self._lock_dtmr_fields()  # DisentangledTMR-only fields stay disabled for DMR / PMR
        self._update_resume()

    def _update_resume(self) -> None:
        """Resume only when the output folder holds the state (`train_state.pt`) of a run that did not finish."""
        out = self.out_edit.text().strip()
        finished = (self.progress.done and self.run_config is not None and out
                    and Path(out).absolute() == Path(self.run_config.out).absolute()) or commands.run_finished(out)
        possible = not finished and commands.resumable(out)
        self.resume_button.setEnabled(not self.running and possible)
        self.resume_button.setToolTip(
            "Continue the run in the output folder from its last saved epoch (--resume)" if possible else
            "Nothing to resume: the run in the output folder finished" if finished else
            f"Nothing to resume: the output folder holds no {commands.STATE_FILE} (no epoch of a run there ended)")

    def _clear_progress_line(self) -> None:
        """No counts, bar or ETA of a run that is not running."""
        self.bar.reset()
        self.rate_label.setText("")

    # --- display -------------------------------------------------------------------------------------
    def _event(self, event: ProgressEvent) -> None:
        p = self.progress
        if event.kind != "step":
            self._append_log(format_event(event, width=200))
        where = []
        if p.stage is not None:
            where.append(f"stage {p.stage}/3")
        if p.epoch is not None:
            where.append(f"epoch {p.epoch}" + (f"/{p.epochs}" if p.epochs else ""))
        if p.step is not None:
            where.append(f"step {p.step}" + (f"/{p.steps}" if p.steps else ""))
        if not self._cancelling:
            self.state_label.setText("Training: " + ", ".join(where) if where else "Training…")
        if p.steps:
            self.bar.setRange(0, p.steps)
            self.bar.setValue(min(p.step or 0, p.steps))
        rate = f"{p.samples_per_s:.1f} samples/s" if p.samples_per_s is not None else "— samples/s"
        self.rate_label.setText(f"{rate} · ETA {format_duration(p.eta_s)}")
        if event.kind == "stage" and event.stage in self.plots:
            self.plot_tabs.setCurrentIndex(STAGES.index(event.stage))
        if event.kind == "step" and event.stage in self.plots:
            self._draw_stage(event.stage)

    def _draw_stage(self, stage: int) -> None:
        curves = self.progress.curves.get(stage)
        if curves is None:
            return
        plot = self.plots[stage]
        for i, (name, values) in enumerate(curves.losses.items()):
            key = (stage, name)
            if key not in self.curves:
                colour = _curve_colour(i)
                pen = pg.mkPen(colour, width=2 if name == "total" else 1)
                self.curves[key] = plot.plot([], [], pen=pen, connect="finite")
                self.legends[stage].add(name, colour)
            self.curves[key].setData(curves.steps, values)

    def _show_curve(self, stage: int, name: str, shown: bool) -> None:
        curve = self.curves.get((stage, name))
        if curve is not None:
            curve.setVisible(shown)

    def _clear_curves(self) -> None:
        for plot in self.plots.values():
            plot.clear()
        for legend in self.legends.values():
            legend.clear()
        self.curves.clear()

    def _append_log(self, line: str) -> None:
        """Append and keep the end in view (the newest lines are the ones that explain a failure)."""
        self.log.appendPlainText(line)
        bar = self.log.verticalScrollBar()
        bar.setValue(bar.maximum())

    def trained_checkpoint(self) -> Path | None:
        """The checkpoint the last "checkpoint" event named, else the newest one in the output folder."""
        for path in reversed(self.progress.checkpoints):
            if Path(path).is_file():
                return Path(path)
        folder = Path(self.run_config.out) if self.run_config else None
        if folder is None or not folder.is_dir():
            return None
        found = [p for p in folder.iterdir() if p.suffix in CHECKPOINT_SUFFIXES and p.is_file()]
        return max(found, key=lambda p: p.stat().st_mtime) if found else None

    def _load_model(self) -> None:
        path = self.trained_checkpoint()
        if path is not None:
            self.load_model_requested.emit(str(path))


def _curve_colour(i: int) -> tuple[int, int, int]:
    """The i-th loss's colour: the palette, then its colours darkened (stage 3 has 24 losses)."""
    r, g, b = CURVE_COLOURS[i % len(CURVE_COLOURS)]
    shade = 0.6 ** (i // len(CURVE_COLOURS))
    return round(r * shade), round(g * shade), round(b * shade)
