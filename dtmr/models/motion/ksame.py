"""k-same motion (method "ksame"): the k-Same idea of face de-identification (Newton, Sweeney and Malin 2005)
applied to motion.

Each released clip is the time-aligned average of its source and k - 1 pool clips of the same action by k - 1
other subjects, then naively retargeted to the reference's bone lengths:

1. the action: the source's label when given and known to the pool, else the nearest action template
   (`templates.TemplateBank`, DTW on bone directions);
2. the partners: among the pool clips of that action, not of the source's subject when it is given, the
   nearest clip (DTW distance) of each of the k - 1 nearest distinct subjects. A source without a known
   action, when the file holds an action recognizer (`embedder`, fitted with `--embedder`), takes instead
   the nearest pool clips in that recognizer's embedding (cosine distance), one per subject, of the k - 1
   nearest other subjects, whatever their action, and the action of the nearest of them (its template, for
   the template timing): the nearest template names N-UCLA's actions for a third of its test clips, and
   averaging with another action destroys the action (docs/notebook/experiments.md, "k-same on an unlabelled library").
   With `partners="cluster"` the candidates are further limited to the source's cluster: the pool's subjects,
   in label order, cut into fixed groups of k (the last takes the remainder, so groups hold k to 2k - 1
   people), as k-Same clusters faces; a subject the pool does not hold (or an unknown one) has no cluster and
   takes the nearest subjects as above. Why: nearest partners are chosen relative to the source, so who they
   are is itself a fingerprint (on UI-PRMD's 10 subjects k = 8 still leaves 3.8x chance); within a cluster
   every release is a mean over the same people. With `partners="cluster-mean"` (k-Same proper, on the
   template's timing only) the source's own clip is not in its release at all: every member of the cluster
   contributes its pool clip of the action nearest to the action template (the source's subject too), so
   every release of one cluster and action is the same clip, whoever performed it; a subject the pool does
   not hold, or an unknown one, takes the cluster of the subject of the nearest pool clip of the action.
   What it costs and guarantees: docs/motion_anonymizers.md;
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

from ...data.clip import Clip
from ...methods import KSAME
from ...skeleton import Topology, get_topology
from ..baselines.naive import NaiveRetargeter
from ..baselines.retarget_inputs import check_retarget_inputs
from ..recognizers import Recognizer
from ..recognizers.sgn import DIM
from .dtw import bone_direction_features, pair_distances, warp_onto
from .templates import UNKNOWN, TemplateBank, check_clips, check_labels

#: what the k clips are aligned onto before averaging
TIMINGS = ("source", "template")
#: how the partners' subjects are chosen: the nearest to the source, the other members of its fixed cluster,
#: or the whole cluster in place of the source (its release is the cluster's mean for the action)
PARTNERS = ("nearest", "cluster", "cluster-mean")
#: a padding entry of `partners()` rows (cluster means have as many partners as their cluster has members)
NO_PARTNER = -1
#: width of an action recognizer's clip embedding (`Recognizer.embed`)
EMBEDDING_DIM = 2 * DIM
#: the settings of the k-same experiments (issue 19); any k >= 1 the pool allows works
KSAME_KS = (2, 3, 5, 8)


class KSameMotion(nn.Module):
    """A retargeter (docs/ARCHITECTURE.md) with β = 1; state: the template bank (`bank.*`) and the pool
    (`pool`, `pool_actions`, `pool_subjects`), with an embedder also its weights (`embedder.*`) and the pool's
    embeddings (`pool_embeddings`, computed once when the model is built without them)."""

    method = KSAME.name
    #: `Anonymizer` passes each source's subject label (`retarget(..., subjects=)`)
    takes_subjects = True
    #: ... and its action label where the library names it as the fitted file does
    takes_actions = True

    def __init__(self, topology: str | Topology, bank: TemplateBank, pool: torch.Tensor, pool_actions: torch.Tensor,
                 pool_subjects: torch.Tensor, k: int, timing: str = "source", embedder: Recognizer | None = None,
                 pool_embeddings: torch.Tensor | None = None, partners: str = "nearest"):
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
        if partners not in PARTNERS:
            raise ValueError(f"partners must be one of {', '.join(PARTNERS)}, got {partners!r}")
        if partners == "cluster-mean" and timing != "template":
            raise ValueError("cluster-mean partners average on the action template's timing: use timing 'template'")
        if partners == "cluster-mean" and embedder is not None:
            raise ValueError("cluster means take the action from the label or the nearest template, not an embedder")
        self.k, self.timing, self.partner_choice = k, timing, partners
        self.bank = bank
        self.register_buffer("pool", pool.detach().float().clone())
        self.register_buffer("pool_actions", pool_actions.detach().long().clone())
        self.register_buffer("pool_subjects", pool_subjects.detach().long().clone())
        self._check_pool()
        self.cluster_of = subject_clusters(self.pool_subjects.cpu().numpy(), k) if partners != "nearest" else {}
        self._check_clusters()
        self._cluster_means: dict[tuple[int, int], tuple[np.ndarray, torch.Tensor]] = {}
        self.naive = NaiveRetargeter(self.topology)
        self.embedder = embedder
        if embedder is not None:
            if embedder.task != "action" or embedder.topology.name != self.topology.name:
                raise ValueError(f"the embedder must be an action recognizer of {self.topology.name} clips, got a "
                                 f"{embedder.task} recognizer of {embedder.topology.name} clips")
            if pool_embeddings is None:
                pool_embeddings = torch.from_numpy(self._embed(self.pool))
            if tuple(pool_embeddings.shape) != (len(self.pool), EMBEDDING_DIM):
                raise ValueError(f"pool embeddings must be ({len(self.pool)}, {EMBEDDING_DIM}), got "
                                 f"{tuple(pool_embeddings.shape)}")
            self.register_buffer("pool_embeddings", pool_embeddings.detach().float().clone())
        elif pool_embeddings is not None:
            raise ValueError("pool embeddings without the embedder that made them")

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

    def _check_clusters(self) -> None:
        """With cluster partners, each cluster has k subjects with clips of every action, so that k - 1
        partners exist for any member's source."""
        actions, subjects = self.pool_actions.cpu().numpy(), self.pool_subjects.cpu().numpy()
        for members in {tuple(m.tolist()) for m in self.cluster_of.values()}:
            for action in np.unique(actions):
                count = len(np.unique(subjects[(actions == action) & np.isin(subjects, members)]))
                if count < self.k:
                    raise ValueError(f"cluster partners with k = {self.k}: the cluster of subjects "
                                     f"{', '.join(map(str, members))} has {count} with clips of action {action}")

    def config_dict(self) -> dict:
        config: dict = {"k": self.k, "timing": self.timing}
        if self.partner_choice != "nearest":
            config["partners"] = self.partner_choice
        if self.embedder is not None:
            e = self.embedder
            config["embedder"] = {"labels": list(e.labels), "class_names": list(e.class_names),
                                  **e.config_dict()}
        return config

    def _embed(self, clips: torch.Tensor) -> np.ndarray:
        """(N, 64, J, 3) normalized clips -> (N, 512) unit-length embeddings (the recognizer's fixed draws)."""
        batch = [Clip(joints=c, topology=self.topology.name) for c in clips.detach().cpu().numpy()]
        vectors = self.embedder.embed(batch)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def _known_actions(self, actions: torch.Tensor | None, count: int) -> np.ndarray:
        """(B,) True where a source's action label is one the pool has."""
        if actions is None:
            return np.zeros(count, dtype=bool)
        return np.isin(actions.cpu().numpy(), self.bank.actions.cpu().numpy())

    def _embedding_partners(self, src: torch.Tensor, subject: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Unlabelled sources: ((B, k-1) partners, (B,) template index), from the nearest pool clips in the
        embedding, one per subject, of the nearest other subjects; the template is the nearest one's action's."""
        distance = 1.0 - self._embed(src) @ self.pool_embeddings.cpu().numpy().T  # (B, N) cosine distance
        pool_subjects, pool_actions = self.pool_subjects.cpu().numpy(), self.pool_actions.cpu().numpy()
        distance[~self._candidate_subjects(subject)] = np.inf
        template_of = {int(a): i for i, a in enumerate(self.bank.actions.cpu().tolist())}
        chosen = np.empty((len(src), self.k - 1), dtype=np.int64)
        template = np.empty(len(src), dtype=np.int64)
        for b in range(len(src)):
            nearest = _nearest_per_subject(distance[b], pool_subjects, max(self.k - 1, 1))
            chosen[b] = nearest[: self.k - 1]
            template[b] = template_of[int(pool_actions[nearest[0]])]
        return chosen, template

    def partners(self, src: torch.Tensor, actions: torch.Tensor | None = None,
                 subjects: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, 64, J, 3) -> ((B, k-1) pool indices of each source's partners, (B,) template index of its action).

        `actions` and `subjects` (B,) are data-set labels, -1 where unknown: a known subject is never its own
        partner; an unknown one may be (nothing tells the pool's clips of that person apart). With an embedder,
        sources without a known action take their partners and action from the embedding."""
        subject = np.full(len(src), UNKNOWN) if subjects is None else subjects.cpu().numpy()
        if self.partner_choice == "cluster-mean":
            return self._cluster_mean_partners(src, actions, subject)
        chosen = np.empty((len(src), self.k - 1), dtype=np.int64)
        by_embedding = ~self._known_actions(actions, len(src)) if self.embedder is not None \
            else np.zeros(len(src), dtype=bool)
        template = torch.empty(len(src), dtype=torch.long, device=src.device)
        if by_embedding.any():
            rows = torch.from_numpy(np.flatnonzero(by_embedding)).to(src.device)
            partners, templates = self._embedding_partners(src[rows], subject[by_embedding])
            chosen[by_embedding] = partners
            template[rows] = torch.from_numpy(templates).to(src.device)
        rest = torch.from_numpy(np.flatnonzero(~by_embedding)).to(src.device)
        if len(rest):
            template[rest] = self.bank.choose(src[rest], None if actions is None else actions[rest.to(actions.device)])
        if self.k > 1 and len(rest):
            chosen[~by_embedding] = self._dtw_partners(src[rest], self.bank.actions[template[rest]].cpu().numpy(),
                                                       subject[~by_embedding])
        return torch.from_numpy(chosen).to(src.device), template

    def _cluster_mean_partners(self, src: torch.Tensor, actions: torch.Tensor | None,
                               subject: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """Cluster means: ((B, 2k-1) the pool clips of each release's cluster mean but its own subject's, padded
        with NO_PARTNER, (B,) template index)."""
        template = self.bank.choose(src, actions)
        action = self.bank.actions[template].cpu().numpy()
        pool_subjects = self.pool_subjects.cpu().numpy()
        chosen = np.full((len(src), 2 * self.k - 1), NO_PARTNER, dtype=np.int64)
        for b, cluster in enumerate(self._clusters(src, action, subject)):
            clips = self._cluster_mean(cluster, int(template[b]))[0]
            others = clips[pool_subjects[clips] != subject[b]]
            chosen[b, :len(others)] = others
        return torch.from_numpy(chosen).to(src.device), template

    def _clusters(self, src: torch.Tensor, action: np.ndarray, subject: np.ndarray) -> list[int]:
        """Each source's cluster (by its first member): its subject's, or for a subject without one the cluster
        of the subject of the nearest pool clip (DTW) of the source's action."""
        lost = np.flatnonzero([int(s) not in self.cluster_of for s in subject])
        nearest = {}
        if lost.size:
            pool_actions, pool_subjects = self.pool_actions.cpu().numpy(), self.pool_subjects.cpu().numpy()
            allowed = pool_actions[None] == action[lost, None]  # (L, N)
            pairs = np.argwhere(allowed)
            distance = np.full(allowed.shape, np.inf)
            distance[pairs[:, 0], pairs[:, 1]] = pair_distances(
                bone_direction_features(src[torch.from_numpy(lost).to(src.device)], self.topology),
                bone_direction_features(self.pool.to(src), self.topology), pairs)
            nearest = {int(b): int(pool_subjects[np.argmin(distance[n])]) for n, b in enumerate(lost)}
        return [int(self.cluster_of[nearest.get(b, int(s))][0]) for b, s in enumerate(subject)]

    def _cluster_mean(self, cluster: int, template: int) -> tuple[np.ndarray, torch.Tensor]:
        """(pool indices, (64, J, 3) their mean on the template's timing) of one cluster and action: each
        member's clip of the action nearest (DTW) to the template. Computed once per pair and kept."""
        key = (cluster, template)
        if key not in self._cluster_means:
            pool_actions, pool_subjects = self.pool_actions.cpu().numpy(), self.pool_subjects.cpu().numpy()
            timing = self.bank.templates[template : template + 1].to(self.pool)
            candidates = np.flatnonzero((pool_actions == int(self.bank.actions[template]))
                                        & np.isin(pool_subjects, self.cluster_of[cluster]))
            distance = pair_distances(bone_direction_features(timing, self.topology),
                                      bone_direction_features(self.pool[torch.from_numpy(candidates).to(
                                          self.pool.device)], self.topology),
                                      np.stack([np.zeros(len(candidates), dtype=np.int64),
                                                np.arange(len(candidates))], axis=1))
            clips = np.sort(candidates[_nearest_per_subject(distance, pool_subjects[candidates],
                                                            len(self.cluster_of[cluster]))])
            members = self.pool[torch.from_numpy(clips).to(self.pool.device)]
            warped = warp_onto(members, timing.expand(len(clips), -1, -1, -1), self.topology)
            self._cluster_means[key] = clips, warped.mean(dim=0)
        return self._cluster_means[key]

    def _candidate_subjects(self, subject: np.ndarray) -> np.ndarray:
        """(B, N): which pool clips' subjects may be partners of each source's subject (-1 unknown): anyone
        else, or with cluster partners the other members of its cluster."""
        pool_subjects = self.pool_subjects.cpu().numpy()
        allowed = pool_subjects[None] != subject[:, None]
        for b, s in enumerate(subject.tolist()):
            if s in self.cluster_of:
                allowed[b] &= np.isin(pool_subjects, self.cluster_of[s])
        return allowed

    def _dtw_partners(self, src: torch.Tensor, action: np.ndarray, subject: np.ndarray) -> np.ndarray:
        """(B, k-1): among the pool clips of each source's action by its candidate partners
        (`_candidate_subjects`), the nearest clip (DTW) of each of the k - 1 nearest subjects."""
        pool_actions, pool_subjects = self.pool_actions.cpu().numpy(), self.pool_subjects.cpu().numpy()
        allowed = (pool_actions[None] == action[:, None]) & self._candidate_subjects(subject)  # (B, N)
        pairs = np.argwhere(allowed)
        distance = np.full(allowed.shape, np.inf)
        distance[pairs[:, 0], pairs[:, 1]] = pair_distances(bone_direction_features(src, self.topology),
                                                            bone_direction_features(self.pool.to(src), self.topology),
                                                            pairs)
        return np.stack([_nearest_per_subject(distance[b], pool_subjects, self.k - 1) for b in range(len(src))])

    def average(self, src: torch.Tensor, actions: torch.Tensor | None = None,
                subjects: torch.Tensor | None = None) -> torch.Tensor:
        """(B, 64, J, 3) -> (B, 64, J, 3) the time-aligned mean of each source and its k - 1 partners (with
        cluster means: its cluster's mean for its action)."""
        if self.partner_choice == "cluster-mean":
            subject = np.full(len(src), UNKNOWN) if subjects is None else subjects.cpu().numpy()
            template = self.bank.choose(src, actions)
            clusters = self._clusters(src, self.bank.actions[template].cpu().numpy(), subject)
            return torch.stack([self._cluster_mean(c, t)[1] for c, t in zip(clusters, template.tolist())]).to(src)
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


def subject_clusters(subjects: np.ndarray, k: int) -> dict[int, np.ndarray]:
    """Each subject label -> the labels of its cluster: the distinct labels in order, cut into groups of k, the
    remainder (fewer than k) joined to the last group."""
    labels = np.unique(subjects)
    groups = max(len(labels) // k, 1)
    index = np.minimum(np.arange(len(labels)) // k, groups - 1)
    return {int(label): labels[index == index[i]] for i, label in enumerate(labels)}


def _nearest_per_subject(distance: np.ndarray, subjects: np.ndarray, count: int) -> np.ndarray:
    """The nearest clip of each of the `count` nearest subjects (finite distances only; ties by clip index),
    nearest subject first."""
    order = np.lexsort((np.arange(len(subjects)), distance))  # nearest first, ties by index
    order = order[np.isfinite(distance[order])]
    _, first = np.unique(subjects[order], return_index=True)  # each subject's nearest clip
    return order[np.sort(first)[:count]]


def nearest_embedding_accuracy(model: KSameMotion, joints: np.ndarray, actions: np.ndarray, batch: int = 256) -> float:
    """Percentage of (N, 64, J, 3) labelled clips whose nearest pool clip in `model`'s embedding (the action an
    unlabelled source is averaged under, with every pool subject allowed) has their action."""
    right = 0
    pool, pool_actions = model.pool_embeddings.cpu().numpy(), model.pool_actions.cpu().numpy()
    for start in range(0, len(joints), batch):
        vectors = model._embed(torch.as_tensor(np.asarray(joints[start:start + batch], dtype=np.float32)))
        predicted = pool_actions[np.argmax(vectors @ pool.T, axis=1)]
        right += int((predicted == np.asarray(actions[start:start + batch])).sum())
    return 100.0 * right / max(len(joints), 1)
