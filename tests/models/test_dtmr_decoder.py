"""The factorized decoder: causality, KV-cached vs recomputed decoding, gradients, FLOP count, the cached
step's derived weights."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from dtmr.bench.model import decoder_generation_flops
from dtmr.models import DisentangledTMR, DTMRConfig
from dtmr.models.decoder import StepLinear, onednn_linear_usable


def small_model(seed: int = 0, topology: str = "ntu25") -> DisentangledTMR:
    torch.manual_seed(seed)
    return DisentangledTMR(DTMRConfig.preset("small", topology)).eval()


def clips(batch: int, joints: int = 25, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (0.3 * torch.randn((batch, 64, joints, 3), generator=g)).to(dtype)


def test_teacher_forced_output_never_sees_later_frames():
    model = small_model()
    src, ref = clips(2), clips(2, seed=1)
    with torch.no_grad():
        memory, identity = model.encode_action(src), model.encode_identity(ref)
        base = model.decode(memory, identity, target=src, teacher_forcing=1.0)
        for t in (0, 17, 40, 61):
            changed = src.clone()
            changed[:, t + 1 :] += torch.randn_like(changed[:, t + 1 :])
            out = model.decode(memory, identity, target=changed, teacher_forcing=1.0)
            assert torch.equal(out[:, : t + 1], base[:, : t + 1]) or torch.allclose(
                out[:, : t + 1], base[:, : t + 1], atol=1e-6, rtol=0), t
            # frame t + 1 is the input of output t + 2, so the change shows up there
            assert not torch.allclose(out[:, t + 2 :], base[:, t + 2 :]), t


def test_cached_and_recomputed_decoding_agree():
    """Same function, two algorithms. Float64 keeps rounding from being amplified by the random-init
    autoregressive loop, so the comparison tests the cache itself (docs/model.md)."""
    model = small_model(seed=1).double()
    src, ref = clips(3, dtype=torch.float64), clips(3, seed=1, dtype=torch.float64)
    with torch.inference_mode():
        cached = model.retarget(src, ref)
        uncached = model.retarget(src, ref, use_cache=False)
    assert (cached - uncached).abs().max().item() < 1e-4
    assert (cached - uncached).abs().max().item() < 1e-9  # in float64 they agree far better still


def test_reconstruction_loss_reaches_every_parameter():
    torch.manual_seed(0)
    model = DisentangledTMR(DTMRConfig.preset("small", "uiprmd22")).train()
    src, ref = clips(4, 22), clips(4, 22, seed=1)
    for teacher_forcing in (1.0, 0.0):  # ground truth fed back, then the model's own outputs
        model.zero_grad()
        out = model(src, ref, target=src, teacher_forcing=teacher_forcing)
        torch.nn.functional.mse_loss(out, src).backward()
        silent = [name for name, p in model.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0]
        assert not silent, (teacher_forcing, silent)


def test_decoder_flop_formula_matches_a_flop_counter():
    """The formula counts one generation; the step layers are derived once beforehand (and kept). In float64,
    so that the step runs on addmm (the counter does not see oneDNN's packed linear)."""
    model = small_model().double()
    src = clips(2, dtype=torch.float64)
    with torch.inference_mode():
        memory, identity = model.encode_action(src), model.encode_identity(src)
        model.decoder.step_layers()
        with FlopCounterMode(display=False) as counter:
            model.decoder.generate_cached(memory, identity)
    assert counter.get_total_flops() == decoder_generation_flops(model.config, 25, batch=2)


def test_step_layers_are_derived_from_the_parameters_and_not_stored():
    """The cached step's rearranged weights are kept while the parameters are unchanged, rebuilt after an
    in-place update (an optimizer step), a state-dict load or a dtype change, and never enter the state dict."""
    model = small_model()
    decoder = model.decoder
    first = decoder.step_layers()
    assert decoder.step_layers() is first
    assert set(model.state_dict()) == set(small_model(seed=1).state_dict())
    assert not any("step" in key for key in model.state_dict())
    with torch.no_grad():
        decoder.layers[0].ffn_out.bias.add_(1.0)
    rebuilt = decoder.step_layers()
    assert rebuilt is not first
    torch.testing.assert_close(rebuilt[0].ffn_out.bias, decoder.layers[0].ffn_out.bias)
    decoder.load_state_dict(small_model(seed=2).decoder.state_dict())
    assert decoder.step_layers() is not rebuilt
    torch.testing.assert_close(decoder.step_layers()[0].self_out.weight, decoder.layers[0].self_out.weight.t())
    assert decoder.double().step_layers()[0].qkv.weight.dtype == torch.float64


def test_float32_generation_replays_within_tolerance():
    """In float32 the generated clip, fed back in one teacher-forced pass, reproduces itself to the rounding
    that docs/model.md documents (both step paths: addmm at batch 1, oneDNN's packed linear above, where usable;
    a decoder wide enough for its larger products to be packed)."""
    torch.manual_seed(1)
    model = DisentangledTMR(DTMRConfig.preset("small", "ntu25", decoder_dim=256, decoder_ffn=512)).eval()
    assert model.decoder.step_layers(packed=True)[0].ffn_in.packed == onednn_linear_usable(torch.ones(1))
    src, ref = clips(3), clips(3, seed=1)
    with torch.inference_mode():
        memory, identity = model.encode_action(src), model.encode_identity(ref)
        for b in (1, 3):
            cached = model.decoder.generate_cached(memory[:b], identity[:b])
            forced = model.decoder.teacher_forced(memory[:b], identity[:b], cached[:, :-1])
            difference = (cached - forced).abs()
            # typical elements agree to float32 rounding; a random-init decoder has rare spikes (~1e-3 here,
            # with the previous step as well), a wrong step would differ by O(0.1) everywhere
            assert difference.median() < 1e-5 and difference.max() < 5e-3, (b, difference.median(), difference.max())


@pytest.mark.skipif(not onednn_linear_usable(torch.ones(1)), reason="oneDNN's linear is not available")
def test_packed_and_addmm_step_linears_agree():
    torch.manual_seed(0)
    weight, bias = torch.randn(640, 320), torch.randn(640)
    x, residual = torch.randn(5, 320), torch.randn(5, 640)
    packed, plain = StepLinear.of(weight, bias, packed=True), StepLinear.of(weight, bias, packed=False)
    assert packed.packed and not plain.packed and not StepLinear.of(weight[:32, :32], None, packed=True).packed
    expected = torch.nn.functional.linear(x, weight, bias)
    for linear in (packed, plain):
        torch.testing.assert_close(linear(x), expected, atol=1e-4, rtol=1e-5)
        torch.testing.assert_close(linear(x, gelu=True), torch.nn.functional.gelu(expected), atol=1e-4, rtol=1e-5)
        torch.testing.assert_close(linear(x, residual=residual), expected + residual, atol=1e-4, rtol=1e-5)
    no_bias = StepLinear.of(weight, None, packed=True)
    torch.testing.assert_close(no_bias(x, residual=residual), x @ weight.t() + residual, atol=1e-4, rtol=1e-5)
