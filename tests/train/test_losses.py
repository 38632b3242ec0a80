"""Every training loss on a case whose value is known by hand, plus gradient checks of the stage-2 terms."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dtmr.skeleton import Topology, foot_sliding_speed, get_topology
from dtmr.train import losses as L

# A 5-joint skeleton small enough for gradcheck: pelvis -> feet, pelvis -> spine -> head.
TINY = Topology(
    name="tiny5",
    joint_names=("pelvis", "left_foot", "right_foot", "spine", "head"),
    parents=(-1, 0, 0, 0, 3),
    end_effectors=(1, 2, 4),
    feet=((1,), (2,)),
    left_hip=1,
    right_hip=2,
)
TINY_POSE = torch.tensor(
    [[0.0, 0.9, 0.0], [-0.15, 0.02, 0.0], [0.15, 0.02, 0.0], [0.0, 1.3, 0.0], [0.0, 1.6, 0.05]], dtype=torch.float64
)


def standing(frames: int = 6, batch: int = 2) -> torch.Tensor:
    """(B, T, 5, 3) the tiny skeleton standing still, feet on the ground."""
    return TINY_POSE.expand(batch, frames, 5, 3).clone()


def test_weight_tables_are_those_of_the_design():
    assert dict(L.STAGE1_WEIGHTS) == {
        "action_ce": 3.0, "identity_ce": 1.0, "supcon": 1.0, "adversary": 0.5,
        "orthogonality": 0.1, "cross_correlation": 0.01,
    }
    assert dict(L.STAGE2_WEIGHTS) == {
        "mse": 1.0, "end_effector": 2.0, "bone": 1.0, "velocity": 0.2, "smoothness": 0.1,
        "foot_contact": 1.0, "joint_range": 1.0, "joint_angle": 0.0, "limb_overlap": 0.0,
    }
    stage3 = L.STAGE3_WEIGHTS
    assert set(L.STAGE1_WEIGHTS) | set(L.STAGE2_WEIGHTS) | set(L.STAGE3_ADDITIONS) == set(stage3)
    assert stage3["end_effector"] > L.STAGE2_WEIGHTS["end_effector"]
    assert L.STAGE_WEIGHTS[2] is L.STAGE2_WEIGHTS
    with pytest.raises(TypeError):
        L.STAGE1_WEIGHTS["supcon"] = 2.0  # shared tables are read-only


def test_weighted_total_sums_weighted_terms_and_rejects_unknown_names():
    total = L.weighted_total({"mse": torch.tensor(2.0), "velocity": torch.tensor(10.0)}, L.STAGE2_WEIGHTS)
    assert total.item() == pytest.approx(1.0 * 2.0 + 0.2 * 10.0)
    with pytest.raises(KeyError, match="msee"):
        L.weighted_total({"msee": torch.tensor(1.0)}, L.STAGE2_WEIGHTS)
    with pytest.raises(ValueError):
        L.weighted_total({}, L.STAGE2_WEIGHTS)


# --- classification and adversaries ---------------------------------------------------------------


def test_classification_loss_of_uniform_logits_is_log_n():
    logits = torch.zeros(3, 7)
    assert L.classification_loss(logits, torch.tensor([0, 3, 6])).item() == pytest.approx(math.log(7))
    confident = torch.tensor([[20.0, 0.0], [0.0, 20.0]])
    assert L.classification_loss(confident, torch.tensor([0, 1])).item() < 1e-6


def test_kl_to_uniform_known_values():
    n = 6
    assert L.kl_to_uniform(torch.zeros(4, n)).item() == pytest.approx(0.0, abs=1e-6)
    one_hot = torch.full((2, n), -1e4)
    one_hot[:, 2] = 0.0
    assert L.kl_to_uniform(one_hot).item() == pytest.approx(math.log(n), rel=1e-6)
    half_half = torch.tensor([[0.0, 0.0, -1e4, -1e4]])  # p = (1/2, 1/2, 0, 0): log 4 - log 2
    assert L.kl_to_uniform(half_half).item() == pytest.approx(math.log(2), rel=1e-6)
    # batch mean of the two cases above (N = 4)
    both = torch.cat([half_half, torch.zeros(1, 4)])
    assert L.kl_to_uniform(both).item() == pytest.approx(math.log(2) / 2, rel=1e-6)


def test_adversary_loss_trains_only_the_adversary():
    torch.manual_seed(0)
    adversary = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4 * 8, 5))
    features = torch.randn(3, 4, 8, requires_grad=True)
    labels = torch.tensor([0, 4, 2])
    loss = L.adversary_loss(adversary, features, labels)
    expected = torch.nn.functional.cross_entropy(adversary(features), labels)
    assert loss.item() == pytest.approx(expected.item())
    loss.backward()
    assert features.grad is None
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in adversary.parameters())


def test_supcon_three_sample_case_by_hand():
    # a, b: same action, different people (positives of each other); c: another action (no positive).
    emb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0]])  # c normalizes onto a
    actions, subjects = torch.tensor([0, 0, 1]), torch.tensor([0, 1, 0])
    # τ = 1: s_ab = 0, s_ac = 1, s_bc = 0. L_a = log(1 + e), L_b = log 2, c is excluded.
    value = L.supervised_contrastive_loss(emb, actions, subjects, temperature=1.0)
    assert value.item() == pytest.approx((math.log(1 + math.e) + math.log(2)) / 2, rel=1e-6)
    # the default temperature 0.07 divides similarities by 0.07
    value = L.supervised_contrastive_loss(emb, actions, subjects)
    expected = (math.log(1 + math.exp(1 / 0.07)) + math.log(2)) / 2
    assert value.item() == pytest.approx(expected, rel=1e-5)


def test_supcon_same_person_same_action_is_not_a_positive():
    # d is a's own person doing a's action: only in the denominators, never a positive.
    emb = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    actions, subjects = torch.tensor([0, 0, 0]), torch.tensor([0, 1, 0])
    # τ = 1. s_ab = 0, s_ad = -1, s_bd = 0. Anchors a (pos b), b (pos a and d), d (pos b).
    la = -(0 - math.log(1 + math.exp(-1)))
    lb = -((0 - math.log(2)) + (0 - math.log(2))) / 2
    ld = -(0 - math.log(math.exp(-1) + 1))
    value = L.supervised_contrastive_loss(emb, actions, subjects, temperature=1.0)
    assert value.item() == pytest.approx((la + lb + ld) / 3, rel=1e-6)


def test_supcon_without_positives_is_zero_and_differentiable():
    emb = torch.randn(4, 3, requires_grad=True)
    value = L.supervised_contrastive_loss(emb, torch.tensor([0, 1, 2, 3]), torch.tensor([0, 0, 1, 1]))
    assert value.item() == 0.0
    value.backward()
    assert emb.grad is not None and torch.all(emb.grad == 0)


def test_orthogonality_parallel_is_one_orthogonal_is_zero():
    identity = torch.tensor([[1.0, 0.0], [0.0, 3.0]])
    # action (B, T, C=3): time average of sample 0 is (2, 0, 9) -> truncated (2, 0): parallel to (1, 0).
    # sample 1 averages to (5, 0, -4) -> (5, 0): orthogonal to (0, 3). The third channel is ignored.
    action = torch.tensor([
        [[1.0, 1.0, 9.0], [3.0, -1.0, 9.0]],
        [[5.0, 2.0, -4.0], [5.0, -2.0, -4.0]],
    ])
    assert L.orthogonality_loss(action, identity).item() == pytest.approx(0.5)
    assert L.orthogonality_loss(action[:1], identity[:1]).item() == pytest.approx(1.0)
    # 45 degrees: cos^2 = 1/2
    diag = torch.tensor([[[1.0, 1.0]]])
    assert L.orthogonality_loss(diag, torch.tensor([[1.0, 0.0]])).item() == pytest.approx(0.5)
    with pytest.raises(ValueError):
        L.orthogonality_loss(torch.zeros(2, 4, 1), identity)


def test_cross_correlation_identical_and_independent_columns():
    ident = torch.tensor([[1.0, 1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, -1.0]])  # standardized, uncorrelated
    # action (B=4, T=3, C=2): flattened, the first 2 elements are frame 0's two channels.
    action = torch.randn(4, 3, 2)
    action[:, 0] = 3.0 * ident + 5.0  # correlation is scale- and shift-invariant
    # K = identity matrix: ||K||_F^2 / 4 = 2 / 4
    assert L.cross_correlation_loss(action, ident).item() == pytest.approx(0.5, rel=1e-4)
    changed = action.clone()
    changed[:, 1:] = torch.randn(4, 2, 2)  # later frames are beyond the first D elements
    assert L.cross_correlation_loss(changed, ident).item() == pytest.approx(0.5, rel=1e-4)
    action[:, 0, 1] = 7.0  # a constant column correlates with nothing: K = diag(1, 0)
    assert L.cross_correlation_loss(action, ident).item() == pytest.approx(0.25, rel=1e-4)
    action[:, 0, 1] = -ident[:, 0]  # anti-correlated with identity column 0: K = [[1, 0], [-1, 0]]
    assert L.cross_correlation_loss(action, ident).item() == pytest.approx(0.5, rel=1e-4)


def test_discriminator_and_generator_losses_at_zero_logits_and_gradient_flow():
    disc = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(6 * 5 * 3, 1))
    torch.nn.init.zeros_(disc[1].weight)
    torch.nn.init.zeros_(disc[1].bias)
    real = standing().float()
    fake = (standing() + 0.1).float().requires_grad_(True)
    d_loss = L.discriminator_loss(disc, real, fake)
    assert d_loss.item() == pytest.approx(2 * math.log(2))
    d_loss.backward()
    assert fake.grad is None and disc[1].weight.grad.abs().sum() > 0
    assert L.generator_adversarial_loss(torch.zeros(5, 1)).item() == pytest.approx(math.log(2))
    # a discriminator fooled with confidence: the generator term vanishes
    assert L.generator_adversarial_loss(torch.full((3,), 30.0)).item() < 1e-9


# --- stage 2: geometry -------------------------------------------------------------------------------


def test_identical_prediction_gives_zero_for_every_geometric_term():
    rng = np.random.default_rng(0)
    target = torch.as_tensor(rng.normal(0.0, 0.3, (2, 10, 25, 3)))
    ntu = get_topology("ntu25")
    assert L.mse_loss(target, target).item() == 0.0
    assert L.velocity_loss(target, target).item() == 0.0
    assert L.smoothness_loss(target, target).item() == 0.0
    assert L.end_effector_loss(target, target, ntu).item() == 0.0
    still = standing(8)
    assert L.foot_contact_loss(still, still, TINY, 30.0).item() == 0.0
    assert L.bone_length_loss(still, still, TINY).item() == pytest.approx(0.0, abs=1e-20)
    assert L.joint_range_loss(still, still, TINY).item() == 0.0


def test_mse_of_a_one_centimetre_offset_is_1e_4():
    target = standing()
    assert L.mse_loss(target + 0.01, target).item() == pytest.approx(1e-4)
    # offset along x only: a third of that
    offset = target.clone()
    offset[..., 0] += 0.01
    assert L.mse_loss(offset, target).item() == pytest.approx(1e-4 / 3)


def test_velocity_loss_ignores_offsets_and_measures_drift():
    target = standing(5)
    assert L.velocity_loss(target + 0.3, target).item() == pytest.approx(0.0)
    drifting = target.clone()
    drifting[..., 0] += 0.01 * torch.arange(5, dtype=torch.float64)[None, :, None]  # 1 cm/frame along x
    assert L.velocity_loss(drifting, target).item() == pytest.approx(1e-4 / 3)


def test_smoothness_loss_is_the_acceleration_difference():
    target = standing(5)
    drifting = target.clone()
    drifting[..., 0] += 0.01 * torch.arange(5, dtype=torch.float64)[None, :, None]
    assert L.smoothness_loss(drifting, target).item() == pytest.approx(0.0, abs=1e-20)  # constant velocity
    bump = target.clone()
    a = 0.02
    bump[:, 2, :, 0] += a  # x = 0, 0, a, 0, 0 -> accelerations a, -2a, a on x
    assert L.smoothness_loss(bump, target).item() == pytest.approx(6 * a * a / 9)


def test_end_effector_loss_position_and_velocity():
    target = standing(4)
    not_effector = target.clone()
    not_effector[:, :, 3] += 0.05  # the spine is not an end-effector
    assert L.end_effector_loss(not_effector, target, TINY).item() == 0.0
    shifted = target.clone()
    shifted[:, :, list(TINY.end_effectors)] += 0.01  # constant: position 1e-4, velocity 0
    assert L.end_effector_loss(shifted, target, TINY).item() == pytest.approx(1e-4)
    moving = target.clone()
    moving[:, :, 4, 1] += 0.03 * torch.arange(4, dtype=torch.float64)  # head rises 3 cm/frame
    # position: y errors 0, .03, .06, .09 on 1 of 3 effectors x 3 coords; velocity: .03 on 3 of 3 frames
    position = (0.03**2 + 0.06**2 + 0.09**2) / (4 * 3 * 3)
    velocity = (3 * 0.03**2) / (3 * 3 * 3)
    assert L.end_effector_loss(moving, target, TINY).item() == pytest.approx(position + velocity)


def test_bone_length_loss_uses_the_target_mean_pose():
    chain = Topology("chain3", ("root", "mid", "tip"), (-1, 0, 1), (2,), ((2,),), 0, 0)
    # the tip swings from +x to -x: per-frame length 1, but the mean pose has the tip on the mid joint
    target = torch.tensor([[[[0.0, 0, 0], [0, 1, 0], [1, 1, 0]], [[0.0, 0, 0], [0, 1, 0], [-1, 1, 0]]]])
    assert L.mean_pose_bone_lengths(target, chain).tolist() == [[1.0, 0.0]]
    # bone root-mid matches, bone mid-tip is 1 too long on both frames: mean over (1, 2, 2) = 0.5
    assert L.bone_length_loss(target, target, chain).item() == pytest.approx(0.5)


def test_bone_length_loss_of_a_ten_percent_larger_body():
    target = standing(3)
    grown = target * 1.1  # every bone 10 % longer
    ref = L.bone_lengths(TINY_POSE, TINY)
    assert L.bone_length_loss(grown, target, TINY).item() == pytest.approx(((0.1 * ref) ** 2).mean().item())


def test_joint_range_loss_is_zero_inside_the_band_and_squared_excess_outside():
    target = standing(3)
    ref = L.bone_lengths(TINY_POSE, TINY)
    assert L.joint_range_loss(target * 1.15, target, TINY).item() == 0.0
    assert L.joint_range_loss(target * 0.85, target, TINY).item() == 0.0
    expected = ((0.3 * ref) ** 2).mean().item()
    assert L.joint_range_loss(target * 1.5, target, TINY).item() == pytest.approx(expected)
    assert L.joint_range_loss(target * 0.5, target, TINY).item() == pytest.approx(expected)


def test_foot_contact_loss_of_a_sliding_foot_is_its_speed():
    fps, speed = 30.0, 0.4  # m/s
    target = standing(10)
    sliding = target.clone()
    sliding[:, :, 1, 0] += speed / fps * torch.arange(10, dtype=torch.float64)  # left foot slides along x
    # both feet are in contact on every frame: the mean over the two feet is speed / 2
    assert L.foot_contact_loss(sliding, target, TINY, fps).item() == pytest.approx(speed / 2)
    sliding[:, :, 2, 2] -= speed / fps * torch.arange(10, dtype=torch.float64)  # right foot along -z
    assert L.foot_contact_loss(sliding, target, TINY, fps).item() == pytest.approx(speed)
    # per-clip frame rates: the second clip's frames are twice as close in time
    per_clip = L.foot_contact_loss(sliding, target, TINY, torch.tensor([30.0, 60.0]))
    assert per_clip.item() == pytest.approx(1.5 * speed)
    # vertical motion is not sliding
    lifting = target.clone()
    lifting[:, :, 1, 1] += 0.001 * torch.arange(10, dtype=torch.float64)
    assert L.foot_contact_loss(lifting, target, TINY, fps).item() == pytest.approx(0.0, abs=1e-12)


def test_foot_contact_mask_comes_from_the_target():
    fps = 30.0
    target = standing(10, batch=1)
    target[:, :, 1, 1] += 0.3  # left foot held 30 cm up: never in contact
    pred = target.clone()
    pred[:, :, 1, 0] += 0.02 * torch.arange(10, dtype=torch.float64)  # the raised foot moves: not penalized
    assert L.foot_contact_loss(pred, target, TINY, fps).item() == 0.0
    assert L.contact_mask(target, TINY, fps)[0, :, 0].any().item() is False
    assert L.contact_mask(target, TINY, fps)[0, :, 1].all().item() is True
    nothing = standing(10, batch=1)
    nothing[..., 1] += 0.3 * torch.arange(10, dtype=torch.float64)[:, None]  # rising fast: no contact at all
    assert L.foot_contact_loss(nothing + 0.1, nothing, TINY, fps).item() == 0.0


def test_foot_contact_loss_matches_the_numpy_sliding_metric():
    rng = np.random.default_rng(3)
    t = np.arange(40)
    clip = np.repeat(TINY_POSE.numpy()[None], 40, axis=0)
    clip[:, 1, 1] += 0.04 * (np.sin(t / 4.0) > 0.3)  # the left foot steps up and down
    clip[:, 1, 0] += 0.01 * t  # and drifts
    clip[:, 2] += rng.normal(0, 0.004, (40, 3))  # the right foot jitters
    clip = clip.astype(np.float32)
    expected = foot_sliding_speed(clip, TINY, 30.0)
    as_tensor = torch.as_tensor(clip, dtype=torch.float64)[None]
    assert L.foot_contact_loss(as_tensor, as_tensor, TINY, 30.0).item() == pytest.approx(expected, rel=1e-4)


def test_shape_mismatch_is_rejected():
    with pytest.raises(ValueError, match="B, T, J, 3"):
        L.mse_loss(standing(4), standing(5))


@pytest.mark.parametrize(
    "term",
    [
        lambda p, t: L.mse_loss(p, t),
        lambda p, t: L.velocity_loss(p, t),
        lambda p, t: L.smoothness_loss(p, t),
        lambda p, t: L.end_effector_loss(p, t, TINY),
        lambda p, t: L.bone_length_loss(p, t, TINY),
        lambda p, t: L.joint_range_loss(p, t, TINY),
        lambda p, t: L.foot_contact_loss(p, t, TINY, 30.0),
    ],
    ids=["mse", "velocity", "smoothness", "end_effector", "bone", "joint_range", "foot_contact"],
)
def test_stage2_terms_are_differentiable(term):
    gen = torch.Generator().manual_seed(7)
    target = standing(5) + 0.003 * torch.randn(2, 5, 5, 3, generator=gen, dtype=torch.float64)
    # far enough from the target that bones leave the joint-range band and feet slide
    scale = torch.tensor([1.4, 0.6], dtype=torch.float64)[:, None, None, None]
    prediction = (target * scale + 0.02 * torch.randn(2, 5, 5, 3, generator=gen, dtype=torch.float64))
    prediction.requires_grad_(True)
    assert term(prediction, target).item() > 0
    assert torch.autograd.gradcheck(lambda p: term(p, target), (prediction,), fast_mode=True)


def test_foot_contact_loss_matches_the_numpy_metric_on_real_clips(shared_data):
    data = np.load(shared_data / "uiprmd_kinect.npz")
    offsets, fps, joints = data["offsets"], float(data["fps"]), data["joints_flat"]  # each access decompresses
    picks = np.linspace(0, len(offsets) - 2, 12).astype(int)
    for i in picks:
        clip = joints[offsets[i] : offsets[i + 1]]
        expected = foot_sliding_speed(clip, "uiprmd22", fps)
        as_tensor = torch.as_tensor(clip, dtype=torch.float64)[None]
        value = L.foot_contact_loss(as_tensor, as_tensor, "uiprmd22", fps).item()
        assert value == pytest.approx(expected, rel=1e-3, abs=1e-6), f"clip {i}"
