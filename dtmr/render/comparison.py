"""The source / retargeted / released comparison: from clips and models to titled `Panel`s.

`dtmr export` and the Studio's export dialog both call `build_comparison`, so they render the same frames.
Predictions are top-1 per frame from each recognizer's sliding window (`Recognizer.window_probabilities`);
a ✓ marks a prediction equal to the *source's* true label: wanted for the action, and for the identity a
sign that the recognizer still finds the source subject in that panel. Which class is the true label is
`dtmr.data.label_set.match_classes` against the library's `LabelSet` (by name; subjects only within one
data set), the rule of the Studio; titles name actions with the library's own names, never a recognizer's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import Clip
from ..data.label_set import LabelSet, match_classes
from ..data.reference_pool import ReferencePool
from ..errors import CheckpointError
from ..resources import MODELS_DIR, resource_path
from .panel import Panel

#: checkpoint file of each recognizer task in a recognizers folder
RECOGNIZER_FILES = {"action": "action.pt", "subject": "subject.pt"}
CORRECT_MARK = "✓"


@dataclass(frozen=True)
class Recognizers:
    """The action and subject recognizers a comparison shows predictions of (either may be absent)."""

    action: object | None = None
    subject: object | None = None


def default_recognizers_dir() -> Path:
    return resource_path(*MODELS_DIR)


def load_recognizers(folder: str | Path, device: str | None = None) -> Recognizers | None:
    """The recognizers saved as `RECOGNIZER_FILES` in `folder`; None when it holds neither file."""
    folder = Path(folder)
    paths = {task: folder / name for task, name in RECOGNIZER_FILES.items() if (folder / name).is_file()}
    if not paths:
        return None
    from ..models.recognizers import Recognizer

    loaded = {}
    for task, path in paths.items():
        recognizer = Recognizer.from_checkpoint(path, device=device)
        if recognizer.task != task:
            raise CheckpointError(path, f"holds a {recognizer.task!r} recognizer, expected {task!r}")
        loaded[task] = recognizer
    return Recognizers(**loaded)


def prediction_lines(clip: Clip, recognizers: Recognizers, truth: Clip,
                     labels: LabelSet | None = None) -> list[list[str]]:
    """Per frame of `clip`: "action: NAME P%" and "identity: NAME P%" lines, ✓ where the class is `truth`'s
    label in the library of `labels` (`match_classes`). A recognizer whose classes are not the library's
    labels (or any, without `labels`) prints no class and no probability: "action: no prediction (trained
    on synthetic)" on every frame (`ClassMatch.caption`, short enough for a 640-pixel panel)."""
    lines: list[list[str]] = [[] for _ in range(clip.num_frames)]
    for heading, recognizer, true_label in (
        ("action", recognizers.action, truth.action),
        ("identity", recognizers.subject, truth.subject),
    ):
        if recognizer is None:
            continue
        match = match_classes(recognizer.classes, labels)
        if match.withheld:
            for frame in lines:
                frame.append(f"{heading}: {match.caption}")
            continue
        true_class = match.class_of(true_label)
        probabilities = np.asarray(recognizer.window_probabilities(clip))
        top = probabilities.argmax(axis=1)
        confidence = probabilities[np.arange(top.size), top]
        for t in range(clip.num_frames):
            mark = f" {CORRECT_MARK}" if true_class is not None and top[t] == true_class else ""
            lines[t].append(f"{heading}: {recognizer.class_names[top[t]]} {confidence[t]:.0%}{mark}")
    return lines


def prediction_notes(recognizers: Recognizers | None, truth: Clip, labels: LabelSet | None) -> list[str]:
    """Why `truth`'s labels are not marked in the predictions (one line per recognizer; none when they are)."""
    if recognizers is None:
        return []
    notes = []
    for recognizer, true_label in ((recognizers.action, truth.action), (recognizers.subject, truth.subject)):
        if recognizer is not None:
            note = match_classes(recognizer.classes, labels).missing_note(true_label)
            notes += [note] if note else []
    return notes


def describe_clip(clip: Clip, action_names: Mapping[int, str] | None = None) -> str:
    """A title part such as `subject 3 · walk` (`action 17` without a name); unknown labels are left out."""
    parts = []
    if clip.subject is not None:
        parts.append(f"subject {clip.subject}")
    if clip.action is not None:
        parts.append((action_names or {}).get(clip.action, f"action {clip.action}"))
    return " · ".join(parts)


