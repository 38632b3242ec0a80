"""Skeleton recognizers used as evaluators and in the Studio: SGN and the `Recognizer` wrapper."""

from .preprocessing import prepare_sequence, sample_segments, sgn_batch
from .recognizer import TASKS, TEST_SAMPLES, Recognizer, TopK
from .sampling import segment_bounds, segment_indices, window_indices
from .sgn import DEFAULT_SEG, SGN

__all__ = [
    "DEFAULT_SEG", "Recognizer", "SGN", "TASKS", "TEST_SAMPLES", "TopK", "prepare_sequence", "sample_segments",
    "segment_bounds", "segment_indices", "sgn_batch", "window_indices",
]
