"""The recognition job: per-frame action and identity probabilities of every view (SGN recognizers).

Each recognizer's `window_probabilities(clip, window, stride=1)` gives a (T, C) array: row t is the
prediction for the window of `window` frames centred on frame t. The live top-5 lists read the row of
the current frame and the timeline tracks plot one column over time, so moving the playhead needs no
new inference; the job runs for the views whose clip changed (the controller keeps the others: a new
reference does not recompute the source's predictions). Which class is a clip's true label is not a class
index but `dtmr.data.label_set.match_classes` of `TaskProbabilities.classes` against the library's labels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .cancel import CancelToken, ProgressFn
from .checkpoints import CheckpointInfo

if TYPE_CHECKING:  # dtmr.models imports torch, which the Studio loads only in its model workers
    from dtmr.data.clip import Clip
    from dtmr.data.label_set import RecognizerClasses
    from dtmr.models.recognizers import Recognizer

WINDOW = 32
TOP_K = 5


@dataclass(frozen=True)
class Prediction:
    class_index: int
    name: str
    probability: float
    label: int


@dataclass(frozen=True)
class TaskProbabilities:
    task: str  # "action" or "subject"
    class_names: list[str]
    labels: np.ndarray  # (C,) the data set's label of each class index
    per_frame: dict[str, np.ndarray]  # view name -> (T, C)
    #: what the classes are and which data set they come from (the checkpoint header's), for matching
    classes: RecognizerClasses

    def with_views(self, per_frame: dict[str, np.ndarray]) -> TaskProbabilities:
        return TaskProbabilities(self.task, self.class_names, self.labels, per_frame, self.classes)

    def top_k(self, view: str, frame: int, k: int = TOP_K) -> list[Prediction]:
        probs = self.per_frame[view]
        row = probs[min(max(frame, 0), len(probs) - 1)]
        order = np.argsort(-row, kind="stable")[:k]
        return [Prediction(int(i), self.class_names[i], float(row[i]), int(self.labels[i])) for i in order]

    def track(self, view: str, class_index: int) -> np.ndarray:
        """(T,) probability of one class over time."""
        return self.per_frame[view][:, class_index]


@dataclass(frozen=True)
class RecognitionRequest:
    clips: dict[str, Clip]  # view name -> clip, only the views to compute
    action: CheckpointInfo | None
    subject: CheckpointInfo | None
    device: str | None
    window: int = WINDOW


@dataclass(frozen=True)
class RecognitionResult:
    request: RecognitionRequest
    tasks: dict[str, TaskProbabilities]  # "action" / "subject" -> probabilities; absent without a model


LoadRecognizer = Callable[[CheckpointInfo, str | None], "Recognizer"]


def load_recognizer(info: CheckpointInfo, device: str | None) -> Recognizer:
    from dtmr.models.recognizers import Recognizer

    return Recognizer.from_checkpoint(info.path, device=device)


class Recognition:
    """The job run by the recognition worker; recognizers are cached per (checkpoint entry, device)."""

    def __init__(self, load: LoadRecognizer = load_recognizer) -> None:
        self._load = load
        self._cache: dict[tuple[CheckpointInfo, str | None], Recognizer] = {}

    def __call__(self, request: RecognitionRequest, token: CancelToken, progress: ProgressFn) -> RecognitionResult:
        infos = [(task, info) for task, info in (("action", request.action), ("subject", request.subject)) if info]
        total = len(infos) * len(request.clips)
        done = 0
        tasks: dict[str, TaskProbabilities] = {}
        for task, info in infos:
            key = (info, request.device)
            if key not in self._cache:
                self._cache[key] = self._load(info, request.device)
            recognizer = self._cache[key]
            per_frame = {}
            for view, clip in request.clips.items():
                token.check()
                per_frame[view] = np.asarray(recognizer.window_probabilities(clip, window=request.window, stride=1),
                                             dtype=np.float32)
                done += 1
                progress(done, total, f"{task} probabilities of the {view} view")
            tasks[task] = TaskProbabilities(task, list(recognizer.class_names), np.asarray(recognizer.labels), per_frame,
                                            info.classes)
        return RecognitionResult(request, tasks)
