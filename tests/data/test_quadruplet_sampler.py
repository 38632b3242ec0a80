"""The quadruplet sampler: order and invariants, determinism, the exact set of valid combinations, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dtmr.data import QuadrupletSampler, split_indices
from dtmr.errors import DtmrError


def _random_table(rng, clips=600, subjects=7, actions=6, views=3, unknown=0.03):
    table = {
        "subject": rng.integers(1, subjects + 1, clips),
        "action": rng.integers(0, actions, clips),
        "view": rng.integers(1, views + 1, clips),
    }
    for name in ("subject", "action"):
        table[name][rng.random(clips) < unknown] = -1
    return table


def _brute_force_combinations(table, indices):
    """Every valid (view, P1, A1, P2, A2) by enumeration."""
    cells = {(table["view"][i], table["subject"][i], table["action"][i]) for i in indices
             if table["subject"][i] >= 0 and table["action"][i] >= 0}
    found = set()
    for (v, p1, a1), (w, p2, a2) in itertools.product(cells, cells):
        if v == w and p1 != p2 and a1 != a2 and (v, p1, a2) in cells and (v, p2, a1) in cells:
            found.add((v, p1, a1, p2, a2))
    return found


def _check_invariants(table, quads, allowed):
    subject, action, view = (np.asarray(table[k])[quads] for k in ("subject", "action", "view"))
    assert quads.dtype == np.int64 and quads.shape[1] == 4
    assert np.isin(quads, allowed).all()
    assert (subject >= 0).all() and (action >= 0).all()
    assert (subject[:, 0] == subject[:, 1]).all() and (subject[:, 2] == subject[:, 3]).all()
    assert (subject[:, 0] != subject[:, 2]).all()
    assert (action[:, 0] == action[:, 2]).all() and (action[:, 1] == action[:, 3]).all()
    assert (action[:, 0] != action[:, 1]).all()
    assert (view == view[:, :1]).all()


def test_quadruplets_are_two_subjects_times_two_actions_in_one_view():
    rng = np.random.default_rng(0)
    table = _random_table(rng)
    indices = np.flatnonzero(rng.random(600) < 0.7)
    sampler = QuadrupletSampler(table, indices, seed=3)
    quads = sampler.sample(5000)
    assert quads.shape == (5000, 4)
    _check_invariants(table, quads, indices)


def test_it_samples_exactly_the_valid_combinations_uniformly():
    rng = np.random.default_rng(1)
    table = _random_table(rng, clips=60, subjects=4, actions=4, views=2)
    sampler = QuadrupletSampler(table, seed=0)
    valid = _brute_force_combinations(table, range(60))
    assert sampler.combinations == len(valid)
    quads = sampler.sample(40 * len(valid))
    drawn = [tuple(int(x) for x in row) for row in zip(
        table["view"][quads[:, 0]], table["subject"][quads[:, 0]], table["action"][quads[:, 0]],
        table["subject"][quads[:, 3]], table["action"][quads[:, 3]])]
    counts = np.array([drawn.count(c) for c in sorted(valid)])
    assert set(drawn) == valid
    assert counts.min() > 10 and counts.max() < 80  # expected 40 each


def test_every_repetition_of_a_cell_is_used():
    table = {"subject": np.repeat([1, 2], 6), "action": np.tile(np.repeat([0, 1], 3), 2)}  # 3 clips per cell
    quads = QuadrupletSampler(table, seed=0).sample(400)
    assert set(quads[:, 0]) | set(quads[:, 1]) | set(quads[:, 2]) | set(quads[:, 3]) == set(range(12))


def test_sampling_is_deterministic_per_seed():
    table = _random_table(np.random.default_rng(2))
    first = QuadrupletSampler(table, seed=5).sample(300)
    again = QuadrupletSampler(table, seed=5).sample(300)
    other = QuadrupletSampler(table, seed=6).sample(300)
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    sampler = QuadrupletSampler(table, seed=5)
    assert not np.array_equal(sampler.sample(300), sampler.sample(300))  # a stream, not a repeat


def test_views_are_never_mixed_even_when_only_a_cross_view_quadruplet_exists():
    table = {"subject": np.array([1, 1, 2, 2]), "action": np.array([0, 1, 0, 1]), "view": np.array([1, 1, 2, 2])}
    with pytest.raises(DtmrError, match="no quadruplet"):
        QuadrupletSampler(table)
    table["view"] = np.array([-1, -1, -1, -1])  # unknown views: one group
    assert QuadrupletSampler(table).combinations == 4
    del table["view"]
    assert QuadrupletSampler(table).sample(3).shape == (3, 4)


def test_large_requests_are_fast_and_blockwise_consistent():
    table = _random_table(np.random.default_rng(3), clips=20000, subjects=40, actions=49, views=3)
    quads = QuadrupletSampler(table, seed=0).sample(50000)
    _check_invariants(table, quads, np.arange(20000))
    assert QuadrupletSampler(table).sample(0).shape == (0, 4)


@pytest.mark.parametrize(
    "table, indices, message",
    [
        ({"action": np.array([0, 1])}, None, "subject"),
        ({"subject": np.array([1, 1, 1, 1]), "action": np.array([0, 1, 0, 1])}, None, "no quadruplet"),
        ({"subject": np.array([1, 1, 2, 2]), "action": np.array([0, 1, 0, 2])}, None, "no quadruplet"),
        ({"subject": np.array([1, 1, 2, 2]), "action": np.array([0, 1, 0, -1])}, None, "no quadruplet"),
        ({"subject": np.array([1, 1, 2, 2]), "action": np.array([0, 1, 0, 1])}, [0, 4], "indices"),
        ({"subject": np.array([1, 2]), "action": np.array([0])}, None, "lengths"),
        ({"subject": np.array([], dtype=int), "action": np.array([], dtype=int)}, None, "no quadruplet"),
    ],
)
def test_impossible_requests_raise_clear_errors(table, indices, message):
    with pytest.raises(DtmrError, match=message):
        QuadrupletSampler(table, indices)


def test_real_nwucla_training_quadruplets(shared_data):
    with np.load(shared_data / "nwucla.npz") as data:
        table = {k: data[k].astype(np.int64) for k in ("subject", "action", "view")}
    train, _ = split_indices("nwucla", table)
    quads = QuadrupletSampler(table, train, seed=0).sample(2000)
    _check_invariants(table, quads, train)
    assert set(table["view"][quads[:, 0]]) == {0, 1}
