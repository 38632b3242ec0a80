"""The ST-GCN attacker: its graph (ST-GCN's three partitions from the topology's bones), its size, and that it
is an attacker like the others: seeded, saved and loaded (weights_only) to the same probabilities."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dtmr.attackers import load_attacker
from dtmr.attackers.base import read_attacker_file
from dtmr.attackers.gcn import GCNAttacker, GCNConfig, SpatialTemporalGCN, partitions
from dtmr.skeleton import get_topology


@pytest.mark.parametrize("topology", ["kinect_v1_20", "ntu25"])
def test_each_joint_averages_itself_its_parent_and_its_children(topology):
    topo = get_topology(topology)
    a = partitions(topo).numpy()  # (3, J, J)
    np.testing.assert_allclose(a.sum(axis=(0, 1)), 1.0, rtol=1e-6)  # every joint's neighbourhood averaged
    np.testing.assert_array_equal(a[0] > 0, np.eye(topo.num_joints, dtype=bool))
    np.testing.assert_array_equal((a[1] + a[2]) > 0, topo.adjacency > 0)  # the bones, nothing else
    for parent, child in topo.bones:
        assert a[1, parent, child] > 0 and a[2, child, parent] > 0


def test_the_network_is_small_and_pools_over_time_per_joint():
    net = SpatialTemporalGCN(get_topology("kinect_v1_20"), 10, GCNConfig())
    assert 0.2e6 < sum(p.numel() for p in net.parameters()) < 0.4e6  # ~0.31M: fast enough on one core
    out = net.eval().features(torch.zeros(3, 64, 20, 3))
    assert out.shape == (3, 4 * GCNConfig().width * 20)  # pooled over time, per joint


def test_same_seed_same_gcn_and_a_round_trip_through_its_file(synthetic_raw, tmp_path):
    _, clips = synthetic_raw
    train = [c for c in clips if c.repetition < 2]
    test = [c for c in clips if c.repetition == 2]
    labels = [c.subject for c in train]
    config = GCNConfig(epochs=2)
    a, b, c = GCNAttacker(config), GCNAttacker(config), GCNAttacker(config)
    a.fit(train, labels, seed=5)
    b.fit(train, labels, seed=5)
    c.fit(train, labels, seed=6)
    pa = a.predict_proba(test)
    np.testing.assert_array_equal(pa, b.predict_proba(test))
    assert not np.array_equal(pa, c.predict_proba(test))
    assert a.epochs_trained == 2 and a.embed(test).shape == (len(test), 4 * config.width * 25)
    a.save(tmp_path / "g.pt")
    assert torch.load(tmp_path / "g.pt", weights_only=True)["attacker"] == "stgcn"
    assert read_attacker_file(tmp_path / "g.pt", "stgcn")["config"]["training"]["epochs_trained"] == 2
    loaded = GCNAttacker.load(tmp_path / "g.pt")
    assert loaded.classes == a.classes and loaded.config == config and loaded.epochs_trained == 2
    np.testing.assert_allclose(loaded.predict_proba(test), pa, atol=1e-6)


def test_load_attacker_reads_a_gcn_file(synthetic_raw, tmp_path):
    _, clips = synthetic_raw
    attacker = GCNAttacker(GCNConfig(epochs=1))
    attacker.fit(clips, [c.subject for c in clips], seed=0)
    attacker.save(tmp_path / "g.pt")
    assert type(load_attacker(tmp_path / "g.pt")) is GCNAttacker
