"""The attribution job of the Privacy panel: which joints and frames an attacker relies on for one clip.

The attacker is the audit's worst one when its saved file loads (`dtmr.attackers.load_attacker`),
else the Studio's subject recognizer; a request lists them in that order and the job uses the first that
loads, saying why it fell back. The score explained is the probability of the clip's true subject (of the
attacker's most likely subject when the subject is unknown or not among its classes), through
`dtmr.audit.attribution.occlusion_attribution`: the library computes, the Privacy panel draws.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .cancel import CancelToken, ProgressFn
from .checkpoints import CheckpointInfo
from .recognition import load_recognizer

if TYPE_CHECKING:  # the attackers import torch, which the Studio loads only in its model workers
    from dtmr.attackers.base import Attacker
    from dtmr.audit.attribution import Attribution
    from dtmr.data.clip import Clip
    from dtmr.models.recognizers import Recognizer

WINDOW = 8


@dataclass(frozen=True)
class AttackerFile:
    """A saved audit attacker; `label` names it for people, e.g. "tcn (adaptive), the audit's worst"."""

    path: Path
    label: str


@dataclass(frozen=True)
class SubjectRecognizer:
    info: CheckpointInfo
    label: str


Predictor = AttackerFile | SubjectRecognizer


@dataclass(frozen=True)
class AttributionRequest:
    clip: Clip  # the clip as released
    view: str  # the view showing it ("source" for a release, else "released")
    subject: int | None  # its true subject, None when unknown
    predictors: tuple[Predictor, ...]  # in order of preference
    device: str | None
    #: said in the panel whatever is used, e.g. why the audit's attacker is not among `predictors`
    note: str = ""
    window: int = WINDOW


@dataclass(frozen=True)
class AttributionResult:
    request: AttributionRequest
    attribution: Attribution
    predictor: Predictor
    class_label: int  # the subject whose probability is explained
    #: "true subject" or "most likely subject"
    target: str
    #: what was not used and why (attacker files that did not load), "" when the first predictor was used
    fallback: str


def load_attacker_file(path: Path, device: str | None) -> Attacker:
    from dtmr.attackers import load_attacker

    return load_attacker(path, device or "cpu")


class _Model:
    """An attacker or a recognizer behind one face: `predict_proba(clips)` and `labels` (class -> subject)."""

    def __init__(self, predict_proba: Callable[[list], np.ndarray], labels: list[int]) -> None:
        self.predict_proba = predict_proba
        self.labels = [int(x) for x in labels]


class PrivacyAttribution:
    """The job run by the attribution worker; models are cached per (predictor, device)."""

    def __init__(self, load_attacker: Callable[[Path, str | None], Attacker] = load_attacker_file,
                 load_recognizer: Callable[[CheckpointInfo, str | None], Recognizer] = load_recognizer) -> None:
        self._load_attacker = load_attacker
        self._load_recognizer = load_recognizer
        #: keyed by (attacker file, its mtime) or the recognizer's entry, and the device
        self._cache: dict[tuple[tuple[Path, int] | CheckpointInfo, str | None], _Model] = {}

    def __call__(self, request: AttributionRequest, token: CancelToken, progress: ProgressFn) -> AttributionResult:
        from dtmr.audit.attribution import occlusion_attribution

        if not request.predictors:
            raise ValueError("no attacker to explain: open an audit with its attacker files, or add a subject "
                             "recognizer")
        progress(0, 2, "loading the attacker")
        failures = []
        for predictor in request.predictors:
            try:
                model = self._model(predictor, request.device)
                break
            except Exception as exc:  # noqa: BLE001 -- the next predictor is tried; the last failure is raised
                if predictor is request.predictors[-1]:
                    raise
                failures.append(f"{predictor.label} did not load ({type(exc).__name__}: {_first_line(exc)})")
        token.check()
        progress(1, 2, "occluding joints and frames")
        clip = request.clip
        if request.subject is not None and request.subject in model.labels:
            class_index, target = model.labels.index(request.subject), "true subject"
        else:
            class_index = int(np.argmax(np.asarray(model.predict_proba([clip]))[0]))
            target = "most likely subject"
        attribution = occlusion_attribution(model.predict_proba, clip, class_index, window=request.window)
        token.check()
        progress(2, 2, "done")
        return AttributionResult(request, attribution, predictor, model.labels[class_index], target,
                                 "; ".join(failures))

    def _model(self, predictor: Predictor, device: str | None) -> _Model:
        # an attacker file rewritten in place (a new audit) is another model
        key = ((predictor.path, predictor.path.stat().st_mtime_ns) if isinstance(predictor, AttackerFile)
               else predictor.info, device)
        if key not in self._cache:
            if isinstance(predictor, AttackerFile):
                attacker = self._load_attacker(predictor.path, device)
                self._cache[key] = _Model(attacker.predict_proba, list(attacker.classes))
            else:
                recognizer = self._load_recognizer(predictor.info, device)
                self._cache[key] = _Model(recognizer.predict_proba, list(recognizer.labels))
        return self._cache[key]


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else ""
