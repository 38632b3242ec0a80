"""Development fallback while no trained checkpoint is bundled: a freshly initialised small model.

Its output is meaningless (untrained weights), which is why every view that shows it says so. It keeps
the Studio usable end to end (views, export, self-test) before `resources/models/` is filled, and is
removed for release together with the fallback note in the self-test output.
"""

from __future__ import annotations

from typing import Any

FALLBACK_SEED = 0
FALLBACK_NOTE = ("DEVELOPMENT FALLBACK: no retargeting checkpoint, using a freshly initialised (untrained) "
                 "small DisentangledTMR, β = {beta:g}")


def fresh_small_anonymizer(topology: str, device: str | None) -> tuple[Any, str]:
    """(an `Anonymizer` over an untrained `small` DisentangledTMR on NTU-25, the note to show).

    NTU-25 whatever the clip's joint set: the Anonymizer maps other sets to it, as a bundled model would.
    """
    import torch

    from dtmr.models import Anonymizer, DisentangledTMR, DTMRConfig
    from dtmr.models.dtmr import DEFAULT_BETA

    torch.manual_seed(FALLBACK_SEED)
    model = DisentangledTMR(DTMRConfig.preset("small", "ntu25"), beta=DEFAULT_BETA)
    return Anonymizer(model, device=device), FALLBACK_NOTE.format(beta=DEFAULT_BETA)
