"""The catalogue job: scan the model folders and list the devices inference can run on."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .cancel import CancelToken, ProgressFn
from .checkpoints import ModelCatalog, build_catalog


@dataclass(frozen=True)
class ScanRequest:
    folders: tuple[Path, ...]
    files: tuple[Path, ...]


@dataclass(frozen=True)
class ScanResult:
    catalog: ModelCatalog
    #: CUDA devices first (the default when present), then "cpu"
    devices: list[str]


def available_devices() -> list[str]:
    import torch

    cuda = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    return [*cuda, "cpu"]


def scan_models(request: ScanRequest, token: CancelToken, progress: ProgressFn) -> ScanResult:
    progress(0, 1, "scanning checkpoints")
    catalog = build_catalog(list(request.folders), list(request.files))
    token.check()
    return ScanResult(catalog, available_devices())
