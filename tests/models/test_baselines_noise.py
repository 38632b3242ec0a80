import numpy as np
import pytest
import torch

from dtmr import Clip
from dtmr.data.provenance import Provenance
from dtmr.models.baselines import GaussianNoise, add_joint_noise, noisy_clip


def test_numpy_noise_has_the_requested_std_and_is_seeded():
    joints = np.zeros((200, 25, 3), dtype=np.float32)
    noisy = add_joint_noise(joints, sigma=0.05, rng=1)
    assert noisy.dtype == np.float32
    assert noisy.std() == pytest.approx(0.05, rel=0.03) and abs(noisy.mean()) < 0.002
    np.testing.assert_array_equal(noisy, add_joint_noise(joints, 0.05, 1))
    assert not np.array_equal(noisy, add_joint_noise(joints, 0.05, 2))
    joints[3, 4] = np.nan
    assert np.isnan(add_joint_noise(joints, 0.05, 1)[3, 4]).all()
    with pytest.raises(ValueError):
        add_joint_noise(joints, sigma=-1)


def test_retargeter_noise_std_seed_and_interface():
    src = torch.randn(4, 64, 20, 3)
    model = GaussianNoise("kinect_v1_20", sigma=0.1, seed=7)
    assert model.method == "noise" and model.beta == 1.0 and model.config_dict() == {"sigma": 0.1, "seed": 7}
    first = model.retarget(src, torch.zeros_like(src))
    second = model.retarget(src, torch.randn_like(src))
    assert (first - src).std().item() == pytest.approx(0.1, rel=0.05)
    assert not torch.equal(first, second)  # successive batches get fresh noise
    again = GaussianNoise("kinect_v1_20", sigma=0.1, seed=7)
    torch.testing.assert_close(again.retarget(src, src), first)  # the reference is ignored
    model.reseed(7)
    torch.testing.assert_close(model.retarget(src, src), first)
    with pytest.raises(ValueError):
        model.retarget(torch.zeros(1, 64, 25, 3), torch.zeros(1, 64, 25, 3))


def test_noisy_clip_provenance():
    clip = Clip(np.zeros((10, 20, 3), dtype=np.float32), topology="kinect_v1_20", subject=2, sample_name="s")
    out = noisy_clip(clip, sigma=0.02, seed=3)
    assert out.subject == 2 and out.extra == {"source_clip": "s", "method": "noise", "beta": "1", "sigma": "0.02",
                                              "provenance_version": "1"}
    assert Provenance.from_clip(out) == Provenance("noise", beta=1.0, sigma=0.02, source_clip="s")
    assert 0.01 < out.joints.std() < 0.03
