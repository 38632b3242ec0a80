"""Training losses of DisentangledTMR (DESIGN §4), one small pure function per term, plus the weight tables.

Shapes: B = batch, T = frames (64 after normalization), J = joints, C = channels, N = classes.
Joint tensors are ``(B, T, J, 3)`` in metres (y up), prediction first, target second; every term is a
scalar mean so that the weights of DESIGN §4 compare like with like. Losses on the decoder's output are
computed on the β-blended output (DESIGN §4); that blend is the caller's.

Critic-side losses (`adversary_loss`, `discriminator_loss`) take the critic module and detach its input
themselves, so the critic's own optimizer step can never push gradient into the encoders or the decoder
(the paper uses separate optimizer steps, not gradient reversal). The encoder/decoder-side counterparts
(`kl_to_uniform`, `generator_adversarial_loss`) take logits computed with gradient.

Formulas, and what the paper leaves open, are in ``docs/losses.md``.

Under bf16 autocast (`dtmr train --precision bf16`) the linear layers hand these functions bfloat16 features
and logits. The terms on features (KL to uniform, SupCon, orthogonality, cross-correlation) bring their
inputs to float32 first (`at_least_float32`): each is a small difference or ratio of batch statistics that
bfloat16's 8-bit mantissa rounds away (KL(p‖U) of a near-uniform posterior came out exactly 0), and on
(B, D) tensors the cast costs nothing (their matrix products run with autocast off: it would run them in
bfloat16 whatever their inputs). Cross-entropies are float32 under autocast already. The joint terms cast
too (`_float32_pair`): the trainer hands them float32 joints, but errors of millimetres are below
bfloat16's resolution at a metre.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from types import MappingProxyType

import numpy as np
import torch
import torch.nn.functional as F

from ..skeleton.contact import (
    GROUND_PERCENTILE,
    HEIGHT_THRESHOLD,
    MAX_REST_HEIGHT,
    VERTICAL_SPEED_THRESHOLD,
)
from ..skeleton.floor import fit_floor
from ..skeleton.joint_limits import BONE_LENGTH_BAND
from ..skeleton.topology import Topology, get_topology

SUPCON_TEMPERATURE = 0.07
JOINT_RANGE_LOW, JOINT_RANGE_HIGH = BONE_LENGTH_BAND

# Weight tables (DESIGN §4). Keys are the names the trainer logs the terms under.
STAGE1_WEIGHTS: Mapping[str, float] = MappingProxyType({
    "action_ce": 3.0,
    "identity_ce": 1.0,
    "supcon": 1.0,
    "adversary": 0.5,  # encoder side: KL(adversary posterior on action features || uniform)
    "orthogonality": 0.1,
    "cross_correlation": 0.01,
})
STAGE2_WEIGHTS: Mapping[str, float] = MappingProxyType({
    "mse": 1.0,
    "end_effector": 2.0,
    "bone": 1.0,
    "velocity": 0.2,
    "smoothness": 0.1,
    "foot_contact": 1.0,
    "joint_range": 1.0,
    # ours, off unless asked for (`--loss-weight joint_angle=10 --loss-weight limb_overlap=1000`; the bundled
    # models use them): hinge limits and limb capsules of `dtmr.train.body_losses`
    "joint_angle": 0.0,
    "limb_overlap": 0.0,
})
# The paper does not publish stage-3 weights; these are our choice (docs/losses.md).
STAGE3_ADDITIONS: Mapping[str, float] = MappingProxyType({
    "output_action_ce": 1.0,
    "discriminator": 0.1,  # generator side of the sequence discriminator (fake -> real)
    "output_identity_adversary": 0.5,
})
#: "enhanced end-effector supervision" of stage 3: the stage-2 end-effector weight doubled.
STAGE3_END_EFFECTOR_WEIGHT = 4.0
STAGE3_WEIGHTS: Mapping[str, float] = MappingProxyType({
    **STAGE1_WEIGHTS,
    **STAGE2_WEIGHTS,
    "end_effector": STAGE3_END_EFFECTOR_WEIGHT,
    **STAGE3_ADDITIONS,
})
STAGE_WEIGHTS: Mapping[int, Mapping[str, float]] = MappingProxyType({1: STAGE1_WEIGHTS, 2: STAGE2_WEIGHTS, 3: STAGE3_WEIGHTS})


def at_least_float32(x: torch.Tensor) -> torch.Tensor:
    """`x` in float32 when it is in a narrower float (bfloat16 under autocast), else as it is (float64 stays)."""
    return x.to(torch.promote_types(x.dtype, torch.float32))


def weighted_total(losses: Mapping[str, torch.Tensor], weights: Mapping[str, float]) -> torch.Tensor:
    """Σ_k weights[k]·losses[k] over the terms present in `losses`.

    A term without a weight raises KeyError (a misspelt name would otherwise drop out silently); a
    weighted term absent from `losses` is simply not part of this step's objective.
    """
    if not losses:
        raise ValueError("weighted_total needs at least one loss term")
    unknown = sorted(set(losses) - set(weights))
    if unknown:
        raise KeyError(f"no weight for loss term(s) {unknown}; known: {sorted(weights)}")
    return sum(weights[name] * value for name, value in losses.items())


# ---------------------------------------------------------------------------------------------------
# Classification and adversaries (stages 1 and 3)


def classification_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy −mean_b log softmax(logits_b)[y_b]; logits (B, N), labels (B,) int64 in [0, N).

    Used for the action CE and identity CE of stage 1 and the output action CE of stage 3.
    """
    return F.cross_entropy(logits, labels)


