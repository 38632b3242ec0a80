"""The model catalogue: the checkpoints found in `resources/models/` and those the user added.

A checkpoint is read only for its metadata (method, β, task, topology), with
`torch.load(weights_only=True, mmap=True)` so that even a 90 MB `paper` checkpoint costs milliseconds
and never executes code. Retargeters (DisentangledTMR, DMR, PMR, ...) are listed one per β; SGN
recognizers are kept per task ("action", "subject") for the live predictions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from dtmr.errors import CheckpointError

CHECKPOINT_SUFFIXES = (".pt", ".pth", ".ckpt")
RECOGNIZER_METHOD = "sgn"
#: the β selected first when no model was chosen before (DESIGN §3: 0.2 is the recommended trade-off)
RECOMMENDED_BETA = 0.2
METHOD_NAMES = {"dtmr": "DisentangledTMR", "disentangledtmr": "DisentangledTMR", "dmr": "DMR", "pmr": "PMR",
                "naive": "Naive retarget", "noise": "Noise", "sgn": "SGN"}


@dataclass(frozen=True)
class CheckpointInfo:
    path: Path
    method: str
    topology: str
    beta: float | None = None
    task: str | None = None
    preset: str | None = None
    #: the file's modification time: a checkpoint rewritten in place (a resumed training run) is a new entry
    modified: float = 0.0

    @property
    def is_recognizer(self) -> bool:
        return self.method == RECOGNIZER_METHOD

    @property
    def label(self) -> str:
        name = METHOD_NAMES.get(self.method.lower(), self.method)
        if self.is_recognizer:
            return f"{name} {self.task} recognizer ({self.path.name})"
        beta = "" if self.beta is None else f" β={self.beta:g}"
        preset = "" if self.preset is None else f" {self.preset}"
        return f"{name}{beta}{preset} ({self.path.name})"


def read_checkpoint_info(path: str | Path) -> CheckpointInfo:
    """The catalogue entry of one checkpoint file; `CheckpointError` naming the file when unreadable."""
    import torch

    from dtmr.models.config import variant_label

    path = Path(path)
    try:
        data = torch.load(path, map_location="cpu", weights_only=True, mmap=True)
    except FileNotFoundError:
        raise
    except Exception as exc:  # torch raises many types for corrupt or unsafe files
        raise CheckpointError(path, f"not a loadable checkpoint ({type(exc).__name__}: {exc})") from None
    if not isinstance(data, dict) or data.get("format") != "dtmr-checkpoint":
        raise CheckpointError(path, "not a dtmr checkpoint (missing format: dtmr-checkpoint)")
    try:
        method = str(data["method"])
        topology = str(data["topology"])
    except KeyError as exc:
        raise CheckpointError(path, f"checkpoint lacks the {exc.args[0]!r} field") from None
    beta = data.get("beta")
    if beta is not None and (isinstance(beta, bool) or not isinstance(beta, (int, float)) or not math.isfinite(beta)):
        raise CheckpointError(path, f"checkpoint field 'beta' is not a number ({beta!r:.40})")
    config = data.get("config") if isinstance(data.get("config"), dict) else {}
    try:  # DTMRConfig's preset (and residual, and the loss weights it was trained with): unchecked metadata
        preset = variant_label(config, data.get("training"))
    except (TypeError, ValueError) as exc:
        raise CheckpointError(path, f"malformed config or training record ({exc})") from None
    return CheckpointInfo(
        path=path,
        method=method,
        topology=topology,
        beta=None if beta is None else float(beta),
        task=None if data.get("task") is None else str(data["task"]),
        preset=preset,
        modified=path.stat().st_mtime,
    )


@dataclass
class ModelCatalog:
    retargeters: list[CheckpointInfo] = field(default_factory=list)
    recognizers: dict[str, CheckpointInfo] = field(default_factory=dict)
    #: one line per file that could not be read
    problems: list[str] = field(default_factory=list)

    def add(self, info: CheckpointInfo) -> None:
        if info.is_recognizer:
            if info.task:
                self.recognizers.setdefault(info.task, info)
        elif all(r.path != info.path for r in self.retargeters):
            self.retargeters.append(info)
            self.retargeters.sort(key=lambda r: (r.beta is None, r.beta or 0.0, r.method, str(r.path)))

    def find(self, path: str | Path) -> CheckpointInfo | None:
        path = Path(path)
        return next((r for r in self.retargeters if r.path == path), None)

    def recommended(self) -> CheckpointInfo | None:
        """The first retargeter of the recommended β, else the first retargeter (None when there is none)."""
        best = [r for r in self.retargeters if r.beta is not None and abs(r.beta - RECOMMENDED_BETA) < 1e-6]
        return (best or self.retargeters or [None])[0]

    def full_model(self, like: CheckpointInfo | None) -> CheckpointInfo | None:
        """The β = 1 checkpoint of the same method as `like` (any β = 1 retargeter when `like` is None)."""
        full = [r for r in self.retargeters if r.beta is not None and abs(r.beta - 1.0) < 1e-6]
        same = [r for r in full if like is not None and r.method == like.method]
        return (same or full or [None])[0]


def build_catalog(folders: list[Path], files: list[Path]) -> ModelCatalog:
    """Every checkpoint in `folders` (not recursive) plus the user's `files`, with unreadable ones listed."""
    catalog = ModelCatalog()
    candidates = [p for d in folders if d.is_dir() for p in sorted(d.iterdir()) if p.suffix in CHECKPOINT_SUFFIXES]
    for path in [*candidates, *files]:
        try:
            catalog.add(read_checkpoint_info(path))
        except (CheckpointError, OSError) as exc:
            catalog.problems.append(str(exc) if isinstance(exc, CheckpointError) else f"{path}: {exc.strerror or exc}")
        except Exception as exc:  # noqa: BLE001 - a file nobody foresaw is one line, never the whole catalogue
            catalog.problems.append(f"{path}: unreadable checkpoint ({type(exc).__name__}: {exc})")
    return catalog
