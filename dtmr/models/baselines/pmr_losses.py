"""The DMR/PMR training losses (SPEC_NOTES §2.4), with the public code's defects fixed by default.

Every function takes tensors in the library's layout, clips (B, T, J, 3) and codes (B, C, L).
`faithful=True` reproduces the public formulas; the default fixes them (docs/baselines.md):

* reconstruction: public = squared norm along *time*, mean over batch and coordinates (T x the MSE);
  default = per-element MSE;
* end-effector: public = squared speed error summed over time and end-effectors; default = mean;
* smoothness: public = sqrt(sum_b,t |d_t - d^_t|) / (B*T) with d_t = (sum over coordinates of
  y_t - y_t+1)^2, whose signed sums cancel; default = MSE of the frame-to-frame velocities;
* classification: public = `CrossEntropyLoss` on softmax outputs (a second softmax); default = CE on logits;
* encoder side of an adversary: public = minus that cross-entropy; default = KL(p_adv || uniform), as
  DisentangledTMR's adversary (minus CE on logits would be unbounded below).

The paired-label defect of the public code (SPEC_NOTES §2.6: `loss_paired` scores dec(E_M(x[P1,A1]),
E_P(x[P2,A2])) against x[P1,A2]) is fixed in both modes: the cross target is x[P2,A1]. Quadruplets are
ordered [(P1,A1), (P1,A2), (P2,A1), (P2,A2)], i.e. item 2p + a has subject p and action a.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ...skeleton import Topology
from .pmr import CRITIC_ROLES, PMR, RetargetingAutoencoder


@dataclass(frozen=True)
class LossWeights:
    """The public code's weights (identical in every version but the privacy alpha, 0.1 in the final runs)."""

    reconstruction: float = 2.0
    cross: float = 0.1
    end_effector: float = 1.0
    smoothness: float = 3.0
    triplet: float = 1.0
    latent: float = 10.0
    quality: float = 1.0
    privacy: float = 0.1
    utility: float = 10.0
    triplet_margin: float = 1.0


@dataclass
class UnpairedBatch:
    """Single clips: `clips` (B, T, J, 3) normalized; `subjects`, `actions` (B,) class indices."""

    clips: torch.Tensor
    subjects: torch.Tensor
    actions: torch.Tensor


@dataclass
class QuadrupletBatch:
    """`clips` (B, 4, T, J, 3) ordered [(P1,A1), (P1,A2), (P2,A1), (P2,A2)]; `subjects` (B, 2) = [P1, P2]
    and `actions` (B, 2) = [A1, A2] as class indices."""

    clips: torch.Tensor
    subjects: torch.Tensor
    actions: torch.Tensor

    def flat(self) -> UnpairedBatch:
        """The 4B clips as one batch, with each clip's own labels."""
        b = self.clips.shape[0]
        return UnpairedBatch(
            clips=self.clips.reshape(b * 4, *self.clips.shape[2:]),
            subjects=self.subjects[:, [0, 0, 1, 1]].reshape(-1),
            actions=self.actions[:, [0, 1, 0, 1]].reshape(-1),
        )