def kl_to_uniform(logits: torch.Tensor) -> torch.Tensor:
    """KL(softmax(logits) ‖ Uniform_N) = log N + Σ_n p_n log p_n, mean over the batch; logits (B, N).

    0 for a uniform posterior, log N for a one-hot one. The encoder-side adversary term: it drives the
    adversary's identity posterior on action features (stage 1) or on the output (stage 3) to chance.
    """
    # float32: Σ p log p ≈ −log N cancels against log N; in bfloat16 a near-uniform posterior's KL rounds to 0
    log_p = F.log_softmax(at_least_float32(logits), dim=-1)
    return (log_p.exp() * log_p).sum(dim=-1).mean() + math.log(logits.shape[-1])


def adversary_loss(
    adversary: Callable[[torch.Tensor], torch.Tensor], features: torch.Tensor, labels: torch.Tensor
) -> torch.Tensor:
    """The adversary's own CE step: CE(adversary(stop_grad(features)), labels).

    features: whatever the adversary reads (action features (B, T, C) in stage 1, the output joints
    (B, T, J, 3) in stage 3); labels (B,) are the source subjects. Detaching here guarantees that this
    step trains only the adversary.
    """
    return classification_loss(adversary(features.detach()), labels)


def supervised_contrastive_loss(
    embeddings: torch.Tensor,
    actions: torch.Tensor,
    subjects: torch.Tensor,
    temperature: float = SUPCON_TEMPERATURE,
) -> torch.Tensor:
    """Supervised contrastive loss (Khosla et al. 2020) whose positives are same action, different person.

    embeddings (B, D) are L2-normalized here to z; s_ij = z_i·z_j / τ. For anchor i, P(i) = {p ≠ i :
    action_p = action_i, subject_p ≠ subject_i} and A(i) = {a ≠ i} (every other sample, including the same
    person's, is in the denominator):

        L_i = −1/|P(i)| Σ_{p∈P(i)} [ s_ip − log Σ_{a∈A(i)} exp(s_ia) ]

    The loss is the mean of L_i over anchors with |P(i)| > 0; with no such anchor it is 0 (still attached
    to the graph).
    """
    # float32: the cosines are divided by τ = 0.07, which magnifies bfloat16's rounding 14-fold; autocast off
    # for the product, which autocast would run in bfloat16 whatever its inputs
    z = F.normalize(at_least_float32(embeddings), dim=-1)
    with torch.autocast(z.device.type, enabled=False):
        sim = z @ z.T / temperature
    eye = torch.eye(sim.shape[0], dtype=torch.bool, device=sim.device)
    log_denominator = torch.logsumexp(sim.masked_fill(eye, float("-inf")), dim=1, keepdim=True)
    log_prob = sim - log_denominator
    positives = (actions[:, None] == actions[None, :]) & (subjects[:, None] != subjects[None, :])
    counts = positives.sum(dim=1)
    anchors = counts > 0
    if not bool(anchors.any()):
        return embeddings.sum() * 0.0
    per_anchor = -(log_prob * positives).sum(dim=1)[anchors] / counts[anchors]
    return per_anchor.mean()


def _time_averaged_truncated(action_features: torch.Tensor, width: int) -> torch.Tensor:
    if action_features.ndim != 3:
        raise ValueError(f"action features must be (B, T, C), got {tuple(action_features.shape)}")
    if action_features.shape[-1] < width:
        raise ValueError(f"action features have {action_features.shape[-1]} channels, fewer than {width}")
    return action_features.mean(dim=1)[:, :width]


