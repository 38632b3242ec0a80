"""Fit a motion anonymizer (re-timing, k-same: the methods of kind "fitted") on a library and write its checkpoint.

The one home of what `dtmr fit-motion-model` does and the Studio's "Fit k-same on this library" runs: read the
clips, take the training half of the split (every clip when `split` is None), fit
(`dtmr.models.motion.fit_motion_model`), measure on the test half, save with the training data's label set
(`record_label_set`), so the model list can say it was "fitted on this library".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DtmrError
from ..methods import KSAME, names

#: the methods fitted on a split in seconds (dtmr.methods, kind "fitted")
FITTED_METHODS = names("fitted")


@dataclass(frozen=True)
class MotionFitSettings:
    """The options of `dtmr fit-motion-model` (its --help says what each does)."""

    method: str
    k: int = 2
    timing: str = "source"
    partners: str = "nearest"
    #: an action recognizer checkpoint whose embedding chooses k-same's partners (None: the action templates)
    embedder: Path | None = None
    #: fit for this joint set (None: the library's)
    topology: str | None = None


@dataclass(frozen=True)
class MotionFit:
    """What was written: the file, how many clips it was fitted on and measured with, and its metrics."""

    path: Path
    method: str
    split: str | None
    train_clips: int
    test_clips: int
    topology: str
    metrics: dict = field(default_factory=dict)
    settings: str = ""

    @property
    def summary(self) -> str:
        """"ksame k=3, 9 action templates, pool of 660 clips by 10 subjects; nearest template names the action
        of 61.2 % of test clips"."""
        accuracy = self.metrics.get("nearest_embedding_accuracy", self.metrics.get("nearest_template_accuracy"))
        named_by = ("the nearest pool clip in the embedding" if "nearest_embedding_accuracy" in self.metrics
                    else "nearest template")
        pool = (f", pool of {self.metrics['pool_clips']} clips by {self.metrics['pool_subjects']} subjects"
                if self.method == KSAME.name else "")
        measured = "" if accuracy is None else f"; {named_by} names the action of {accuracy:.1f} % of test clips"
        return (f"{self.method}{f' {self.settings}' if self.settings else ''}, {self.metrics['templates']} action "
                f"templates{pool}{measured}")


def fit_motion_checkpoint(data: str | Path, split: str | None, settings: MotionFitSettings, out: str | Path, *,
                          overwrite: bool = False, check: Callable[[], None] = lambda: None,
                          log: Callable[[str], None] = lambda line: None) -> MotionFit:
    """Fit `settings.method` on the training half of `split` of `data` and save it to `out`.

    `out` is checked first (`check_output`: never an input, a model kept by a user only with `overwrite`).
    `check()` is called between the steps and may raise to stop (the Studio's cancel flag); `log` gets one
    line before the fit. Every failure is a `DtmrError` naming the library."""
    from ..data.label_set import record_label_set
    from ..io.outputs import check_output
    from ..models.checkpoints.checkpoint import save_checkpoint
    from ..models.motion import (
        describe_motion_model,
        fit_motion_model,
        nearest_embedding_accuracy,
        nearest_template_accuracy,
    )
    from ..models.recognizers import Recognizer
    from .data import load_training_data

    if settings.method not in FITTED_METHODS:
        raise DtmrError(f"{settings.method!r} is not fitted on a library (fitted: {', '.join(FITTED_METHODS)})")
    inputs = [data] + ([settings.embedder] if settings.embedder else [])
    check_output(out, kind="checkpoint", inputs=inputs, overwrite=overwrite)
    loaded = load_training_data(data, split, settings.topology)
    check()
    train = loaded.train
    embedder = None if settings.embedder is None else Recognizer.from_checkpoint(settings.embedder, device="cpu")
    log(f"{data}: fitting {settings.method} on {len(train)} training clips ({loaded.topology})")
    try:
        model = fit_motion_model(settings.method, loaded.topology, train.joints, train.actions, train.subjects,
                                 k=settings.k, timing=settings.timing, embedder=embedder, partners=settings.partners)
    except ValueError as exc:
        where = f"split {split}" if split else "every clip"
        raise DtmrError(f"{data}, {where}: {exc}") from None
    check()
    metrics = {"templates": len(model.bank.actions)}
    if len(loaded.test):
        metrics["nearest_template_accuracy"] = nearest_template_accuracy(model.bank, loaded.test.joints,
                                                                         loaded.test.actions)
        if embedder is not None:
            metrics["nearest_embedding_accuracy"] = nearest_embedding_accuracy(model, loaded.test.joints,
                                                                               loaded.test.actions)
    if settings.method == KSAME.name:
        metrics.update(pool_clips=len(train), pool_subjects=len(set(train.subjects.tolist())))
    check()
    path = save_checkpoint(out, model, data=record_label_set(loaded.describe()), metrics=metrics)
    return MotionFit(Path(path), settings.method, split, len(train), len(loaded.test), loaded.topology, metrics,
                     describe_motion_model(settings.method, model.config_dict()))
