"""Checkpoint builders of the motion anonymizers, registered with `dtmr.models.checkpoint` on import.

These methods have no weights: their state dict holds what `dtmr fit-motion-model` fitted (the template bank,
and for k-same the pool), and each builder rebuilds the module around those tensors before the checkpoint
module loads them (strictly, so a file lacking one or holding another is refused).
"""

from __future__ import annotations

from ..checkpoint import register_method
from .ksame import KSameMotion
from .retime import RETIME_METHODS, Retimer
from .templates import TemplateBank

_POOL = ("pool", "pool_actions", "pool_subjects")


def _build_retimer(checkpoint: dict) -> Retimer:
    bank = TemplateBank.from_state_dict(checkpoint["topology"], checkpoint["state_dict"], "bank.")
    return Retimer(checkpoint["topology"], bank, naive=checkpoint["method"] == "retime-naive")


def _build_ksame(checkpoint: dict) -> KSameMotion:
    state, config = checkpoint["state_dict"], checkpoint["config"]
    if not all(name in state for name in _POOL):
        raise ValueError(f"the file holds no k-same pool ({', '.join(_POOL)})")
    bank = TemplateBank.from_state_dict(checkpoint["topology"], state, "bank.")
    return KSameMotion(checkpoint["topology"], bank, *(state[name] for name in _POOL), k=config.get("k"),
                       timing=config.get("timing", "source"))


for _method in RETIME_METHODS:
    register_method(_method, _build_retimer)
register_method("ksame", _build_ksame)
