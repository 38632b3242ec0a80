import math

import pytest
import torch
from torch import nn

from dtmr.models.baselines import DMR, DMR_SCHEDULE, PMR, PMR_SCHEDULE, schedule_for
from dtmr.models.baselines.pmr_losses import (
    CROSS_PAIRS,
    MOTION_MATCHES,
    MOTION_TRIPLETS,
    PRIVACY_MATCHES,
    PRIVACY_TRIPLETS,
    QuadrupletBatch,
    UnpairedBatch,
    chain_lengths,
    classification_loss,
    confusion_loss,
    end_effector_loss,
    generator_losses,
    reconstruction_loss,
    smoothness_loss,
)
from dtmr.models.baselines.pmr_training import build_optimizers, training_step
from dtmr.skeleton import get_topology


def subject_of(item: int) -> int:  # quadruplet order [(P1,A1), (P1,A2), (P2,A1), (P2,A2)]
    return item // 2


def action_of(item: int) -> int:
    return item % 2


def test_cross_targets_take_the_subject_of_the_privacy_item_and_the_action_of_the_motion_item():
    assert len(CROSS_PAIRS) == 4
    for motion, privacy, target in CROSS_PAIRS:
        assert subject_of(motion) != subject_of(privacy) and action_of(motion) != action_of(privacy)
        assert subject_of(target) == subject_of(privacy) and action_of(target) == action_of(motion)
    # dec(E_M(x[P1,A1]), E_P(x[P2,A2])) -> x[P2,A1]: the public code's target x[P1,A2] (item 1) is wrong
    assert (0, 3, 2) in CROSS_PAIRS


def test_triplets_and_latent_matches_pair_the_right_factor():
    for a, p, n in MOTION_TRIPLETS:
        assert action_of(a) == action_of(p) != action_of(n)
    for a, p, n in PRIVACY_TRIPLETS:
        assert subject_of(a) == subject_of(p) != subject_of(n)
    assert all(action_of(i) == action_of(j) and i != j for i, j in MOTION_MATCHES)
    assert all(subject_of(i) == subject_of(j) and i != j for i, j in PRIVACY_MATCHES)


