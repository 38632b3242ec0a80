"""The baselines DisentangledTMR is compared with: DMR, PMR, naive kinematic retargeting, joint noise.

The naive retarget on joint arrays is `dtmr.skeleton.retarget.naive_retarget`; this package has it as a method."""

from . import checkpoints as _checkpoints  # noqa: F401  (registers the checkpoint builders)
from .autoencoder import NATIVE_FRAMES, Decoder1D, Encoder2D
from .critics import EmbeddingClassifier, QualityController
from .naive import NaiveRetargeter, naive_retarget_clip
from .noise import GaussianNoise, add_joint_noise, noisy_clip
from .pmr import DMR, DMR_LATENT, PMR, PMR_LATENT, RetargetingAutoencoder
from .pmr_losses import LossWeights, QuadrupletBatch, UnpairedBatch, critic_losses, generator_losses
from .pmr_training import DMR_SCHEDULE, PMR_SCHEDULE, build_optimizers, schedule_for, training_step

__all__ = [
    "DMR", "DMR_LATENT", "DMR_SCHEDULE", "Decoder1D", "EmbeddingClassifier", "Encoder2D", "GaussianNoise",
    "LossWeights", "NATIVE_FRAMES", "NaiveRetargeter", "PMR", "PMR_LATENT", "PMR_SCHEDULE", "QuadrupletBatch",
    "QualityController", "RetargetingAutoencoder", "UnpairedBatch", "add_joint_noise", "build_optimizers",
    "critic_losses", "generator_losses", "naive_retarget_clip", "noisy_clip", "schedule_for",
    "training_step",
]
