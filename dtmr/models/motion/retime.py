"""Re-timing: the source's poses on the canonical timing of its action (methods "retime" and "retime-naive").

Each source is warped onto its action's template (`templates.TemplateBank`): dynamic time warping between the
two sequences of bone directions, then every template frame takes the mean of the source frames matched to it
(`dtw.warp_onto`). The poses, their amplitude and the path through them stay the source's; when each pose is
reached, how long it is held, the rhythm and the relative speed of the phases become the template's. The
"retime-naive" variant then puts the re-timed motion on the reference's bone lengths (the naive retarget,
`dtmr.skeleton.retarget`); "retime" keeps the source's body.

What re-timing cannot remove: the clip's duration (the release keeps the source's frame count, the Anonymizer
maps the 64-frame output back onto it), and everything a pose itself shows (posture, amplitude, how far the arm
goes). DTW only repeats or merges frames, so a pose sequence that skips a phase of the template stays without it.
"""

from __future__ import annotations

import torch
from torch import nn

from ...methods import RETIME, RETIME_NAIVE
from ...skeleton import Topology, get_topology
from ..baselines.naive import NaiveRetargeter
from ..baselines.retarget_inputs import check_retarget_inputs
from .dtw import warp_onto
from .templates import TemplateBank

RETIME_METHODS = (RETIME.name, RETIME_NAIVE.name)


class Retimer(nn.Module):
    """A retargeter (docs/ARCHITECTURE.md) with β = 1: `retarget(src, ref)` is the re-timed source, on the
    reference's bone lengths when `naive`. Its only state is the template bank (buffers `bank.*`)."""

    #: `Anonymizer` passes each source's action label where the library names it as the fitted file does
    takes_actions = True

    def __init__(self, topology: str | Topology, bank: TemplateBank, naive: bool):
        super().__init__()
        self.topology = get_topology(topology)
        if bank.topology.name != self.topology.name:
            raise ValueError(f"templates of {bank.topology.name} clips cannot re-time {self.topology.name} clips")
        self.beta = 1.0
        self.method = RETIME_METHODS[int(bool(naive))]
        self.bank = bank
        self.naive = NaiveRetargeter(self.topology) if naive else None

    def config_dict(self) -> dict:
        return {}

    def retime(self, src: torch.Tensor, actions: torch.Tensor | None = None) -> torch.Tensor:
        """(B, 64, J, 3) -> (B, 64, J, 3) the source's poses on its template's timing; `actions` (B,) labels
        choose the template where known (-1: the nearest template, `TemplateBank.choose`)."""
        return warp_onto(src, self.bank.templates[self.bank.choose(src, actions)].to(src), self.topology)

    def forward(self, src: torch.Tensor, ref: torch.Tensor, actions: torch.Tensor | None = None) -> torch.Tensor:
        retimed = self.retime(src, actions)
        return retimed if self.naive is None else self.naive(retimed, ref)

    def retarget(self, src: torch.Tensor, ref: torch.Tensor, *, actions: torch.Tensor | None = None) -> torch.Tensor:
        """(B, 64, J, 3) normalized source and reference -> (B, 64, J, 3); a source whose action is -1 or not
        given gets the nearest template (`Anonymizer` passes the labels the library shares with the fitted
        file, `dtmr.data.label_set.shared_action_labels`)."""
        check_retarget_inputs(src, ref, self.topology)
        return self(src, ref, actions)
