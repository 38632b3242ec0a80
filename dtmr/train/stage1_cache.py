"""A cache of DisentangledTMR's stage 1, shared by the trainings of a sweep over β and the residual.

Stage 1 trains the two encoders and their heads against the identity adversary; the decoder is frozen and
no loss of the stage reads β or the residual (dtmr_trainer.GeneratorLoss). Every training of one seed with
the same data and settings therefore runs the same stage 1, bit for bit, whatever its β and residual (seen
in the issue-19 sweeps: the same stage-1 losses to the last digit). With `dtmr train --stage1-cache DIR`
the first such training stores the training state at the end of its stage 1 in DIR, and the others start
from it at stage 2, as a `--resume` at that point would: they end where a training from scratch ends,
bit for bit (tests/train/test_stage1_cache.py), about a quarter sooner.

The entry's name is a digest of everything stage 1 depends on: the run's settings but β and the residual,
the training clips and labels, the torch version, the thread count and the device type.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import torch

from ..errors import CheckpointError
from ..io.atomic import atomic_write
from ..models.checkpoints.header import load_untrusted
from .data import TrainingData

#: the settings stage 1 does not read: the run's β and the residual's model options
UNUSED_SETTINGS = ("beta",)
UNUSED_MODEL_OPTIONS = ("residual", "residual_k")
#: the model's parts whose weights stage 1 sets (or leaves as initialised); the rest (the residual's
#: templates and pool of clips) are the training's own
TRAINED_MODEL_PARTS = ("action_encoder", "identity_encoder", "decoder")


def stage1_key(run_config: dict, data: TrainingData, device: torch.device | str, world_size: int) -> str:
    """The digest naming the cache entry of a training with these settings, data and machine."""
    settings = {k: v for k, v in run_config.items() if k not in UNUSED_SETTINGS}
    settings["model_overrides"] = {k: v for k, v in settings.get("model_overrides", {}).items()
                                   if k not in UNUSED_MODEL_OPTIONS}
    settings.pop("data", None)  # the clips themselves are hashed below, wherever they were read from
    h = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    train = data.train
    for array in (train.joints, data.subject_classes(train.subjects), data.action_classes(train.actions),
                  train.fps):
        h.update(np.ascontiguousarray(array).tobytes())
    h.update(repr((torch.__version__, torch.get_num_threads(), torch.device(device).type, world_size)).encode())
    return h.hexdigest()[:32]


def entry_path(cache: str | Path, key: str) -> Path:
    return Path(cache) / f"stage1-{key}.pt"


def store(cache: str | Path, key: str, state: dict) -> Path:
    """Write the training state at the end of stage 1 (`EpochTrainer`'s state format) as the entry of `key`."""
    path = entry_path(cache, key)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as tmp:
        torch.save({**state, "stage1_key": key}, tmp)
    return path


def load(cache: str | Path, key: str, model_state: dict) -> dict | None:
    """The entry of `key` with its model weights put into `model_state` (this training's own, whose
    residual buffers it keeps), or None when the cache has none."""
    path = entry_path(cache, key)
    if not path.is_file():
        return None
    try:
        state = load_untrusted(path, "cpu", mmap=False, what="stage-1 cache entry")
    except CheckpointError as exc:
        raise CheckpointError(path, f"{exc.reason}; delete it to train stage 1 again") from None
    if not isinstance(state, dict) or state.get("stage1_key") != key or "trainer" not in state:
        raise CheckpointError(path, "not a stage-1 cache entry of this training; delete it to train stage 1 again")
    cached = state["trainer"]["model"]
    trained = {k: v for k, v in cached.items() if k.split(".")[0] in TRAINED_MODEL_PARTS}
    expected = {k for k in model_state if k.split(".")[0] in TRAINED_MODEL_PARTS}
    if set(trained) != expected:
        raise CheckpointError(path, "its model has other parts than this training's; delete it")
    state["trainer"] = {**state["trainer"], "model": {**model_state, **trained}}
    return state
