import numpy as np
import torch

from dtmr.data.synthetic import generate_clips
from dtmr.skeleton import NTU25, normalize
from dtmr.train.alignment import align_to_source, dtw_paths


def brute_force_dtw(cost):
    t, u = cost.shape
    acc = np.full((t + 1, u + 1), np.inf)
    acc[0, 0] = 0
    for i in range(1, t + 1):
        for j in range(1, u + 1):
            acc[i, j] = cost[i - 1, j - 1] + min(acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1])
    return acc[t, u]


def test_paths_are_optimal_monotone_and_complete(rng):
    cost = rng.uniform(size=(5, 9, 7))
    paths = dtw_paths(cost)
    for b in range(5):
        cells = np.argwhere(paths[b])
        assert tuple(cells[0]) == (0, 0) and tuple(cells[-1]) == (8, 6)
        steps = np.diff(cells, axis=0)
        assert ((steps >= 0) & (steps <= 1)).all() and (steps.sum(axis=1) >= 1).all()
        assert np.isclose((cost[b] * paths[b]).sum(), brute_force_dtw(cost[b]))


def test_a_slowed_down_copy_is_aligned_back_onto_the_source():
    clip = generate_clips(subjects=1, actions=2, repetitions=1, seed=0, noise=0.0)[1]  # a wave
    source = torch.from_numpy(normalize(clip.joints, NTU25)[0])[None]
    # the same performance, but the first half played at half speed and the rest squeezed
    t = np.linspace(0, 1, 64) ** 1.6 * 63
    warped = torch.from_numpy(np.stack([np.interp(t, np.arange(64), source[0, :, j, c].numpy())
                                        for j in range(25) for c in range(3)], axis=1).reshape(64, 25, 3))[None]
    aligned = align_to_source(warped.float(), source, NTU25)
    before = (warped - source).pow(2).mean().item()
    after = (aligned - source).pow(2).mean().item()
    assert after < 0.2 * before, (before, after)
    assert torch.equal(align_to_source(source, source, NTU25), source)
