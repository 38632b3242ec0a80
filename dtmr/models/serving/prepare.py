"""`prepare_for_inference`: a model's inference speed paths put in place, one step, the same function.

Every path taken here computes what the paper's modules compute, up to floating-point rounding (the parity
test, tests/models/test_prepare_for_inference.py, bounds it), and leaves the state dict as it was (same keys,
same tensors): a prepared model saves, loads and trains like the plain one. The paths only act at inference
(eval mode; the decoder's no-grad generation, which training's scheduled sampling also uses).

Applied where models are served: a model built from a checkpoint and the batch runner (`ModelRunner`); the
trainer prepares its model for the generation it feeds back. `dtmr bench model` compares implementations by
preparing copies of one model with paths left out.
"""

from __future__ import annotations

from torch import nn

from ..decoder import FactorizedDecoder
from ..mixformer import SkeletonMixFormer
from .mixformer_paths import EVAL_CHUNK, speed_up_mixformer
from .step_decoder import StepGeneration


#: `batch_chunk` default: EVAL_CHUNK where the branch's weights are on the CPU, the whole batch elsewhere
AUTO = "auto"


def prepare_for_inference(model: nn.Module, *, fold_batchnorm: bool = True, shifted_max: bool = True,
                          batch_chunk: int | None | str = AUTO, step_layers: bool = True) -> nn.Module:
    """`model` (in place, returned) with its inference paths in place; a model without a MixFormer branch or a
    factorized decoder (the baselines, the motion anonymizers) is returned unchanged. Preparing twice is
    preparing once.

    - `fold_batchnorm`, `shifted_max`, `batch_chunk`: the MixFormer branch's paths (serving.mixformer_paths);
      `batch_chunk="auto"` chunks on the CPU only, where a few clips' activations stay in cache: on a GPU the
      chunks would serialise the device (issue 44), so there the whole batch runs at once. The choice follows
      the weights' device at the time of the call: prepare again after moving the model (`ModelRunner` does);
    - `step_layers`: the decoder's cached generation on rearranged weights (serving.step_decoder); False
      keeps (or puts back) the plain step.
    """
    for module in list(model.modules()):
        if isinstance(module, SkeletonMixFormer):
            chunk = batch_chunk
            if chunk == AUTO:
                chunk = EVAL_CHUNK if next(module.parameters()).device.type == "cpu" else None
            speed_up_mixformer(module, fold_batchnorm=fold_batchnorm, shifted_max=shifted_max, batch_chunk=chunk)
        elif isinstance(module, FactorizedDecoder):
            if not step_layers:
                module.fast_generation = None
            elif not isinstance(module.fast_generation, StepGeneration):
                module.fast_generation = StepGeneration(module)
    return model
