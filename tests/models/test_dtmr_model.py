"""DisentangledTMR: shapes on every joint count, the paper's parameter counts, config presets, determinism."""

from __future__ import annotations

import pytest
import torch

from dtmr.models import DisentangledTMR, DTMRConfig
from dtmr.models.config import PRESET_NAMES

PAPER = {"total": 22.7e6, "action_encoder": 4.9e6, "mixformer": 2.3e6, "identity_encoder": 0.8e6, "decoder": 17.0e6}


def small_model(topology: str = "ntu25", seed: int = 0) -> DisentangledTMR:
    torch.manual_seed(seed)
    return DisentangledTMR(DTMRConfig.preset("small", topology)).eval()


def clips(batch: int, joints: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return 0.3 * torch.randn((batch, 64, joints, 3), generator=g)


@pytest.mark.parametrize("topology, joints", [("ntu25", 25), ("uiprmd22", 22), ("kinect_v1_20", 20)])
def test_shapes_follow_the_topology(topology, joints):
    model = small_model(topology)
    config = model.config
    assert config.num_joints == joints
    src, ref = clips(2, joints), clips(2, joints, seed=1)
    with torch.inference_mode():
        memory = model.encode_action(src)
        identity = model.encode_identity(ref)
        out = model.retarget(src, ref)
        teacher_forced = model.decode(memory, identity, target=src, teacher_forcing=1.0)
    assert memory.shape == (2, 64, config.action_dim)
    assert identity.shape == (2, config.identity_dim)
    assert out.shape == (2, 64, joints, 3)
    assert torch.isfinite(out).all()
    assert teacher_forced.shape == (2, 64, joints, 3)


def test_paper_preset_matches_the_published_sizes():
    torch.manual_seed(0)
    model = DisentangledTMR(DTMRConfig.preset("paper", "ntu25"))
    counts = model.parameter_counts()
    for key, published in PAPER.items():
        assert abs(counts[key] / published - 1) <= 0.05, (key, counts[key], published)
    assert counts["total"] == counts["action_encoder"] + counts["identity_encoder"] + counts["decoder"]
    assert model.config.action_dim == 768 and model.config.identity_dim == 256 and model.config.frames == 64


def test_small_preset_is_small_and_keeps_64_frames():
    counts = small_model().parameter_counts()
    assert 0.5e6 <= counts["total"] <= 1.5e6
    assert DTMRConfig.preset("small").frames == 64


def test_interface_attributes_and_wrong_input_shape():
    model = small_model("uiprmd22")
    assert model.method == "dtmr" and model.topology.name == "uiprmd22" and 0.0 <= model.beta <= 1.0
    with pytest.raises(ValueError, match="uiprmd22"):
        model.retarget(clips(1, 25), clips(1, 25))
    with pytest.raises(ValueError, match="beta"):
        DisentangledTMR(DTMRConfig.preset("small"), beta=1.5)


def test_config_round_trip_presets_and_validation():
    for name in PRESET_NAMES:
        config = DTMRConfig.preset(name, "kinect_v1_20")
        assert DTMRConfig.from_dict(config.to_dict()) == config
        assert config.preset_name == name
    with pytest.raises(ValueError, match="unknown preset"):
        DTMRConfig.preset("huge")
    with pytest.raises(ValueError, match="bogus"):
        DTMRConfig.from_dict({**DTMRConfig().to_dict(), "bogus": 1})
    with pytest.raises(ValueError, match="decoder_dim"):
        DTMRConfig(decoder_dim=100, decoder_heads=8)
    with pytest.raises(KeyError):
        DTMRConfig.preset("small", "no_such_topology")


def test_same_seed_same_model_and_outputs():
    a, b = small_model(seed=3), small_model(seed=3)
    for (name, p), q in zip(a.state_dict().items(), b.state_dict().values()):
        assert torch.equal(p, q), name
    src, ref = clips(2, 25), clips(2, 25, seed=1)
    with torch.inference_mode():
        assert torch.equal(a.retarget(src, ref), b.retarget(src, ref))
    assert not torch.equal(small_model(seed=4).decoder.output.weight, a.decoder.output.weight)


def test_teacher_forcing_draw_is_seeded():
    """One draw per batch: p = 0.5 picks teacher forcing or free running, reproducibly for a seed."""
    model = small_model()
    src, ref = clips(2, 25), clips(2, 25, seed=1)
    with torch.no_grad():
        memory, identity = model.encode_action(src), model.encode_identity(ref)
        forced = model.decoder.teacher_forced(memory, identity, src[:, :-1])
        free = model.decoder.generate_cached(memory, identity)
        picks = []
        for seed in range(12):
            torch.manual_seed(seed)
            out = model.decode(memory, identity, target=src, teacher_forcing=0.5)
            picks.append(torch.equal(out, forced))
            if not picks[-1]:
                torch.testing.assert_close(out, free, atol=1e-5, rtol=0)
        torch.manual_seed(5)
        again = torch.equal(model.decode(memory, identity, target=src, teacher_forcing=0.5), forced)
    assert any(picks) and not all(picks)
    assert again == picks[5]


def test_the_residual_is_the_source_or_its_naive_retarget():
    from dtmr.models.baselines.naive import NaiveRetargeter
    from dtmr.models.config import variant_label

    src, ref = clips(2, 20, seed=1), clips(2, 20, seed=2)
    assert small_model("kinect_v1_20").residual(src, ref) is src
    config = DTMRConfig.preset("small", "kinect_v1_20", residual="naive")
    model = DisentangledTMR(config)
    torch.testing.assert_close(model.residual(src, ref), NaiveRetargeter("kinect_v1_20")(src, ref))
    assert DTMRConfig.from_dict(config.to_dict()) == config
    old = {k: v for k, v in config.to_dict().items() if k != "residual"}  # checkpoints before the option
    assert DTMRConfig.from_dict(old).residual == "source"
    assert "residual" not in model.state_dict() and set(model.state_dict()) == set(small_model("kinect_v1_20").state_dict())
    with pytest.raises(ValueError, match="residual must be one of source, naive"):
        DTMRConfig(residual="reference")
    assert variant_label(DTMRConfig.preset("paper").to_dict()) == "paper"
    assert variant_label(config.to_dict()) == "small, naive residual"
    assert variant_label({}) is None
    trained = {"preset": "small", "loss_weights": {"output_identity_adversary": 2.0, "bone": 0.5}}
    assert variant_label(config.to_dict(), trained) == "small, naive residual, bone=0.5, output_identity_adversary=2"
    assert variant_label(config.to_dict(), {"preset": "small"}) == "small, naive residual"
    assert variant_label(config.to_dict(), "damaged") == variant_label(config.to_dict(), {"loss_weights": [1]}) \
        == variant_label(config.to_dict(), {"output_adversary_lr": "fast"}) == "small, naive residual"
    assert variant_label(config.to_dict(), {**trained, "output_adversary_lr": 0.001}) == \
        "small, naive residual, bone=0.5, output_identity_adversary=2, output adversary lr 0.001"
    assert variant_label(config.to_dict(), {"warm_output_critics": True}) == "small, naive residual, output critics warmed"
    assert variant_label(config.to_dict(), {"warm_output_critics": "yes"}) == "small, naive residual"
    assert variant_label(config.to_dict(), {"warm_output_critics": True, "seed": 1}) == \
        "small, naive residual, output critics warmed, training seed 1"
    # a bf16 training and a fine-tuned one are settings of their own (tables average trainings of one setting)
    assert variant_label(config.to_dict(), {"precision": "bf16", "init": "base.pt", "seed": 2}) == \
        "small, naive residual, bf16 training, from base.pt, training seed 2"
    assert variant_label(config.to_dict(), {"precision": "fp32", "init": 3}) == "small, naive residual"
    assert variant_label(config.to_dict(), {"seed": 0}) == variant_label(config.to_dict(), {"seed": "1"}) \
        == variant_label(config.to_dict(), {"seed": True}) == "small, naive residual"