def build_comparison(
    source: Clip,
    reference: Clip,
    anonymizer,
    recognizers: Recognizers | None = None,
    action_names: Mapping[int, str] | None = None,
    foot_sliding: bool = True,
    full_model=None,
    labels: LabelSet | None = None,
    library_action_names: Sequence[str] | None = None,
) -> list[Panel]:
    """Panels source, retargeted and released of `anonymizer` (a `dtmr.Anonymizer`) on `source`.

    `reference` lends its body (identity); `action_names` maps action labels to names for the titles
    (default: the names of `labels`, the library's label set, which also says which predictions are the
    true labels). The retargeted panel is the full decoder output of
    `full_model` (the β = 1 partner of the anonymizer's checkpoint, `dtmr.models.pairing`) when given, else
    the anonymizer's own; its title says which β the decoder that made it has. `library_action_names`: the
    source library's `action_names`, passed to the models as `dtmr anonymize` passes them (a re-timing or
    k-same model uses the labels its fitted file names alike).
    """
    retargeted, released = anonymizer.retarget_pair(source, reference, action_names=library_action_names)
    maker = anonymizer if full_model is None else full_model
    if maker is not anonymizer:
        retargeted = maker.retarget_pair(source, reference, action_names=library_action_names)[0]
    described = describe_clip(source, _title_names(action_names, labels))
    body = f"body of subject {reference.subject}" if reference.subject is not None else f"body of {reference.name}"
    titled = [
        (source, " · ".join(filter(None, ["source", described]))),
        (retargeted, f"{retargeted_heading(maker.beta)} · {body}"),
        (released, f"released (β = {anonymizer.beta:g}) · {anonymizer.method}"),
    ]
    return [
        Panel.from_clip(
            clip,
            title,
            predictions=prediction_lines(clip, recognizers, source, labels) if recognizers is not None else None,
            foot_sliding=foot_sliding,
        )
        for clip, title in titled
    ]


def retargeted_heading(beta: float) -> str:
    """"retargeted (β = 1)" for the output of a β = 1 model; for the own decoder of a model of another β
    (no β = 1 partner was found), a heading that says so."""
    if abs(beta - 1.0) < 1e-6:
        return "retargeted (β = 1)"
    return f"retargeted (decoder of the β = {beta:g} model)"


def _title_names(action_names: Mapping[int, str] | None, labels: LabelSet | None) -> dict[int, str]:
    if action_names is not None:
        return dict(action_names)
    return {} if labels is None else {a: n for a, n in labels.actions if n is not None}


def release_panels(released: Clip, source: Clip | None = None, recognizers: Recognizers | None = None,
                   action_names: Mapping[int, str] | None = None, foot_sliding: bool = True,
                   labels: LabelSet | None = None) -> list[Panel]:
    """Panels of a clip of a release: the released clip, after its `source` when the key gave one.

    Titles name the release id and the action only: what the key knows of the performer (subject, source
    clip name) never reaches a video, so the source clip is shown without its labels but the action.
    """
    action = describe_clip(released.replace(subject=None), _title_names(action_names, labels))
    titled = [(released, " · ".join(filter(None, [f"released {released.name}", action])))]
    if source is not None:
        anonymous = source.replace(subject=None, sample_name=None, source_file=None, extra={})
        titled.insert(0, (anonymous, " · ".join(filter(None, ["source", action]))))
    truth = released.replace(subject=None)
    return [
        Panel.from_clip(clip, title, foot_sliding=foot_sliding, predictions=None if recognizers is None else
                        prediction_lines(clip, recognizers, truth, labels))
        for clip, title in titled
    ]


def pick_reference(subjects: Sequence[int] | np.ndarray, index: int, seed: int = 0) -> int | None:
    """The default reference of `dtmr export --seed N` and the Studio: `ReferencePool(subjects).draw(index,
    seed)`, a seeded uniform draw among the candidates of clip `index`; None when there is none.

    `subjects` holds one subject label per clip, -1 where unknown (the rule: `dtmr.data.reference_pool`).
    """
    return ReferencePool(subjects).draw(index, seed)
