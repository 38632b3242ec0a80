"""Lifter checkpoints: a plain dict saved with `torch.save`, loaded with `torch.load(weights_only=True)`.

    {"format": "dtmr-lifter", "version": 1, "config": LifterConfig fields, "input": "coco17 2-D pixels",
     "output": "coco17 3-D metres, level camera frame, hip midpoint at 0", "data": dict, "metrics": dict,
     "state_dict": dict[str, Tensor]}

Not a `dtmr-checkpoint`: a lifter is no retargeter, so it lives in `resources/models/lifters/`, a folder
the model catalogue (`dtmr.models.pairing.scan_checkpoints`, not recursive) does not list. Loading is
untrusted input: a pickle that would call code is refused, and every failure is a CheckpointError naming
the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ..errors import CheckpointError
from ..io.atomic import atomic_write
from ..models.checkpoints.checkpoint import check_weights_finite
from ..models.checkpoints.header import load_untrusted
from .model import LifterConfig, LifterNet

FORMAT = "dtmr-lifter"
VERSION = 1
INPUT = "coco17 2-D pixels"
OUTPUT = "coco17 3-D metres, level camera frame (y up), hip midpoint at 0"


def save_lifter(path: str | Path, net: LifterNet, *, data: dict, metrics: dict) -> Path:
    """Write `net` atomically as a lifter checkpoint. Returns the path."""
    checkpoint = {
        "format": FORMAT,
        "version": VERSION,
        "config": net.config.as_dict(),
        "input": INPUT,
        "output": OUTPUT,
        # a JSON round trip keeps only plain values, which weights_only loading accepts (TypeError otherwise)
        "data": json.loads(json.dumps(data)),
        "metrics": json.loads(json.dumps(metrics)),
        "state_dict": {k: v.detach().to("cpu", copy=True) for k, v in net.state_dict().items()},
    }
    path = Path(path)
    with atomic_write(path) as tmp:
        torch.save(checkpoint, tmp)
    return path


def read_lifter_checkpoint(path: str | Path) -> dict:
    """The validated checkpoint dict (CheckpointError naming the file otherwise)."""
    path = Path(path)
    checkpoint = load_untrusted(path, None, mmap=False)
    if not isinstance(checkpoint, dict) or checkpoint.get("format") != FORMAT:
        raise CheckpointError(path, f"not a lifter checkpoint (no format {FORMAT!r})")
    if checkpoint.get("version") != VERSION:
        raise CheckpointError(path, f"lifter checkpoint version {checkpoint.get('version')!r} is not {VERSION}")
    for key, kind in (("config", dict), ("state_dict", dict), ("data", dict), ("metrics", dict)):
        if not isinstance(checkpoint.get(key), kind):
            raise CheckpointError(path, f"lifter checkpoint field {key!r} is missing or not a {kind.__name__}")
    if not all(isinstance(v, torch.Tensor) for v in checkpoint["state_dict"].values()):
        raise CheckpointError(path, "lifter checkpoint state_dict holds something other than tensors")
    return checkpoint


def load_lifter(path: str | Path) -> LifterNet:
    """The lifter network of a checkpoint, in eval mode."""
    checkpoint = read_lifter_checkpoint(path)
    try:
        config = LifterConfig(**checkpoint["config"]).check()
    except (TypeError, ValueError) as exc:
        raise CheckpointError(path, f"invalid lifter configuration: {exc}") from None
    check_weights_finite(checkpoint["state_dict"], path)
    net = LifterNet(config)
    try:
        net.load_state_dict(checkpoint["state_dict"], strict=True)
    except RuntimeError as exc:
        first = str(exc).splitlines()[1:2] or [str(exc)]
        raise CheckpointError(path, f"weights do not fit the lifter: {first[0].strip()}") from None
    return net.eval()
