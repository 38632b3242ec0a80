"""Labels by name: what a data set's labels mean, what a recognizer's classes are, and the one rule that
matches the two (`match_classes`), used by the Studio's predictions and `dtmr export`'s titles.

A recognizer's class index means nothing outside the data set it was trained on: the synthetic set's
action 2 is "wave", N-UCLA's "pick up with two hands". So actions are matched by *name* (case, spaces and
underscores ignored); a library label whose name no class has gets no mark and an explicit note. Subject
ids have no names: a subject recognizer's class is the library's subject only when both come from the
same data set (`TrainedOn.same_data_set`: the library's labels are a part of the training data's, so the
bundled demo, ten of the synthetic set's forty people, is the synthetic set). A recognizer whose training
labels are not recorded never matches subjects: "cannot check", never a false ✔. A recognizer none of
whose classes is a label of the library shows no prediction at all, only `ClassMatch.withheld`'s line:
"throw 38.5 %" on an N-UCLA clip is a guess among another data set's classes, not a prediction.
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


def _recorded_label_set(recorded: Mapping) -> LabelSet | None:
    """The `LabelSet` a checkpoint records (`LabelSet.to_dict`); None when it is malformed."""
    try:
        actions = tuple((int(a), None if n is None else str(n)) for a, n in recorded["actions"])
        subjects = tuple(int(s) for s in recorded["subjects"])
        return LabelSet(str(recorded.get("name", "")), str(recorded.get("topology", "")), actions, subjects)
    except (KeyError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class TrainedOn:
    """The data set a checkpoint was trained on, as far as it records it."""

    #: the data set's name (its file's stem); "" when the checkpoint does not say
    name: str = ""
    #: `LabelSet.fingerprint` of the training data; None for checkpoints that do not record their labels
    fingerprint: str | None = None
    #: the training data's labels (what `fingerprint` is the fingerprint of); None when not recorded
    labels: LabelSet | None = field(default=None, compare=False)

    @classmethod
    def of_checkpoint_data(cls, data: Mapping | None) -> "TrainedOn":
        """From a checkpoint's `data` dict; tolerant of anything (this is metadata, never a failure).

        The label set is the one recorded under CHECKPOINT_KEY; a checkpoint written before that key existed
        (the bundled recognizers) still lists its training data's `actions`, `action_names` and `subjects`,
        from which `record_label_set` computes the same record."""
        data = data if isinstance(data, Mapping) else {}
        recorded = data.get(CHECKPOINT_KEY)
        if not isinstance(recorded, Mapping):
            try:
                recorded = record_label_set(data).get(CHECKPOINT_KEY)
            except (KeyError, TypeError, ValueError):  # a malformed description is no label set
                recorded = None
        recorded = recorded if isinstance(recorded, Mapping) else {}
        fingerprint = recorded.get("fingerprint")
        name = recorded.get("name") or (Path(str(data["path"])).stem if data.get("path") else "")
        labels = _recorded_label_set(recorded) if recorded else None
        return cls(str(name), fingerprint if isinstance(fingerprint, str) and fingerprint else None, labels)

    def same_data_set(self, library: LabelSet | None) -> bool | None:
        """Whether `library` comes from the data set this checkpoint was trained on; None when it cannot be
        checked (no recorded labels, or a library without action labels).

        Equal fingerprints are the same data set. So is a library whose labels are a part of the training
        data's: every action of the library has the same label and name there, every subject is one of its
        subjects, and at least one action is named (the bundled demo library is subjects 1-10 of the
        synthetic set the bundled models were trained on, drawn with the same seed: the same people). Label
        ids alone, without a name, are not enough: two unnamed data sets both count actions 1, 2, ..."""
        if library is None or self.fingerprint is None:
            return None
        if self.fingerprint == library.fingerprint:
            return True
        if not library.actions:
            return None
        if self.labels is None:
            return False
        trained = {a: None if n is None else normalize_name(n) for a, n in self.labels.actions}
        named = any(n is not None for _, n in library.actions)
        same_actions = all(a in trained and trained[a] == (None if n is None else normalize_name(n))
                           for a, n in library.actions)
        return named and same_actions and set(library.subjects) <= set(self.labels.subjects)


@dataclass(frozen=True)
class RecognizerClasses:
    """A recognizer's output classes: the data-set label and the name of each class index."""

    task: str
    labels: tuple[int, ...]
    class_names: tuple[str, ...]
    trained_on: TrainedOn = TrainedOn()