def orthogonality_loss(action_features: torch.Tensor, identity_features: torch.Tensor) -> torch.Tensor:
    """Mean squared cosine between each sample's action and identity vectors.

    action_features (B, T, C) are averaged over time and truncated to the first D channels, D =
    identity_features.shape[1] (256); a = â/‖â‖, i = î/‖î‖; loss = mean_b (a_b·i_b)² ∈ [0, 1].
    """
    # float32, as the other terms on features (module docstring)
    a = F.normalize(_time_averaged_truncated(at_least_float32(action_features), identity_features.shape[-1]), dim=-1)
    i = F.normalize(at_least_float32(identity_features), dim=-1)
    return ((a * i).sum(dim=-1) ** 2).mean()


def _batch_standardized(x: torch.Tensor, eps: float) -> torch.Tensor:
    centred = x - x.mean(dim=0, keepdim=True)
    return centred / (centred.pow(2).mean(dim=0, keepdim=True).sqrt() + eps)


def cross_correlation_loss(
    action_features: torch.Tensor, identity_features: torch.Tensor, eps: float = 1e-5
) -> torch.Tensor:
    """Squared Frobenius norm of the action/identity cross-correlation matrix, divided by its size.

    action_features (B, T, C) are flattened to (B, T·C) in (frame, channel) order and the first D
    elements kept (D = identity_features.shape[1] = 256, i.e. frame 0's first 256 channels when C ≥ 256,
    literally "flatten time, first 256 elements"); both sides are standardized per column over the batch
    (mean 0, biased std 1); K = Aᵀ I / B is (D, D), entries in [−1, 1]; loss = ‖K‖_F² / D².
    A batch of one gives 0 (standardized columns are zero).
    """
    width = identity_features.shape[-1]
    flat = action_features.reshape(action_features.shape[0], -1)
    if flat.shape[1] < width:
        raise ValueError(f"action features have {flat.shape[1]} elements per sample, fewer than {width}")
    # float32 (module docstring): standardizing over the batch subtracts each column's mean
    a = _batch_standardized(at_least_float32(flat[:, :width]), eps)
    i = _batch_standardized(at_least_float32(identity_features), eps)
    with torch.autocast(a.device.type, enabled=False):  # a float32 product (autocast would run it in bfloat16)
        corr = a.T @ i / a.shape[0]
    return corr.pow(2).sum() / corr.numel()


# ---------------------------------------------------------------------------------------------------
# Sequence discriminator (stage 3), non-saturating GAN


def discriminator_loss(
    discriminator: Callable[[torch.Tensor], torch.Tensor], real: torch.Tensor, fake: torch.Tensor
) -> torch.Tensor:
    """The discriminator's own step: BCE(D(real), 1) + BCE(D(stop_grad(fake)), 0), each a batch mean.

    real, fake: (B, T, J, 3) sequences; D returns one logit per sequence. With logits ℓ this is
    mean softplus(−ℓ_real) + mean softplus(ℓ_fake).
    """
    real_logits = discriminator(real.detach())
    fake_logits = discriminator(fake.detach())
    return (
        F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
        + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
    )


def generator_adversarial_loss(fake_logits: torch.Tensor) -> torch.Tensor:
    """Non-saturating generator term BCE(D(fake), 1) = mean softplus(−ℓ_fake); fake_logits (B,) or (B, 1)."""
    return F.binary_cross_entropy_with_logits(fake_logits, torch.ones_like(fake_logits))


# ---------------------------------------------------------------------------------------------------
# Geometry (stage 2): prediction vs target, both (B, T, J, 3)


