import numpy as np
import pytest
import torch

from dtmr.models.baselines import DMR, PMR
from dtmr.models.baselines.temporal import resample_frames
from dtmr.skeleton import get_topology, resample


def count(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_parameter_counts_match_the_public_models_on_ntu25():
    pmr, dmr = PMR("ntu25", num_subjects=40, num_actions=60), DMR("ntu25")
    assert count(pmr.dynamic_encoder) == count(pmr.static_encoder) == 318_856
    assert count(pmr.decoder) == 353_931
    assert count(dmr.dynamic_encoder) == count(dmr.static_encoder) == 2_197_000
    assert count(dmr.decoder) == 550_539
    assert count(pmr.discriminator) == 25_209
    # about 1.61M per embedding classifier with 40 classes (SPEC_NOTES §2.3)
    assert count(pmr.priv_adv) == 1_613_992
    assert not hasattr(dmr, "priv_adv") and not dmr.has_critics


@pytest.mark.parametrize("topology", ["kinect_v1_20", "uiprmd22", "ntu25"])
def test_shapes_for_every_joint_count(topology):
    torch.manual_seed(0)
    joints = get_topology(topology).num_joints
    src, ref = torch.randn(2, 64, joints, 3), torch.randn(2, 64, joints, 3)
    pmr, dmr = PMR(topology, num_subjects=7, num_actions=5), DMR(topology)
    for model, latent in ((pmr, (128, 16)), (dmr, (256, 32))):
        assert model.encode_motion(src).shape == (2, *latent)
        assert model.encode_privacy(ref).shape == (2, *latent)
        assert model.decoder(torch.zeros(2, 2 * latent[0], latent[1])).shape == (2, 75, joints * 3)
        assert model.retarget(src, ref).shape == (2, 64, joints, 3)
    codes = pmr.encode_motion(src)
    assert pmr.priv_adv(codes).shape == (2, 7) and pmr.util_coop(codes).shape == (2, 5)
    assert pmr.quality_logits(src).shape == (2,)


def test_retarget_is_the_decoder_of_the_source_motion_and_the_reference_privacy_code():
    torch.manual_seed(1)
    model = PMR("kinect_v1_20", num_subjects=3, num_actions=3).eval()
    src, ref, other = (torch.randn(2, 64, 20, 3) for _ in range(3))
    expected = model.decode(model.encode_motion(src), model.encode_privacy(ref))
    torch.testing.assert_close(model.retarget(src, ref), expected)
    assert not torch.allclose(model.retarget(src, other), expected)
    assert not torch.allclose(model.retarget(other, ref), expected)


def test_retarget_rejects_wrong_shapes():
    model = DMR("kinect_v1_20")
    with pytest.raises(ValueError, match="64, 20, 3"):
        model.retarget(torch.zeros(1, 75, 20, 3), torch.zeros(1, 64, 20, 3))
    with pytest.raises(ValueError, match="batch"):
        model.retarget(torch.zeros(2, 64, 20, 3), torch.zeros(1, 64, 20, 3))


def test_time_resampling_matches_the_library_resampling_and_keeps_the_ends():
    clip = np.random.default_rng(0).normal(size=(64, 5, 3)).astype(np.float32)
    up = resample_frames(torch.from_numpy(clip)[None], 75)[0].numpy()
    np.testing.assert_allclose(up, resample(clip, 75), rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(up[[0, -1]], clip[[0, -1]])
    back = resample_frames(torch.from_numpy(up)[None], 64)[0].numpy()
    np.testing.assert_allclose(back[[0, -1]], clip[[0, -1]], atol=1e-6)
