"""The audit's attackers: the common interface, seeded determinism, save/load, and that bone lengths alone
re-identify the synthetic performers (who have distinct bodies) far above chance."""

from __future__ import annotations

import numpy as np
import pytest

from dtmr.audit.attackers import ATTACKERS, load_attacker, make_attacker
from dtmr.audit.attackers.base import Attacker
from dtmr.audit.attackers.tcn import TCNAttacker, TCNConfig, TemporalConvNet
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
