"""The inference job: source + reference -> the retargeted and released clips the Studio shows.

The released view is the selected checkpoint's β-blended output; the result carries its two terms
(`ReleaseParts`, from `Anonymizer.retarget_parts`) so that the Studio's β slider re-blends it without the
model. The retargeted view is the full decoder output D(E_A(source), E_I(reference)) of
`RetargetRequest.full_model`: the catalogue's choice, `dtmr.models.pairing.find_full_model` (the β = 1
checkpoint of the same method and topology, DESIGN §6; the rule `dtmr export` follows), else the selected
model's own D (`retarget_parts`' first clip).
Loaded anonymizers are cached per (checkpoint entry, device) inside the runner, which lives on its
worker thread, so switching clips does not reload weights; an entry includes the file's modification
time, so a checkpoint rewritten in place is loaded again.

There is always a checkpoint behind a request: without one the controller submits nothing and the
model views say that a checkpoint is needed (`NO_MODEL_MESSAGE`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .cancel import CancelToken, ProgressFn
from .checkpoints import CheckpointInfo

if TYPE_CHECKING:  # dtmr.models imports torch, which the Studio loads only in its model workers
    from dtmr.data.clip import Clip
    from dtmr.models.anonymizer import Anonymizer
    from dtmr.models.blend import ReleaseParts

#: shown in place of the retargeted and released views while the catalogue holds no retargeting checkpoint
NO_MODEL_MESSAGE = "No model: add a retargeting checkpoint in the Model panel (Add checkpoint…)."


@dataclass(frozen=True)
class RetargetRequest:
    source: Clip
    reference: Clip
    model: CheckpointInfo
    full_model: CheckpointInfo | None
    device: str | None
    #: the open library's `action_names`: a re-timing or k-same model uses the action labels it shares with them
    action_names: tuple[str, ...] | None = None


@dataclass(frozen=True)
class RetargetResult:
    request: RetargetRequest
    retargeted: Clip
    released: Clip
    #: what produced the views, shown under them
    note: str
    #: what `released` is blended from (the selected model's D and residual, and its β)
    parts: ReleaseParts | None = None


LoadAnonymizer = Callable[[CheckpointInfo, str | None], "Anonymizer"]


def load_anonymizer(info: CheckpointInfo, device: str | None) -> Anonymizer:
    from dtmr.models.anonymizer import Anonymizer

    return Anonymizer.from_checkpoint(info.path, device=device)


class Retargeting:
    """The job run by the inference worker: ``Retargeting()(request, token, progress)``."""

    def __init__(self, load: LoadAnonymizer = load_anonymizer) -> None:
        self._load = load
        self._cache: dict[tuple[CheckpointInfo, str | None], Anonymizer] = {}

    def __call__(self, request: RetargetRequest, token: CancelToken, progress: ProgressFn) -> RetargetResult:
        steps = 2 if request.full_model is not None and request.full_model != request.model else 1
        progress(0, steps + 1, "loading model")
        model = self._cached(request.model, request.device)
        token.check()
        progress(1, steps + 1, "running the model")
        retargeted, released, parts = model.retarget_parts(request.source, request.reference, request.action_names)
        token.check()
        note = request.model.label
        if steps == 2:
            full = self._cached(request.full_model, request.device)
            token.check()
            progress(2, steps + 1, "running the β = 1 model")
            retargeted, _ = full.retarget_pair(request.source, request.reference, request.action_names)
            note = f"{note}; retargeted view: {request.full_model.label}"
        progress(steps + 1, steps + 1, "done")
        return RetargetResult(request, retargeted, released, note, parts)

    def _cached(self, info: CheckpointInfo, device: str | None) -> Anonymizer:
        key = (info, device)
        if key not in self._cache:
            self._cache[key] = self._load(info, device)
        return self._cache[key]