#: Cross decodings of a quadruplet as (motion item, privacy item, target item): the four pairs that differ
#: in both subject and action; the target has the privacy item's subject and the motion item's action.
CROSS_PAIRS = tuple((m, p, 2 * (p // 2) + m % 2) for m, p in ((0, 3), (3, 0), (1, 2), (2, 1)))
#: Paired triplets as (anchor, positive, negative) items: motion codes agree on the action, privacy codes
#: on the subject. With x1 = item 0, x2 = item 3, y1 = item 2 = (P2,A1), y2 = item 1 = (P1,A2).
MOTION_TRIPLETS = ((2, 0, 3), (1, 3, 0))
PRIVACY_TRIPLETS = ((2, 3, 0), (1, 0, 3))
#: Latent consistency: pairs of items whose motion codes (same action) / privacy codes (same subject) match.
MOTION_MATCHES = ((0, 2), (3, 1))
PRIVACY_MATCHES = ((0, 1), (3, 2))


def reconstruction_loss(pred: torch.Tensor, target: torch.Tensor, faithful: bool = False) -> torch.Tensor:
    sq = (pred - target).square()
    if faithful:
        return sq.sum(dim=1).mean()
    return sq.mean()


def chain_lengths(topology: Topology) -> torch.Tensor:
    """Joints on the path root -> end-effector, inclusive (NTU-25: 5 for feet and head, 8 for the hands)."""
    def depth(j: int) -> int:
        n = 1
        while topology.parents[j] >= 0:
            j = topology.parents[j]
            n += 1
        return n

    return torch.tensor([depth(j) for j in topology.end_effectors], dtype=torch.float32)


def end_effector_loss(pred: torch.Tensor, target: torch.Tensor, topology: Topology,
                      faithful: bool = False) -> torch.Tensor:
    """Squared error of end-effector speeds, each divided by its chain length (PMR's normalisation)."""
    ee = list(topology.end_effectors)
    chains = chain_lengths(topology).to(pred)

    def speeds(x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(x[:, 1:, ee] - x[:, :-1, ee], dim=-1) / chains

    sq = (speeds(pred) - speeds(target)).square()
    if faithful:
        return sq.sum(dim=(1, 2)).mean()
    return sq.mean()


def smoothness_loss(pred: torch.Tensor, target: torch.Tensor, faithful: bool = False) -> torch.Tensor:
    if faithful:
        def summed(x: torch.Tensor) -> torch.Tensor:
            return (x[:, :-1] - x[:, 1:]).flatten(2).sum(dim=-1).square()

        batch, frames = pred.shape[:2]
        return torch.sqrt((summed(target) - summed(pred)).abs().sum()) / (batch * frames)
    return ((pred[:, 1:] - pred[:, :-1]) - (target[:, 1:] - target[:, :-1])).square().mean()


def triplet_loss(anchor: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor,
                 margin: float = 1.0) -> torch.Tensor:
    return F.triplet_margin_loss(anchor.flatten(1), positive.flatten(1), negative.flatten(1), margin=margin, p=2)


def classification_loss(logits: torch.Tensor, labels: torch.Tensor, faithful: bool = False) -> torch.Tensor:
    """What a cooperative classifier (and every critic in its own step) minimises."""
    return F.cross_entropy(logits.softmax(dim=-1) if faithful else logits, labels)


def confusion_loss(logits: torch.Tensor, labels: torch.Tensor, faithful: bool = False) -> torch.Tensor:
    """What the encoders minimise against an adversarial classifier."""
    if faithful:
        return -F.cross_entropy(logits.softmax(dim=-1), labels)
    log_p = logits.log_softmax(dim=-1)
    return (log_p.exp() * log_p).sum(dim=-1).mean() + math.log(logits.shape[-1])


def quality_generator_loss(fake_logits: torch.Tensor) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))


def quality_critic_loss(real_logits: torch.Tensor, fake_logits: torch.Tensor) -> torch.Tensor:
    return (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
            + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits)))


@dataclass
class _Decoded:
    """Codes of a batch, the decoded clips and what each decoded clip should equal."""

    batch: UnpairedBatch
    motion: torch.Tensor
    privacy: torch.Tensor
    outputs: torch.Tensor
    targets: torch.Tensor
    self_count: int  # outputs[:self_count] are self-reconstructions, the rest cross decodings


def _decode_unpaired(model: RetargetingAutoencoder, batch: UnpairedBatch) -> _Decoded:
    motion = model.encode_motion(batch.clips)
    privacy = model.encode_privacy(batch.clips)
    outputs = model.decode(motion, privacy, frames=batch.clips.shape[1])
    return _Decoded(batch, motion, privacy, outputs, batch.clips, len(batch.clips))


def _decode_quadruplets(model: RetargetingAutoencoder, batch: QuadrupletBatch) -> _Decoded:
    flat = batch.flat()
    b, frames = batch.clips.shape[0], batch.clips.shape[2]
    motion = model.encode_motion(flat.clips)
    privacy = model.encode_privacy(flat.clips)
    m4, p4 = motion.view(b, 4, *motion.shape[1:]), privacy.view(b, 4, *privacy.shape[1:])
    m_idx, p_idx, t_idx = (list(col) for col in zip(*CROSS_PAIRS))
    cross_m = m4[:, m_idx].reshape(-1, *motion.shape[1:])
    cross_p = p4[:, p_idx].reshape(-1, *privacy.shape[1:])
    outputs = model.decode(torch.cat([motion, cross_m]), torch.cat([privacy, cross_p]), frames=frames)
    cross_targets = batch.clips[:, t_idx].reshape(-1, *batch.clips.shape[2:])
    return _Decoded(flat, motion, privacy, outputs, torch.cat([flat.clips, cross_targets]), len(flat.clips))


def _decode(model: RetargetingAutoencoder, batch: UnpairedBatch | QuadrupletBatch) -> _Decoded:
    if isinstance(batch, QuadrupletBatch):
        return _decode_quadruplets(model, batch)
    return _decode_unpaired(model, batch)


