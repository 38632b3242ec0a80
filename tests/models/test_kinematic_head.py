"""The kinematic output head: every decoded frame has exactly the reference's mean-pose bone lengths."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from dtmr.models import DisentangledTMR, DTMRConfig
from dtmr.models.baselines.naive import NaiveRetargeter, mean_pose_bone_lengths
from dtmr.models.config import variant_label
from dtmr.models.kinematic_head import KinematicHead
from dtmr.skeleton import get_topology
from dtmr.skeleton.retarget import naive_retarget


def kinematic_model(topology: str = "ntu25", seed: int = 0, **overrides) -> DisentangledTMR:
    torch.manual_seed(seed)
    return DisentangledTMR(DTMRConfig.preset("small", topology, output_head="kinematic", **overrides)).eval()


def clips(batch: int, joints: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return 0.3 * torch.randn((batch, 64, joints, 3), generator=g)


def frame_bone_lengths(joints: torch.Tensor, topology: str) -> torch.Tensor:
    topo = get_topology(topology)
    return torch.linalg.vector_norm(joints[..., topo.bone_children, :] - joints[..., topo.bone_parents, :], dim=-1)


def test_head_is_forward_kinematics_of_the_source_directions():
    """Fed the source's own root and bone vectors, the head rebuilds the naive retarget: the source's
    directions on the reference's bone lengths."""
    topo = get_topology("ntu25")
    src, ref = clips(2, 25, seed=1), clips(2, 25, seed=2)
    vectors = src[:, :, topo.bone_children] - src[:, :, topo.bone_parents]  # (B, T, J-1, 3)
    raw = torch.cat([src[:, :, topo.root], vectors.flatten(-2)], dim=-1)
    out = KinematicHead(topo)(raw, mean_pose_bone_lengths(ref, topo)).unflatten(-1, (25, 3))
    torch.testing.assert_close(out, NaiveRetargeter(topo)(src, ref), atol=1e-5, rtol=0)
    expected = naive_retarget(src[0].numpy(), ref[0].numpy(), topo)
    np.testing.assert_allclose(out[0].numpy(), expected, atol=1e-5)


@pytest.mark.parametrize("topology, joints", [("ntu25", 25), ("uiprmd22", 22), ("kinect_v1_20", 20)])
def test_every_decoded_frame_has_the_references_bone_lengths(topology, joints):
    model = kinematic_model(topology)
    src, ref = clips(3, joints, seed=1), clips(3, joints, seed=2)
    body = mean_pose_bone_lengths(ref, get_topology(topology))
    with torch.inference_mode():
        out = model.retarget(src, ref)
        forced = model(src, ref, target=src, teacher_forcing=1.0)
    for decoded in (out, forced):
        assert decoded.shape == (3, 64, joints, 3)
        torch.testing.assert_close(frame_bone_lengths(decoded, topology), body[:, None].expand(-1, 64, -1),
                                   atol=1e-5, rtol=1e-5)


def test_cached_uncached_and_teacher_forced_decoding_agree():
    model = kinematic_model().double()
    src, ref = clips(2, 25, seed=1).double(), clips(2, 25, seed=2).double()
    with torch.no_grad():
        memory, identity, body = model.encode_action(src), model.encode_identity(ref), model.body(ref)
        cached = model.decoder.generate_cached(memory, identity, body)
        uncached = model.decoder.generate_uncached(memory, identity, body)
        forced = model.decoder.teacher_forced(memory, identity, cached[:, :-1], body)
    torch.testing.assert_close(cached, uncached, atol=1e-10, rtol=0)
    torch.testing.assert_close(cached, forced, atol=1e-10, rtol=0)


def test_gradients_reach_every_decoder_parameter():
    model = kinematic_model().train()
    src, ref = clips(2, 25, seed=1), clips(2, 25, seed=2)
    model(src, ref, target=src, teacher_forcing=1.0).pow(2).mean().backward()
    missing = [n for n, p in model.decoder.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0]
    assert missing == []


def test_option_round_trips_labels_and_is_checked():
    config = DTMRConfig.preset("small", output_head="kinematic", residual="naive")
    assert DTMRConfig.from_dict(config.to_dict()) == config
    old = {k: v for k, v in config.to_dict().items() if k != "output_head"}  # checkpoints before the option
    assert DTMRConfig.from_dict(old).output_head == "joints"
    assert variant_label(config.to_dict()) == "small, naive residual, kinematic output"
    assert kinematic_model().decoder.output.out_features == 3 + 3 * 24
    assert DisentangledTMR(DTMRConfig.preset("small")).body(clips(1, 25)) is None
    with pytest.raises(ValueError, match="output_head must be one of joints, kinematic"):
        DTMRConfig(output_head="bones")
    with pytest.raises(ValueError, match="needs the reference's bone lengths"):
        model = kinematic_model()
        with torch.no_grad():
            src = clips(1, 25)
            model.decode(model.encode_action(src), model.encode_identity(src))
