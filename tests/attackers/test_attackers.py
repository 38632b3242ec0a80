"""The audit's attackers: the common interface, seeded determinism, save/load, that bone lengths alone
re-identify the synthetic performers (who have distinct bodies) far above chance, and the learned attackers'
training loop (training.py): a stratified hold-out, early stopping on it, the best epoch's weights kept, the
augmentation, and that the TCN and the ST-GCN learn demo performers who differ by body size."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from dtmr.attackers import ATTACKERS, load_attacker, make_attacker
from dtmr.attackers.base import Attacker
from dtmr.attackers.gcn import GCNAttacker
from dtmr.attackers.tcn import TCNAttacker, TCNConfig, TemporalConvNet
from dtmr.attackers.training import (
    TrainingConfig,
    augmented,
    evaluate,
    fixed_decays,
    holdout_split,
    train_classifier,
    whole_clips,
)
from dtmr.errors import CheckpointError


def _fold(clips):
    train = [c for c in clips if c.repetition < 2]
    test = [c for c in clips if c.repetition == 2]
    return train, [c.subject for c in train], test, [c.subject for c in test]


@pytest.mark.parametrize("name", list(ATTACKERS))
def test_same_seed_same_predictions_and_save_load_round_trip(name, synthetic_raw, tmp_path):
    _, clips = synthetic_raw
    train, labels, test, _ = _fold(clips)
    a, b = make_attacker(name, epochs=1), make_attacker(name, epochs=1)
    a.fit(train, labels, seed=3)
    b.fit(train, labels, seed=3)
    assert isinstance(a, Attacker) and a.name == name
    assert a.classes == sorted(set(labels))
    pa = a.predict_proba(test)
    assert pa.shape == (len(test), len(a.classes))
    np.testing.assert_allclose(pa.sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_array_equal(pa, b.predict_proba(test))
    a.save(tmp_path / f"{name}.pt")
    loaded = load_attacker(tmp_path / f"{name}.pt")
    assert type(loaded) is type(a) and loaded.classes == a.classes
    np.testing.assert_allclose(loaded.predict_proba(test), pa, atol=1e-6)


def test_a_different_seed_trains_a_different_tcn(synthetic_raw):
    _, clips = synthetic_raw
    train, labels, test, _ = _fold(clips)
    a, b = make_attacker("tcn", epochs=1), make_attacker("tcn", epochs=1)
    a.fit(train, labels, seed=0)
    b.fit(train, labels, seed=1)
    assert not np.array_equal(a.predict_proba(test), b.predict_proba(test))


def test_bone_lengths_reidentify_synthetic_performers_far_above_chance(synthetic_raw):
    _, clips = synthetic_raw
    train, labels, test, truth = _fold(clips)
    attacker = make_attacker("bone-lengths")
    attacker.fit(train, labels, seed=0)
    predicted = np.array(attacker.classes)[attacker.predict_proba(test).argmax(axis=1)]
    accuracy = 100.0 * np.mean(predicted == np.array(truth))
    chance = 100.0 / len(set(labels))
    assert accuracy >= 3 * chance  # "re-identifies" (chance 25 %)


def test_tcn_is_the_calibrated_size_and_embeds_clips(synthetic_raw):
    _, clips = synthetic_raw
    net = TemporalConvNet(25, 10, TCNConfig())
    assert 0.4e6 < sum(p.numel() for p in net.parameters()) < 0.55e6  # DESIGN §5: ~0.47M parameters
    attacker = TCNAttacker(TCNConfig(epochs=1))
    train, labels, test, _ = _fold(clips)
    attacker.fit(train, labels, seed=0)
    assert attacker.embed(test).shape == (len(test), 4 * TCNConfig().width)


def test_loading_a_file_of_another_attacker_or_kind_is_an_error(synthetic_raw, tmp_path):
    _, clips = synthetic_raw
    train, labels, _, _ = _fold(clips)
    attacker = make_attacker("bone-lengths")
    attacker.fit(train, labels, seed=0)
    attacker.save(tmp_path / "b.pt")
    with pytest.raises(CheckpointError, match="not 'tcn'"):
        TCNAttacker.load(tmp_path / "b.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(CheckpointError, match="junk.pt.*not a valid saved attacker"):
        load_attacker(tmp_path / "junk.pt")
    (tmp_path / "cut.pt").write_bytes((tmp_path / "b.pt").read_bytes()[:-200])
    with pytest.raises(CheckpointError, match="cut.pt.*corrupted"):
        load_attacker(tmp_path / "cut.pt")
    with pytest.raises(CheckpointError, match="gone.pt.*no such saved attacker file"):
        load_attacker(tmp_path / "gone.pt")


@pytest.fixture(scope="module")
def demo_sizes():
    """Three demo performers of clearly different heights (1.42, 1.53 and 1.68 m): repetitions 0-1 train
    (72 clips), repetition 2 tests (36)."""
    from dtmr.io.library import ClipLibrary
    from dtmr.resources import resource_path

    with ClipLibrary(resource_path("demo/demo_library.h5")) as demo:
        clips = [c for c in demo.read_all() if c.subject in (5, 9, 8)]
    return _fold(clips)


@pytest.mark.parametrize("attacker", [TCNAttacker, GCNAttacker], ids=["tcn", "stgcn"])
def test_learned_attackers_tell_performers_apart_by_body_size(attacker, demo_sizes):
    train, labels, test, truth = demo_sizes
    attacker = attacker(attacker.config_class(epochs=12, batch=8, lr=5e-3, min_holdout=10))
    attacker.fit(train, labels, seed=0)
    predicted = np.array(attacker.classes)[attacker.predict_proba(test).argmax(axis=1)]
    assert np.mean(predicted == np.array(truth)) >= 0.8  # chance 1/3
    assert 1 <= attacker.record.best_epoch <= attacker.epochs_trained <= attacker.config.epochs
    assert attacker.record.holdout_clips == 12  # 15 % of each performer's 24 training clips, rounded up


def test_the_holdout_is_stratified_seeded_and_skipped_when_too_small():
    targets = np.array([0] * 20 + [1] * 7 + [2] * 2 + [3])
    fit, held = holdout_split(targets, 0.15, 4, np.random.default_rng(0))
    assert [int((targets[held] == c).sum()) for c in range(4)] == [3, 1, 1, 0]  # round(15 %), >= 1, not a lone clip
    assert sorted(np.concatenate([fit, held]).tolist()) == list(range(len(targets)))
    again = holdout_split(targets, 0.15, 4, np.random.default_rng(0))[1]
    np.testing.assert_array_equal(held, again)
    fit, held = holdout_split(targets, 0.15, 6, np.random.default_rng(0))
    assert len(held) == 0 and len(fit) == len(targets)  # 5 held-out clips < 6: train on all, for all epochs
    assert len(holdout_split(np.array([0, 0, 0, 1, 1, 1]), 0.5, 2, np.random.default_rng(0))[1]) == 4


def test_without_a_holdout_the_rate_decays_at_evenly_spaced_epochs():
    assert fixed_decays(TrainingConfig(epochs=60, lr_decays=2)) == [20, 40]
    assert fixed_decays(TrainingConfig(epochs=10, lr_decays=1)) == [5]


def test_augmentation_rotates_about_the_vertical_and_scales_within_its_bounds():
    rng = np.random.default_rng(0)
    clips = [rng.normal(size=(40, 5, 3)).astype(np.float32) for _ in range(64)]
    config = TrainingConfig(frames=40, min_crop=1.0, yaw_degrees=30.0, scale=0.1)
    x = augmented(clips, config, rng).numpy()  # (64, 40, 5, 3)
    plain = whole_clips(clips, 40).numpy()
    factor = x[..., 1] / plain[..., 1]  # the vertical is only scaled
    np.testing.assert_allclose(factor, np.broadcast_to(factor[:, :1, :1], factor.shape), rtol=1e-4)
    assert 0.9 <= factor.min() < 0.97 and 1.03 < factor.max() <= 1.1
    horizontal = np.linalg.norm(x[..., [0, 2]], axis=-1) / np.linalg.norm(plain[..., [0, 2]], axis=-1)
    np.testing.assert_allclose(horizontal, factor, rtol=1e-4)  # a rotation about +y keeps horizontal lengths


class _Heights(nn.Module):
    """A tiny classifier of clips by their mean height: (B, T, J, 3) -> (B, 2)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(1, 2)

    def forward(self, joints: torch.Tensor) -> torch.Tensor:
        return self.fc(joints[..., 1].mean(dim=(1, 2))[:, None])


