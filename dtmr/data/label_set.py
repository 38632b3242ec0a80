"""Labels by name: what a data set's labels mean, what a recognizer's classes are, and the one rule that
matches the two (`match_classes`), used by the Studio's predictions and `dtmr export`'s titles.

A recognizer's class index means nothing outside the data set it was trained on: the synthetic set's
action 2 is "wave", N-UCLA's "pick up with two hands". So actions are matched by *name* (case, spaces and
underscores ignored); a library label whose name no class has gets no mark and an explicit note. Subject
ids have no names: a subject recognizer's class is the library's subject only when both come from the
same data set, i.e. when the recognizer's recorded label-set fingerprint equals the library's. A
recognizer without a recorded fingerprint (checkpoints older than this module) never matches subjects:
"cannot check", never a false ✔.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: the key of a checkpoint's `data` dict under which the training data's label set is recorded
CHECKPOINT_KEY = "label_set"


def normalize_name(name: str) -> str:
    """The form names are compared in: case-folded, underscores as spaces, runs of spaces collapsed."""
    return " ".join(str(name).replace("_", " ").split()).casefold()


@dataclass(frozen=True)
class LabelSet:
    """The labels of one data set: action label -> name (None when unnamed), subject ids, topology.

    `fingerprint` covers the actions (labels and normalized names) and the subjects, not the file name
    or the topology: a renamed copy, or the same clips converted to NTU-25 for training, are one data set.
    """

    name: str
    topology: str
    actions: tuple[tuple[int, str | None], ...]
    subjects: tuple[int, ...]
    fingerprint: str = field(init=False)

    def __post_init__(self) -> None:
        canonical = json.dumps({"actions": [[int(a), None if n is None else normalize_name(n)] for a, n in self.actions],
                                "subjects": [int(s) for s in self.subjects]}, separators=(",", ":"))
        object.__setattr__(self, "fingerprint", hashlib.sha256(canonical.encode()).hexdigest()[:16])

    @classmethod
    def build(cls, name: str, topology: str, action_labels: Sequence[int] | np.ndarray,
              action_names: Sequence[str] | None, subject_labels: Sequence[int] | np.ndarray) -> "LabelSet":
        """From a source's `action_names` (indexed by label, `action_name_map`) and the labels
        present (negative labels, i.e. unknown, are left out)."""
        actions = sorted({int(a) for a in np.asarray(action_labels).ravel() if int(a) >= 0})
        names = action_name_map(list(action_names) if action_names else None, np.asarray(actions, dtype=np.int64))
        subjects = sorted({int(s) for s in np.asarray(subject_labels).ravel() if int(s) >= 0})
        return cls(str(name), str(topology), tuple((a, names.get(a)) for a in actions), tuple(subjects))

    @classmethod
    def of_source(cls, source) -> "LabelSet":
        """The label set of an open clip source (anything `dtmr.io.sources.open_clip_source` returns)."""
        table = source.metadata_table()
        return cls.build(Path(str(source.path)).stem, source.topology, table["action"], source.action_names,
                         table["subject"])

    @classmethod
    def from_description(cls, data: Mapping) -> "LabelSet":
        """From the `data` dict a trainer records (`dtmr.train.data.TrainingData.describe`): its `actions`,
        `action_names` (one per action; "action N" is that method's stand-in for an unnamed label, read back
        as unnamed), `subjects`, `topology` and `path`."""
        actions = [int(a) for a in data["actions"]]
        names = list(data.get("action_names") or [None] * len(actions))
        named = tuple((a, None if n is None or str(n) == f"action {a}" else str(n)) for a, n in zip(actions, names))
        return cls(Path(str(data.get("path", ""))).stem, str(data.get("topology", "")), named,
                   tuple(int(s) for s in data["subjects"]))

    def action_name(self, label: int | None) -> str | None:
        return None if label is None else dict(self.actions).get(int(label))

    def to_dict(self) -> dict:
        """What a checkpoint records (`CHECKPOINT_KEY` of its `data`)."""
        return {"name": self.name, "topology": self.topology, "actions": [[a, n] for a, n in self.actions],
                "subjects": list(self.subjects), "fingerprint": self.fingerprint}


def record_label_set(data: Mapping) -> dict:
    """`data` (a trainer's description of its training data) with its label set recorded under CHECKPOINT_KEY;
    unchanged when it does not list the actions and subjects (a recognizer trained on bare clips)."""
    if "actions" not in data or "subjects" not in data:
        return dict(data)
    return {**data, CHECKPOINT_KEY: LabelSet.from_description(data).to_dict()}


def fitted_action_names(data: Mapping | None) -> dict[int, str]:
    """Action label -> normalized name of the label set a checkpoint's `data` records; {} when it records
    none (tolerant of anything: this is metadata)."""
    recorded = data.get(CHECKPOINT_KEY) if isinstance(data, Mapping) else None
    actions = recorded.get("actions") if isinstance(recorded, Mapping) else None
    names: dict[int, str] = {}
    for pair in actions if isinstance(actions, list) else []:
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and isinstance(pair[1], str) and pair[1]:
            names[int(pair[0])] = normalize_name(pair[1])
    return names


def shared_action_labels(labels: Sequence[int | None], library_names: Mapping[int, str],
                         fitted_names: Mapping[int, str]) -> np.ndarray:
    """(N,) the clips' action labels where the label means the same action in the library and in a fitted
    model (both name it, by `normalize_name`), else -1 (unknown). An integer alone is never trusted: the
    synthetic set's action 2 is "wave", N-UCLA's "pick up with two hands"."""
    out = np.full(len(labels), -1, dtype=np.int64)
    for i, label in enumerate(labels):
        if label is None or int(label) < 0:
            continue
        name = library_names.get(int(label))
        if name and fitted_names.get(int(label)) == normalize_name(name):
            out[i] = int(label)
    return out


@dataclass(frozen=True)
class TrainedOn:
    """The data set a checkpoint was trained on, as far as it records it."""

    #: the data set's name (its file's stem); "" when the checkpoint does not say
    name: str = ""
    #: `LabelSet.fingerprint` of the training data; None for checkpoints that predate it
    fingerprint: str | None = None

    @classmethod
    def of_checkpoint_data(cls, data: Mapping | None) -> "TrainedOn":
        """From a checkpoint's `data` dict; tolerant of anything (this is metadata, never a failure)."""
        data = data if isinstance(data, Mapping) else {}
        recorded = data.get(CHECKPOINT_KEY)
        recorded = recorded if isinstance(recorded, Mapping) else {}
        fingerprint = recorded.get("fingerprint")
        name = recorded.get("name") or (Path(str(data["path"])).stem if data.get("path") else "")
        return cls(str(name), fingerprint if isinstance(fingerprint, str) and fingerprint else None)

    @property
    def description(self) -> str:
        """"the synthetic set", or "an unrecorded data set"."""
        return f"the {self.name} set" if self.name else "an unrecorded data set"

    def same_data_set(self, library: LabelSet | None) -> bool | None:
        """True/False when both fingerprints are known, None when it cannot be checked."""
        if library is None or self.fingerprint is None:
            return None
        return self.fingerprint == library.fingerprint


@dataclass(frozen=True)
class RecognizerClasses:
    """A recognizer's output classes: the data-set label and the name of each class index."""

    task: str
    labels: tuple[int, ...]
    class_names: tuple[str, ...]
    trained_on: TrainedOn = TrainedOn()


@dataclass(frozen=True)
class ClassMatch:
    """Which recognizer class stands for which library label (`match_classes`), and why marks are missing.

    `classes` maps a library label to a class index. `note` is "" when every label of the library has a
    class; otherwise one line for the Studio and the export saying what is not marked and why.
    """

    task: str
    classes: Mapping[int, int]
    note: str
    #: the library labels that have no class (each gets `missing_note`)
    unmatched: frozenset[int] = frozenset()
    library: LabelSet | None = None

    def class_of(self, label: int | None) -> int | None:
        return None if label is None else self.classes.get(int(label))

    @property
    def covers_nothing(self) -> bool:
        return not self.classes

    def missing_note(self, label: int | None) -> str:
        """Why the clip of `label` gets no ✔ ("" when it gets one or its label is unknown)."""
        if label is None or int(label) < 0 or self.class_of(label) is not None:
            return ""
        if self.covers_nothing:
            return self.note
        if self.task != "action":
            return f"subject {label}: no class of the subject recognizer is this person; not marked"
        name = self.library.action_name(label) if self.library is not None else None
        if name is None:
            return f"action {label} has no name in this library: the recognizer's classes cannot be matched to it"
        return f"no class of the action recognizer is named {name!r}: the true action is not marked"


def match_classes(recognizer: RecognizerClasses, library: LabelSet | None) -> ClassMatch:
    """The one rule: actions by normalized name (by label id when both come from the same data set, where
    ids and names agree by construction, so unnamed data sets still match themselves); subjects by id only
    when both come from the same data set. A recognizer or a library that cannot be checked matches nothing."""
    task, trained = recognizer.task, recognizer.trained_on
    if library is None:
        return ClassMatch(task, {}, f"the library's labels are unknown: {task} predictions are not marked")
    same = trained.same_data_set(library)
    library_labels = [a for a, _ in library.actions] if task == "action" else list(library.subjects)
    classes: dict[int, int] = {}
    if same:
        index = {label: i for i, label in reversed(list(enumerate(recognizer.labels)))}
        classes = {label: index[label] for label in library_labels if label in index}
    elif task == "action":
        index = {normalize_name(n): i for i, n in reversed(list(enumerate(recognizer.class_names)))}
        classes = {a: index[normalize_name(n)] for a, n in library.actions if n is not None and normalize_name(n) in index}
    unmatched = frozenset(label for label in library_labels if label not in classes)
    if not classes:
        if task == "subject" and same is None:
            note = (f"subject recognizer trained on {trained.description} without a recorded label set: "
                    "it cannot be checked against this library's people, so ✔ and ◆ are not shown")
        elif task == "subject":
            note = (f"subject recognizer trained on {trained.description}: its subjects are not this library's "
                    "people, so ✔ and ◆ are not shown")
        else:
            note = f"action recognizer trained on {trained.description}: its classes are not this library's"
    elif unmatched:
        note = (f"{len(unmatched)} of the library's {len(library_labels)} {task} labels have no class of the "
                f"{task} recognizer: those clips are not marked")
    else:
        note = ""
    return ClassMatch(task, classes, note, unmatched, library)


def action_name_map(action_names: list[str] | None, action_labels: np.ndarray) -> dict[int, str]:
    """Action label -> name. A source's `action_names` is indexed by the label itself ("" where a label has
    no name, e.g. index 0 of the 1-based synthetic set). When any label lies beyond the list the names are
    not used at all, rather than risk naming every action off by one."""
    if not action_names:
        return {}
    labels = np.asarray(action_labels, dtype=np.int64)
    known = labels[labels >= 0]
    if known.size and known.max() >= len(action_names):
        return {}
    return {i: str(n) for i, n in enumerate(action_names) if n}
