"""Action templates: one medoid clip per action of a training split, and the choice of a template for a clip.

The template of an action is its **medoid** under DTW on bone directions (`dtw.pair_distances`): the training
clip whose summed distance to the other clips of the action is smallest. A medoid is a real performance, so its
timing is one a person produced (a mean of warped clips would have the medoid's timing anyway, only blurred);
it is also one training subject's, which is why templates are fitted on a split's training half and never on
the people a release is made from.

A clip's template is its action's when the clip's action label is known to the bank, otherwise the template
nearest to it in DTW distance: a nearest-medoid action classifier without any trained network, whose accuracy
`nearest_template_accuracy` measures on labelled clips.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ...skeleton import MODEL_FRAMES, Topology, get_topology
from .dtw import bone_direction_features, pair_distances

#: an action or subject label that is not known
UNKNOWN = -1
#: an action's medoid is searched among at most this many of its clips (evenly spaced in data order), so that a
#: fit costs at most 128·127/2 DTWs per action whatever the data set's size (N-UCLA's split trains on about 100
#: clips per action, all candidates; UI-PRMD's on 140, thinned to 128)
MEDOID_CANDIDATES = 128


def check_clips(name: str, clips: torch.Tensor, topology: Topology) -> None:
    """ValueError unless `clips` is a non-empty, finite (N, 64, J, 3) batch of the topology's joints."""
    if clips.ndim != 4 or tuple(clips.shape[1:]) != (MODEL_FRAMES, topology.num_joints, 3) or len(clips) == 0:
        raise ValueError(f"{name} must be (N >= 1, {MODEL_FRAMES}, {topology.num_joints}, 3) for {topology.name}, "
                         f"got {tuple(clips.shape)}")
    if not clips.is_floating_point() or not bool(torch.isfinite(clips).all()):
        raise ValueError(f"{name} must hold finite floating-point coordinates")


def check_labels(name: str, labels: torch.Tensor, count: int) -> None:
    if labels.ndim != 1 or len(labels) != count or labels.is_floating_point() or labels.is_complex():
        raise ValueError(f"{name} must be {count} integer labels, got {labels.dtype} {tuple(labels.shape)}")


def medoids(joints: torch.Tensor, actions: np.ndarray, topology: Topology) -> tuple[np.ndarray, np.ndarray]:
    """(N, 64, J, 3) clips and their (N,) action labels -> (sorted action labels (A,), index of each action's
    medoid clip (A,)). Ties go to the lower index. Costs n(n-1)/2 DTWs for an action of n clips (n at most
    `MEDOID_CANDIDATES`)."""
    features = bone_direction_features(joints, topology)
    labels = np.unique(actions)
    chosen = np.empty(len(labels), dtype=np.int64)
    for a, label in enumerate(labels):
        members = np.flatnonzero(actions == label)
        if len(members) > MEDOID_CANDIDATES:
            members = members[np.linspace(0, len(members) - 1, MEDOID_CANDIDATES).round().astype(np.int64)]
        i, j = np.triu_indices(len(members), k=1)
        dist = pair_distances(features, features, np.stack([members[i], members[j]], axis=1))
        total = np.zeros(len(members))
        np.add.at(total, i, dist)
        np.add.at(total, j, dist)
        chosen[a] = members[int(np.argmin(total))]
    return labels, chosen


class TemplateBank(nn.Module):
    """One (64, J, 3) normalized template per action (buffers `templates` (A, 64, J, 3) and `actions` (A,),
    the data set's action labels), saved with whatever method holds the bank."""

    def __init__(self, topology: str | Topology, templates: torch.Tensor, actions: torch.Tensor):
        super().__init__()
        self.topology = get_topology(topology)
        check_clips("templates", templates, self.topology)
        check_labels("template actions", actions, len(templates))
        if len(torch.unique(actions)) != len(actions):
            raise ValueError("template actions must be distinct (one template per action)")
        self.register_buffer("templates", templates.detach().float().clone())
        self.register_buffer("actions", actions.detach().long().clone())

    @classmethod
    def fit(cls, topology: str | Topology, joints: np.ndarray, actions: np.ndarray) -> TemplateBank:
        """The medoid of every action among (N, 64, J, 3) normalized clips with (N,) action labels."""
        topo = get_topology(topology)
        clips = torch.as_tensor(np.asarray(joints, dtype=np.float32))
        check_clips("training clips", clips, topo)
        actions = np.asarray(actions, dtype=np.int64)
        if actions.shape != (len(clips),) or (actions == UNKNOWN).any():
            raise ValueError("every training clip needs an action label")
        labels, chosen = medoids(clips, actions, topo)
        return cls(topo, clips[chosen], torch.from_numpy(labels))

    @classmethod
    def from_state_dict(cls, topology: str | Topology, state_dict: dict, prefix: str) -> TemplateBank:
        """The bank saved under `prefix` in a checkpoint's state dict (ValueError when it holds none)."""
        names = (f"{prefix}templates", f"{prefix}actions")
        if not all(name in state_dict for name in names):
            raise ValueError(f"the file holds no action templates ({' and '.join(names)})")
        return cls(topology, *(state_dict[name] for name in names))

    def nearest(self, src: torch.Tensor) -> torch.Tensor:
        """(B, 64, J, 3) -> (B,) index of the template nearest to each clip in DTW distance."""
        b, a = len(src), len(self.templates)
        pairs = np.stack(np.meshgrid(np.arange(b), np.arange(a), indexing="ij"), axis=-1).reshape(-1, 2)
        dist = pair_distances(bone_direction_features(src, self.topology),
                              bone_direction_features(self.templates.to(src), self.topology), pairs)
        return torch.from_numpy(dist.reshape(b, a).argmin(axis=1)).to(src.device)

    def choose(self, src: torch.Tensor, actions: torch.Tensor | None = None) -> torch.Tensor:
        """(B,) template index per clip: its action's when `actions` (B,) gives a label the bank knows
        (UNKNOWN = -1 or a label without template: the nearest template), else the nearest."""
        if actions is None:
            return self.nearest(src)
        match = actions.to(self.actions.device)[:, None] == self.actions[None, :]  # (B, A)
        known = match.any(dim=1)
        index = match.long().argmax(dim=1)
        if not bool(known.all()):
            index[~known] = self.nearest(src[~known.to(src.device)]).to(index.device)
        return index.to(src.device)


def nearest_template_accuracy(bank: TemplateBank, joints: np.ndarray, actions: np.ndarray,
                              batch: int = 256) -> float:
    """Percentage of (N, 64, J, 3) labelled clips whose nearest template is their action's."""
    right = 0
    for start in range(0, len(joints), batch):
        clips = torch.as_tensor(np.asarray(joints[start:start + batch], dtype=np.float32))
        predicted = bank.actions[bank.nearest(clips)].numpy()
        right += int((predicted == np.asarray(actions[start:start + batch])).sum())
    return 100.0 * right / max(len(joints), 1)