def _float32_pair(prediction: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The two checked to be (B, T, J, 3) and in float32 at least (`at_least_float32`): errors of
    millimetres on coordinates of a metre are below bfloat16's resolution there (8 mm at 1 m)."""
    if prediction.shape != target.shape or prediction.ndim != 4 or prediction.shape[-1] != 3:
        raise ValueError(
            f"prediction and target must both be (B, T, J, 3); got {tuple(prediction.shape)} and {tuple(target.shape)}"
        )
    return at_least_float32(prediction), at_least_float32(target)


def frame_velocity(joints: torch.Tensor) -> torch.Tensor:
    """(B, T, J, 3) -> (B, T-1, J, 3) per-frame displacement x_{t+1} − x_t (metres per frame)."""
    return joints[:, 1:] - joints[:, :-1]


def frame_acceleration(joints: torch.Tensor) -> torch.Tensor:
    """(B, T, J, 3) -> (B, T-2, J, 3) second difference x_{t+1} − 2x_t + x_{t−1} (metres per frame²)."""
    return joints[:, 2:] - 2.0 * joints[:, 1:-1] + joints[:, :-2]


def bone_lengths(joints: torch.Tensor, topology: str | Topology) -> torch.Tensor:
    """(..., J, 3) -> (..., J-1) length of every bone of `topology` (bones in joint order)."""
    topo = get_topology(topology)
    children = torch.as_tensor(topo.bone_children, device=joints.device)
    parents = torch.as_tensor(topo.bone_parents, device=joints.device)
    return torch.linalg.vector_norm(joints[..., children, :] - joints[..., parents, :], dim=-1)


def mean_pose_bone_lengths(joints: torch.Tensor, topology: str | Topology) -> torch.Tensor:
    """(B, T, J, 3) -> (B, J-1) bone lengths of the root-centred time-mean pose (DESIGN §2.3)."""
    topo = get_topology(topology)
    centred = joints - joints[:, :, topo.root : topo.root + 1]
    return bone_lengths(centred.mean(dim=1), topo)


def mse_loss(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """mean over (B, T, J, 3) of (x̂ − x)²; a constant 1 cm offset on every coordinate gives 1e-4."""
    prediction, target = _float32_pair(prediction, target)
    return F.mse_loss(prediction, target)


def velocity_loss(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """mean over (B, T-1, J, 3) of (Δx̂ − Δx)², Δ = per-frame displacement."""
    prediction, target = _float32_pair(prediction, target)
    return F.mse_loss(frame_velocity(prediction), frame_velocity(target))


def smoothness_loss(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """mean over (B, T-2, J, 3) of (Δ²x̂ − Δ²x)², Δ² = second difference (acceleration difference).

    Matching the target's acceleration removes jitter the target does not have without pulling a perfect
    prediction away from the target (a bare acceleration-magnitude penalty would over-smooth real motion).
    """
    prediction, target = _float32_pair(prediction, target)
    return F.mse_loss(frame_acceleration(prediction), frame_acceleration(target))


def end_effector_loss(prediction: torch.Tensor, target: torch.Tensor, topology: str | Topology) -> torch.Tensor:
    """Position plus velocity MSE on the topology's end-effectors E (NTU-25: 7 — feet, hand tips, thumbs, head).

    mean over (B, T, |E|, 3) of (x̂_E − x_E)² + mean over (B, T-1, |E|, 3) of (Δx̂_E − Δx_E)².
    """
    prediction, target = _float32_pair(prediction, target)
    effectors = list(get_topology(topology).end_effectors)
    pred, true = prediction[:, :, effectors], target[:, :, effectors]
    return F.mse_loss(pred, true) + F.mse_loss(frame_velocity(pred), frame_velocity(true))


def bone_length_loss(prediction: torch.Tensor, target: torch.Tensor, topology: str | Topology) -> torch.Tensor:
    """mean over (B, T, J-1) of (ℓ̂_{b,t,k} − L_{b,k})²: predicted per-frame bone lengths vs the target's
    mean-pose bone lengths L (computed without gradient)."""
    prediction, target = _float32_pair(prediction, target)
    with torch.no_grad():
        reference = mean_pose_bone_lengths(target, topology)
    return (bone_lengths(prediction, topology) - reference[:, None]).pow(2).mean()


def joint_range_loss(
    prediction: torch.Tensor,
    target: torch.Tensor,
    topology: str | Topology,
    low: float = JOINT_RANGE_LOW,
    high: float = JOINT_RANGE_HIGH,
) -> torch.Tensor:
    """Penalty on bone lengths outside [low·L, high·L], L = the target's mean-pose bone lengths.

    mean over (B, T, J-1) of relu(low·L − ℓ̂)² + relu(ℓ̂ − high·L)² (metres²). Zero inside the band, so
    unlike `bone_length_loss` it only acts on broken or collapsed limbs. Joint-angle limits would need
    per-joint anatomical ranges that topologies do not carry; the bone-length band works for every one.
    """
    prediction, target = _float32_pair(prediction, target)
    with torch.no_grad():
        reference = mean_pose_bone_lengths(target, topology)[:, None]
    lengths = bone_lengths(prediction, topology)
    return (F.relu(low * reference - lengths).pow(2) + F.relu(lengths - high * reference).pow(2)).mean()


def central_velocity(joints: torch.Tensor, fps: float | torch.Tensor) -> torch.Tensor:
    """(B, T, ..., 3) -> same shape, velocity in m/s by central differences, one-sided at the ends.

    The torch twin of `dtmr.skeleton.contact.joint_speeds` (numpy.gradient along time); fps is a float or
    a (B,) tensor. T < 2 gives zeros.
    """
    if joints.shape[1] < 2:
        return torch.zeros_like(joints)
    grad = torch.cat(
        [joints[:, 1:2] - joints[:, :1], (joints[:, 2:] - joints[:, :-2]) / 2.0, joints[:, -1:] - joints[:, -2:-1]],
        dim=1,
    )
    rate = torch.as_tensor(fps, dtype=joints.dtype, device=joints.device)
    return grad * rate.reshape(rate.shape + (1,) * (joints.ndim - rate.ndim))


def floor_planes(target: torch.Tensor, topology: str | Topology) -> tuple[torch.Tensor, torch.Tensor]:
    """((B, 3) unit normals, (B,) offsets) of each target clip's floor, `dtmr.skeleton.floor.fit_floor`:
    heights and speeds are measured against it, as the numpy metric does (a tilted camera's y is not up)."""
    topo = get_topology(topology)
    planes = [fit_floor(clip, topo) for clip in target.detach().to("cpu", torch.float64).numpy()]
    normals = torch.as_tensor(np.stack([p.normal for p in planes]), dtype=target.dtype, device=target.device)
    offsets = torch.as_tensor([p.offset for p in planes], dtype=target.dtype, device=target.device)
    return normals, offsets


def contact_mask(target: torch.Tensor, topology: str | Topology, fps: float | torch.Tensor,
                 floors: tuple[torch.Tensor, torch.Tensor] | None = None) -> torch.Tensor:
    """(B, T, C) bool contact of each of `topology.contact_joints`: the rule of `dtmr.skeleton.contact`.

    Per clip and contact joint, heights above the clip's floor plane (`floors`, default `floor_planes`):
    its resting height is the 5th percentile of its heights over time; a joint whose resting height is
    more than 15 cm above the clip's lowest resting height never touches the ground; otherwise it is in
    contact on frames where it is less than 5 cm above its resting height and its speed along the floor's
    normal is below 0.3 m/s. No gradient.
    """
    topo = get_topology(topology)
    with torch.no_grad():
        normals, offsets = floor_planes(target, topo) if floors is None else floors
        feet = target[:, :, list(topo.contact_joints)]
        up = normals[:, None, None]  # (B, 1, 1, 3)
        heights = (feet * up).sum(-1) - offsets[:, None, None]
        rest = torch.quantile(heights, GROUND_PERCENTILE / 100.0, dim=1)
        grounded = rest - rest.min(dim=1, keepdim=True).values <= MAX_REST_HEIGHT
        low = (heights - rest[:, None]) < HEIGHT_THRESHOLD
        still = (central_velocity(feet, fps) * up).sum(-1).abs() < VERTICAL_SPEED_THRESHOLD
        return low & still & grounded[:, None]


def foot_contact_loss(
    prediction: torch.Tensor, target: torch.Tensor, topology: str | Topology, fps: float | torch.Tensor
) -> torch.Tensor:
    """Speed parallel to the target's floor, m/s, of the predicted contact joints over the TARGET's contact
    frames: averaged per clip, then over the batch (a clip without contact counts 0).

    prediction, target (B, T, J, 3); fps: float or (B,) frame rate of these T frames (for a clip of T₀
    frames at f₀ resampled to 64: f₀·63/(T₀−1)). The mask comes from `contact_mask(target)` without
    gradient; the speed uses the same central differences and floor plane as
    `dtmr.skeleton.foot_sliding_speed`, so on prediction = target a clip's term equals that metric. Being a
    mean of per-clip terms, the loss of a batch split over several processes averages to the loss of the
    whole batch (distributed training).
    """
    prediction, target = _float32_pair(prediction, target)
    topo = get_topology(topology)
    floors = floor_planes(target, topo)
    mask = contact_mask(target, topo, fps, floors)
    velocity = central_velocity(prediction[:, :, list(topo.contact_joints)], fps)
    up = floors[0][:, None, None]
    speed = torch.linalg.vector_norm(velocity - (velocity * up).sum(-1, keepdim=True) * up, dim=-1)
    per_clip = (speed * mask).sum(dim=(1, 2)) / mask.sum(dim=(1, 2)).clamp(min=1)
    return per_clip.mean()
