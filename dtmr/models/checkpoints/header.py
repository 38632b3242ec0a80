"""What a checkpoint file is, read without building its model: the layout check and the header.

A checkpoint (`dtmr.models.checkpoints.checkpoint`) is untrusted input. `load_untrusted` reads it with
`torch.load(weights_only=True)`, so a pickle that would call a Python function is refused, and every failure
is a `CheckpointError` naming the file; `validate_checkpoint` checks the documented layout. This module
imports torch only when it reads a file, so a model list (the Studio's catalogue, `dtmr export`'s pairing)
can be imported without it.
"""

from __future__ import annotations

import math
import pickle
import re
import warnings
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ... import methods
from ...data.label_set import RecognizerClasses, TrainedOn
from ...errors import CheckpointError, InputError
from ...io.bounded_tree import check_tree
from ...skeleton import get_topology
from ..config import variant_label

FORMAT = "dtmr-checkpoint"
VERSION = 1

_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "format": str, "version": int, "method": str, "config": dict, "topology": str,
    "beta": (float, int, type(None)), "data": dict, "metrics": dict, "state_dict": dict,
}


def load_untrusted(path: Path, device, *, mmap: bool, what: str = "checkpoint"):
    """`torch.load(weights_only=True)` of `path`; every failure a CheckpointError naming the file and saying
    what it should have been (`what`: a checkpoint, a training state, ...)."""
    import torch

    if not path.is_file():
        raise CheckpointError(path, f"no such {what} file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the weights-only unpickler warns about pickle protocols
            loaded = torch.load(path, map_location=device or "cpu", weights_only=True, mmap=mmap)
    except pickle.UnpicklingError as exc:
        blocked = re.search(r"GLOBAL (\S+)", str(exc))
        if blocked:
            raise CheckpointError(
                path, f"refused to load: it references the Python object {blocked.group(1)}, which could run "
                f"code; a {what} may hold only tensors and plain containers") from None
        raise CheckpointError(path, f"not a valid {what} (corrupted, or not written by torch.save)") from None
    except Exception:  # noqa: BLE001 - torch reports damage as RuntimeError, EOFError, KeyError, ...
        # torch's own text (advice on `_use_new_zipfile_serialization`, zip internals) is not for a user
        kind = f"truncated or corrupted {what}" if zipfile.is_zipfile(path) else \
            f"not a {what} archive (corrupted, or not written by torch.save)"
        raise CheckpointError(path, kind) from None
    try:  # lists that share themselves 64 levels deep in its config would hang whoever walks them
        check_tree(loaded, path, what)
    except InputError as exc:
        raise CheckpointError(path, exc.reason) from None
    return loaded


# -------------------------------------------------------------------------------------------- header

#: the method of the SGN recognizers (`dtmr.models.recognizers.Recognizer.method`); every other is a retargeter
RECOGNIZER_METHOD = "sgn"
#: how model lists name the recognizers (the retargeters' names are dtmr.methods')
RECOGNIZER_NAME = "SGN"


@dataclass(frozen=True)
class CheckpointHeader:
    """What a checkpoint is, read without its weights (`read_checkpoint_header`)."""

    path: Path
    method: str
    topology: str
    beta: float | None = None
    #: a recognizer's task ("action", "subject"); None for a retargeter
    task: str | None = None
    #: `dtmr.models.config.variant_label` of the config and training record (None without a preset)
    preset: str | None = None
    #: the file's modification time: a checkpoint rewritten in place (a resumed training run) is a new header
    modified: float = 0.0
    #: the data set it was trained on (name, label-set fingerprint), as far as its `data` records it
    trained_on: TrainedOn = TrainedOn()
    #: a recognizer's classes (label and name per output class); None for a retargeter
    classes: RecognizerClasses | None = None
    #: the model's config as the checkpoint records it (`DTMRConfig.to_dict()` for DisentangledTMR): what a
    #: fine-tuning run must share (`dtmr.train.fine_tuning`); not part of the header's identity
    config: Mapping = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_recognizer(self) -> bool:
        return self.method == RECOGNIZER_METHOD

    @property
    def label(self) -> str:
        """E.g. "DisentangledTMR β=0.2 small (dtmr_small_beta0.2.pt)" or "SGN action recognizer (action.pt)"."""
        if self.is_recognizer:
            name = RECOGNIZER_NAME
            return f"{name} {self.task} recognizer ({self.path.name})"
        name = methods.display_name(self.method.lower()) if methods.is_method(self.method.lower()) else self.method
        beta = "" if self.beta is None else f" β={self.beta:g}"
        preset = "" if self.preset is None else f" {self.preset}"
        return f"{name}{beta}{preset} ({self.path.name})"


def read_checkpoint_header(path: str | Path) -> CheckpointHeader:
    """The header of a checkpoint file, validated as `load_checkpoint` validates it; the weights are mapped
    (mmap), never read. Every failure is a `CheckpointError` naming the file."""
    path = Path(path)
    checkpoint = load_untrusted(path, None, mmap=True)
    validate_checkpoint(checkpoint, path)
    config, training = checkpoint["config"], checkpoint.get("training")
    try:  # the preset and the training record are labels: unchecked metadata, but never a traceback
        preset = variant_label(config, training)
    except (TypeError, ValueError) as exc:
        raise CheckpointError(path, f"malformed config or training record ({exc})") from None
    task = checkpoint.get("task")
    beta = checkpoint["beta"]
    trained_on = TrainedOn.of_checkpoint_data(checkpoint["data"])
    return CheckpointHeader(path=path, method=checkpoint["method"], topology=checkpoint["topology"],
                            beta=None if beta is None else float(beta), task=None if task is None else str(task),
                            preset=preset, modified=path.stat().st_mtime, trained_on=trained_on,
                            classes=_classes(checkpoint, path, trained_on), config=dict(config))


def _classes(checkpoint: dict, path: Path, trained_on: TrainedOn) -> RecognizerClasses | None:
    """A recognizer's classes from its `task`, `labels` and `class_names`; None for a retargeter."""
    if checkpoint["method"] != RECOGNIZER_METHOD or checkpoint.get("task") is None:
        return None
    labels, names = checkpoint.get("labels"), checkpoint.get("class_names")
    if not isinstance(labels, list) or not isinstance(names, list) or len(labels) != len(names):
        raise CheckpointError(path, "recognizer checkpoint without one label and one class name per class")
    try:
        return RecognizerClasses(str(checkpoint["task"]), tuple(int(x) for x in labels), tuple(str(n) for n in names),
                                 trained_on)
    except (TypeError, ValueError):
        raise CheckpointError(path, "recognizer checkpoint whose labels are not integers") from None


def validate_checkpoint(checkpoint, path: str | Path | None = None) -> None:
    """Raise CheckpointError unless `checkpoint` has the documented layout."""
    if not isinstance(checkpoint, dict):
        raise CheckpointError(path, f"not a DTMR checkpoint (holds a {type(checkpoint).__name__}, not a dict)")
    if checkpoint.get("format") != FORMAT:
        raise CheckpointError(path, f"not a DTMR checkpoint (format is {checkpoint.get('format')!r}, "
                                    f"expected {FORMAT!r})")
    for key, kind in _REQUIRED.items():
        if key not in checkpoint:
            raise CheckpointError(path, f"checkpoint lacks {key!r}")
        if not isinstance(checkpoint[key], kind) or (kind is int and isinstance(checkpoint[key], bool)):
            raise CheckpointError(path, f"checkpoint field {key!r} has the wrong type "
                                        f"({type(checkpoint[key]).__name__})")
    beta = checkpoint["beta"]
    if isinstance(beta, bool) or (beta is not None and not math.isfinite(beta)):
        raise CheckpointError(path, f"checkpoint field 'beta' is not a finite number ({beta!r})")
    if checkpoint["version"] > VERSION:
        raise CheckpointError(path, f"checkpoint version {checkpoint['version']} is newer than this program "
                                    f"reads ({VERSION})")
    import torch

    bad = [k for k, v in checkpoint["state_dict"].items() if not isinstance(k, str) or not isinstance(v, torch.Tensor)]
    if bad:
        raise CheckpointError(path, f"state_dict entry {bad[0]!r} is not a named tensor")
    try:
        get_topology(checkpoint["topology"])
    except KeyError as exc:
        raise CheckpointError(path, exc.args[0]) from None
