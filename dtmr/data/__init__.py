"""Clips, data sets, splits, the quadruplet sampler, the reference pool and the synthetic motion generator."""

from .clip import Clip
from .quadruplets import QuadrupletSampler
from .reference_pool import ReferencePool
from .splits import SPLITS, Split, split_indices
from .synthetic import SYNTHETIC_ACTION_NAMES, generate_clips

__all__ = [
    "SPLITS", "SYNTHETIC_ACTION_NAMES", "Clip", "QuadrupletSampler", "ReferencePool", "Split", "generate_clips",
    "split_indices",
]
