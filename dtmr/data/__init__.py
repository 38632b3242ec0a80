"""Clips, data sets, label sets (matched by name), splits, the quadruplet sampler, the reference pool and the
synthetic motion generator."""

from .clip import Clip
from .label_set import ClassMatch, LabelSet, RecognizerClasses, TrainedOn, match_classes
from .quadruplets import QuadrupletSampler
from .reference_pool import ReferencePool
from .splits import SPLITS, Split, split_indices
from .synthetic import SYNTHETIC_ACTION_NAMES, generate_clips

__all__ = [
    "SPLITS", "SYNTHETIC_ACTION_NAMES", "ClassMatch", "Clip", "LabelSet", "QuadrupletSampler", "RecognizerClasses",
    "ReferencePool", "Split", "TrainedOn", "generate_clips", "match_classes", "split_indices",
]
