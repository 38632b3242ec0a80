"""The factorized decoder: causality, KV-cached vs recomputed decoding (plain and served), gradients."""

from __future__ import annotations

import pytest
import torch

from dtmr.models import DisentangledTMR, DTMRConfig, prepare_for_inference


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


@pytest.mark.parametrize("served", [False, True], ids=["plain step", "served step"])
def test_cached_and_recomputed_decoding_agree(served):
    """Same function, two algorithms, for the paper's plain cached step and the served one. Float64 keeps rounding
    from being amplified by the random-init autoregressive loop, so the comparison tests the cache itself
    (docs/model.md)."""
    model = small_model(seed=1).double()
    if served:
        prepare_for_inference(model)
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
