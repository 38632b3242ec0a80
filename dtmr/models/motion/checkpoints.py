"""Checkpoint builders of the motion anonymizers, registered with `dtmr.models.checkpoints.checkpoint` on import.

These methods learn nothing: their state dict holds what `dtmr fit-motion-model` fitted (the template bank,
and for k-same the pool, with an action embedder also its weights and the pool's embeddings), and each
builder rebuilds the module around those tensors before the checkpoint module loads them (strictly, so a file
lacking one or holding another is refused).
"""

from __future__ import annotations

from ...methods import KSAME, RETIME_NAIVE
from ..checkpoints.checkpoint import register_method
from ..recognizers import Recognizer
from .ksame import KSameMotion
from .retime import RETIME_METHODS, Retimer
from .templates import TemplateBank

_POOL = ("pool", "pool_actions", "pool_subjects")


def _build_retimer(checkpoint: dict) -> Retimer:
    bank = TemplateBank.from_state_dict(checkpoint["topology"], checkpoint["state_dict"], "bank.")
    return Retimer(checkpoint["topology"], bank, naive=checkpoint["method"] == RETIME_NAIVE.name)


def _build_ksame(checkpoint: dict) -> KSameMotion:
    state, config = checkpoint["state_dict"], checkpoint["config"]
    if not all(name in state for name in _POOL):
        raise ValueError(f"the file holds no k-same pool ({', '.join(_POOL)})")
    bank = TemplateBank.from_state_dict(checkpoint["topology"], state, "bank.")
    embedder, embeddings = None, None
    if "embedder" in config:  # its weights are loaded with the rest of the state dict
        e = config["embedder"]
        embedder = Recognizer.create("action", e["labels"], e["class_names"], checkpoint["topology"], e["seg"])
        if "pool_embeddings" not in state:
            raise ValueError("the file names an embedder but holds no pool embeddings")
        embeddings = state["pool_embeddings"]
    return KSameMotion(checkpoint["topology"], bank, *(state[name] for name in _POOL), k=config.get("k"),
                       timing=config.get("timing", "source"), embedder=embedder, pool_embeddings=embeddings,
                       partners=config.get("partners", "nearest"))


for _method in RETIME_METHODS:
    register_method(_method, _build_retimer)
register_method(KSAME.name, _build_ksame)
