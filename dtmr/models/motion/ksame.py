"""k-same motion (method "ksame"): the k-Same idea of face de-identification (Newton, Sweeney and Malin 2005)
applied to motion.

Each released clip is the time-aligned average of its source and k - 1 pool clips of the same action by k - 1
other subjects, then naively retargeted to the reference's bone lengths:

1. the action: the source's label when given and known to the pool, else the nearest action template
   (`templates.TemplateBank`, DTW on bone directions);
2. the partners: among the pool clips of that action, not of the source's subject when it is given, the
   nearest clip (DTW distance) of each of the k - 1 nearest distinct subjects;
3. the average: every partner warped by DTW onto the source's timing (`timing="source"`), or the source and
   every partner warped onto the action template's (`timing="template"`: k-same on the canonical tempo, which
   also removes the source's rhythm); then the mean of the k clips' joint positions (normalized space: each
   starts at the origin facing +x);
4. the body: `NaiveRetargeter(average, ref)` (bone directions of the average on the reference's lengths).

k = 1 is the naive retarget (source timing) or the re-timed naive retarget (template timing). The pool is a
set of normalized training clips with their action and subject labels, stored in the fitted file: that file
holds people's motion and must be kept like the raw data (docs/motion_anonymizers.md).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ...skeleton import Topology, get_topology
from ..baselines.naive import NaiveRetargeter
from ..baselines.retarget_inputs import check_retarget_inputs
from .dtw import bone_direction_features, pair_distances, warp_onto
from .templates import UNKNOWN, TemplateBank, check_clips, check_labels

#: what the k clips are aligned onto before averaging
TIMINGS = ("source", "template")
#: the settings of the k-same experiments (issue 19); any k >= 1 the pool allows works
KSAME_KS = (2, 3, 5, 8)


class KSameMotion(nn.Module):
    """A retargeter (docs/ARCHITECTURE.md) with β = 1; state: the template bank (`bank.*`) and the pool
    (`pool`, `pool_actions`, `pool_subjects`)."""

    method = "ksame"
    #: `Anonymizer` passes each source's subject label (`retarget(..., subjects=)`)
    takes_subjects = True
    #: ... and its action label where the library names it as the fitted file does
    takes_actions = True

    def __init__(self, topology: str | Topology, bank: TemplateBank, pool: torch.Tensor, pool_actions: torch.Tensor,
                 pool_subjects: torch.Tensor, k: int, timing: str = "source"):
        super().__init__()
        self.topology = get_topology(topology)
        self.beta = 1.0
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be an integer >= 1, got {k!r}")
        if timing not in TIMINGS:
            raise ValueError(f"timing must be one of {', '.join(TIMINGS)}, got {timing!r}")
        if bank.topology.name != self.topology.name:
            raise ValueError(f"templates of {bank.topology.name} clips cannot serve {self.topology.name} clips")
        check_clips("the pool", pool, self.topology)
        check_labels("pool actions", pool_actions, len(pool))
        check_labels("pool subjects", pool_subjects, len(pool))
        self.k, self.timing = k, timing
        self.bank = bank
        self.register_buffer("pool", pool.detach().float().clone())
        self.register_buffer("pool_actions", pool_actions.detach().long().clone())
        self.register_buffer("pool_subjects", pool_subjects.detach().long().clone())
        self._check_pool()
        self.naive = NaiveRetargeter(self.topology)

    def _check_pool(self) -> None:
        """The pool and the templates have the same actions, and each action k distinct known subjects, so that
        k - 1 partners exist for a source whatever its subject (one subject may be excluded)."""
        actions, subjects = self.pool_actions.cpu().numpy(), self.pool_subjects.cpu().numpy()
        if (subjects == UNKNOWN).any():
            raise ValueError("every pool clip needs a subject label")
        if set(actions.tolist()) != set(self.bank.actions.cpu().tolist()):
            raise ValueError(f"the pool's actions {sorted(set(actions.tolist()))} are not the templates' "
                             f"{sorted(self.bank.actions.cpu().tolist())}")
        for action in np.unique(actions):
            count = len(np.unique(subjects[actions == action]))
            if count < self.k:
                raise ValueError(f"k = {self.k} needs {self.k} subjects per action in the pool; action {action} "
                                 f"has {count}")

    def config_dict(self) -> dict:
        return {"k": self.k, "timing": self.timing}

    def partners(self, src: torch.Tensor, actions: torch.Tensor | None = None,
                 subjects: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, 64, J, 3) -> ((B, k-1) pool indices of each source's partners, (B,) template index of its action).

        `actions` and `subjects` (B,) are data-set labels, -1 where unknown: a known subject is never its own
        partner; an unknown one may be (nothing tells the pool's clips of that person apart)."""
        template = self.bank.choose(src, actions)
        if self.k == 1:
            return torch.empty(len(src), 0, dtype=torch.long, device=src.device), template
        action = self.bank.actions[template].cpu().numpy()
        subject = np.full(len(src), UNKNOWN) if subjects is None else subjects.cpu().numpy()
        pool_actions, pool_subjects = self.pool_actions.cpu().numpy(), self.pool_subjects.cpu().numpy()
        allowed = (pool_actions[None] == action[:, None]) & (pool_subjects[None] != subject[:, None])  # (B, N)
        pairs = np.argwhere(allowed)
        distance = np.full(allowed.shape, np.inf)
        distance[pairs[:, 0], pairs[:, 1]] = pair_distances(bone_direction_features(src, self.topology),
                                                            bone_direction_features(self.pool.to(src), self.topology),
                                                            pairs)
        chosen = np.empty((len(src), self.k - 1), dtype=np.int64)
        for b in range(len(src)):
            order = np.lexsort((np.arange(len(pool_subjects)), distance[b]))  # nearest first, ties by index
            order = order[np.isfinite(distance[b, order])]
            _, first = np.unique(pool_subjects[order], return_index=True)  # each subject's nearest clip
            chosen[b] = order[np.sort(first)[: self.k - 1]]  # the k - 1 nearest subjects
        return torch.from_numpy(chosen).to(src.device), template

    def average(self, src: torch.Tensor, actions: torch.Tensor | None = None,
                subjects: torch.Tensor | None = None) -> torch.Tensor:
        """(B, 64, J, 3) -> (B, 64, J, 3) the time-aligned mean of each source and its k - 1 partners."""
        partners, template = self.partners(src, actions, subjects)
        b, shape = len(src), src.shape[1:]
        others = self.pool[partners].to(src)  # (B, k-1, 64, J, 3)
        if self.timing == "source":  # the source is its own timing: only the partners are warped
            if self.k > 1:
                others = warp_onto(others.flatten(0, 1), src.repeat_interleave(self.k - 1, dim=0),
                                   self.topology).view(b, self.k - 1, *shape)
            clips = torch.cat([src[:, None], others], dim=1)
        else:
            timing = self.bank.templates[template].to(src).repeat_interleave(self.k, dim=0)
            clips = torch.cat([src[:, None], others], dim=1).flatten(0, 1)
            clips = warp_onto(clips, timing, self.topology).view(b, self.k, *shape)
        return clips.mean(dim=1)  # (B, k, 64, J, 3) -> (B, 64, J, 3)

    def forward(self, src: torch.Tensor, ref: torch.Tensor, actions: torch.Tensor | None = None,
                subjects: torch.Tensor | None = None) -> torch.Tensor:
        return self.naive(self.average(src, actions, subjects), ref)

    def retarget(self, src: torch.Tensor, ref: torch.Tensor, *, actions: torch.Tensor | None = None,
                 subjects: torch.Tensor | None = None) -> torch.Tensor:
        """(B, 64, J, 3) normalized source and reference -> (B, 64, J, 3). `Anonymizer` passes the subjects and
        the action labels the library shares with the fitted file; an action of -1 is the nearest template's,
        a subject of -1 is not excluded from the partners."""
        check_retarget_inputs(src, ref, self.topology)
        return self(src, ref, actions, subjects)