def _heights(n: int = 80) -> tuple[list[np.ndarray], torch.Tensor]:
    """n (8, 2, 3) clips, label i % 2, heights 1.0 and 1.5 (+ noise): 12 of them held out."""
    rng = np.random.default_rng(1)
    clips = [np.full((8, 2, 3), 1.0 + 0.5 * (i % 2), np.float32) + rng.normal(0, 0.05, (8, 2, 3)).astype(np.float32)
             for i in range(n)]
    return clips, torch.tensor([i % 2 for i in range(n)])


def test_a_plateau_decays_the_rate_and_a_plateau_at_the_lowest_rate_stops_training():
    clips, targets = _heights()
    config = TrainingConfig(epochs=50, patience=3, lr_decays=2, min_holdout=4, frames=8, lr=0.0, warmup=0)
    torch.manual_seed(0)
    record = train_classifier(_Heights(), clips, targets, config, seed=0, device=torch.device("cpu"))
    # a model that learns nothing (rate 0) is best after epoch 1, then waits `patience` epochs at each rate
    assert record.best_epoch == 1 and record.decayed_after == [4, 7] and record.epochs_trained == 10
    assert record.holdout_clips == 12 and len(record.holdout_accuracy) == 10


def test_training_keeps_the_weights_of_the_best_held_out_epoch():
    clips, targets = _heights()
    config = TrainingConfig(epochs=12, patience=2, min_holdout=4, frames=8, lr=0.05, warmup=0, yaw_degrees=0.0)
    torch.manual_seed(0)
    model = _Heights()
    record = train_classifier(model, clips, targets, config, seed=0, device=torch.device("cpu"))
    _, held = holdout_split(targets.numpy(), config.holdout, config.min_holdout,
                            np.random.default_rng(np.random.SeedSequence([0, 0x40D])))
    kept, _ = evaluate(model, whole_clips([clips[i] for i in held], 8), targets[held], torch.device("cpu"))
    assert kept == max(record.holdout_accuracy) == record.holdout_accuracy[record.best_epoch - 1] == 100.0
    assert not model.training


def test_a_saved_tcn_loads_with_weights_only_and_keeps_its_training_record(synthetic_raw, tmp_path):
    _, clips = synthetic_raw
    train, labels, test, _ = _fold(clips)
    attacker = TCNAttacker(TCNConfig(epochs=2))
    attacker.fit(train, labels, seed=0)
    assert attacker.epochs_trained == 2 and attacker.record.holdout_clips == 0  # 24 clips: too few to hold out
    assert attacker.record.decayed_after == [1]  # the evenly spaced decays of 2 epochs
    attacker.save(tmp_path / "t.pt")
    payload = torch.load(tmp_path / "t.pt", weights_only=True)
    assert payload["config"]["training"]["epochs_trained"] == 2
    loaded = load_attacker(tmp_path / "t.pt")
    assert loaded.record == attacker.record and loaded.config == attacker.config
    np.testing.assert_allclose(loaded.predict_proba(test), attacker.predict_proba(test), atol=1e-6)
