"""`dtmr train --init CHECKPOINT`: start a new training run from a checkpoint's weights (fine-tuning).

Weights only: the run keeps its own settings, data, output folder, optimizers, auxiliary heads and critics;
only the network's tensors are copied from the checkpoint. The parts a model derives from its training data
or its skeleton (the action templates of a re-timed residual, k-same's pool, the naive retargeter's tables:
`data_parts`) come from the new run, never from the checkpoint. The checkpoint must be of the run's method and topology
and hold a network of the same shape (the same preset and model options; for PMR the same numbers of
subjects and actions, whose classifiers it trains); otherwise one `CheckpointError` line says why.
"""

from __future__ import annotations

from pathlib import Path

from torch import nn

from ..errors import CheckpointError
from ..methods import display_name, is_method

def data_parts(model: nn.Module) -> set[str]:
    """The names of `model`'s submodules whose tensors come from the training data or the skeleton, not from
    training (the residual's motion parts): never copied from a checkpoint."""
    from ..models.baselines.naive import NaiveRetargeter
    from ..models.motion.ksame import KSameMotion
    from ..models.motion.retime import Retimer

    return {name for name, part in model.named_children() if isinstance(part, (NaiveRetargeter, KSameMotion, Retimer))}


def _name(method: str) -> str:
    return display_name(method) if is_method(method) else method


def load_initial_weights(model: nn.Module, path: str | Path, method: str, topology: str) -> int:
    """Copy the network tensors of checkpoint `path` into `model` (a `method` model on `topology`); returns
    how many tensors were copied."""
    from ..models.checkpoints.header import load_untrusted, read_checkpoint_header

    path = Path(path)
    header = read_checkpoint_header(path)
    if header.method.lower() != method:
        raise CheckpointError(path, f"a {_name(header.method.lower())} checkpoint cannot start a "
                                    f"{_name(method)} training (--init takes a checkpoint of the same method)")
    if header.topology != topology:
        raise CheckpointError(path, f"its skeleton is {header.topology}, this training's is {topology} "
                                    "(--init takes a checkpoint of the same topology)")
    weights = load_untrusted(path, "cpu", mmap=False)["state_dict"]
    own = model.state_dict()
    derived = data_parts(model)
    wanted = [k for k in own if k.split(".")[0] not in derived]
    differ = [k for k in wanted if k not in weights or tuple(weights[k].shape) != tuple(own[k].shape)]
    if differ:
        raise CheckpointError(path, f"its network is not this training's: {len(differ)} of {len(wanted)} tensors "
                                    f"are missing or of another shape (first: {differ[0]}); use the same preset "
                                    "and model options")
    model.load_state_dict({**own, **{k: weights[k] for k in wanted}})
    return len(wanted)
