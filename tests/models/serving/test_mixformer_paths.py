"""MixFormer's inference paths (serving.mixformer_paths): clips in chunks, BatchNorm folded into the
convolutions, the max-pool as a maximum of shifted views; the same function, the same state dict."""

from __future__ import annotations

import torch
from torch import nn

from dtmr.models import DTMRConfig
from dtmr.models.features import motion_features
from dtmr.models.mixformer import SkeletonMixFormer
from dtmr.models.serving.mixformer_paths import EVAL_CHUNK, FoldedSequential, ShiftedMaxPool, speed_up_mixformer
from dtmr.skeleton import get_topology


def mixformer(seed: int = 0) -> SkeletonMixFormer:
    """A small MixFormer whose BatchNorms hold non-trivial running statistics and affine parameters."""
    torch.manual_seed(seed)
    model = SkeletonMixFormer(DTMRConfig.preset("small", "ntu25"), get_topology("ntu25"))
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.normal_(0.0, 0.1)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.normal_(0.0, 0.1)
    return model.eval()


def features(batch: int, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return motion_features(0.3 * torch.randn((batch, 64, 25, 3), generator=g))


def shipped(seed: int = 0, **options) -> SkeletonMixFormer:
    model = mixformer(seed)
    speed_up_mixformer(model, **options)
    return model


def count_paths(model: SkeletonMixFormer) -> tuple[int, int]:
    return (sum(type(m) is FoldedSequential for m in model.modules()),
            sum(type(m) is ShiftedMaxPool for m in model.modules()))


def test_the_paths_replace_the_plain_modules_once():
    plain = mixformer()
    assert count_paths(plain) == (0, 0) and plain.batch_chunk is None
    model = shipped()
    folded, pools = count_paths(model)
    sequentials = sum(type(m) is nn.Sequential for m in plain.modules())
    max_pools = sum(type(m) is nn.MaxPool2d for m in plain.modules())
    assert folded > 0 and pools == max_pools > 0 and model.batch_chunk == EVAL_CHUNK
    assert folded + sum(type(m) is nn.Sequential for m in model.modules()) == sequentials
    speed_up_mixformer(model)  # again: nothing changes
    assert count_paths(model) == (folded, pools)
    assert count_paths(shipped(fold_batchnorm=False, shifted_max=False)) == (0, 0)
    assert shipped(batch_chunk=None).batch_chunk is None


def test_chunks_and_folding_keep_the_function():
    model = shipped().double()
    reference = mixformer().double()
    x = features(2 * EVAL_CHUNK + 1).double()
    with torch.no_grad():
        expected = reference(x)
        torch.testing.assert_close(model(x), expected, atol=1e-10 * expected.abs().max().item(), rtol=0)
        x32 = x.float()
        torch.testing.assert_close(shipped()(x32), mixformer()(x32), rtol=1e-4,
                                   atol=1e-5 * expected.abs().max().item())


def test_state_dict_keys_are_the_sequential_ones():
    """Checkpoints load into a prepared branch: same module indices, same keys as the paper's modules."""
    keys = set(mixformer().state_dict())
    assert set(shipped().state_dict()) == keys
    assert {"stages.1.0.residual.0.weight", "stages.1.0.residual.1.running_var",
            "stages.0.0.temporal.branches.0.3.weight", "stages.0.0.temporal.branches.0.4.running_mean",
            "retrospect.0.1.weight", "retrospect.0.2.running_var"} <= keys


def test_training_mode_is_the_plain_sequential():
    """Batch statistics and running-statistics updates exactly as nn.Sequential."""
    model, reference = shipped().train(), mixformer().train()
    x = features(6)
    torch.testing.assert_close(model(x), reference(x), atol=0, rtol=0)
    for (name, a), b in zip(model.state_dict().items(), reference.state_dict().values()):
        torch.testing.assert_close(a, b, atol=0, rtol=0, msg=name)


def test_shifted_max_pool_is_max_pool_2d():
    """Exactly equal, ties (the zeros after a ReLU) and odd lengths included."""
    for stride in (1, 2):
        pool = nn.MaxPool2d((3, 1), stride=(stride, 1), padding=(1, 0))
        for frames in (1, 2, 15, 64):
            x = torch.randn(2, 3, frames, 5).relu()
            assert torch.equal(ShiftedMaxPool(stride).eval()(x), pool(x)), (stride, frames)