def _require_critics(model: RetargetingAutoencoder) -> None:
    if not isinstance(model, PMR):
        raise ValueError(f"adversarial and quality losses need PMR's critics; {model.method} has none")


def _quadruplet_code_terms(motion: torch.Tensor, privacy: torch.Tensor,
                           margin: float) -> tuple[torch.Tensor, torch.Tensor]:
    b = motion.shape[0] // 4
    m4, p4 = motion.view(b, 4, -1), privacy.view(b, 4, -1)
    triplet = sum(triplet_loss(codes[:, a], codes[:, p], codes[:, n], margin)
                  for codes, triplets in ((m4, MOTION_TRIPLETS), (p4, PRIVACY_TRIPLETS))
                  for a, p, n in triplets)
    latent = sum(F.mse_loss(codes[:, i], codes[:, j])
                 for codes, matches in ((m4, MOTION_MATCHES), (p4, PRIVACY_MATCHES))
                 for i, j in matches) / 4
    return triplet, latent


def generator_losses(model: RetargetingAutoencoder, batch: UnpairedBatch | QuadrupletBatch, *,
                     adversarial: bool = False, quality: bool = False,
                     weights: LossWeights = LossWeights(), faithful: bool = False) -> dict[str, torch.Tensor]:
    """The autoencoder's loss terms (weighted) and their sum under "total".

    Unpaired: reconstruction, end-effector, smoothness, triplet. Quadruplets add the cross
    reconstruction and latent consistency (self and cross decodings both feed end-effector, smoothness
    and Q). `adversarial` adds the privacy and utility terms of the embedding classifiers, `quality` the
    generator side of Q (both need a `PMR`).
    """
    if adversarial or quality:
        _require_critics(model)
    dec = _decode(model, batch)
    n = dec.self_count
    w = weights
    terms = {
        "reconstruction": w.reconstruction * reconstruction_loss(dec.outputs[:n], dec.targets[:n], faithful),
        "end_effector": w.end_effector * end_effector_loss(dec.outputs, dec.targets, model.topology, faithful),
        "smoothness": w.smoothness * smoothness_loss(dec.outputs, dec.targets, faithful),
    }
    if isinstance(batch, QuadrupletBatch):
        triplet, latent = _quadruplet_code_terms(dec.motion, dec.privacy, w.triplet_margin)
        terms["cross"] = w.cross * reconstruction_loss(dec.outputs[n:], dec.targets[n:], faithful)
        terms["latent"] = w.latent * latent
    else:
        triplet = 0.5 * (triplet_loss(dec.motion, dec.motion, dec.privacy, w.triplet_margin)
                         + triplet_loss(dec.privacy, dec.privacy, dec.motion, w.triplet_margin))
    terms["triplet"] = w.triplet * triplet
    if adversarial:
        codes = {"motion": dec.motion, "privacy": dec.privacy}
        labels = {"subject": dec.batch.subjects, "action": dec.batch.actions}
        alpha = {"subject": w.privacy, "action": w.utility}
        parts: dict[str, list[torch.Tensor]] = {"subject": [], "action": []}
        for name, (code, label, is_adversary) in CRITIC_ROLES.items():
            logits = getattr(model, name)(codes[code])
            loss_fn = confusion_loss if is_adversary else classification_loss
            parts[label].append(alpha[label] * loss_fn(logits, labels[label], faithful))
        terms["privacy"] = sum(parts["subject"])
        terms["utility"] = sum(parts["action"])
    if quality:
        terms["quality"] = w.quality * quality_generator_loss(model.quality_logits(dec.outputs))
    terms["total"] = sum(terms.values())
    return terms


def critic_losses(model: PMR, batch: UnpairedBatch | QuadrupletBatch, *, classifiers: bool = True,
                  quality: bool = True, faithful: bool = False) -> dict[str, torch.Tensor]:
    """Each critic's own loss, on codes and decodings computed without gradient to the autoencoder.

    Keys: the embedding classifiers' names (cross-entropy on their labels) and "discriminator"
    (Q: real clips -> 1, decoded clips -> 0).
    """
    _require_critics(model)
    with torch.no_grad():
        dec = _decode(model, batch)
    out: dict[str, torch.Tensor] = {}
    if classifiers:
        codes = {"motion": dec.motion, "privacy": dec.privacy}
        labels = {"subject": dec.batch.subjects, "action": dec.batch.actions}
        for name, (code, label, _) in CRITIC_ROLES.items():
            out[name] = classification_loss(getattr(model, name)(codes[code]), labels[label], faithful)
    if quality:
        out["discriminator"] = quality_critic_loss(model.quality_logits(dec.batch.clips),
                                                   model.quality_logits(dec.outputs))
    return out
