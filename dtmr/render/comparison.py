"""The source / retargeted / released comparison: from clips and models to titled `Panel`s.

`dtmr export` and the Studio's export dialog both call `build_comparison`, so they render the same frames.
Predictions are top-1 per frame from each recognizer's sliding window (`Recognizer.window_probabilities`);
a ✓ marks a prediction equal to the *source's* true label: wanted for the action, and for the identity a
sign that the recognizer still finds the source subject in that panel.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..data.clip import Clip
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


def prediction_lines(clip: Clip, recognizers: Recognizers, truth: Clip) -> list[list[str]]:
    """Per frame of `clip`: "action: NAME P%" and "identity: NAME P%" lines, ✓ where they match `truth`'s labels."""
    lines: list[list[str]] = [[] for _ in range(clip.num_frames)]
    for heading, recognizer, true_label in (
        ("action", recognizers.action, truth.action),
        ("identity", recognizers.subject, truth.subject),
    ):
        if recognizer is None:
            continue
        probabilities = np.asarray(recognizer.window_probabilities(clip))
        top = probabilities.argmax(axis=1)
        confidence = probabilities[np.arange(top.size), top]
        labels = np.asarray(recognizer.labels)[top]
        for t in range(clip.num_frames):
            mark = f" {CORRECT_MARK}" if true_label is not None and labels[t] == true_label else ""
            lines[t].append(f"{heading}: {recognizer.class_names[top[t]]} {confidence[t]:.0%}{mark}")
    return lines


def describe_clip(clip: Clip, action_names: Mapping[int, str] | None = None) -> str:
    """A title part such as `subject 3 · walk` (`action 17` without a name); unknown labels are left out."""
    parts = []
    if clip.subject is not None:
        parts.append(f"subject {clip.subject}")
    if clip.action is not None:
        parts.append((action_names or {}).get(clip.action, f"action {clip.action}"))
    return " · ".join(parts)


def action_names_of(recognizers: Recognizers | None) -> dict[int, str]:
    """Data-set action label -> class name, as the action recognizer knows them (empty without one)."""
    if recognizers is None or recognizers.action is None:
        return {}
    return {int(label): name for label, name in zip(recognizers.action.labels, recognizers.action.class_names)}


def build_comparison(
    source: Clip,
    reference: Clip,
    anonymizer,
    recognizers: Recognizers | None = None,
    action_names: Mapping[int, str] | None = None,
    foot_sliding: bool = True,
    full_model=None,
) -> list[Panel]:
    """Panels source, retargeted and released of `anonymizer` (a `dtmr.Anonymizer`) on `source`.

    `reference` lends its body (identity); `action_names` maps action labels to names for the titles
    (default: the action recognizer's class names). The retargeted panel is the full decoder output of
    `full_model` (the β = 1 partner of the anonymizer's checkpoint, `dtmr.models.pairing`) when given, else
    the anonymizer's own; its title says which β the decoder that made it has.
    """
    retargeted, released = anonymizer.retarget_pair(source, reference)
    maker = anonymizer if full_model is None else full_model
    if maker is not anonymizer:
        retargeted = maker.retarget_pair(source, reference)[0]
    names = dict(action_names) if action_names is not None else action_names_of(recognizers)
    described = describe_clip(source, names)
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
            predictions=prediction_lines(clip, recognizers, source) if recognizers is not None else None,
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


def release_panels(released: Clip, source: Clip | None = None, recognizers: Recognizers | None = None,
                   action_names: Mapping[int, str] | None = None, foot_sliding: bool = True) -> list[Panel]:
    """Panels of a clip of a release: the released clip, after its `source` when the key gave one.

    Titles name the release id and the action only: what the key knows of the performer (subject, source
    clip name) never reaches a video, so the source clip is shown without its labels but the action.
    """
    names = dict(action_names) if action_names is not None else action_names_of(recognizers)
    action = describe_clip(released.replace(subject=None), names)
    titled = [(released, " · ".join(filter(None, [f"released {released.name}", action])))]
    if source is not None:
        anonymous = source.replace(subject=None, sample_name=None, source_file=None, extra={})
        titled.insert(0, (anonymous, " · ".join(filter(None, ["source", action]))))
    truth = released.replace(subject=None)
    return [
        Panel.from_clip(clip, title, foot_sliding=foot_sliding,
                        predictions=prediction_lines(clip, recognizers, truth) if recognizers is not None else None)
        for clip, title in titled
    ]


def pick_reference(subjects: Sequence[int] | np.ndarray, index: int, seed: int = 0) -> int | None:
    """The default reference of `dtmr export --seed N` and the Studio: `ReferencePool(subjects).draw(index,
    seed)`, a seeded uniform draw among the candidates of clip `index`; None when there is none.

    `subjects` holds one subject label per clip, -1 where unknown (the rule: `dtmr.data.reference_pool`).
    """
    return ReferencePool(subjects).draw(index, seed)
