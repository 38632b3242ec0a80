"""The audit's attackers, one module each, behind the `Attacker` interface (`base.py`).

`make_attacker(name, epochs, device)` builds an untrained one; `load_attacker(path)` reads a saved one of
any kind. Epochs apply to the neural attackers (the bone-length regression has none).
"""

from __future__ import annotations

from pathlib import Path

import torch

from ...errors import DtmrError
from .base import Attacker, read_attacker_file
from .bone_lengths import BoneLengthAttacker
from .sgn import SGNAttacker
from .tcn import TCNAttacker, TCNConfig

ATTACKERS = {"sgn": SGNAttacker, "tcn": TCNAttacker, "bone-lengths": BoneLengthAttacker}
#: default epochs (docs/audit.md: a 3-fold audit of one N-UCLA release in ~10 min on one core, cached)
DEFAULT_EPOCHS = {"sgn": 3, "tcn": 20, "bone-lengths": None}


def make_attacker(name: str, epochs: int | None = None, device: str | torch.device = "cpu") -> Attacker:
    if name not in ATTACKERS:
        raise DtmrError(f"unknown attacker {name!r} (known: {', '.join(ATTACKERS)})")
    epochs = epochs or DEFAULT_EPOCHS[name]
    if name == "sgn":
        return SGNAttacker(epochs, device)
    if name == "tcn":
        return TCNAttacker(TCNConfig(epochs=epochs), device)
    return BoneLengthAttacker(device=device)


def load_attacker(path: str | Path, device: str | torch.device = "cpu") -> Attacker:
    """Any saved attacker (its kind is in the file)."""
    name = read_attacker_file(path).get("attacker")
    if name not in ATTACKERS:
        raise DtmrError(f"{path}: unknown attacker {name!r}")
    return ATTACKERS[name].load(path, device)


__all__ = ["ATTACKERS", "Attacker", "BoneLengthAttacker", "DEFAULT_EPOCHS", "SGNAttacker", "TCNAttacker",
           "load_attacker", "make_attacker"]
