"""Which data a checkpoint fits: one short line for a model list, and the details behind it.

A model trained on one data set retargets or recognizes another one's clips poorly: another skeleton,
other actions, other people (issue 42: the bundled synthetic-trained models on N-UCLA give bodies that
are not doing the action and recognizers that guess among another set's classes). The line says which
of the three differ, from the checkpoint header's `trained_on` and `topology` against the open library's
`LabelSet`; whether two data sets are one is `TrainedOn.same_data_set` (the bundled demo is a part of the
synthetic set, so the demo's own models fit it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...data.label_set import LabelSet, normalize_name
from .header import CheckpointHeader


@dataclass(frozen=True)
class DataFit:
    """`fits`: True (trained on this library's data set), False (another one), None (cannot be checked)."""

    fits: bool | None
    #: e.g. "fitted on this library", "trained on synthetic — not this library's skeleton, actions, people"
    line: str
    #: several lines for a tooltip: what it was trained on, what the library is, what differs
    details: str


def data_fit(header: CheckpointHeader, library: LabelSet | None) -> DataFit:
    """How `header`'s checkpoint fits the open library of `library` (None: no library open)."""
    trained = header.trained_on
    name = trained.name or "unrecorded data"
    recorded = trained.labels
    about = [f"{header.label}", f"trained on: {name}" + _counts(recorded) + f", skeleton {header.topology}"]
    if library is None:
        return DataFit(None, f"trained on {name}", "\n".join(about))
    about.append(f"this library: {library.name}" + _counts(library) + f", skeleton {library.topology}")
    same = trained.same_data_set(library)
    if same and trained.fingerprint == library.fingerprint and trained.name == library.name:
        return DataFit(True, "fitted on this library", "\n".join(about))
    if same:
        line = f"trained on {name} — this library's data set"
        return DataFit(True, line, "\n".join([*about, f"this library's labels are a part of {name}'s"]))
    if same is None:
        line = f"trained on {name} — cannot be checked against this library"
        why = "the checkpoint records no training labels" if recorded is None else "this library has no action labels"
        return DataFit(None, line, "\n".join([*about, why]))
    differs = _differences(header.topology, recorded, library)
    line = f"trained on {name} — not this library's {', '.join(differs)}"
    return DataFit(False, line, "\n".join([*about, f"differs: {', '.join(differs)}"]))


def _counts(labels: LabelSet | None) -> str:
    return "" if labels is None else f" ({len(labels.actions)} actions, {len(labels.subjects)} subjects)"


def _differences(topology: str, trained: LabelSet | None, library: LabelSet) -> list[str]:
    """What the training data and the library do not share: "skeleton", "actions", and "people" (subject ids
    of two data sets are never the same persons), or "data" when the checkpoint records no labels."""
    differs = ["skeleton"] if topology != library.topology else []
    if trained is None:
        return [*differs, "data"]
    names = {normalize_name(n) for _, n in trained.actions if n is not None}
    if any(n is None or normalize_name(n) not in names for _, n in library.actions):
        differs.append("actions")
    return [*differs, "people"]