class OracleAutoencoder(nn.Module):
    """Clips are constant 10*subject + action; the codes are the action and the subject; decoding
    rebuilds the clip of (privacy subject, motion action). Every reconstruction is then exact only
    when each output is compared with the right target."""

    def __init__(self, topology="kinect_v1_20"):
        super().__init__()
        self.topology = get_topology(topology)
        self.method = "oracle"

    def encode_motion(self, x):
        return (x[:, 0, 0, 0] % 10).view(-1, 1, 1)

    def encode_privacy(self, x):
        return (x[:, 0, 0, 0] // 10).view(-1, 1, 1)

    def decode(self, motion, privacy, frames=64):
        value = 10 * privacy.view(-1) + motion.view(-1)
        return value.view(-1, 1, 1, 1).expand(-1, frames, self.topology.num_joints, 3).clone()


def quadruplets(subjects, actions, frames=16, joints=20):
    subjects, actions = torch.tensor(subjects), torch.tensor(actions)
    value = 10 * subjects[:, [0, 0, 1, 1]] + actions[:, [0, 1, 0, 1]]
    clips = value.float().view(-1, 4, 1, 1, 1).expand(-1, 4, frames, joints, 3).clone()
    return QuadrupletBatch(clips, subjects, actions)


def test_paired_losses_vanish_for_a_model_that_decodes_the_right_targets():
    batch = quadruplets([[1, 2], [3, 4]], [[5, 6], [7, 8]])
    flat = batch.flat()
    assert flat.subjects.tolist() == [1, 1, 2, 2, 3, 3, 4, 4]
    assert flat.actions.tolist() == [5, 6, 5, 6, 7, 8, 7, 8]
    for faithful in (False, True):
        terms = generator_losses(OracleAutoencoder(), batch, faithful=faithful)
        for name in ("reconstruction", "cross", "end_effector", "smoothness", "latent"):
            assert float(terms[name]) == 0.0, name


def test_reconstruction_faithful_is_frames_times_the_per_element_mse():
    pred, target = torch.randn(3, 64, 5, 3), torch.randn(3, 64, 5, 3)
    fixed = reconstruction_loss(pred, target)
    torch.testing.assert_close(fixed, ((pred - target) ** 2).mean())
    torch.testing.assert_close(reconstruction_loss(pred, target, faithful=True), 64 * fixed)


def test_smoothness_and_end_effector_losses():
    topo = get_topology("ntu25")
    assert chain_lengths(topo).tolist() == [5, 5, 8, 8, 8, 8, 5]
    target = torch.randn(2, 10, 25, 3, dtype=torch.float64)
    # the same motion, moved: same velocities and speeds
    shifted = target + torch.tensor([0.3, -0.2, 0.1], dtype=torch.float64)
    for faithful in (False, True):
        assert float(smoothness_loss(shifted, target, faithful)) == pytest.approx(0.0, abs=1e-5)
        assert float(end_effector_loss(shifted, target, topo, faithful)) == pytest.approx(0.0, abs=1e-5)
    faster = target * torch.linspace(1, 2, 10, dtype=torch.float64).view(1, 10, 1, 1)
    assert float(smoothness_loss(faster, target)) > 0 and float(end_effector_loss(faster, target, topo)) > 0
    # the public formula: sqrt(sum |d_gt - d_pred|) / (B*T), d_t = (sum over coordinates of y_t - y_{t+1})^2
    pred = torch.zeros(1, 3, 1, 3)
    gt = torch.tensor([0.0, 1.0, 3.0]).view(1, 3, 1, 1).expand(1, 3, 1, 3)
    # gt: differences summed over 3 coordinates are -3, -6 -> squared 9, 36
    assert float(smoothness_loss(pred, gt, faithful=True)) == pytest.approx(math.sqrt(45) / 3)


def test_classification_and_confusion_losses():
    logits = torch.tensor([[4.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    labels = torch.tensor([0, 1])
    torch.testing.assert_close(classification_loss(logits, labels), nn.functional.cross_entropy(logits, labels))
    double = nn.functional.cross_entropy(logits.softmax(-1), labels)
    torch.testing.assert_close(classification_loss(logits, labels, faithful=True), double)
    torch.testing.assert_close(confusion_loss(logits, labels, faithful=True), -double)
    # fixed: KL(p || uniform): zero when the adversary is confused, positive when it is confident
    assert float(confusion_loss(torch.zeros(4, 3), torch.zeros(4, dtype=torch.long))) == pytest.approx(0.0, abs=1e-6)
    assert float(confusion_loss(logits[:1], labels[:1])) > 0.5


def test_adversarial_terms_need_pmr():
    batch = UnpairedBatch(torch.randn(2, 64, 20, 3), torch.tensor([0, 1]), torch.tensor([1, 0]))
    with pytest.raises(ValueError, match="critics"):
        generator_losses(DMR("kinect_v1_20"), batch, adversarial=True)


def test_schedules_as_data():
    assert sum(s["epochs"] for s in PMR_SCHEDULE) == 295
    by_paper_stage = {}
    for s in PMR_SCHEDULE:
        by_paper_stage[s["paper_stage"]] = by_paper_stage.get(s["paper_stage"], 0) + s["epochs"]
    assert by_paper_stage == {1: 25, 2: 70, 3: 100, 4: 100}
    assert [s["paired"] for s in PMR_SCHEDULE] == [True, False, True, False, False, True]
    assert sum(s["epochs"] for s in DMR_SCHEDULE) == 225
    assert all(s["train_autoencoder"] and not (s["emb_adv"] or s["discrim_adv"] or s["train_emb_adv"]
                                               or s["train_discrim_adv"]) for s in DMR_SCHEDULE)
    copy = schedule_for("pmr")
    copy[0]["epochs"] = 1
    assert PMR_SCHEDULE[0]["epochs"] == 5
    with pytest.raises(ValueError):
        schedule_for("dtmr")


def snapshot(module):
    return [p.detach().clone() for p in module.parameters()]


def changed(before, module):
    return any(not torch.equal(a, b) for a, b in zip(before, module.parameters()))


def test_training_steps_update_only_the_stage_modules_and_reduce_the_loss():
    torch.manual_seed(0)
    model = PMR("kinect_v1_20", num_subjects=2, num_actions=2)
    optimizers = build_optimizers(model, lr=1e-3, critic_lr=1e-3)
    assert set(optimizers) == {"autoencoder", "priv_adv", "priv_coop", "util_adv", "util_coop", "discriminator"}
    batch = quadruplets([[0, 1]], [[0, 1]], frames=64)
    batch.clips = batch.clips * 0.01 + 0.1 * torch.randn_like(batch.clips)

    critics, autoencoder = snapshot(model.priv_adv), snapshot(model.decoder)
    first = training_step(model, optimizers, batch, PMR_SCHEDULE[0])
    assert changed(autoencoder, model.decoder) and not changed(critics, model.priv_adv)
    for _ in range(4):
        last = training_step(model, optimizers, batch, PMR_SCHEDULE[0])
    assert last["reconstruction"] < first["reconstruction"]

    critics, autoencoder = snapshot(model.priv_adv), snapshot(model.decoder)
    logged = training_step(model, optimizers, batch, PMR_SCHEDULE[2])
    assert changed(critics, model.priv_adv) and not changed(autoencoder, model.decoder)
    assert {"critic/priv_adv", "critic/discriminator"} <= set(logged)

    logged = training_step(model, optimizers, batch, PMR_SCHEDULE[5], faithful=True)
    assert {"privacy", "utility", "quality", "cross", "latent"} <= set(logged)
    assert all(math.isfinite(v) for v in logged.values())
    with pytest.raises(ValueError, match="UnpairedBatch"):
        training_step(model, optimizers, batch, PMR_SCHEDULE[1])
