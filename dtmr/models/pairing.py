"""Which checkpoint makes the "retargeted" view of a model: the β = 1 checkpoint of the same method.

A model of β < 1 releases the blend (1 - β)·source + β·D; its own D is trained for that blend, so the full
retarget a user compares against is the decoder output of the β = 1 checkpoint of the same method and
topology (DESIGN §6). The Studio's model catalogue and `dtmr export` both ask `find_full_model`, so they
show the same retargeted clip. A β = 1 model is its own partner. Among several β = 1 candidates the one of
the same preset (`CheckpointHeader.preset`) wins, then one in the model's own folder, then the first path
in sorted order, so the answer does not depend on the order in which the candidates were found.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..errors import CheckpointError
from ..resources import MODELS_DIR, resource_path
from .checkpoints.header import CheckpointHeader, read_checkpoint_header

#: the file suffixes taken for checkpoints when a folder is scanned
CHECKPOINT_SUFFIXES = (".pt", ".pth", ".ckpt")
FULL_BETA = 1.0


def is_full(header: CheckpointHeader) -> bool:
    """True for a retargeter of β = 1 (its released clip is its full decoder output)."""
    return not header.is_recognizer and header.beta is not None and abs(header.beta - FULL_BETA) < 1e-6


def find_full_model(model: CheckpointHeader, candidates: Iterable[CheckpointHeader]) -> CheckpointHeader | None:
    """The β = 1 partner of `model` among `candidates` (`model` itself when its β is 1); None when none fits."""
    if is_full(model):
        return model
    fitting = [c for c in candidates if is_full(c) and c.method == model.method and c.topology == model.topology]
    if not fitting:
        return None
    folder = model.path.resolve().parent
    return min(fitting, key=lambda c: (c.preset != model.preset, c.path.resolve().parent != folder, str(c.path)))


def scan_checkpoints(folders: Iterable[Path], files: Iterable[Path] = ()) -> tuple[list[CheckpointHeader], list[str]]:
    """Headers of every checkpoint directly in `folders` (missing folders are skipped) and of `files`,
    and one line per file that could not be read."""
    paths = [p for d in folders if d.is_dir() for p in sorted(d.iterdir()) if p.suffix in CHECKPOINT_SUFFIXES]
    headers, problems = [], []
    for path in [*paths, *files]:
        try:
            headers.append(read_checkpoint_header(path))
        except CheckpointError as exc:
            problems.append(str(exc))
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
        except Exception as exc:  # noqa: BLE001 - a file nobody foresaw is one line, never the whole list
            problems.append(f"{path}: unreadable checkpoint ({type(exc).__name__}: {exc})")
    return headers, problems


def default_search_folders(model_path: str | Path) -> list[Path]:
    """Where `dtmr export` looks for the β = 1 partner: next to the model, then among the bundled models."""
    return [Path(model_path).parent, resource_path(*MODELS_DIR)]


def full_model_for(model_path: str | Path, folders: Iterable[Path] | None = None) -> CheckpointHeader | None:
    """The β = 1 partner of the checkpoint `model_path` among the checkpoints in `folders` (by default
    `default_search_folders`); unreadable neighbours are ignored, an unreadable model is a CheckpointError."""
    model = read_checkpoint_header(model_path)
    headers, _ = scan_checkpoints(default_search_folders(model_path) if folders is None else folders)
    return find_full_model(model, headers)
