"""The decoder's served step (serving.step_decoder): its derived weights, its FLOP count, its rounding."""

from __future__ import annotations

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from dtmr.bench.model import decoder_generation_flops
from dtmr.models import DisentangledTMR, DTMRConfig, prepare_for_inference
from dtmr.models.serving.step_decoder import StepLinear, onednn_linear_usable


def small_model(seed: int = 0) -> DisentangledTMR:
    torch.manual_seed(seed)
    return DisentangledTMR(DTMRConfig.preset("small", "ntu25")).eval()


def clips(batch: int, seed: int = 0, dtype=torch.float32) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (0.3 * torch.randn((batch, 64, 25, 3), generator=g)).to(dtype)


def test_decoder_flop_formula_matches_a_flop_counter():
    """The formula counts one generation; the step layers are derived once beforehand (and kept). In float64,
    so that the step runs on addmm (the counter does not see oneDNN's packed linear)."""
    model = prepare_for_inference(small_model().double())
    src = clips(2, dtype=torch.float64)
    with torch.inference_mode():
        memory, identity = model.encode_action(src), model.encode_identity(src)
        model.decoder.fast_generation.layers()
        with FlopCounterMode(display=False) as counter:
            model.decoder.generate_cached(memory, identity)
    assert counter.get_total_flops() == decoder_generation_flops(model.config, 25, batch=2)


def test_step_layers_are_derived_from_the_parameters_and_not_stored():
    """The cached step's rearranged weights are kept while the parameters are unchanged, rebuilt after an
    in-place update (an optimizer step), a state-dict load or a dtype change, and never enter the state dict."""
    model = prepare_for_inference(small_model())
    decoder = model.decoder
    generation = decoder.fast_generation
    first = generation.layers()
    assert generation.layers() is first
    assert set(model.state_dict()) == set(small_model(seed=1).state_dict())
    assert not any("step" in key for key in model.state_dict())
    with torch.no_grad():
        decoder.layers[0].ffn_out.bias.add_(1.0)
    rebuilt = generation.layers()
    assert rebuilt is not first
    torch.testing.assert_close(rebuilt[0].ffn_out.bias, decoder.layers[0].ffn_out.bias)
    decoder.load_state_dict(small_model(seed=2).decoder.state_dict())
    assert generation.layers() is not rebuilt
    torch.testing.assert_close(generation.layers()[0].self_out.weight, decoder.layers[0].self_out.weight.t())
    decoder.double()
    assert generation.layers()[0].qkv.weight.dtype == torch.float64


def test_float32_generation_replays_within_tolerance():
    """In float32 the generated clip, fed back in one teacher-forced pass, reproduces itself to the rounding
    that docs/model.md documents (both step paths: addmm at batch 1, oneDNN's packed linear above, where usable;
    a decoder wide enough for its larger products to be packed)."""
    torch.manual_seed(1)
    model = prepare_for_inference(
        DisentangledTMR(DTMRConfig.preset("small", "ntu25", decoder_dim=256, decoder_ffn=512)).eval())
    assert model.decoder.fast_generation.layers(packed=True)[0].ffn_in.packed == onednn_linear_usable(torch.ones(1))
    src, ref = clips(3), clips(3, seed=1)
    with torch.inference_mode():
        memory, identity = model.encode_action(src), model.encode_identity(ref)
        for b in (1, 3):
            cached = model.decoder.generate_cached(memory[:b], identity[:b])
            forced = model.decoder.teacher_forced(memory[:b], identity[:b], cached[:, :-1])
            difference = (cached - forced).abs()
            # typical elements agree to float32 rounding; a random-init decoder has rare spikes (~1e-3 here,
            # with the plain step as well), a wrong step would differ by O(0.1) everywhere
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
