"""Checkpoints of every method: save atomically, load without running code, rebuild the model.

A checkpoint is `torch.save` of a plain dict (docs/ARCHITECTURE.md):

    {"format": "dtmr-checkpoint", "version": 1, "method": str, "config": dict, "topology": str,
     "beta": float | None, "data": dict, "metrics": dict, "state_dict": dict[str, Tensor], ...extra}

It is untrusted input: `load_checkpoint` uses `torch.load(weights_only=True)`, so a pickle that would
call a Python function (e.g. `os.system` through `__reduce__`) is refused, and every failure (missing,
truncated, corrupted, wrong layout) is a `CheckpointError` naming the file. `read_checkpoint_header`
(`header`, importable without torch) reads the same file memory-mapped for its metadata only
(method, β, task, topology, preset): the tensors are never read, so a model list of large checkpoints
costs milliseconds and builds no model.

Methods register a builder, `register_method("dtmr", builder)`, where `builder(checkpoint) -> Module`
constructs the (untrained) module from `checkpoint["config"]`, `["topology"]` and `["beta"]`;
`build_model_from_checkpoint` then loads the weights. Builders register when their module is
imported; the modules listed in `_PROVIDERS` are imported on the first lookup of an unknown method.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ...errors import CheckpointError
from ...io.atomic import atomic_write
from ...skeleton import get_topology

# the header half (layout, untrusted load, header) lives in `header`, which imports torch lazily
from .header import (  # noqa: F401 - re-exported: callers import them from here
    FORMAT,
    RECOGNIZER_METHOD,
    VERSION,
    CheckpointHeader,
    load_untrusted,
    read_checkpoint_header,
    validate_checkpoint,
)

Builder = Callable[[dict], nn.Module]
_BUILDERS: dict[str, Builder] = {}
#: Modules that call `register_method` when imported (a missing one is skipped).
_PROVIDERS = ("dtmr.models.dtmr", "dtmr.models.baselines", "dtmr.models.motion")


def register_method(name: str, builder: Builder) -> None:
    """Make `build_model_from_checkpoint` build checkpoints whose "method" is `name` with `builder`."""
    _BUILDERS[name] = builder


def _builder(method: str) -> Builder | None:
    if method not in _BUILDERS:
        for module in _PROVIDERS:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:
                if exc.name != module:
                    raise
    return _BUILDERS.get(method)


def registered_methods() -> list[str]:
    _builder("")  # import the providers
    return sorted(_BUILDERS)


# ---------------------------------------------------------------------------------------------- save

def _plain(value, where: str):
    """`value` with NumPy scalars/arrays and paths converted; anything else weights_only cannot load raises."""
    if value is None or isinstance(value, (bool, int, float, str, torch.Tensor)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return torch.from_numpy(np.ascontiguousarray(value))
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v, f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, (str, int)):
                raise TypeError(f"checkpoint {where}: key {k!r} is not a str or int")
            out[k] = _plain(v, f"{where}[{k!r}]")
        return out
    raise TypeError(f"checkpoint {where}: {type(value).__name__} cannot be stored in a weights-only checkpoint")


def _config_of(model: nn.Module) -> dict:
    if hasattr(model, "config_dict"):
        return model.config_dict()
    raise TypeError(f"{type(model).__name__} has no config_dict(); see dtmr.models.interface")


def save_checkpoint(path: str | Path, model: nn.Module, *, data: dict, metrics: dict,
                    extra: dict | None = None) -> Path:
    """Write `model` (any retargeter) as a checkpoint dict, atomically. Returns the path.

    `extra` adds top-level keys (e.g. the trainer's optimizer state); it may not replace the keys above.
    """
    beta = getattr(model, "beta", None)
    checkpoint = {
        "format": FORMAT,
        "version": VERSION,
        "method": str(model.method),
        "config": _plain(_config_of(model), "config"),
        "topology": get_topology(model.topology).name,
        "beta": None if beta is None else float(beta),
        "data": _plain(dict(data), "data"),
        "metrics": _plain(dict(metrics), "metrics"),
        "state_dict": {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()},
    }
    if extra:
        clash = sorted(set(extra) & set(checkpoint))
        if clash:
            raise ValueError(f"extra checkpoint keys would replace required ones: {', '.join(clash)}")
        checkpoint.update(_plain(dict(extra), "extra"))
    path = Path(path)
    with atomic_write(path) as tmp:
        torch.save(checkpoint, tmp)
    return path


# ---------------------------------------------------------------------------------------------- load

def load_checkpoint(path: str | Path, device: str | torch.device | None = None) -> dict:
    """Load and validate a checkpoint dict; tensors are mapped to `device` (CPU when None)."""
    checkpoint = load_untrusted(Path(path), device, mmap=False)
    validate_checkpoint(checkpoint, path)
    return checkpoint




def build_model_from_checkpoint(checkpoint: dict, *, source: str | Path | None = None) -> nn.Module:
    """The module of `checkpoint["method"]` with its weights loaded, in eval mode, prepared for inference.

    `source` names the file in error messages.
    """
    validate_checkpoint(checkpoint, source)
    method = checkpoint["method"]
    builder = _builder(method)
    if builder is None:
        raise CheckpointError(source, f"unknown method {method!r} (known: {', '.join(sorted(_BUILDERS))})")
    check_weights_finite(checkpoint["state_dict"], source)
    _check_config_sizes(checkpoint, source)
    try:
        model = builder(checkpoint)
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise CheckpointError(source, f"invalid {method} configuration: {exc}") from None
    if model.topology.name != checkpoint["topology"]:
        raise CheckpointError(source, f"config topology {model.topology.name} differs from the checkpoint's "
                                      f"{checkpoint['topology']}")
    try:
        model.load_state_dict(checkpoint["state_dict"], strict=True)
    except RuntimeError as exc:
        first = str(exc).splitlines()[1:2] or [str(exc)]
        raise CheckpointError(source, f"weights do not fit the {method} model: {first[0].strip()}") from None
    # imported here: the served modules import the baselines, whose package registers its builders with this one
    from ..serving.prepare import prepare_for_inference

    return prepare_for_inference(model.eval())


def check_weights_finite(state_dict: dict[str, torch.Tensor], source: str | Path | None = None) -> None:
    """CheckpointError naming the first floating-point tensor that holds a NaN or an infinity.

    A model with such weights runs, and returns NaN (or garbage) for every clip: it must not load."""
    for name, tensor in state_dict.items():
        if tensor.is_floating_point() or tensor.is_complex():
            if not bool(torch.isfinite(tensor).all()):
                raise CheckpointError(source, f"weight {name!r} holds NaN or infinite values; the checkpoint is "
                                              "damaged or its training diverged")


def _config_ints(value, where: str):
    """(where, int) for every integer in a config, lists included; keys naming a seed are not sizes."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield where, value
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _config_ints(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if "seed" not in str(key):
                yield from _config_ints(item, f"{where}.{key}" if where else str(key))


def _check_config_sizes(checkpoint: dict, source: str | Path | None) -> None:
    """Refuse a config asking for a size that no weight of the checkpoint has, before anything is built.

    Every width, class count, layer count and kernel of a model we build is a dimension of some weight (a
    Linear(d, ffn) stores an (ffn, d) matrix), and those weights are in the file: so a config integer larger
    than every dimension of the state dict (e.g. `decoder_ffn = 10**9`) describes a model the checkpoint cannot
    hold, and building it could exhaust the memory. Per-field bounds are the config classes' own checks.
    """
    dims = [d for t in checkpoint["state_dict"].values() for d in t.shape]
    largest = max(dims, default=0)
    for where, value in _config_ints(checkpoint["config"], ""):
        if value > largest:
            raise CheckpointError(source, f"config {where} = {value} is larger than any weight of the checkpoint "
                                          f"(largest dimension {largest}); refused before building the model")
