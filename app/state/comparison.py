"""The three clips on screen (source, retargeted, released), their analyses and the length policy.

β slider: the released view is `ReleaseParts.joints(β)` (`dtmr.models.blend`) of the one model run, so
`set_beta` re-blends it without the model. The β set is kept across clips and references of the same model
and given up when the model changes (the controller calls `set_beta(None)`): another checkpoint's own β is
the meaningful start. The re-blended clip's provenance (`dtmr.data.provenance`) records the β shown;
`model_beta` is the checkpoint's.

Length policy (`dtmr.render.timeline`, shared with the export): the comparison runs for the longest of
its clips and a shorter clip holds its last frame. The model maps its output back to the source's length, so the three
views normally agree; the policy matters for the reference and for clips of odd lengths.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import TYPE_CHECKING

from dtmr.render.timeline import comparison_length, frame_index

from ..core.foot_sliding import FootSliding
from ..core.provenance import shown_provenance
from .events import Signal

if TYPE_CHECKING:
    from dtmr.data.clip import Clip
    from dtmr.data.label_set import ClassMatch, LabelSet
    from dtmr.models.blend import ReleaseParts

    from ..core.recognition import RecognitionResult


class ViewKind(str, Enum):
    SOURCE = "source"
    RETARGETED = "retargeted"
    RELEASED = "released"

    @property
    def title(self) -> str:
        return {"source": "Source", "retargeted": "Retargeted", "released": "Released"}[self.value]


VIEWS = (ViewKind.SOURCE, ViewKind.RETARGETED, ViewKind.RELEASED)

LENGTH_POLICY = "runs for the longest clip; a shorter clip holds its last frame"


class Comparison:
    """Signals: `clips_changed()`, `status_changed(str)`, `recognition_changed()`, `beta_changed()`.

    `clips` maps a `ViewKind` to a `dtmr.Clip`; the model views are absent until inference returns.
    `model_note` says which model produced them. `unavailable` says why the model views cannot be made
    at all (no retargeting checkpoint, no reference); it is "" while they are shown or on their way.
    `labels` are the open library's labels; `class_match(task)` says which recognizer class is which of
    them (`dtmr.data.label_set.match_classes`, the rule `dtmr export` follows too).
    """

    def __init__(self) -> None:
        self.clips: dict[ViewKind, Clip] = {}
        self.feet: dict[ViewKind, FootSliding] = {}
        self._feet_of: dict[ViewKind, Clip] = {}  # the clip each entry of `feet` was computed from
        self.reference: Clip | None = None
        self.model_note = ""
        #: the two terms of the released clip (None: no model output, or a model that gave none)
        self.release_parts: ReleaseParts | None = None
        #: the β set with the slider (None: the checkpoint's)
        self.beta_override: float | None = None
        self._released_by_model: Clip | None = None
        self.unavailable = ""
        self.status = "No clip selected"
        self.busy = False
        self.recognition: RecognitionResult | None = None
        #: True while the recognition worker computes `recognition` for the current clips (`recognition`
        #: then holds the views already computed, or None)
        self.recognition_pending = False
        self.labels: LabelSet | None = None
        self._matches: dict[object, ClassMatch] = {}
        self.clips_changed = Signal()
        self.status_changed = Signal()
        self.recognition_changed = Signal()
        self.beta_changed = Signal()

    @property
    def length(self) -> int:
        return comparison_length(c.num_frames for c in self.clips.values()) if self.clips else 1

    @property
    def fps(self) -> float:
        source = self.clips.get(ViewKind.SOURCE)
        return float(source.fps) if source is not None else 30.0

    def set_source(self, source: Clip | None, reference: Clip | None) -> None:
        """A new source/reference pair: model views are cleared until inference returns."""
        self.clips = {} if source is None else {ViewKind.SOURCE: source}
        self.reference = reference
        self.model_note = ""
        self.release_parts = self._released_by_model = None
        self.recognition = None
        self._update_feet()
        self.clips_changed.emit()
        self.recognition_changed.emit()

    @property
    def model_beta(self) -> float | None:
        """The β the checkpoint releases with (None without model output)."""
        return None if self.release_parts is None else self.release_parts.beta

    @property
    def shown_beta(self) -> float | None:
        """The β of the released view on screen."""
        return self.model_beta if self.beta_override is None else self.beta_override

    @property
    def beta_differs(self) -> bool:
        """Whether the released view is blended at another β than the checkpoint's."""
        return self.beta_override is not None and self.release_parts is not None \
            and abs(self.beta_override - self.release_parts.beta) > 1e-9

    def set_beta(self, beta: float | None) -> None:
        """Blend the released view at `beta` (None: at the checkpoint's β) from the parts of the one model run."""
        beta = None if beta is None else min(max(float(beta), 0.0), 1.0)
        if beta == self.beta_override:
            return
        self.beta_override = beta
        if self._released_by_model is not None and ViewKind.RELEASED in self.clips:
            self.clips[ViewKind.RELEASED] = self._blended(self._released_by_model)
            self._update_feet()
            self.clips_changed.emit()
        self.beta_changed.emit()

    def _blended(self, released: Clip) -> Clip:
        if not self.beta_differs:
            return released
        beta = self.beta_override
        joints = self.release_parts.joints(beta)
        made = shown_provenance(released)
        if made is None:
            return released.replace(joints=joints)
        return dataclasses.replace(made, beta=beta).stamp(released, joints=joints)

    def set_outputs(self, retargeted: Clip, released: Clip, model_note: str,
                    parts: ReleaseParts | None = None) -> None:
        """The model's views; `parts`: what `released` is blended from, for the β slider."""
        self.release_parts = parts
        self._released_by_model = released if parts is not None else None
        self.clips[ViewKind.RETARGETED] = retargeted
        self.clips[ViewKind.RELEASED] = self._blended(released)
        self.model_note = model_note
        self.unavailable = ""
        self._update_feet()
        self.clips_changed.emit()

    def set_unavailable(self, reason: str) -> None:
        """The model views cannot be made (`reason`, one line): drop them; "" when they are coming again."""
        if reason == self.unavailable and (not reason or ViewKind.RELEASED not in self.clips):
            return
        self.unavailable = reason
        if reason:
            self.clips.pop(ViewKind.RETARGETED, None)
            self.clips.pop(ViewKind.RELEASED, None)
            self.model_note = ""
            self.release_parts = self._released_by_model = None
            self._update_feet()
        self.clips_changed.emit()

    def set_recognition(self, result: RecognitionResult | None, pending: bool = False) -> None:
        """The recognizers' result (None when there are no recognizers, or while `pending`)."""
        if result is self.recognition and pending == self.recognition_pending:
            return
        self.recognition = result
        self.recognition_pending = pending
        self.recognition_changed.emit()

    def set_labels(self, labels: LabelSet | None) -> None:
        """The open library's labels (None: unknown, nothing is marked)."""
        if labels != self.labels:
            self.labels = labels
            self._matches = {}
            self.recognition_changed.emit()

    def class_match(self, task: str) -> ClassMatch | None:
        """How the `task` recognizer's classes match the library's labels; None without its predictions."""
        from dtmr.data.label_set import match_classes

        probabilities = None if self.recognition is None else self.recognition.tasks.get(task)
        if probabilities is None:
            return None
        if probabilities.classes not in self._matches:
            self._matches[probabilities.classes] = match_classes(probabilities.classes, self.labels)
        return self._matches[probabilities.classes]

    def set_status(self, status: str, busy: bool = False) -> None:
        """What the model is doing, for the views and the model panel; `busy` while it runs."""
        if (status, busy) != (self.status, self.busy):
            self.status, self.busy = status, busy
            self.status_changed.emit(status)

    def frame_of(self, view: ViewKind, frame: int) -> int | None:
        clip = self.clips.get(view)
        return None if clip is None else int(frame_index(max(frame, 0), clip.num_frames))

    def _update_feet(self) -> None:
        """Foot sliding of every clip, reusing what was computed for clips that did not change."""
        previous = {id(self._feet_of.get(v)): f for v, f in self.feet.items()}
        self.feet = {v: previous.get(id(c)) or FootSliding.of(c.joints, c.topology, c.fps)
                     for v, c in self.clips.items()}
        self._feet_of = dict(self.clips)
