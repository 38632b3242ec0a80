"""Progress of one training run, built from the trainer's JSON-line events (`dtmr.train.progress`).

Qt-free: the Trainer tab feeds it the events parsed from the subprocess' stdout and redraws from it.
Losses are kept per stage as curves over the stage's global step ((epoch - 1) × steps + step), so
curves of a resumed run continue where they stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dtmr.train.progress import ProgressEvent

from .events import Signal


@dataclass
class StageCurves:
    steps: list[float] = field(default_factory=list)
    losses: dict[str, list[float]] = field(default_factory=dict)

    def add(self, step: float, losses: dict[str, float]) -> None:
        """Append one point; a loss missing at this step is NaN, so every curve stays aligned."""
        for name in losses:
            if name not in self.losses:
                self.losses[name] = [float("nan")] * len(self.steps)
        self.steps.append(step)
        for name, values in self.losses.items():
            values.append(float(losses.get(name, float("nan"))))


class TrainingProgress:
    """Signal: `changed(ProgressEvent)` after each event."""

    def __init__(self) -> None:
        self.changed = Signal()
        self.reset()

    def reset(self) -> None:
        self.curves: dict[int, StageCurves] = {}
        self.checkpoints: list[str] = []
        self.events = 0
        self.reset_position()

    def reset_position(self) -> None:
        """Forget where a run was (stage, epoch, step, rate, ETA, done, error); keep its curves and checkpoints,
        which a resumed run continues."""
        self.stage: int | None = None
        self.epoch: int | None = None
        self.epochs: int | None = None
        self.step: int | None = None
        self.steps: int | None = None
        self.samples_per_s: float | None = None
        self.eta_s: float | None = None
        self.done = False
        self.error = ""

    def add(self, event: ProgressEvent) -> None:
        self.events += 1
        for name in ("stage", "epoch", "epochs", "step", "steps", "samples_per_s", "eta_s"):
            value = getattr(event, name)
            if value is not None:
                setattr(self, name, value)
        if event.kind == "step" and event.losses and event.stage is not None:
            position = float(event.step or 0)
            if event.epoch is not None and event.steps:
                position += (event.epoch - 1) * event.steps
            self.curves.setdefault(event.stage, StageCurves()).add(position, event.losses)
        elif event.kind == "checkpoint" and event.message:
            self.checkpoints.append(event.message)
        elif event.kind == "done":
            self.done = True
            self.eta_s = 0.0
        elif event.kind == "error":
            self.error = event.message or "training failed"
        self.changed.emit(event)