@dataclass(frozen=True)
class ClassMatch:
    """Which recognizer class stands for which library label (`match_classes`), or why none does.

    `classes` maps each library label to a class index; it is empty when the recognizer's classes are not
    the library's labels, and `note` then says so in one line (`withheld`), shown instead of predictions.
    Otherwise `note` is "" when every label of the library has a class, else one line saying which clips
    get no ✔ (a recognizer of the same data set that never saw some of its labels).
    """

    task: str
    classes: Mapping[int, int]
    note: str
    #: the short form of a withheld recognizer's line, for a video's caption: "no prediction (trained on synthetic)"
    caption: str = ""

    def class_of(self, label: int | None) -> int | None:
        return None if label is None else self.classes.get(int(label))

    @property
    def covers_nothing(self) -> bool:
        return not self.classes

    @property
    def withheld(self) -> str:
        """The one line shown instead of this recognizer's predictions: its top classes would be guesses
        among another data set's labels; "" when its predictions are shown."""
        return self.note if self.covers_nothing else ""

    def missing_note(self, label: int | None) -> str:
        """Why the clip of `label` gets no ✔ ("" when it gets one or its label is unknown)."""
        if label is None or int(label) < 0 or self.class_of(label) is not None:
            return ""
        return self.note or f"{self.task} {label} is not one of this library's labels: not marked"


def match_classes(recognizer: RecognizerClasses, library: LabelSet | None) -> ClassMatch:
    """The one rule. Within one data set (`TrainedOn.same_data_set`) classes are the library's labels by id
    (ids and names agree by construction, so unnamed data sets still match themselves). A recognizer of
    another data set matches only when its classes name every action of the library (by `normalize_name`):
    a few shared names ("throw" in both the synthetic set and N-UCLA) do not make its top classes a
    prediction of the library's actions. Subjects match only within one data set. A recognizer that does
    not match, or a library that cannot be checked, matches nothing and gets one line (`ClassMatch.withheld`)."""
    task, trained = recognizer.task, recognizer.trained_on
    if library is None:
        return ClassMatch(task, {}, f"the library's labels are unknown: no {task} prediction",
                          "no prediction (unknown labels)")
    same = trained.same_data_set(library)
    library_labels = [a for a, _ in library.actions] if task == "action" else list(library.subjects)
    classes: dict[int, int] = {}
    if same:
        index = {label: i for i, label in reversed(list(enumerate(recognizer.labels)))}
        classes = {label: index[label] for label in library_labels if label in index}
    elif task == "action":
        index = {normalize_name(n): i for i, n in reversed(list(enumerate(recognizer.class_names)))}
        classes = {a: index[normalize_name(n)] for a, n in library.actions if n is not None and normalize_name(n) in index}
    if not classes or (not same and len(classes) < len(library_labels)):
        caption = (f"no prediction (no {task} labels)" if not library_labels else
                   f"no prediction (trained on {trained.name or 'other data'})")
        return ClassMatch(task, {}, _withheld_note(recognizer, library_labels, len(classes), same), caption)
    missing = len(library_labels) - len(classes)
    note = (f"{missing} of the library's {len(library_labels)} {task} labels have no class of the {task} "
            "recognizer: those clips are not marked") if missing else ""
    return ClassMatch(task, classes, note)


def _withheld_note(recognizer: RecognizerClasses, library_labels: list[int], shared: int, same: bool | None) -> str:
    """One short line: why a recognizer whose classes are not the library's labels shows no prediction."""
    task, trained = recognizer.task, recognizer.trained_on
    kind = "actions" if task == "action" else "subjects"
    origin = f"{trained.name or 'unrecorded data set'}, {len(recognizer.labels)} {kind}"
    if not library_labels:
        return f"this library has no {task} labels to check the {task} recognizer against: no prediction"
    if task == "subject":
        if same is None:
            return f"subject recognizer without recorded training subjects ({origin}): no prediction"
        return f"subject recognizer trained on other people ({origin}): no prediction"
    if shared:
        origin += f"; {shared} of this library's {len(library_labels)} among them"
    return f"action recognizer trained on another label set ({origin}): no prediction"


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
