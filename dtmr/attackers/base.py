"""What every attacker of the audit shares: the interface, class bookkeeping and the saved-file format.

An attacker learns subject labels from clips and gives, for new clips, a probability per subject seen in
training (columns = sorted(set(labels))). Saved attackers are `torch.save` dicts of plain tensors, lists
and numbers, loaded with `weights_only=True`: {"format", "attacker", "classes", "config", "state"}.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
import torch

from ..data.clip import Clip
from ..errors import CheckpointError, DtmrError
from ..io.atomic import atomic_write
from ..models.checkpoints.header import load_untrusted

FILE_FORMAT = "dtmr-audit-attacker"


@runtime_checkable
class Attacker(Protocol):
    name: str
    family: str
    classes: list[int]

    def fit(self, clips: Sequence[Clip], labels: Sequence[int], seed: int) -> None: ...

    def predict_proba(self, clips: Sequence[Clip]) -> np.ndarray: ...

    def save(self, path) -> None: ...


def class_targets(labels: Sequence[int], clips: Sequence[Clip]) -> tuple[list[int], torch.Tensor]:
    """(sorted distinct labels, (N,) int64 class index of each clip); checks one label per clip."""
    if len(labels) != len(clips) or not clips:
        raise DtmrError(f"an attacker needs one label per clip and at least one clip ({len(clips)} clips, "
                        f"{len(labels)} labels)")
    classes = sorted({int(x) for x in labels})
    index = {c: i for i, c in enumerate(classes)}
    return classes, torch.tensor([index[int(x)] for x in labels], dtype=torch.int64)


def save_attacker(path: str | Path, name: str, classes: Sequence[int], config: dict, state: dict) -> Path:
    """Write an attacker file atomically (plain tensors only, so it loads with weights_only=True)."""
    payload = {"format": FILE_FORMAT, "attacker": name, "classes": [int(c) for c in classes], "config": config,
               "state": {k: v.detach().cpu().clone() for k, v in state.items()}}
    with atomic_write(path, suffix=".pt") as tmp:
        torch.save(payload, tmp)
    return Path(path)


def read_attacker_file(path: str | Path, name: str | None = None) -> dict:
    """The payload of an attacker file (of attacker `name` when given); CheckpointError naming the file."""
    payload = load_untrusted(Path(path), "cpu", mmap=False, what="saved attacker")
    if not isinstance(payload, dict) or payload.get("format") != FILE_FORMAT:
        raise CheckpointError(path, f"not a {FILE_FORMAT} file")
    if name is not None and payload.get("attacker") != name:
        raise CheckpointError(path, f"holds the {payload.get('attacker')!r} attacker, not {name!r}")
    return payload
