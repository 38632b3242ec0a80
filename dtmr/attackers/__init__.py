"""The audit's attackers, one module each, behind the `Attacker` interface (`base.py`).

`make_attacker(name, epochs, device)` builds an untrained one; `load_attacker(path)` reads a saved one of
any kind. Epochs apply to the neural attackers (the bone-length regression and the side channels'
nearest neighbours have none). `LEARNED` are the attackers of the motion whose probabilities the audit's
ensemble averages; `SIDE_CHANNELS` read what a file says besides the motion (side_channels.py).
"""

from __future__ import annotations

from pathlib import Path

import torch

from ..attacker_names import LEARNED, SIDE_CHANNELS
from ..errors import DtmrError
from .base import Attacker, read_attacker_file
from .bone_lengths import BoneLengthAttacker
from .gcn import GCNAttacker, GCNConfig
from .sgn import SGNAttacker
from .side_channels import CHANNELS, SideChannelAttacker
from .tcn import TCNAttacker, TCNConfig

ATTACKERS = {"sgn": SGNAttacker, "tcn": TCNAttacker, "stgcn": GCNAttacker, "bone-lengths": BoneLengthAttacker,
             **{name: SideChannelAttacker for name in SIDE_CHANNELS}}
#: default epochs: SGN's fixed schedule; for the TCN and the ST-GCN the most they train, stopping earlier when a
#: held-out part of their training clips stops improving (training.py; cost: docs/audit.md)
DEFAULT_EPOCHS = {"sgn": 3, "tcn": TCNConfig.epochs, "stgcn": GCNConfig.epochs, "bone-lengths": None,
                  **{name: None for name in SIDE_CHANNELS}}


def make_attacker(name: str, epochs: int | None = None, device: str | torch.device = "cpu") -> Attacker:
    if name not in ATTACKERS:
        raise DtmrError(f"unknown attacker {name!r} (known: {', '.join(ATTACKERS)})")
    epochs = epochs or DEFAULT_EPOCHS[name]
    if name == "sgn":
        return SGNAttacker(epochs, device)
    if name == "tcn":
        return TCNAttacker(TCNConfig(epochs=epochs), device)
    if name == "stgcn":
        return GCNAttacker(GCNConfig(epochs=epochs), device)
    if name in SIDE_CHANNELS:
        return SideChannelAttacker(name, device)
    return BoneLengthAttacker(device=device)


def attacker_family(name: str) -> str:
    """What kind of attacker `name` is, in words (the audit's tables)."""
    return CHANNELS[name][1] if name in SIDE_CHANNELS else ATTACKERS[name].family


def load_attacker(path: str | Path, device: str | torch.device = "cpu") -> Attacker:
    """Any saved attacker (its kind is in the file)."""
    name = read_attacker_file(path).get("attacker")
    if name not in ATTACKERS:
        raise DtmrError(f"{path}: unknown attacker {name!r}")
    return ATTACKERS[name].load(path, device)


__all__ = ["ATTACKERS", "Attacker", "BoneLengthAttacker", "DEFAULT_EPOCHS", "GCNAttacker", "LEARNED", "SGNAttacker",
           "SIDE_CHANNELS",
           "SideChannelAttacker", "TCNAttacker", "attacker_family", "load_attacker", "make_attacker"]
