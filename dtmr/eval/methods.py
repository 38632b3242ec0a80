"""The methods the protocol compares, behind one call: `anonymize(clips, references, seed) -> clips`.

raw (the clips themselves), Gaussian joint noise, the naive kinematic retarget, and any checkpoint
(DisentangledTMR at some β, DMR, PMR, a fitted re-timing or k-same file) through `Anonymizer`. Outputs are in
each source's own space and length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import methods
from ..data.clip import Clip
from ..methods import DTMR, NAIVE, NOISE, RAW

NOISE_SIGMA = 0.05  # m, as in the calibration table of DESIGN §5


@dataclass
class EvalMethod:
    method: str  # a name of dtmr.methods
    beta: float | None = None
    checkpoint: str | None = None
    # DisentangledTMR's preset and residual (`variant_label`), k-same's k (`describe_motion_model`): told apart
    # in tables
    variant: str | None = None
    _anonymizer: object = field(default=None, repr=False)
    #: `variant` without the training seed (`setting_variant`): what every training of the setting shares
    setting_variant: str | None = None
    #: the checkpoint's training seed (`dtmr train --seed`); None for a parameter-free method or a checkpoint
    #: that records none
    training_seed: int | None = None

    @property
    def label(self) -> str:
        return self._named(self.variant)

    @property
    def setting(self) -> str:
        """The label every training of this method's setting shares (the label without its training seed)."""
        return self._named(self.setting_variant)

    def _named(self, variant: str | None) -> str:
        name = methods.display_name(self.method)
        if self.method == NOISE.name:
            name += f" {NOISE_SIGMA * 100:.0f} cm"
        if self.method != DTMR.name or self.beta is None:
            return name + (f" {variant}" if variant else "")
        return f"{name} β={self.beta:g}" + (f" {variant}" if variant else "")

    def anonymize(self, clips: Sequence[Clip], references: Sequence[Clip], seed: int,
                  action_names: Sequence[str] | None = None) -> list[Clip]:
        """The released clips; `action_names` (the clips' library's) lets a model that takes action labels use
        those it shares with its fitted file, as `dtmr anonymize` does."""
        if self.method == RAW.name:
            return list(clips)
        if self.method == NOISE.name:
            from ..models.baselines.noise import noisy_clip

            return [noisy_clip(c, NOISE_SIGMA, seed=seed * 1_000_003 + i) for i, c in enumerate(clips)]
        if self.method == NAIVE.name:
            from ..models.baselines.naive import naive_retarget_clip

            return [naive_retarget_clip(c, r) for c, r in zip(clips, references)]
        return self.anonymizer.anonymize_batch(clips, references, action_names=action_names)

    @property
    def anonymizer(self):
        if self._anonymizer is None:
            from ..models.anonymizer import Anonymizer

            self._anonymizer = Anonymizer.from_checkpoint(self.checkpoint)
        return self._anonymizer


def checkpoint_method(path: str | Path, device=None) -> EvalMethod:
    """The method and β a checkpoint holds (read from it, without building the model twice); the model runs
    on `device` (default: CUDA when available)."""
    from ..models.anonymizer import Anonymizer
    from ..models.config import setting_variant, training_seed, variant_label
    from ..models.motion import describe_motion_model

    anonymizer = Anonymizer.from_checkpoint(path, device=device)
    beta = anonymizer.beta if anonymizer.method == DTMR.name else None
    # None for DMR, PMR and re-timing (no preset, nothing to tell apart)
    config, training = anonymizer.model.config_dict(), anonymizer.checkpoint.get("training")
    fitted = describe_motion_model(anonymizer.method, config)
    return EvalMethod(anonymizer.method, beta, str(path), variant_label(config, training) or fitted, anonymizer,
                      setting_variant=setting_variant(config, training) or fitted,
                      training_seed=training_seed(training))
